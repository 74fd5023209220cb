//! What agent connections, the monitor ports and the simulation thread
//! say to each other. Connections send [`Input`]s over one channel to the
//! driver of the simulation (`crate::app::driver`), which hands them to
//! the simulation; news about an agent comes back over a `watch` channel
//! as the simulation's [`AgentStatus`], and the agent's frames through its
//! [`Outbox`].

use std::net::SocketAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::mpsc::Sender;
use std::sync::Arc;

use tokio::sync::watch;

use crate::command::trainer::MonitorRequest;
use crate::command::{Command, DecodeError};
use crate::net::outbox::Outbox;
use crate::sexp::ParseError;

pub use crate::sim::cycle::{AgentStatus, ConnId};

/// Everything that reaches the simulation thread.
#[derive(Debug)]
pub enum Input {
    /// A new agent connection.
    Connected {
        /// Connection id (assigned in accept order).
        conn: ConnId,
        /// Peer address, for logs.
        peer: SocketAddr,
        /// Where this connection's frames go.
        out: Outbox,
        /// News about the agent (joined, scene refused), for the
        /// connection's log span and its join deadline.
        status: watch::Sender<AgentStatus>,
        /// Messages sent to the simulation and not yet processed.
        pending: Arc<AtomicUsize>,
    },
    /// One message of an agent, parsed and decoded.
    Message {
        /// Connection id.
        conn: ConnId,
        /// The decoded commands, in order.
        commands: Vec<Result<Command, DecodeError>>,
        /// The syntax error that cut the message short, if any.
        parse_error: Option<ParseError>,
    },
    /// The connection is gone.
    Gone {
        /// Connection id.
        conn: ConnId,
        /// Why, for the log.
        reason: String,
    },
    /// A monitor/trainer command.
    Monitor(MonitorRequest),
    /// Stop the server (Ctrl-C, SIGTERM).
    Shutdown,
}

/// The sending side used by connections.
pub type InputSender = Sender<Input>;
