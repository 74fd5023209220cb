//! The network side: the connection lifecycle every listener shares
//! ([`connections`]: accept, run each connection as a tracked task, join
//! them on shutdown), the agent accept loop and what bounds one client:
//! the inbound byte budget ([`rate`]) and the join deadline of a
//! connection that keeps the server waiting ([`handshake`]). Frames are
//! cut by [`crate::framing`] and repeated log lines thinned by
//! [`crate::log_limit`]. Nothing here knows about the world; connections
//! send the simulation thread their commands through a channel ([`inputs`])
//! and get its frames through their bounded [`outbox`]. The other end,
//! the agent client of the tests and tools, is in `rcss3d-clients`.

pub mod connections;
pub mod handshake;
pub mod inputs;
pub mod outbox;
pub mod rate;
pub mod server;
