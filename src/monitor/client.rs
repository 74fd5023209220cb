//! A light monitor client: connect to a server's monitor port, follow the
//! match (every message is checked against RoboViz's rules and applied to
//! a tracked copy of the scene), and send commands.
//!
//! ```no_run
//! # async fn demo() -> Result<(), rcss3d::monitor::client::ClientError> {
//! use rcss3d::monitor::client::MonitorClient;
//!
//! let mut monitor = MonitorClient::connect("127.0.0.1:3200").await?;
//! monitor.send("(kickOff Left)").await?;
//! while let Some(msg) = monitor.next_message().await? {
//!     let scene = monitor.scene();
//!     println!(
//!         "{:?} t={} score {}:{} ball {:?} robots {}",
//!         msg.kind,
//!         scene.game.time,
//!         scene.game.score_left,
//!         scene.game.score_right,
//!         scene.ball_position(),
//!         scene.robots().len()
//!     );
//! }
//! # Ok(())
//! # }
//! ```
//!
//! [`validate_message`] and [`TrackedScene::apply`] work on plain text as
//! well, so a match log can be checked line by line without a socket.

use std::collections::BTreeMap;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use nalgebra::Vector3;
use thiserror::Error;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpStream, ToSocketAddrs};
use tokio_util::codec::{FramedRead, FramedWrite, LengthDelimitedCodec};

use super::frame::FrameKind;
use super::sexp::{parse_all, Node};
use crate::rules::{PlayMode, Side};

/// Why the client stopped or rejected a message.
#[derive(Debug, Error)]
pub enum ClientError {
    /// Socket failure.
    #[error("monitor connection: {0}")]
    Io(#[from] std::io::Error),
    /// A message broke a rule RoboViz depends on.
    #[error("invalid monitor message: {0}")]
    Invalid(String),
    /// A delta does not fit the tree of the last full state.
    #[error("delta does not match the last full state: {0}")]
    Shape(String),
    /// A delta arrived before any full state.
    #[error("delta before the first full state")]
    NoFullState,
}

fn invalid(msg: impl Into<String>) -> ClientError {
    ClientError::Invalid(msg.into())
}

/// One message as received.
#[derive(Debug, Clone)]
pub struct Received {
    /// Full state or delta.
    pub kind: FrameKind,
    /// The payload text.
    pub text: String,
}

/// A monitor connection that tracks the scene.
pub struct MonitorClient {
    reader: FramedRead<OwnedReadHalf, LengthDelimitedCodec>,
    writer: FramedWrite<OwnedWriteHalf, LengthDelimitedCodec>,
    scene: TrackedScene,
}

fn codec() -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder()
        .big_endian()
        .length_field_length(4)
        .max_frame_length(64 * 1024 * 1024)
        .new_codec()
}

impl MonitorClient {
    /// Connects to a monitor port.
    pub async fn connect(addr: impl ToSocketAddrs) -> Result<MonitorClient, ClientError> {
        let stream = TcpStream::connect(addr).await?;
        let _ = stream.set_nodelay(true);
        let (rd, wr) = stream.into_split();
        Ok(MonitorClient {
            reader: FramedRead::new(rd, codec()),
            writer: FramedWrite::new(wr, codec()),
            scene: TrackedScene::default(),
        })
    }

    /// Reads the next message, checks it ([`validate_message`]) and applies
    /// it to the tracked scene. `None` when the server closed the
    /// connection. A zero-length frame is an error (RoboViz would stop).
    pub async fn next_message(&mut self) -> Result<Option<Received>, ClientError> {
        let Some(frame) = self.reader.next().await else {
            return Ok(None);
        };
        let frame = frame?;
        if frame.is_empty() {
            return Err(invalid("zero-length frame"));
        }
        let text =
            String::from_utf8(frame.to_vec()).map_err(|_| invalid("payload is not UTF-8"))?;
        let kind = self.scene.apply(&text)?;
        Ok(Some(Received { kind, text }))
    }

    /// Sends one frame holding `commands` (one or more S-expressions).
    pub async fn send(&mut self, commands: &str) -> Result<(), ClientError> {
        self.writer
            .send(Bytes::copy_from_slice(commands.as_bytes()))
            .await?;
        Ok(())
    }

    /// Sends raw bytes as one frame (for tests of malformed input).
    pub async fn send_bytes(&mut self, payload: &[u8]) -> Result<(), ClientError> {
        self.writer.send(Bytes::copy_from_slice(payload)).await?;
        Ok(())
    }

    /// The scene as of the last message.
    pub fn scene(&self) -> &TrackedScene {
        &self.scene
    }
}

/// The game-state predicates as last received.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GameView {
    /// `(time T)`.
    pub time: f32,
    /// `(team_left NAME)`, once received.
    pub team_left: Option<String>,
    /// `(team_right NAME)`, once received.
    pub team_right: Option<String>,
    /// `(half H)`.
    pub half: u32,
    /// `(score_left N)`.
    pub score_left: u32,
    /// `(score_right N)`.
    pub score_right: u32,
    /// `(play_mode I)`.
    pub play_mode: u32,
    /// Every `(foul IDX TYPE TEAM UNUM)` received, in order.
    pub fouls: Vec<[u32; 4]>,
}

impl GameView {
    /// The play mode, if the index is valid.
    pub fn play_mode(&self) -> Option<PlayMode> {
        PlayMode::from_index(self.play_mode as usize)
    }
}

/// Node kinds of the monitor scene graph (§4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// `TRF`.
    Transform,
    /// `Light`.
    Light,
    /// `StaticMesh`.
    StaticMesh,
    /// `SMN`.
    SingleMaterialMesh,
}

/// One node of the tracked scene.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneNode {
    /// Kind word of the full state.
    pub kind: NodeKind,
    /// Local matrix (column-major) of a transform.
    pub matrix: [f32; 16],
    /// `setVisible` of a mesh.
    pub visible: bool,
    /// `setTransparent` of a mesh.
    pub transparent: bool,
    /// Mesh name (`load`), without parameters.
    pub mesh: Option<String>,
    /// `resetMaterials` list, or the single `sMat`.
    pub materials: Vec<String>,
    /// Child nodes.
    pub children: Vec<SceneNode>,
}

/// A robot as RoboViz identifies it (§5.4).
#[derive(Debug, Clone, PartialEq)]
pub struct RobotView {
    /// Team side from `matLeft`/`matRight`.
    pub side: Side,
    /// Number from `matNum<N>`.
    pub unum: u32,
    /// World position of the numbered mesh (the torso centre for a Nao).
    pub position: Vector3<f32>,
    /// Index of the robot's top-level node.
    pub node: usize,
}

/// Everything a monitor knows after applying messages in order.
#[derive(Debug, Clone, Default)]
pub struct TrackedScene {
    /// Environment and unknown predicates of the last full state (name →
    /// values joined by one space), e.g. `FieldLength` → `30`, `seed` →
    /// `42`.
    pub environment: BTreeMap<String, String>,
    /// The `play_modes` names.
    pub play_modes: Vec<String>,
    /// Game state.
    pub game: GameView,
    /// Top-level scene nodes.
    pub nodes: Vec<SceneNode>,
    /// Full states applied.
    pub full_states: u64,
    /// Deltas applied.
    pub deltas: u64,
}

impl TrackedScene {
    /// Checks one message with [`validate_message`] and applies it: a full
    /// state replaces the scene, a delta must match its shape exactly.
    pub fn apply(&mut self, text: &str) -> Result<FrameKind, ClientError> {
        let kind = validate_message(text)?;
        let (parts, _) = parse_all(text);
        let [preds, _, scene] = &parts[..] else {
            return Err(invalid("expected three parts"));
        };
        let preds = preds.list().unwrap_or(&[]);
        let scene = scene.list().unwrap_or(&[]);
        match kind {
            FrameKind::Full => {
                self.environment.clear();
                let nodes = scene.iter().map(full_node).collect::<Result<Vec<_>, _>>()?;
                self.nodes = nodes;
                self.full_states += 1;
            }
            FrameKind::Delta => {
                if self.full_states == 0 {
                    return Err(ClientError::NoFullState);
                }
                apply_delta_list(&mut self.nodes, scene, "scene")?;
                self.deltas += 1;
            }
        }
        self.apply_predicates(preds);
        Ok(kind)
    }

    fn apply_predicates(&mut self, preds: &[Node<'_>]) {
        for p in preds {
            let Some(items) = p.list() else { continue };
            let Some(name) = items.first().and_then(Node::atom) else {
                continue;
            };
            let values: Vec<&str> = items[1..].iter().filter_map(Node::atom).collect();
            let first = values.first().copied().unwrap_or("");
            let int = || first.parse::<u32>().unwrap_or(0);
            let g = &mut self.game;
            match name {
                "time" => g.time = first.parse().unwrap_or(0.0),
                "team_left" => g.team_left = Some(first.to_owned()),
                "team_right" => g.team_right = Some(first.to_owned()),
                "half" => g.half = int(),
                "score_left" => g.score_left = int(),
                "score_right" => g.score_right = int(),
                "play_mode" => g.play_mode = int(),
                "foul" => {
                    let mut f = [0u32; 4];
                    for (slot, v) in f.iter_mut().zip(&values) {
                        *slot = v.parse().unwrap_or(0);
                    }
                    g.fouls.push(f);
                }
                "play_modes" => {
                    self.play_modes = values.iter().map(|s| (*s).to_owned()).collect();
                }
                _ => {
                    self.environment.insert(name.to_owned(), values.join(" "));
                }
            }
        }
    }

    /// World position of the ball: the first mesh named
    /// `…soccerball.obj`, depth first.
    pub fn ball_position(&self) -> Option<Vector3<f32>> {
        let mut found = None;
        walk(&self.nodes, &IDENTITY, &mut |node, world| {
            if found.is_none()
                && node
                    .mesh
                    .as_deref()
                    .is_some_and(|m| m.ends_with("soccerball.obj"))
            {
                found = Some(translation_of(world));
            }
        });
        found
    }

    /// Robots as RoboViz finds them: for each top-level node, the first
    /// mesh listing `matNum<N>` (N = 1…11) and `matLeft` or `matRight`.
    pub fn robots(&self) -> Vec<RobotView> {
        let mut out = Vec::new();
        for (i, top) in self.nodes.iter().enumerate() {
            let mut found: Option<RobotView> = None;
            walk(std::slice::from_ref(top), &IDENTITY, &mut |node, world| {
                if found.is_some() {
                    return;
                }
                let side = if node.materials.iter().any(|m| m == "matLeft") {
                    Side::Left
                } else if node.materials.iter().any(|m| m == "matRight") {
                    Side::Right
                } else {
                    return;
                };
                let unum = node
                    .materials
                    .iter()
                    .filter_map(|m| m.strip_prefix("matNum"))
                    .find_map(|n| n.parse::<u32>().ok());
                if let Some(unum) = unum.filter(|n| (1..=11).contains(n)) {
                    found = Some(RobotView {
                        side,
                        unum,
                        position: translation_of(world),
                        node: i,
                    });
                }
            });
            out.extend(found);
        }
        out
    }

    /// Counts nodes of each kind in depth-first order (a shape summary).
    pub fn count(&self, kind: NodeKind) -> usize {
        let mut n = 0;
        walk(&self.nodes, &IDENTITY, &mut |node, _| {
            if node.kind == kind {
                n += 1;
            }
        });
        n
    }
}

const IDENTITY: [f32; 16] = [
    1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
];

fn mul(a: &[f32; 16], b: &[f32; 16]) -> [f32; 16] {
    let mut m = [0.0; 16];
    for col in 0..4 {
        for row in 0..4 {
            m[col * 4 + row] = (0..4).map(|k| a[k * 4 + row] * b[col * 4 + k]).sum();
        }
    }
    m
}

fn translation_of(m: &[f32; 16]) -> Vector3<f32> {
    Vector3::new(m[12], m[13], m[14])
}

/// Visits every node with its world matrix (for meshes: the parent's).
fn walk(nodes: &[SceneNode], parent: &[f32; 16], f: &mut dyn FnMut(&SceneNode, &[f32; 16])) {
    for n in nodes {
        let world = if n.kind == NodeKind::Transform {
            mul(parent, &n.matrix)
        } else {
            *parent
        };
        f(n, &world);
        walk(&n.children, &world, f);
    }
}

fn full_node(node: &Node<'_>) -> Result<SceneNode, ClientError> {
    let items = node.list().unwrap_or(&[]);
    let kind = match items.get(1).and_then(Node::atom) {
        Some("TRF") => NodeKind::Transform,
        Some("Light") => NodeKind::Light,
        Some("StaticMesh") => NodeKind::StaticMesh,
        Some("SMN") => NodeKind::SingleMaterialMesh,
        other => return Err(invalid(format!("node kind {other:?}"))),
    };
    let mut n = SceneNode {
        kind,
        matrix: IDENTITY,
        visible: false,
        transparent: false,
        mesh: None,
        materials: Vec::new(),
        children: Vec::new(),
    };
    for item in &items[2..] {
        let Some(list) = item.list() else { continue };
        let args: Vec<&str> = list[1..].iter().filter_map(Node::atom).collect();
        match list.first().and_then(Node::atom) {
            Some("nd") => n.children.push(full_node(item)?),
            Some("SLT") => n.matrix = matrix(&args)?,
            Some("setVisible") => n.visible = args.first() == Some(&"1"),
            Some("setTransparent") => n.transparent = true,
            Some("load") => n.mesh = args.first().map(|s| (*s).to_owned()),
            Some("resetMaterials") | Some("sMat") => {
                n.materials = args.iter().map(|s| (*s).to_owned()).collect();
            }
            _ => {}
        }
    }
    Ok(n)
}

fn matrix(args: &[&str]) -> Result<[f32; 16], ClientError> {
    if args.len() != 16 {
        return Err(invalid(format!("SLT with {} values", args.len())));
    }
    let mut m = [0.0; 16];
    for (slot, a) in m.iter_mut().zip(args) {
        *slot = a.parse().map_err(|_| invalid(format!("SLT value `{a}`")))?;
    }
    Ok(m)
}

fn apply_delta_list(
    stored: &mut [SceneNode],
    delta: &[Node<'_>],
    path: &str,
) -> Result<(), ClientError> {
    let nds: Vec<&Node<'_>> = delta.iter().filter(|n| n.head() == Some("nd")).collect();
    if nds.len() != stored.len() {
        return Err(ClientError::Shape(format!(
            "{path}: {} nodes in the delta, {} stored",
            nds.len(),
            stored.len()
        )));
    }
    for (i, (node, d)) in stored.iter_mut().zip(nds).enumerate() {
        let items = d.list().unwrap_or(&[]);
        let word = items.get(1).and_then(Node::atom);
        let here = format!("{path}/{i}");
        match (node.kind, word) {
            (NodeKind::Transform | NodeKind::Light, None) => {}
            (NodeKind::StaticMesh, Some("StaticMesh"))
            | (NodeKind::SingleMaterialMesh, Some("SMN")) => {}
            (kind, word) => {
                return Err(ClientError::Shape(format!(
                    "{here}: {kind:?} stored, delta says {word:?}"
                )))
            }
        }
        for item in &items[1..] {
            let Some(list) = item.list() else { continue };
            let args: Vec<&str> = list[1..].iter().filter_map(Node::atom).collect();
            match list.first().and_then(Node::atom) {
                Some("SLT") if node.kind == NodeKind::Transform => node.matrix = matrix(&args)?,
                Some("setVisible") => node.visible = args.first() == Some(&"1"),
                _ => {}
            }
        }
        apply_delta_list(&mut node.children, &items[1..], &here)?;
    }
    Ok(())
}

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

/// Checks a whole match log (log-format.md §3 and §6) and replays it:
/// one message per line ending in `\n`, no blank, `\r` or `[` lines, line
/// 1 a full state, every line valid for RoboViz, every delta fitting the
/// previous full state. Errors name the line (`line 12: ...`).
pub fn check_log(text: &str) -> Result<LogCheck, ClientError> {
    if text.is_empty() {
        return Err(invalid("empty log"));
    }
    if !text.ends_with('\n') {
        return Err(invalid("the log does not end with a complete line"));
    }
    let mut scene = TrackedScene::default();
    let mut check = LogCheck {
        lines: 0,
        full_states: 0,
        seed: None,
        last: TrackedScene::default(),
    };
    for (i, line) in text[..text.len() - 1].split('\n').enumerate() {
        let at = |e: ClientError| match e {
            ClientError::Invalid(m) => invalid(format!("line {}: {m}", i + 1)),
            ClientError::Shape(m) => ClientError::Shape(format!("line {}: {m}", i + 1)),
            other => invalid(format!("line {}: {other}", i + 1)),
        };
        if line.is_empty() {
            return Err(at(invalid("blank line")));
        }
        if line.starts_with('[') {
            return Err(at(invalid("line starts with `[`")));
        }
        let kind = scene.apply(line).map_err(at)?;
        if i == 0 {
            if kind != FrameKind::Full {
                return Err(at(invalid("the first line is not a full state")));
            }
            check.seed = scene.environment.get("seed").and_then(|s| s.parse().ok());
        }
        check.lines += 1;
        if kind == FrameKind::Full {
            check.full_states += 1;
        }
    }
    check.last = scene;
    Ok(check)
}

/// Checks one message against the rules RoboViz depends on
/// (monitor-protocol.md §2, §3, §4, §9 and the §12 checklist) and returns
/// whether it is a full state or a delta. It does not check a delta's
/// shape; [`TrackedScene::apply`] does.
pub fn validate_message(text: &str) -> Result<FrameKind, ClientError> {
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
    let (parts, err) = parse_all(text);
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

fn is_number(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    !lower.contains("nan") && !lower.contains("inf") && s.parse::<f64>().is_ok()
}

fn is_int(s: &str) -> bool {
    s.parse::<i64>().is_ok()
}

fn check_predicates(preds: &[Node<'_>], kind: FrameKind) -> Result<(), ClientError> {
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
            "team_left" | "team_right" => {}
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

/// Mesh names RoboViz ships or generates (§5.5).
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

fn check_full_node(node: &Node<'_>) -> Result<(), ClientError> {
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

fn check_delta_atoms(scene: &[Node<'_>], top: bool) -> Result<(), ClientError> {
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
