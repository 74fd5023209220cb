//! Monitor port, monitor messages, monitor commands and the match log, one
//! module per area. Servers run on real loopback sockets.

mod util;

/// The whole server for end-to-end tests (`tests/util`).
#[path = "../util/mod.rs"]
mod harness;

mod commands;
mod frames;
mod hostile;
mod log;
mod server;
mod teams;
