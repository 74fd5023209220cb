//! `(scene <rsg-path> [<arg> ...])` (agent-protocol.md §2.2).

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

impl Scene {
    pub(super) fn decode(params: &[Sexp]) -> Result<Scene, DecodeError> {
        let path = atom_param(params, 0, "scene", "scene file path")?.to_owned();
        let args = params[1..]
            .iter()
            .map(|p| match p {
                Sexp::Atom(a) => Ok(a.clone()),
                other => Err(DecodeError::NotAnAtom {
                    command: "scene",
                    what: "argument",
                    got: truncate(&other.to_string()),
                }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Scene { path, args })
    }
}
