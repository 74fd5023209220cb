//! Agent effectors decoded into typed commands (docs/protocol.md#effectors).
//!
//! Decoding needs no world: a hinge effector is recognised by name here and
//! resolved against the robot's joints inside the simulation, where a name
//! the robot lacks (`lle7` on a type 0 robot) becomes an unknown effector.
//! One file per effector with parameters; `mod.rs` matches on the name.
//! [`trainer`] holds the commands of monitors and trainers, decoded by
//! the monitor port (`monitor::command`) and carried out by the simulation.

mod beam;
mod init;
mod scene;
pub mod trainer;

use thiserror::Error;

use crate::sexp::{atof, Parsed, Sexp};

pub use beam::Beam;
pub use init::Init;
pub use scene::Scene;

/// Every hinge effector name of every robot type (types 0-3 have the first
/// 22, type 4 all 24).
pub const HINGE_EFFECTORS: [&str; 24] = [
    "he1", "he2", "lae1", "rae1", "lae2", "rae2", "lae3", "rae3", "lae4", "rae4", "lle1", "rle1",
    "lle2", "rle2", "lle3", "rle3", "lle4", "rle4", "lle5", "rle5", "lle6", "rle6", "lle7", "rle7",
];

/// A hinge effector by its place in [`HINGE_EFFECTORS`], so the simulation
/// finds a robot's joint for it without comparing names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HingeEffector(u8);

impl HingeEffector {
    /// The effector called `name`, if it is one of [`HINGE_EFFECTORS`].
    pub fn from_name(name: &str) -> Option<HingeEffector> {
        HINGE_EFFECTORS
            .iter()
            .position(|n| *n == name)
            .map(|i| HingeEffector(i as u8))
    }

    /// Its name (`he1`).
    pub fn name(self) -> &'static str {
        HINGE_EFFECTORS[usize::from(self.0)]
    }

    /// Its index into [`HINGE_EFFECTORS`].
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// One decoded agent command.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `(scene <path> [args])`: create the robot.
    Scene(Scene),
    /// `(init (unum N) (teamname T))`: join a team.
    Init(Init),
    /// `(beam x y rot)`: place the robot before kick-off.
    Beam(Beam),
    /// `(syn)`: end of the agent's cycle (sync mode).
    Syn,
    /// `(say msg)`: broadcast (validated by the perception layer).
    Say(String),
    /// `(<hinge> speed)`: target angular speed in rad/s (unclamped here;
    /// NaN is rejected at decode time).
    Hinge {
        /// Which effector.
        effector: HingeEffector,
        /// Requested speed in rad/s (finite or infinite; clamped later).
        speed: f32,
    },
}

/// Why one command of a message was not decoded.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum DecodeError {
    /// A top-level atom or a list not starting with an atom.
    #[error("ignored top-level element `{0}` (not a command)")]
    NotACommand(String),
    /// The name is not an effector of 0.7.1 (`pass`, typos, other robots').
    #[error("unknown effector `{0}`")]
    Unknown(String),
    /// A required parameter is missing.
    #[error("`{command}`: missing {what}")]
    Missing {
        /// Command name.
        command: &'static str,
        /// Which parameter.
        what: &'static str,
    },
    /// A parameter that must be an atom is a list.
    #[error("`{command}`: {what} must be an atom, got `{got}`")]
    NotAnAtom {
        /// Command name.
        command: &'static str,
        /// Which parameter.
        what: &'static str,
        /// The offending sub-expression.
        got: String,
    },
    /// A value that cannot be used (NaN joint speed, non-finite beam).
    #[error("`{command}`: {what}")]
    BadValue {
        /// Command name.
        command: &'static str,
        /// What is wrong.
        what: String,
    },
}

/// Decodes one top-level expression.
pub fn from_sexp(e: &Sexp) -> Result<Command, DecodeError> {
    let Some((name, params)) = e.as_predicate() else {
        return Err(DecodeError::NotACommand(truncate(&e.to_string())));
    };
    match name {
        "syn" => Ok(Command::Syn),
        "scene" => Scene::decode(params).map(Command::Scene),
        "init" => Init::decode(params).map(Command::Init),
        "beam" => Beam::decode(params).map(Command::Beam),
        "say" => {
            let msg = atom_param(params, 0, "say", "message")?;
            Ok(Command::Say(msg.to_owned()))
        }
        _ => match HingeEffector::from_name(name) {
            Some(effector) => {
                let hinge = effector.name();
                let speed = number_param(params, 0, hinge, "speed")?;
                if speed.is_nan() {
                    return Err(DecodeError::BadValue {
                        command: hinge,
                        what: "speed is NaN (ignored)".into(),
                    });
                }
                Ok(Command::Hinge { effector, speed })
            }
            None => Err(DecodeError::Unknown(truncate(name))),
        },
    }
}

/// Decodes every top-level expression of a parsed message, in order.
pub fn decode_all(parsed: &Parsed) -> Vec<Result<Command, DecodeError>> {
    parsed.items.iter().map(from_sexp).collect()
}

/// The `index`-th parameter as an atom.
pub(crate) fn atom_param<'a>(
    params: &'a [Sexp],
    index: usize,
    command: &'static str,
    what: &'static str,
) -> Result<&'a str, DecodeError> {
    match params.get(index) {
        None => Err(DecodeError::Missing { command, what }),
        Some(Sexp::Atom(a)) => Ok(a),
        Some(other) => Err(DecodeError::NotAnAtom {
            command,
            what,
            got: truncate(&other.to_string()),
        }),
    }
}

/// The `index`-th parameter converted like C `atof`, as f32.
pub(crate) fn number_param(
    params: &[Sexp],
    index: usize,
    command: &'static str,
    what: &'static str,
) -> Result<f32, DecodeError> {
    atom_param(params, index, command, what).map(|a| atof(a) as f32)
}

/// Agent text quoted in errors is cut after this many characters.
const MAX_QUOTED: usize = 64;

/// Agent text cut short and escaped for an error message (see
/// [`crate::untrusted`]).
pub(crate) fn truncate(s: &str) -> String {
    crate::untrusted::quote(s, MAX_QUOTED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sexp::parse;

    fn decode(text: &str) -> Vec<Result<Command, DecodeError>> {
        decode_all(&parse(text.as_bytes()))
    }

    fn hinge(name: &str, speed: f32) -> Command {
        match HingeEffector::from_name(name) {
            Some(effector) => Command::Hinge { effector, speed },
            None => panic!("{name} is not a hinge effector"),
        }
    }

    #[test]
    fn hinge_effectors_by_index() {
        for (i, name) in HINGE_EFFECTORS.iter().enumerate() {
            let e = HingeEffector::from_name(name);
            assert_eq!(e.map(|e| (e.index(), e.name())), Some((i, *name)));
        }
        assert_eq!(HingeEffector::from_name("he3"), None);
        assert_eq!(HingeEffector::from_name("HE1"), None);
    }

    #[test]
    fn fcp_style_message() {
        let cmds = decode("(he1 0.10000)(lle7 -6.5)(say ab#)(syn)(pass)");
        assert_eq!(cmds[0], Ok(hinge("he1", 0.1)));
        assert_eq!(cmds[1], Ok(hinge("lle7", -6.5)));
        assert_eq!(cmds[2], Ok(Command::Say("ab#".into())));
        assert_eq!(cmds[3], Ok(Command::Syn));
        assert_eq!(cmds[4], Err(DecodeError::Unknown("pass".into())));
    }

    #[test]
    fn bad_hinge_values() {
        let cmds = decode("(he1)(he2 nan)(rle3 inf)(rle4 (1))(rae1 abc)");
        assert!(matches!(cmds[0], Err(DecodeError::Missing { .. })));
        assert!(matches!(cmds[1], Err(DecodeError::BadValue { .. })));
        assert_eq!(cmds[2], Ok(hinge("rle3", f32::INFINITY)));
        assert!(matches!(cmds[3], Err(DecodeError::NotAnAtom { .. })));
        assert_eq!(cmds[4], Ok(hinge("rae1", 0.0)));
    }

    #[test]
    fn non_commands_and_case() {
        let cmds = decode("syn ((a)) (SYN)");
        assert!(matches!(cmds[0], Err(DecodeError::NotACommand(_))));
        assert!(matches!(cmds[1], Err(DecodeError::NotACommand(_))));
        assert_eq!(cmds[2], Err(DecodeError::Unknown("SYN".into())));
    }
}
