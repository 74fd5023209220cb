//! The other ends of the server's ports, for the tests, the tools, the
//! examples and the command line's subcommands: an agent client
//! ([`agent`]), a monitor client that checks every message and tracks the
//! scene ([`monitor`]) and trainer chores on top of it ([`trainer`]). The
//! server itself uses none of them.
#![warn(missing_docs)]

pub mod agent;
pub mod monitor;
pub mod trainer;
