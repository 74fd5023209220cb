//! Monitor (trainer) commands, docs/protocol.md#monitor-commands: decoded from a
//! frame's bytes into [`MonitorCommand`]s (defined in
//! [`crate::command::trainer`]) without touching the world. The simulation
//! resolves teams and numbers to robots and carries them out.

use nalgebra::Vector3;
use thiserror::Error;

use super::sexp::{self, Node};
use crate::command::trainer::{IgnoredCommand, MonitorCommand, RobotRef, Selection};
use crate::rules::{PlayMode, Side, MAX_GAME_TIME};

/// Why one command of a frame was not accepted. The text of the offending
/// expression is carried so a log line shows what arrived.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MonitorCommandError {
    /// The frame is not valid UTF-8.
    #[error("frame is not valid UTF-8 text")]
    NotText,
    /// The frame is not well-formed (commands before the error are kept).
    #[error("malformed S-expression: {0}")]
    Syntax(#[from] sexp::SexpError),
    /// Something other than a list at the top level.
    #[error("expected `(command ...)`, got `{0}`")]
    NotACommand(String),
    /// An unknown command name.
    #[error("unknown command `{0}`")]
    Unknown(String),
    /// A required part is missing.
    #[error("`{command}`: missing {what} in `{expr}`")]
    Missing {
        /// Command name.
        command: &'static str,
        /// What was expected.
        what: &'static str,
        /// The expression as received.
        expr: String,
    },
    /// A part has a value of the wrong form or out of range.
    #[error("`{command}`: bad {what} `{value}`")]
    BadValue {
        /// Command name.
        command: &'static str,
        /// Which part.
        what: &'static str,
        /// The value as received.
        value: String,
    },
}

/// Most atoms and lists read from one command frame; the rest of a larger
/// frame is dropped with a syntax error. A trainer frame that moves all 22
/// robots and the ball has about 330.
pub const MAX_FRAME_NODES: usize = 1024;

/// Decodes every command of one frame, in order. Unknown or malformed
/// commands become errors in the list; the others are still decoded.
pub fn parse_commands(payload: &[u8]) -> Vec<Result<MonitorCommand, MonitorCommandError>> {
    let Ok(text) = std::str::from_utf8(payload) else {
        return vec![Err(MonitorCommandError::NotText)];
    };
    let (nodes, err) = sexp::parse_limited(text, MAX_FRAME_NODES);
    let mut out = Vec::with_capacity(nodes.len() + 1);
    for node in &nodes {
        decode(node, &mut out);
    }
    if let Some(e) = err {
        out.push(Err(e.into()));
    }
    out
}

type Out = Vec<Result<MonitorCommand, MonitorCommandError>>;

fn decode(node: &Node<'_>, out: &mut Out) {
    let Some(items) = node.list() else {
        out.push(Err(MonitorCommandError::NotACommand(show(node))));
        return;
    };
    let Some(name) = items.first().and_then(Node::atom) else {
        out.push(Err(MonitorCommandError::NotACommand(show(node))));
        return;
    };
    let args = &items[1..];
    let result = match name {
        "kickOff" => kick_off(node, args),
        "playMode" => play_mode(node, args),
        "dropBall" => Ok(MonitorCommand::DropBall),
        "ball" => ball(node, args),
        "agent" => return agent(node, args, out),
        "select" => select(args),
        "kill" => robot_ref("kill", args).map(MonitorCommand::Kill),
        "repos" => robot_ref("repos", args).map(MonitorCommand::Repos),
        "time" => time(node, args),
        "score" => score(node, args),
        "reqfullstate" => Ok(MonitorCommand::ReqFullState),
        "killsim" => Ok(MonitorCommand::KillSim),
        "getAck" => Ok(MonitorCommand::Ignored(IgnoredCommand::GetAck)),
        "init" => Ok(MonitorCommand::Ignored(IgnoredCommand::Init)),
        "auth" => match args.first().and_then(Node::atom) {
            Some(secret) => Ok(MonitorCommand::Auth(secret.to_owned())),
            None => Err(missing("auth", "secret", node)),
        },
        other => Err(MonitorCommandError::Unknown(truncate(other))),
    };
    out.push(result);
}

fn kick_off(node: &Node<'_>, args: &[Node<'_>]) -> Result<MonitorCommand, MonitorCommandError> {
    let word = args
        .first()
        .and_then(Node::atom)
        .ok_or_else(|| missing("kickOff", "team", node))?;
    match word {
        "Left" => Ok(MonitorCommand::KickOff(Some(Side::Left))),
        "Right" => Ok(MonitorCommand::KickOff(Some(Side::Right))),
        "None" => Ok(MonitorCommand::KickOff(None)),
        _ => Err(bad("kickOff", "team", word)),
    }
}

fn play_mode(node: &Node<'_>, args: &[Node<'_>]) -> Result<MonitorCommand, MonitorCommandError> {
    let word = args
        .first()
        .and_then(Node::atom)
        .ok_or_else(|| missing("playMode", "play mode name", node))?;
    PlayMode::from_name(word)
        .map(MonitorCommand::PlayMode)
        .ok_or_else(|| bad("playMode", "play mode name", word))
}

fn ball(node: &Node<'_>, args: &[Node<'_>]) -> Result<MonitorCommand, MonitorCommandError> {
    let pos = match sub(args, "pos") {
        Some(v) => Some(vec3("ball", "pos", v)?),
        None => None,
    };
    let vel = match sub(args, "vel") {
        Some(v) => Some(vec3("ball", "vel", v)?),
        None => None,
    };
    if pos.is_none() && vel.is_none() {
        return Err(missing("ball", "`(pos x y z)` or `(vel x y z)`", node));
    }
    Ok(MonitorCommand::Ball { pos, vel })
}

fn agent(node: &Node<'_>, args: &[Node<'_>], out: &mut Out) {
    let (team, unum) = (sub(args, "team"), sub(args, "unum"));
    let (Some(team), Some(unum)) = (team, unum) else {
        out.push(Ok(MonitorCommand::AgentPush));
        return;
    };
    let robot = match (team_word("agent", team), unum_value("agent", unum)) {
        (Ok(team), Ok(unum)) => match u8::try_from(unum) {
            Ok(unum) => RobotRef { team, unum },
            Err(_) => {
                out.push(Err(bad("agent", "unum", &unum.to_string())));
                return;
            }
        },
        (Err(e), _) | (_, Err(e)) => {
            out.push(Err(e));
            return;
        }
    };
    let before = out.len();
    if let Some(v) = sub(args, "pos") {
        out.push(vec3("agent", "pos", v).map(|pos| MonitorCommand::AgentPos { robot, pos }));
    }
    if let Some(v) = sub(args, "move") {
        out.push(match numbers::<4>("agent", "move", v) {
            Ok([x, y, z, yaw_deg]) => Ok(MonitorCommand::AgentMove {
                robot,
                pos: Vector3::new(x, y, z),
                yaw_deg,
            }),
            Err(e) => Err(e),
        });
    }
    if let Some(v) = sub(args, "battery") {
        out.push(
            numbers::<1>("agent", "battery", v)
                .map(|[battery]| MonitorCommand::AgentBattery { robot, battery }),
        );
    }
    if sub(args, "temperature").is_some() {
        out.push(Ok(MonitorCommand::Ignored(IgnoredCommand::Temperature)));
    }
    if out.len() == before {
        out.push(Err(missing("agent", "`pos`, `move` or `battery`", node)));
    }
}

fn select(args: &[Node<'_>]) -> Result<MonitorCommand, MonitorCommandError> {
    let Some(unum) = sub(args, "unum") else {
        return Ok(MonitorCommand::Select(Selection::Next));
    };
    let n = unum_value("select", unum)?;
    if n < 0 {
        return Ok(MonitorCommand::Select(Selection::Clear));
    }
    let Some(team) = sub(args, "team") else {
        return Ok(MonitorCommand::Select(Selection::Next));
    };
    let team = team_word("select", team)?;
    let unum = u8::try_from(n).map_err(|_| bad("select", "unum", &n.to_string()))?;
    Ok(MonitorCommand::Select(Selection::Robot(RobotRef {
        team,
        unum,
    })))
}

/// `(kill)` / `(kill (unum N) (team T))`: both given → that robot; either
/// missing → the selected robot, as the reference does.
fn robot_ref(
    command: &'static str,
    args: &[Node<'_>],
) -> Result<Option<RobotRef>, MonitorCommandError> {
    let (Some(team), Some(unum)) = (sub(args, "team"), sub(args, "unum")) else {
        return Ok(None);
    };
    let team = team_word(command, team)?;
    let n = unum_value(command, unum)?;
    let unum = u8::try_from(n).map_err(|_| bad(command, "unum", &n.to_string()))?;
    Ok(Some(RobotRef { team, unum }))
}

fn time(node: &Node<'_>, args: &[Node<'_>]) -> Result<MonitorCommand, MonitorCommandError> {
    let word = args
        .first()
        .and_then(Node::atom)
        .ok_or_else(|| missing("time", "time value", node))?;
    let t = real("time", "time value", word)?;
    if !(0.0..=MAX_GAME_TIME).contains(&t) {
        return Err(bad("time", "time value (must be in [0, 10000])", word));
    }
    Ok(MonitorCommand::Time(t))
}

fn score(node: &Node<'_>, args: &[Node<'_>]) -> Result<MonitorCommand, MonitorCommandError> {
    let left = sub(args, "left").ok_or_else(|| missing("score", "`(left A)`", node))?;
    let right = sub(args, "right").ok_or_else(|| missing("score", "`(right B)`", node))?;
    let a = unum_value("score", left)?;
    let b = unum_value("score", right)?;
    let a = u32::try_from(a).map_err(|_| bad("score", "left score", &a.to_string()))?;
    let b = u32::try_from(b).map_err(|_| bad("score", "right score", &b.to_string()))?;
    Ok(MonitorCommand::Score(a, b))
}

/// The values of the first sub-list named `name` (`(pos 1 2 3)` → `1 2 3`).
fn sub<'n, 'a>(args: &'n [Node<'a>], name: &str) -> Option<&'n [Node<'a>]> {
    args.iter()
        .filter_map(Node::list)
        .find(|l| l.first().and_then(Node::atom) == Some(name))
        .map(|l| &l[1..])
}

fn team_word(command: &'static str, values: &[Node<'_>]) -> Result<Side, MonitorCommandError> {
    match values.first().and_then(Node::atom) {
        Some("Left") => Ok(Side::Left),
        Some("Right") => Ok(Side::Right),
        Some(other) => Err(bad(command, "team", other)),
        None => Err(bad(command, "team", "")),
    }
}

/// An integer written as an integer or as an integral real (`3`, `3.0`,
/// `-1`, `1e1`).
fn unum_value(command: &'static str, values: &[Node<'_>]) -> Result<i64, MonitorCommandError> {
    let word = values
        .first()
        .and_then(Node::atom)
        .ok_or_else(|| bad(command, "integer", ""))?;
    if let Ok(n) = word.parse::<i64>() {
        return Ok(n);
    }
    match word.parse::<f64>() {
        Ok(x) if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e9 => Ok(x as i64),
        _ => Err(bad(command, "integer", word)),
    }
}

fn real(command: &'static str, what: &'static str, word: &str) -> Result<f32, MonitorCommandError> {
    // Rust's parser also takes `inf`/`nan`; only finite values are numbers here.
    match word.parse::<f32>() {
        Ok(x) if x.is_finite() && word.bytes().any(|b| b.is_ascii_digit()) => Ok(x),
        _ => Err(bad(command, what, word)),
    }
}

fn numbers<const N: usize>(
    command: &'static str,
    what: &'static str,
    values: &[Node<'_>],
) -> Result<[f32; N], MonitorCommandError> {
    if values.len() < N {
        return Err(bad(command, what, &show_all(values)));
    }
    let mut out = [0.0; N];
    for (slot, node) in out.iter_mut().zip(values) {
        let word = node
            .atom()
            .ok_or_else(|| bad(command, what, &show_all(values)))?;
        *slot = real(command, what, word)?;
    }
    Ok(out)
}

fn vec3(
    command: &'static str,
    what: &'static str,
    values: &[Node<'_>],
) -> Result<Vector3<f32>, MonitorCommandError> {
    numbers::<3>(command, what, values).map(|[x, y, z]| Vector3::new(x, y, z))
}

fn missing(command: &'static str, what: &'static str, node: &Node<'_>) -> MonitorCommandError {
    MonitorCommandError::Missing {
        command,
        what,
        expr: show(node),
    }
}

fn bad(command: &'static str, what: &'static str, value: &str) -> MonitorCommandError {
    MonitorCommandError::BadValue {
        command,
        what,
        value: truncate(value),
    }
}

/// Monitor text quoted in errors is cut after this many characters.
const MAX_QUOTED: usize = 80;

/// Monitor text cut short and escaped for an error message (see
/// [`crate::untrusted`]).
fn truncate(s: &str) -> String {
    crate::untrusted::quote(s, MAX_QUOTED)
}

fn show(node: &Node<'_>) -> String {
    let mut s = String::new();
    write_node(node, &mut s);
    truncate(&s)
}

fn show_all(nodes: &[Node<'_>]) -> String {
    let mut s = String::new();
    for (i, n) in nodes.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        write_node(n, &mut s);
        if s.len() > 200 {
            break;
        }
    }
    truncate(&s)
}

fn write_node(node: &Node<'_>, s: &mut String) {
    if s.len() > 200 {
        return;
    }
    match node {
        Node::Atom(a) => s.push_str(a),
        Node::List(items) => {
            s.push('(');
            for (i, n) in items.iter().enumerate() {
                if i > 0 {
                    s.push(' ');
                }
                write_node(n, s);
            }
            s.push(')');
        }
    }
}
