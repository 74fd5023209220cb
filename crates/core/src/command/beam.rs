//! `(beam <x> <y> <rot>)` (docs/protocol.md#beam).

use super::{number_param, DecodeError};
use crate::sexp::Sexp;

/// A request to place the robot, in the agent's team frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Beam {
    /// x in metres (own half is x < 0).
    pub x: f32,
    /// y in metres.
    pub y: f32,
    /// Heading in degrees, 0 = towards the opponent goal.
    pub rot: f32,
}

impl Beam {
    pub(super) fn decode(params: &[Sexp]) -> Result<Beam, DecodeError> {
        let beam = Beam {
            x: number_param(params, 0, "beam", "x")?,
            y: number_param(params, 1, "beam", "y")?,
            rot: number_param(params, 2, "beam", "rot")?,
        };
        // The reference corrupts the robot on a non-finite heading; ignore
        // any non-finite value instead.
        if !(beam.x.is_finite() && beam.y.is_finite() && beam.rot.is_finite()) {
            return Err(DecodeError::BadValue {
                command: "beam",
                what: format!(
                    "non-finite value in ({} {} {}) (ignored)",
                    beam.x, beam.y, beam.rot
                ),
            });
        }
        Ok(beam)
    }
}
