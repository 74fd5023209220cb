//! A SimSpark-compatible RoboCup 3D soccer simulator.
//!
//! # Data flow
//!
//! ```text
//! agents ──TCP─► framing ─► sexp::parse ─► command::Command ────────┐
//! monitors ─TCP─► framing ─► monitor::command ─► command::trainer ───┤ net::link::Input
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
//! Each arrow reads "uses"; none points back up. The simulation takes
//! typed inputs (agent and trainer commands) and returns typed outputs
//! (percept text, snapshots, agent status, the step report); sockets,
//! framing, the wall clock, threads, outboxes and the match log belong to
//! the layers above it.
//!
//! ```text
//! cli      the binaries: Config, tracing, listeners; prints the results
//!  ├─► web       the web monitor, attached to a running server (app)
//!  ▼
//! app      one server: app::driver (the simulation thread), the ports, the log
//!  ├─► net       agent connections; net::link: Input in, AgentStatus back
//!  ├─► monitor   monitor port and frames, monitor commands decoded, match log
//!  ▼
//! sim      Simulation: commands in; percepts, snapshots, StepReport out
//!  ├─► perception   percept text from what the world shows, with an rng
//!  ├─► rules        the referee: facts in, decisions out
//!  ▼
//! command  agent commands and trainer commands (command::trainer) as values
//!  ▼
//! sexp · framing · text · log_limit    leaves
//! ```
//!
//! `net` and `monitor` read `sim` only for plain values (`AgentStatus`,
//! `ConnId`, `sim::snapshot`); trainer commands name `rules::PlayMode` and
//! `rules::Side`. [`config`] stands beside the layers: it
//! gathers the options types of `sim`, `rules`, `perception` and
//! `monitor`, and every layer reads its part.
//!
//! # Module map
//!
//! * [`app`]: one running server: the simulation thread and its clock
//!   (`app::driver`), match log, monitor and agent ports, extensions; the
//!   results summary returned to the caller.
//! * [`cli`]: the command line of the server binaries (`rcss3d`,
//!   `rcssserver3d`, `simspark`).
//! * [`config`]: one `Config` with every default documented; RON loading,
//!   the user's files laid over the defaults.
//! * [`framing`]: the 4-byte length prefix of every message, both ways.
//! * [`log_limit`]: thinning of repeated log lines (bad input, floods).
//! * [`net`]: the agent accept loop and connections, the bounds on one
//!   client, the connection lifecycle all three listeners share (agents,
//!   monitors, web: bounded, joined on shutdown), the messages to and from
//!   the simulation thread (`net::link`), and the agent-side client tests
//!   and tools use.
//! * [`sexp`]: the S-expression tree, its parser (sfsexp rules) and printer.
//! * [`command`]: agent effectors decoded into typed commands, and the
//!   trainer commands monitors send.
//! * [`sim`]: the rapier3d world, robot models and scenes, and the cycle;
//!   no sockets, clocks, framing or log files.
//! * [`rules`]: the referee as plain functions of state, facts and time.
//! * [`perception`]: perceptors: world snapshot + rng -> percept text.
//! * [`monitor`]: monitor frames, monitor command decoding and the match
//!   log.
//! * [`procfs`]: CPU time and memory of a process, for tools and tests.
//! * [`text`]: untrusted text cut short for log lines and errors.
//! * [`web`]: the 3D web monitor (page + WebSocket), live and for logs.
#![warn(missing_docs)]

pub mod app;
pub mod cli;
pub mod command;
pub mod config;
pub mod framing;
pub mod input_file;
pub mod log_limit;
pub mod monitor;
pub mod net;
pub mod perception;
pub mod playmode;
pub mod procfs;
pub mod rules;
pub mod sexp;
pub mod sim;
pub mod text;
pub mod web;
