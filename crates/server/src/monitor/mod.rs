//! Monitors (RoboViz and trainer scripts on port 3200) and the match log.
//!
//! This module owns everything a consumer of the world picture sees:
//!
//! * [`frame`]: full states and per-consumer deltas built from a
//!   [`WorldSnapshot`](crate::sim::snapshot::WorldSnapshot) (pure; no I/O);
//! * [`command`]: monitor commands decoded from frame bytes into the
//!   trainer commands of [`crate::command::trainer`] (pure);
//! * [`server`]: the TCP fan-out. Each connection follows a `watch`
//!   channel of snapshots and builds its own deltas, so a slow monitor only
//!   skips snapshots and never stalls the simulation or other monitors;
//! * [`log`]: the match log on its own thread, one frame per line;
//! * [`follow`]: a monitor stream checked and its scene tracked, from a
//!   socket or a log (the monitor client and trainer chores built on it
//!   are in `rcss3d-clients`).
//!
//! It must not touch the physics world or the referee: commands are handed
//! to the simulation as [`MonitorRequest`]s and carried out there.

pub mod backlog;
pub mod command;
pub mod config;
pub mod follow;
pub mod frame;
pub mod log;
pub mod number;
pub mod server;
pub mod sexp;

pub use crate::command::trainer::{
    IgnoredCommand, MonitorCommand, MonitorRequest, RobotRef, Selection,
};
pub use command::{parse_commands, MonitorCommandError};
pub use config::{FieldParams, MonitorConfig};
pub use frame::{ConsumerState, FrameBuilder, FrameKind};
pub use log::{LogError, LogHandle, LogStats, LogWriter, MatchSummary};
pub use server::serve;
