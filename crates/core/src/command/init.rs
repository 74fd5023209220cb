//! `(init (unum <n>) (teamname <name>))` (docs/protocol.md#init).

use super::{atom_param, DecodeError};
use crate::sexp::{atoi, Sexp};

/// A request to join a team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Init {
    /// Requested uniform number as sent (0 = next free). Missing means 0.
    /// Range checks happen at admission, not here.
    pub unum: i64,
    /// Team name; `None` when missing (admission rejects it).
    pub team: Option<String>,
}

impl Init {
    pub(super) fn decode(params: &[Sexp]) -> Result<Init, DecodeError> {
        let mut init = Init {
            unum: 0,
            team: None,
        };
        // Sub-lists are located by their first atom, in any order; other
        // elements are ignored as in the reference.
        for p in params {
            match p.as_predicate() {
                Some(("unum", rest)) => init.unum = atoi(atom_param(rest, 0, "init", "unum")?),
                Some(("teamname", rest)) => {
                    init.team = Some(atom_param(rest, 0, "init", "teamname")?.to_owned())
                }
                _ => {}
            }
        }
        Ok(init)
    }
}

#[cfg(test)]
mod tests {
    use crate::command::{from_sexp, Command, Init};
    use crate::sexp::parse;

    fn init(text: &str) -> Init {
        match from_sexp(&parse(text.as_bytes()).items[0]) {
            Ok(Command::Init(i)) => i,
            other => panic!("not an init: {other:?}"),
        }
    }

    #[test]
    fn both_spellings_and_any_order() {
        let a = init("(init (unum 1)(teamname X))");
        let b = init("(init (teamname X) (unum 1.9))");
        assert_eq!(a, b);
        assert_eq!(a.unum, 1);
        assert_eq!(init("(init)").team, None);
        assert_eq!(init("(init (teamname Y))").unum, 0);
    }
}
