//! Checks of monitor messages against RoboViz's rules, and of whole match
//! logs (line by line, replayed into a tracked scene).

use std::collections::BTreeMap;

use super::{invalid, StreamError, TrackedScene};
use crate::monitor::frame::FrameKind;
use crate::monitor::sexp::{parse_limited, Node};

/// Atoms and lists one monitor message may hold (an 11 v 11 full state
/// has about 20,000): a longer line is refused before it is held as a
/// tree.
pub const MAX_MESSAGE_NODES: usize = 200_000;
use crate::rules::PlayMode;

/// What [`check_log`] found in a valid log.
#[derive(Debug, Clone)]
pub struct LogCheck {
    /// Lines (frames) in the log.
    pub lines: usize,
    /// Of which full states.
    pub full_states: usize,
    /// The `(seed N)` of the first line, if present.
    pub seed: Option<u64>,
    /// The scene after the last line.
    pub last: TrackedScene,
}

/// Checks a whole match log (docs/protocol.md#log-lines) and replays it:
/// one message per line ending in `\n`, no blank, `\r` or `[` lines, line
/// 1 a full state, every line valid for RoboViz, every delta fitting the
/// previous full state. Errors name the line (`line 12: ...`).
pub fn check_log(text: &str) -> Result<LogCheck, StreamError> {
    if !text.is_empty() && !text.ends_with('\n') {
        return Err(invalid("the log does not end with a complete line"));
    }
    let mut checker = LogChecker::default();
    if !text.is_empty() {
        for line in text[..text.len() - 1].split('\n') {
            checker.line(line)?;
        }
    }
    checker.finish()
}

/// [`check_log`] one line at a time, for logs read as a stream: memory is
/// one line and the scene, whatever the length of the log.
#[derive(Debug, Default)]
pub struct LogChecker {
    scene: TrackedScene,
    lines: usize,
    full_states: usize,
    seed: Option<u64>,
}

impl LogChecker {
    /// Checks and applies the next line (without its `\n`).
    pub fn line(&mut self, line: &str) -> Result<(), StreamError> {
        let n = self.lines + 1;
        let at = |e: StreamError| match e {
            StreamError::Invalid(m) => invalid(format!("line {n}: {m}")),
            StreamError::Shape(m) => StreamError::Shape(format!("line {n}: {m}")),
            other => invalid(format!("line {n}: {other}")),
        };
        if line.is_empty() {
            return Err(at(invalid("blank line")));
        }
        if line.starts_with('[') {
            return Err(at(invalid("line starts with `[`")));
        }
        let kind = self.scene.apply(line).map_err(at)?;
        if n == 1 {
            if kind != FrameKind::Full {
                return Err(at(invalid("the first line is not a full state")));
            }
            self.seed = self
                .scene
                .environment
                .get("seed")
                .and_then(|s| s.parse().ok());
        }
        self.lines = n;
        if kind == FrameKind::Full {
            self.full_states += 1;
        }
        Ok(())
    }

    /// Lines checked so far.
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// What the log held; an error if it held no line.
    pub fn finish(self) -> Result<LogCheck, StreamError> {
        if self.lines == 0 {
            return Err(invalid("empty log"));
        }
        Ok(LogCheck {
            lines: self.lines,
            full_states: self.full_states,
            seed: self.seed,
            last: self.scene,
        })
    }
}

/// Checks one message against the rules RoboViz depends on
/// (docs/protocol.md#what-roboviz-needs) and returns
/// whether it is a full state or a delta. It does not check a delta's
/// shape; [`TrackedScene::apply`] does.
pub fn validate_message(text: &str) -> Result<FrameKind, StreamError> {
    if text.is_empty() {
        return Err(invalid("empty message"));
    }
    if let Some(c) = text
        .chars()
        .find(|c| !c.is_ascii() || *c == '\n' || *c == '\r')
    {
        return Err(invalid(format!("character {c:?} in a message")));
    }
    if let Some(i) = text
        .as_bytes()
        .windows(2)
        .position(|w| w[0] == b'(' && w[1].is_ascii_whitespace())
    {
        return Err(invalid(format!("whitespace after `(` at byte {i}")));
    }
    let (parts, err) = parse_limited(text, MAX_MESSAGE_NODES);
    if let Some(e) = err {
        return Err(invalid(format!("unbalanced: {e}")));
    }
    let [preds, header, scene] = &parts[..] else {
        return Err(invalid(format!(
            "{} top-level parts, expected 3",
            parts.len()
        )));
    };
    let (Some(preds), Some(header), Some(scene)) = (preds.list(), header.list(), scene.list())
    else {
        return Err(invalid("a top-level part is not a list"));
    };
    if preds.is_empty() {
        return Err(invalid("empty predicate list"));
    }
    if preds[0].head() == Some("RSMP") {
        return Err(invalid("first predicate is RSMP"));
    }
    let kind = match header.iter().map(Node::atom).collect::<Vec<_>>()[..] {
        [Some("RSG"), Some("0"), Some("1")] => FrameKind::Full,
        [Some("RDS"), Some("0"), Some("1")] => FrameKind::Delta,
        _ => return Err(invalid("header is not (RSG 0 1) or (RDS 0 1)")),
    };
    check_predicates(preds, kind)?;
    if kind == FrameKind::Full {
        for n in scene {
            check_full_node(n)?;
        }
    } else {
        check_delta_atoms(scene, true)?;
    }
    Ok(kind)
}

/// A finite number that stays finite as an `f32` (what RoboViz and the
/// scene reader hold): `1e39` is not one.
pub(super) fn is_number(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    !lower.contains("nan") && !lower.contains("inf") && s.parse::<f32>().is_ok_and(f32::is_finite)
}

pub(super) fn is_int(s: &str) -> bool {
    s.parse::<i64>().is_ok()
}

pub(super) fn check_predicates(preds: &[Node<'_>], kind: FrameKind) -> Result<(), StreamError> {
    let mut seen: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut play_modes: Option<usize> = None;
    for p in preds {
        let items = p.list().ok_or_else(|| invalid("predicate is not a list"))?;
        let name = items
            .first()
            .and_then(Node::atom)
            .ok_or_else(|| invalid("predicate without a name"))?;
        let values: Vec<&str> = items[1..].iter().filter_map(Node::atom).collect();
        if values.is_empty() || values.len() != items.len() - 1 {
            return Err(invalid(format!("predicate `{name}` without plain values")));
        }
        match name {
            "play_modes" => {
                let expected: Vec<&str> = PlayMode::ALL.iter().map(|m| m.name()).collect();
                if values != expected {
                    return Err(invalid("play_modes differs from the 19 names of 0.7.1"));
                }
                play_modes = Some(values.len());
            }
            "team_left" | "team_right" | "refused" => {}
            "half" | "score_left" | "score_right" | "play_mode" => {
                if values.len() != 1 || !is_int(values[0]) {
                    return Err(invalid(format!("`{name}` must be one integer")));
                }
            }
            "foul" => {
                if values.len() != 4 || !values.iter().all(|v| is_int(v)) {
                    return Err(invalid("`foul` must have 4 integers"));
                }
                if values[1]
                    .parse::<i64>()
                    .map_or(true, |t| !(0..11).contains(&t))
                {
                    return Err(invalid("foul type must be < 11"));
                }
                if !matches!(values[2], "1" | "2") {
                    return Err(invalid("foul team must be 1 or 2"));
                }
            }
            _ => {
                if values.len() == 1 && !is_number(values[0]) && name != "seed" {
                    // Unknown text predicates are fine for RoboViz, but
                    // ours are all numeric.
                    return Err(invalid(format!(
                        "`{name}` value `{}` is not a number",
                        values[0]
                    )));
                }
            }
        }
        seen.insert(name, values);
    }
    match seen.get("time") {
        Some(v) if v.len() == 1 && is_number(v[0]) => {}
        _ => return Err(invalid("no `(time T)`")),
    }
    if let Some(pm) = seen.get("play_mode") {
        let n = pm[0].parse::<usize>().unwrap_or(usize::MAX);
        if n >= PlayMode::ALL.len() {
            return Err(invalid("play_mode index out of range"));
        }
    }
    if kind == FrameKind::Full {
        for name in [
            "FieldLength",
            "FieldWidth",
            "FreeKickDistance",
            "BallRadius",
            "RuleHalfTime",
            "half",
            "score_left",
            "score_right",
            "play_mode",
        ] {
            if !seen.contains_key(name) {
                return Err(invalid(format!("full state without `{name}`")));
            }
        }
        if play_modes.is_none() {
            return Err(invalid("full state without `play_modes`"));
        }
    }
    Ok(())
}

/// Mesh names RoboViz ships or generates (docs/protocol.md#monitor-scene-content).
pub fn is_roboviz_mesh(name: &str) -> bool {
    if matches!(
        name,
        "StdUnitBox" | "StdUnitSphere" | "StdUnitCylinder" | "StdCapsule"
    ) {
        return true;
    }
    let Some(file) = name
        .strip_prefix("models/")
        .and_then(|n| n.strip_suffix(".obj"))
    else {
        return false;
    };
    let numbered = |rest: &str| {
        let rest = rest.strip_suffix('G').unwrap_or(rest);
        rest.is_empty() || matches!(rest, "0" | "1" | "2" | "3" | "4")
    };
    match file {
        "soccerball" | "leftgoal" | "rightgoal" | "leftsoccergoal" | "rightsoccergoal"
        | "naosoccerfield" | "skybox" | "naohead" | "rlowerarm" | "llowerarm" | "rthigh"
        | "lthigh" | "rfoot" | "lfoot" => true,
        _ => {
            if let Some(rest) = file.strip_prefix("naobody") {
                numbered(rest)
            } else if let Some(rest) = file
                .strip_prefix("rupperarm")
                .or_else(|| file.strip_prefix("lupperarm"))
            {
                numbered(rest)
            } else if let Some(rest) = file
                .strip_prefix("rshank")
                .or_else(|| file.strip_prefix("lshank"))
            {
                rest.is_empty() || matches!(rest, "0" | "1" | "2" | "3" | "4")
            } else {
                false
            }
        }
    }
}

pub(super) fn check_full_node(node: &Node<'_>) -> Result<(), StreamError> {
    let items = node
        .list()
        .ok_or_else(|| invalid("scene item is not a list"))?;
    if items.first().and_then(Node::atom) != Some("nd") {
        return Err(invalid("scene item is not `(nd ...)`"));
    }
    let kind = items.get(1).and_then(Node::atom).unwrap_or("");
    let ops: Vec<&[Node<'_>]> = items[2..].iter().filter_map(Node::list).collect();
    let op = |name: &str| {
        ops.iter()
            .find(|l| l.first().and_then(Node::atom) == Some(name))
    };
    match kind {
        "TRF" => {
            let first = ops.first().ok_or_else(|| invalid("TRF without children"))?;
            if first.first().and_then(Node::atom) != Some("SLT") {
                return Err(invalid("TRF whose first child is not SLT"));
            }
            let vals: Vec<&str> = first[1..].iter().filter_map(Node::atom).collect();
            if vals.len() != 16 || !vals.iter().all(|v| is_number(v)) {
                return Err(invalid("SLT without 16 finite numbers"));
            }
            for child in items[2..].iter().filter(|n| n.head() == Some("nd")) {
                check_full_node(child)?;
            }
        }
        "Light" => {
            if ops.is_empty() {
                return Err(invalid("Light without operations"));
            }
        }
        "StaticMesh" | "SMN" => {
            if ops
                .iter()
                .any(|l| l.first().and_then(Node::atom) == Some("nd"))
            {
                return Err(invalid("mesh with child nodes"));
            }
            let vis = op("setVisible").ok_or_else(|| invalid("mesh without setVisible"))?;
            if !matches!(vis.get(1).and_then(Node::atom), Some("0" | "1")) {
                return Err(invalid("setVisible value is not 0 or 1"));
            }
            let load = op("load").ok_or_else(|| invalid("mesh without load"))?;
            let name = load.get(1).and_then(Node::atom).unwrap_or("");
            if !is_roboviz_mesh(name) {
                return Err(invalid(format!("mesh `{name}` is not a RoboViz resource")));
            }
            for l in &ops {
                if l.first().and_then(Node::atom) == Some("sSc") {
                    let vals: Vec<&str> = l[1..].iter().filter_map(Node::atom).collect();
                    if vals.len() != 3 || !vals.iter().all(|v| is_number(v)) {
                        return Err(invalid("sSc without 3 numbers"));
                    }
                }
            }
        }
        other => return Err(invalid(format!("node kind `{other}`"))),
    }
    Ok(())
}

pub(super) fn check_delta_atoms(scene: &[Node<'_>], top: bool) -> Result<(), StreamError> {
    for n in scene {
        let Some(items) = n.list() else {
            if top {
                return Err(invalid("scene item is not a list"));
            }
            continue;
        };
        match items.first().and_then(Node::atom) {
            Some("nd") => {
                if let Some(w) = items.get(1).and_then(Node::atom) {
                    if !matches!(w, "StaticMesh" | "SMN") {
                        return Err(invalid(format!("delta node word `{w}`")));
                    }
                }
                check_delta_atoms(&items[1..], false)?;
            }
            Some("SLT") => {
                let vals: Vec<&str> = items[1..].iter().filter_map(Node::atom).collect();
                if vals.len() != 16 || !vals.iter().all(|v| is_number(v)) {
                    return Err(invalid("SLT without 16 finite numbers"));
                }
            }
            Some("setVisible") => {}
            other => return Err(invalid(format!("delta item {other:?}"))),
        }
    }
    Ok(())
}
