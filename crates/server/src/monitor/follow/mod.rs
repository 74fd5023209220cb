//! Following a monitor stream without a socket: every message checked
//! against the rules RoboViz depends on (`check`) and applied to a tracked
//! copy of the scene (`tracked`). The monitor client, `rcss3d check-log`
//! and the web monitor's log replay read monitor text through these.

use thiserror::Error;

mod check;
mod tracked;

pub use check::{check_log, is_roboviz_mesh, validate_message, LogCheck, LogChecker};
pub use tracked::{GameView, NodeKind, RobotView, SceneNode, TrackedScene};

/// Why a monitor stream (a connection or a log) could not be followed.
#[derive(Debug, Error)]
pub enum StreamError {
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

/// A [`StreamError::Invalid`] with `msg`.
pub fn invalid(msg: impl Into<String>) -> StreamError {
    StreamError::Invalid(msg.into())
}
