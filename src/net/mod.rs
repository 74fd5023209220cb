//! The network side: length-prefixed framing and the agent accept loop.
//! Nothing here knows about the world; connections talk to the simulation
//! thread through channels (see [`crate::sim::driver`]).

pub mod framing;
pub mod handshake;
pub mod log_limit;
pub mod rate;
pub mod server;
