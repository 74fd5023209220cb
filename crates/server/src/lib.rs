//! One rcss3d server: the simulation thread and its clock, the agent and
//! monitor ports, the match log, the web monitor and the configuration,
//! on top of the simulation of `rcss3d-core`.
//!
//! # Data flow
//!
//! ```text
//! agents ──TCP─► framing ─► sexp::parse ─► command::Command ────────┐
//! monitors ─TCP─► framing ─► monitor::command ─► command::trainer ───┤ net::inputs::Input
//!                                                                     ▼
//!                 app::driver (thread, clock, sync wait) ─► sim::cycle::Simulation
//!                                                             │ physics (sim::world, rapier3d)
//!                                                             │ referee (rules)
//!                                                             │ perception ─► percept text
//!                                                             ▼
//! percept text ─► app::driver ─► framing ─► net::outbox ─► agents
//! AgentStatus (scene received, joined) ─► the agent's connection (span, join deadline)
//! sim::snapshot ─► monitor (per-consumer deltas) / match log (monitor::log)
//! ```
//!
//! # Layers
//!
//! ```text
//! web      the web monitor, attached to a running server (app)
//!  ▼
//! app      one server: app::driver (the simulation thread), the ports, the log
//!  ├─► net       agent connections; net::inputs: Input in, AgentStatus back
//!  ├─► monitor   monitor port and frames, monitor commands decoded, match log
//!  ▼
//! config   the server's Config; builds the simulation's SimConfig
//!  ▼
//! rcss3d-core (sim, rules, perception, command, sexp), framing
//! ```
//!
//! The core's modules are re-exported under their own names (`sim`,
//! `rules`, ...), so `crate::sim` reads the same here as there.
//!
//! * [`app`]: one running server: the simulation thread and its clock
//!   (`app::driver`), match log, monitor and agent ports, extensions; the
//!   results summary returned to the caller; real-time scheduling
//!   (`app::latency`).
//! * [`config`]: one `Config` with every default documented; RON loading,
//!   the user's files laid over the defaults.
//! * [`framing`]: the 4-byte length prefix of every message, both ways.
//! * [`net`]: the agent accept loop and connections, the bounds on one
//!   client, the connection lifecycle all three listeners share (agents,
//!   monitors, web: bounded, joined on shutdown), the messages to and from
//!   the simulation thread (`net::inputs`), and the agent-side client tests
//!   and tools use.
//! * [`monitor`]: monitor frames, monitor command decoding, the match
//!   log, following a monitor stream (`monitor::follow`) and the monitor
//!   client.
//! * [`procfs`]: CPU time and memory of a process, for tools and tests.
//! * [`web`]: the 3D web monitor (page + WebSocket), live and for logs.
#![warn(missing_docs)]

pub use rcss3d_core::{
    command, input_file, limited, log_limit, perception, playmode, rules, sexp, sim, untrusted,
};

pub mod app;
pub mod config;
pub mod framing;
pub mod monitor;
pub mod net;
pub mod procfs;
pub mod web;
