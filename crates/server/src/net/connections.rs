//! One lifecycle for the connections of every listener: the agent port
//! ([`crate::net::server`]), the monitor port ([`crate::monitor::serve`])
//! and the web monitor ([`crate::web`]).
//!
//! A listener accepts through [`Connections::accept`], decides whether the
//! newcomer may have a slot (its own policy: the agent port evicts the
//! oldest connection that has asked for no robot, the monitor port the one
//! that reads least, the web server holds a plain count of permits), then
//! runs the connection as a task of its [`Connections`], under the
//! connection's tracing span. Helper tasks of a connection (a socket
//! writer) and futures that a library spawns for it (the WebSocket of a
//! web viewer) belong to the same set.
//!
//! On shutdown ([`Connections::shutdown`]) the set asks every connection to
//! finish through [`Connections::stopping`], waits for all of them up to a
//! grace period, then drops those still running (which closes their
//! sockets) and waits for that too: when it returns, no connection task of
//! the listener is left. Every wait here is on a notification (the token,
//! the tracker); nothing sleeps in a loop to look again.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::task_tracker::TaskTrackerToken;
use tokio_util::task::TaskTracker;
use tracing::{info, Instrument};

use crate::limited;
use crate::log_limit::SharedLogLimit;

/// How long the connections of a listener get to finish once the server
/// stops before they are dropped.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// How long the accept loop pauses after a failed accept. Failures are
/// mostly a process out of file descriptors, which no event announces;
/// accepting again at once would spin.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);

/// The connection tasks of one listener.
#[derive(Debug, Clone)]
pub struct Connections {
    /// `agent`, `monitor`, `web`: for log lines.
    kind: &'static str,
    /// Every task and tracked future of the listener's connections.
    tracker: TaskTracker,
    /// Cancelled when the server stops: connections finish.
    stop: CancellationToken,
    /// Cancelled after the grace period: what still runs is dropped.
    abort: CancellationToken,
}

/// See [`Connections::hold`].
#[derive(Debug)]
pub struct Held {
    _token: TaskTrackerToken,
}

/// How a [`Connections::shutdown`] went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed {
    /// Tasks still running when the server stopped.
    pub open: usize,
    /// Of these, the ones still running after the grace period, dropped.
    pub dropped: usize,
}

impl Connections {
    /// An empty set for the listener of `kind` connections.
    pub fn new(kind: &'static str) -> Connections {
        Connections {
            kind,
            tracker: TaskTracker::new(),
            stop: CancellationToken::new(),
            abort: CancellationToken::new(),
        }
    }

    /// Cancelled when the server stops. A connection ends its loops on
    /// it; a connection that can be closed by itself (evicted) takes a
    /// [`child_token`](CancellationToken::child_token).
    pub fn stopping(&self) -> &CancellationToken {
        &self.stop
    }

    /// Tasks and tracked futures of this listener still running.
    pub fn live(&self) -> usize {
        self.tracker.len()
    }

    /// The next connection. A failed accept is logged (through `log`)
    /// and, after a pause of 100 ms, tried again.
    pub async fn accept(
        &self,
        listener: &TcpListener,
        log: &SharedLogLimit,
    ) -> (TcpStream, SocketAddr) {
        loop {
            match listener.accept().await {
                Ok(accepted) => return accepted,
                Err(e) => {
                    limited!(
                        log.admit("accept failed"),
                        warn!(kind = self.kind, cause = %e, "accept failed")
                    );
                    tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                }
            }
        }
    }

    /// Runs `task` as one of this listener's tasks (a connection or a
    /// helper of one). The handle gives its output, or `None` when it was
    /// dropped at the end of the grace period. It runs in the caller's
    /// span.
    pub fn spawn<F>(&self, task: F) -> JoinHandle<Option<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.tracker.spawn(self.droppable(task).in_current_span())
    }

    /// `task`, counted among this listener's tasks, for code that spawns
    /// it itself (a library's upgrade of an HTTP connection).
    pub fn track<F>(&self, task: F) -> impl Future<Output = Option<F::Output>> + Send + 'static
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.tracker.track_future(self.droppable(task))
    }

    /// Counts as one of this listener's tasks until dropped: for a
    /// connection on its way from one task to another (an HTTP connection
    /// upgraded to a WebSocket), so that a shutdown meanwhile waits for it.
    pub fn hold(&self) -> Held {
        Held {
            _token: self.tracker.token(),
        }
    }

    fn droppable<F: Future>(&self, task: F) -> impl Future<Output = Option<F::Output>> {
        let abort = self.abort.clone();
        async move {
            tokio::select! {
                biased;
                _ = abort.cancelled() => None,
                out = task => Some(out),
            }
        }
    }

    /// Asks every connection to finish, waits up to `grace` for them,
    /// then drops the rest and waits until they are gone. Connections
    /// accepted from now on are dropped at once.
    pub async fn shutdown(&self, grace: Duration) -> Closed {
        let open = self.tracker.len();
        self.stop.cancel();
        self.tracker.close();
        let mut dropped = 0;
        if tokio::time::timeout(grace, self.tracker.wait())
            .await
            .is_err()
        {
            dropped = self.tracker.len();
            self.abort.cancel();
            self.tracker.wait().await;
        }
        if open > 0 {
            info!(
                kind = self.kind,
                open,
                dropped,
                grace_secs = grace.as_secs_f32(),
                "connections closed"
            );
        }
        Closed { open, dropped }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::sync::{oneshot, Semaphore};

    use super::*;

    #[tokio::test]
    async fn shutdown_waits_for_connections_that_finish_when_asked() {
        let conns = Connections::new("test");
        let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
        for k in 0..3 {
            let stop = conns.stopping().clone();
            let done = done_tx.clone();
            conns.spawn(async move {
                stop.cancelled().await;
                // Finishing takes a moment (a last write, a log line).
                tokio::task::yield_now().await;
                let _ = done.send(k);
            });
        }
        drop(done_tx);
        assert_eq!(conns.live(), 3);
        let closed = conns.shutdown(Duration::from_secs(30)).await;
        assert_eq!(
            closed,
            Closed {
                open: 3,
                dropped: 0
            }
        );
        assert_eq!(conns.live(), 0);
        let mut finished = Vec::new();
        while let Some(k) = done_rx.recv().await {
            finished.push(k);
        }
        finished.sort();
        assert_eq!(
            finished,
            [0, 1, 2],
            "every connection finished before shutdown returned"
        );
    }

    #[tokio::test]
    async fn shutdown_drops_connections_that_do_not_finish_within_the_grace() {
        let conns = Connections::new("test");
        let (dropped_tx, dropped_rx) = oneshot::channel::<()>();
        let stubborn = conns.spawn(async move {
            // Holds the sender until dropped: the receiver then sees it.
            let _guard = dropped_tx;
            std::future::pending::<()>().await;
        });
        let polite = conns.spawn({
            let stop = conns.stopping().clone();
            async move { stop.cancelled().await }
        });
        let grace = Duration::from_millis(50);
        let started = std::time::Instant::now();
        let closed = conns.shutdown(grace).await;
        assert_eq!(
            closed,
            Closed {
                open: 2,
                dropped: 1
            }
        );
        assert!(started.elapsed() >= grace);
        assert_eq!(conns.live(), 0);
        assert!(dropped_rx.await.is_err(), "the stubborn task was dropped");
        assert_eq!(stubborn.await.unwrap(), None);
        assert_eq!(polite.await.unwrap(), Some(()));
    }

    #[tokio::test]
    async fn tracked_futures_spawned_elsewhere_count_and_are_joined() {
        let conns = Connections::new("test");
        let stop = conns.stopping().clone();
        let (seen_tx, seen_rx) = oneshot::channel();
        let tracked = conns.track(async move {
            stop.cancelled().await;
            let _ = seen_tx.send(());
        });
        // Spawned by someone else, as a library does.
        let handle = tokio::spawn(tracked);
        assert_eq!(conns.live(), 1);
        let closed = conns.shutdown(Duration::from_secs(30)).await;
        assert_eq!(closed.dropped, 0);
        assert!(seen_rx.await.is_ok());
        assert_eq!(handle.await.unwrap(), Some(()));
    }

    #[tokio::test]
    async fn a_permit_held_by_each_connection_bounds_them_and_comes_back_when_it_ends() {
        // The web server's policy: a semaphore, one owned permit a connection.
        let conns = Connections::new("test");
        let limit = Arc::new(Semaphore::new(2));
        let mut ends = Vec::new();
        for _ in 0..2 {
            let permit = limit.clone().try_acquire_owned().expect("a free slot");
            let (end_tx, end_rx) = oneshot::channel::<()>();
            ends.push(end_tx);
            conns.spawn(async move {
                let _permit = permit;
                let _ = end_rx.await;
            });
        }
        assert!(
            limit.clone().try_acquire_owned().is_err(),
            "limit respected"
        );
        // A newcomer waits for a slot; it is woken when a connection ends.
        let waiting = tokio::spawn(limit.clone().acquire_owned());
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(ends.pop());
        let permit = waiting.await.unwrap().expect("semaphore open");
        assert_eq!(conns.live(), 1);
        drop(permit);
        drop(ends);
        let closed = conns.shutdown(Duration::from_secs(30)).await;
        assert_eq!(closed.dropped, 0);
        assert_eq!(limit.available_permits(), 2);
    }
}
