//! `(scene <rsg-path> [<arg> ...])` (docs/protocol.md#scene).

use super::{atom_param, truncate, DecodeError};
use crate::sexp::Sexp;

/// A request to build the agent's robot from a scene file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scene {
    /// The path as sent, e.g. `rsg/agent/nao/nao_hetero.rsg`.
    pub path: String,
    /// Further atoms, e.g. the robot type `4`.
    pub args: Vec<String>,
}

/// Most arguments a scene request may carry.
const MAX_ARGS: usize = 4;

/// `Some(canonical text)` for an optionally signed integer of at most 6
/// digits.
fn canonical_int(a: &str) -> Option<String> {
    let digits = a.strip_prefix(['+', '-']).unwrap_or(a);
    if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    a.parse::<i32>().ok().map(|n| n.to_string())
}

impl Scene {
    pub(super) fn decode(params: &[Sexp]) -> Result<Scene, DecodeError> {
        let path = atom_param(params, 0, "scene", "scene file path")?.to_owned();
        // Scene arguments reach the scene files' expression evaluator, so
        // only what robot scenes take is let through: small integers (the
        // robot type), in canonical spelling ("00", "+0" and "0" are one
        // model, not three).
        let args = params[1..]
            .iter()
            .map(|p| match p {
                Sexp::Atom(a) => canonical_int(a).ok_or_else(|| DecodeError::BadValue {
                    command: "scene",
                    what: format!("argument `{}` is not a small integer", truncate(a)),
                }),
                other => Err(DecodeError::NotAnAtom {
                    command: "scene",
                    what: "argument",
                    got: truncate(&other.to_string()),
                }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if args.len() > MAX_ARGS {
            return Err(DecodeError::BadValue {
                command: "scene",
                what: format!("{} arguments (at most {MAX_ARGS})", args.len()),
            });
        }
        Ok(Scene { path, args })
    }
}

#[cfg(test)]
mod tests {
    use crate::command::{from_sexp, Command, DecodeError};
    use crate::sexp::parse;

    fn scene(text: &str) -> Result<Command, DecodeError> {
        from_sexp(&parse(text.as_bytes()).items[0])
    }

    #[test]
    fn robot_type_is_a_canonical_small_integer() {
        let ok = |t: &str| match scene(t) {
            Ok(Command::Scene(s)) => s.args,
            other => panic!("{t}: {other:?}"),
        };
        assert_eq!(ok("(scene rsg/agent/nao/nao_hetero.rsg 4)"), vec!["4"]);
        assert_eq!(ok("(scene rsg/agent/nao/nao_hetero.rsg +00)"), vec!["0"]);
        assert_eq!(ok("(scene rsg/agent/nao/nao.rsg)"), Vec::<String>::new());
        for bad in ["1-1", "1.5", "x", "--1", "(1)", "1234567", ""] {
            let text = format!("(scene rsg/agent/nao/nao_hetero.rsg {bad})");
            if bad.is_empty() {
                continue;
            }
            assert!(scene(&text).is_err(), "{bad} must be refused");
        }
        let deep = format!(
            "(scene rsg/agent/nao/nao_hetero.rsg {})",
            "-".repeat(100_000)
        );
        assert!(scene(&deep).is_err());
    }
}
