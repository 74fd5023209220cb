//! The network side: length-prefixed framing, the agent accept loop and
//! what bounds one client: the inbound byte budget ([`rate`]), the join
//! deadline of a connection that keeps the server waiting ([`handshake`])
//! and the thinning of log lines clients cause ([`log_limit`]). Nothing
//! here knows about the world; connections talk to the simulation thread
//! through channels (see [`crate::sim::driver`]). [`client`] is the other
//! end: the agent client of the tests and tools.

pub mod client;
pub mod framing;
pub mod handshake;
pub mod log_limit;
pub mod rate;
pub mod server;
