//! What agent connections, the monitor ports and the simulation thread
//! say to each other. Connections send [`Input`]s over one channel to the
//! driver of the simulation (`crate::app::driver`), which hands them to
//! the simulation; news about an agent comes back over a `watch` channel
//! as the simulation's [`AgentStatus`], and the agent's frames through its
//! [`Outbox`].

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;

use tokio::sync::{watch, Notify};

use crate::command::trainer::MonitorRequest;
use crate::command::{Command, DecodeError};
use crate::net::outbox::Outbox;
use crate::sexp::ParseError;

use crate::sim::cycle::{AgentStatus, ConnId};

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
        pending: Arc<InFlight>,
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

/// The messages one connection has sent the simulation that it has not
/// processed yet. The connection stops reading past a limit and waits
/// for [`InFlight::below`], which the simulation thread wakes.
#[derive(Debug, Default)]
pub struct InFlight {
    count: AtomicUsize,
    processed: Notify,
}

impl InFlight {
    /// The connection has sent one message.
    pub fn sent(&self) {
        self.count.fetch_add(1, Ordering::AcqRel);
    }

    /// The simulation has processed one message.
    pub fn processed(&self) {
        self.count.fetch_sub(1, Ordering::AcqRel);
        self.processed.notify_one();
    }

    /// Messages in flight.
    pub fn get(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// Returns once fewer than `max` messages are in flight. For one
    /// waiter (the connection): a message processed while it was not
    /// waiting leaves a wake-up behind, so none is lost.
    pub async fn below(&self, max: usize) {
        while self.get() >= max {
            self.processed.notified().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::InFlight;

    #[tokio::test]
    async fn a_connection_behind_is_woken_by_the_message_processed() {
        let in_flight = Arc::new(InFlight::default());
        for _ in 0..3 {
            in_flight.sent();
        }
        let waiter = tokio::spawn({
            let in_flight = in_flight.clone();
            async move { in_flight.below(3).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "three in flight, the limit is three");
        // The simulation thread processes one.
        std::thread::spawn({
            let in_flight = in_flight.clone();
            move || in_flight.processed()
        })
        .join()
        .unwrap();
        waiter.await.unwrap();
        assert_eq!(in_flight.get(), 2);
        // Processed while nobody waited: the next wait does not hang.
        in_flight.processed();
        in_flight.below(3).await;
        in_flight.below(2).await;
    }
}
