//! Monitor port, monitor messages, monitor commands and the match log
//! (issue 8), one module per area. Servers run on real loopback sockets.

#[path = "monitor/util.rs"]
mod util;

#[path = "monitor/commands.rs"]
mod commands;
#[path = "monitor/frames.rs"]
mod frames;
#[path = "monitor/log.rs"]
mod log;
#[path = "monitor/server.rs"]
mod server;
