//! The web server's accept loop: at most a fixed number of connections
//! open at once (the next accept waits for a permit, which a closing
//! connection gives back; further clients wait in the kernel's backlog),
//! so idle or half-open HTTP connections cannot grow without bound. A
//! connection keeps its permit after an upgrade to a WebSocket. Each
//! connection is served by hyper in a task of the web server's
//! [`Connections`], under a span with the peer's address. Each
//! connection's kernel send buffer is fixed, so a slow viewer's backlog
//! stays small: its sends block early and it skips to the newest picture
//! instead of watching seconds-old ones.
//!
//! A connection that has not yet been answered (its client is still to
//! send a complete request: a header-stalling "slowloris" client) holds
//! its slot only while the slots last: when every slot is taken, the
//! oldest such connection is closed for the newcomer, so stalled
//! connections, however many, cannot keep the page from being served.
//! Connections that were answered (page loads, viewers) are never closed
//! for a newcomer.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tracing::{debug, debug_span, Instrument};

use crate::log_limit::SharedLogLimit;
use crate::net::connections::Connections;

/// How long a client may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection not yet answered, which a newcomer may displace.
struct Unanswered {
    /// Set by the connection's first write (the server has answered).
    answered: Arc<AtomicBool>,
    /// Closes the connection.
    close: CancellationToken,
}

/// The connections not yet answered, oldest first.
#[derive(Default)]
struct Waiting(Mutex<VecDeque<Unanswered>>);

impl Waiting {
    fn push(&self, u: Unanswered) {
        if let Ok(mut q) = self.0.lock() {
            // Forget the answered and the closed.
            q.retain(|u| !u.answered.load(Ordering::Relaxed) && !u.close.is_cancelled());
            q.push_back(u);
        }
    }

    /// Closes the oldest connection not yet answered; whether there was
    /// one.
    fn close_oldest(&self) -> bool {
        let Ok(mut q) = self.0.lock() else {
            return false;
        };
        while let Some(u) = q.pop_front() {
            if !u.answered.load(Ordering::Relaxed) && !u.close.is_cancelled() {
                u.close.cancel();
                return true;
            }
        }
        false
    }
}

/// Serves `router` on `listener` until `shutdown` completes, with at most
/// `max` connections open, each with a kernel send buffer of
/// `send_buffer` bytes (`None`: the system's). Connection tasks go to `conns`;
/// the caller shuts them down.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    max: usize,
    send_buffer: Option<usize>,
    conns: &Connections,
    log: &SharedLogLimit,
    shutdown: impl Future<Output = ()>,
) {
    let permits = Arc::new(Semaphore::new(max.max(1)));
    let waiting = Waiting::default();
    tokio::pin!(shutdown);
    loop {
        let permit = match permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                // Every slot is taken: a connection still waiting for its
                // request gives way (its slot comes back as it closes).
                if waiting.close_oldest() {
                    debug!("web slots full: the oldest connection without a request closed");
                }
                tokio::select! {
                    _ = &mut shutdown => break,
                    permit = permits.clone().acquire_owned() => match permit {
                        Ok(permit) => permit,
                        // Never closed.
                        Err(_) => break,
                    },
                }
            }
        };
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = conns.accept(&listener, log) => accepted,
        };
        let _ = stream.set_nodelay(true);
        if let Some(bytes) = send_buffer {
            let sock = socket2::SockRef::from(&stream);
            if let Err(e) = sock.set_send_buffer_size(bytes) {
                debug!(cause = %e, "cannot set the send buffer");
            }
        }
        let answered = Arc::new(AtomicBool::new(false));
        let close = CancellationToken::new();
        waiting.push(Unanswered {
            answered: answered.clone(),
            close: close.clone(),
        });
        let io = TokioIo::new(LimitedStream {
            stream,
            answered,
            _permit: permit,
        });
        let service = TowerToHyperService::new(router.clone());
        let stop = conns.stopping().clone();
        conns.spawn(
            async move {
                let mut builder = http1::Builder::new();
                builder
                    .timer(TokioTimer::new())
                    .header_read_timeout(HEADER_TIMEOUT);
                let conn = builder.serve_connection(io, service).with_upgrades();
                tokio::pin!(conn);
                let served = tokio::select! {
                    served = conn.as_mut() => served,
                    // Displaced before it was answered: nothing to finish.
                    _ = close.cancelled() => Ok(()),
                    _ = stop.cancelled() => {
                        // Ends after the request in progress, if any.
                        conn.as_mut().graceful_shutdown();
                        conn.await
                    }
                };
                if let Err(e) = served {
                    debug!(cause = %e, "HTTP connection ended with an error");
                }
                // Ended: no longer one a newcomer could displace.
                close.cancel();
            }
            .instrument(debug_span!("http", %peer)),
        );
    }
}

/// A connection that gives its slot back when dropped (after an upgrade,
/// when the WebSocket closes).
struct LimitedStream {
    stream: TcpStream,
    /// Set at the first write: the connection has been answered.
    answered: Arc<AtomicBool>,
    _permit: OwnedSemaphorePermit,
}

impl AsyncRead for LimitedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for LimitedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.answered.store(true, Ordering::Relaxed);
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.answered.store(true, Ordering::Relaxed);
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}
