//! A SimSpark-compatible RoboCup 3D soccer simulator.
//!
//! # Data flow
//!
//! ```text
//! TCP bytes ─► framing ─► sexp::parse ─► command::Command ──────┐
//!                                                               ▼
//!     monitor commands ─► monitor::command ─► sim::cycle::Simulation::step
//!                                                  │  physics (sim::world, rapier3d)
//!                                                  │  referee (rules)
//!                                                  ▼
//!                         perception ─► per-agent frames ─► net ─► agents
//!                         sim::snapshot ─► monitor (per-consumer deltas) / match log
//! ```
//!
//! # Module map
//!
//! * [`app`]: one running server: simulation thread, match log, monitor
//!   and agent ports, extensions, results summary.
//! * [`cli`]: the command line of the server binaries (`rcss3d`,
//!   `rcssserver3d`, `simspark`).
//! * [`config`]: one `Config` with every default documented; RON loading,
//!   the user's files laid over the defaults.
//! * [`framing`]: the 4-byte length prefix of every message, both ways.
//! * [`log_limit`]: thinning of repeated log lines (bad input, floods).
//! * [`net`]: the agent accept loop and connections, the bounds on one
//!   client, the connection lifecycle all three listeners share (agents,
//!   monitors, web: bounded, joined on shutdown), and the agent-side
//!   client tests and tools use.
//! * [`sexp`]: the S-expression tree, its parser (sfsexp rules) and printer.
//! * [`command`]: agent effectors decoded into typed commands.
//! * [`sim`]: the rapier3d world, robot models and scenes, and the cycle.
//! * [`rules`]: the referee as plain functions of state, facts and time.
//! * [`perception`]: perceptors: world snapshot + rng -> percept text.
//! * [`monitor`]: monitor frames, monitor commands and the match log.
//! * [`procfs`]: CPU time and memory of a process, for tools and tests.
//! * [`text`]: untrusted text cut short for log lines and errors.
//! * [`web`]: the 3D web monitor (page + WebSocket), live and for logs.
#![warn(missing_docs)]

pub mod app;
pub mod cli;
pub mod command;
pub mod config;
pub mod framing;
pub mod log_limit;
pub mod monitor;
pub mod net;
pub mod perception;
pub mod procfs;
pub mod rules;
pub mod sexp;
pub mod sim;
pub mod text;
pub mod web;
