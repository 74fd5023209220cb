//! A TCP listener for the web server that holds at most a fixed number of
//! connections open: the next accept waits until one closes (further
//! clients wait in the kernel's backlog), so idle or half-open HTTP
//! connections cannot grow without bound. Each connection's kernel send
//! buffer is fixed, so a slow viewer's backlog stays small: its sends
//! block early and it skips to the newest picture instead of watching
//! seconds-old ones.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// [`TcpListener`] with a cap on open connections.
pub struct LimitedListener {
    inner: TcpListener,
    permits: Arc<Semaphore>,
    send_buffer: usize,
}

impl LimitedListener {
    /// At most `max` connections of `inner` open at once, each with a
    /// kernel send buffer of `send_buffer` bytes (0: the system's).
    pub fn new(inner: TcpListener, max: usize, send_buffer: usize) -> LimitedListener {
        LimitedListener {
            inner,
            permits: Arc::new(Semaphore::new(max.max(1))),
            send_buffer,
        }
    }
}

/// A connection that gives its slot back when dropped.
pub struct LimitedStream {
    stream: TcpStream,
    _permit: OwnedSemaphorePermit,
}

impl axum::serve::Listener for LimitedListener {
    type Io = LimitedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (LimitedStream, SocketAddr) {
        // The semaphore is never closed; the retry only keeps this total.
        let permit = loop {
            if let Ok(p) = self.permits.clone().acquire_owned().await {
                break p;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        loop {
            match self.inner.accept().await {
                Ok((stream, addr)) => {
                    let _ = stream.set_nodelay(true);
                    if self.send_buffer > 0 {
                        let sock = socket2::SockRef::from(&stream);
                        if let Err(e) = sock.set_send_buffer_size(self.send_buffer) {
                            tracing::debug!(cause = %e, "cannot set the send buffer");
                        }
                    }
                    return (
                        LimitedStream {
                            stream,
                            _permit: permit,
                        },
                        addr,
                    );
                }
                Err(e) => {
                    // Typically out of file descriptors: back off.
                    tracing::warn!(cause = %e, "web accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
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
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}
