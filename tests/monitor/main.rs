//! Monitor port, monitor messages, monitor commands and the match log, one
//! module per area. Servers run on real loopback sockets.

mod util;

mod commands;
mod frames;
mod log;
mod server;
