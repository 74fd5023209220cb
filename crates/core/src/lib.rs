//! The rcss3d simulation and the layers below it.
//!
//! ```text
//! sim      Simulation: agent and trainer commands in; percepts,
//!  │       snapshots, agent status and the step report out
//!  ├─► perception   percept text from what the world shows, with an rng
//!  ├─► rules        the referee: facts in, decisions out
//!  ▼
//! command  agent commands and trainer commands (command::trainer) as values
//!  ▼
//! sexp · playmode · untrusted · log_limit · input_file    leaves
//! ```
//!
//! Each arrow reads "uses"; none points back up. Nothing here opens a
//! socket, starts a thread, reads the wall clock or knows the server's
//! configuration: the simulation reads its own [`sim::config::SimConfig`].
//! The server (`rcss3d-server`) runs it.
//!
//! * [`sexp`]: the S-expression tree, its parser (sfsexp rules) and printer.
//! * [`command`]: agent effectors decoded into typed commands, and the
//!   trainer commands monitors send.
//! * [`playmode`]: team sides and play modes, as the protocol names them.
//! * [`rules`]: the referee as plain functions of state, facts and time.
//! * [`perception`]: perceptors: world snapshot + rng -> percept text.
//! * [`sim`]: the rapier3d world, robot models and scenes, and the cycle.
//! * [`log_limit`]: thinning of repeated log lines (bad input, floods).
//! * [`untrusted`]: untrusted text cut short for log lines and errors.
//! * [`input_file`]: reading a file the server trusts no more than a socket.
#![warn(missing_docs)]

pub mod command;
pub mod input_file;
pub mod log_limit;
pub mod perception;
pub mod playmode;
pub mod rules;
pub mod sexp;
pub mod sim;
pub mod untrusted;
