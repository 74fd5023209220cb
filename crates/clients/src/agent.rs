//! The agent side of the protocol: connect to the agent port, write
//! length-prefixed messages, read whole frames. The integration tests, the
//! load generator and the soak tool all talk to the server through this
//! client, so the framing a client sees is written in one place
//! (`rcss3d_server::framing`).
//!
//! [`AgentClient`] is the tokio client; [`BlockingAgentClient`] is the
//! same over a blocking socket, for a load generator that runs one thread
//! per agent. Both read into one buffer and cut frames with the server's
//! codec ([`framing::codec`]), so a read that is cancelled (a timeout)
//! never loses part of a frame.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, ToSocketAddrs};
use tokio_util::codec::{Decoder, LengthDelimitedCodec};

use rcss3d_server::framing;

/// Largest frame a client accepts from the server (a perception frame is
/// a few kB; this only guards against a corrupt length prefix).
pub const MAX_SERVER_FRAME: usize = 1 << 20;

/// Prefix + payload, ready for one write. An empty payload is a frame of
/// length 0 (a client may send one; the server ignores it).
pub fn frame(payload: &[u8]) -> Bytes {
    framing::encode(payload).unwrap_or_else(|| Bytes::from_static(&[0, 0, 0, 0]))
}

/// Cuts the next whole frame off `buf`, if one has arrived.
fn next_frame(codec: &mut LengthDelimitedCodec, buf: &mut BytesMut) -> io::Result<Option<Bytes>> {
    Ok(codec.decode(buf)?.map(BytesMut::freeze))
}

/// An agent connection over tokio.
#[derive(Debug)]
pub struct AgentClient {
    stream: TcpStream,
    buf: BytesMut,
    codec: LengthDelimitedCodec,
}

impl AgentClient {
    /// Connects (with `TCP_NODELAY`, as agents do).
    pub async fn connect(addr: impl ToSocketAddrs) -> io::Result<AgentClient> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(AgentClient::from_stream(stream))
    }

    /// Wraps a connected socket.
    pub fn from_stream(stream: TcpStream) -> AgentClient {
        AgentClient {
            stream,
            buf: BytesMut::with_capacity(16 << 10),
            codec: framing::codec(MAX_SERVER_FRAME),
        }
    }

    /// The socket (addresses, socket options).
    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// Sends one message.
    pub async fn send(&mut self, msg: &str) -> io::Result<()> {
        self.send_bytes(msg.as_bytes()).await
    }

    /// Sends one message given as bytes.
    pub async fn send_bytes(&mut self, payload: &[u8]) -> io::Result<()> {
        self.stream.write_all(&frame(payload)).await
    }

    /// Writes bytes as they are (for malformed input: a length prefix
    /// that lies, half a frame).
    pub async fn send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes).await
    }

    /// The next whole frame, or `None` when the server closed the
    /// connection. Cancel-safe: bytes read before a cancellation stay
    /// buffered for the next call.
    pub async fn recv(&mut self) -> io::Result<Option<Bytes>> {
        loop {
            if let Some(f) = next_frame(&mut self.codec, &mut self.buf)? {
                return Ok(Some(f));
            }
            if self.stream.read_buf(&mut self.buf).await? == 0 {
                return Ok(None);
            }
        }
    }

    /// [`recv`](Self::recv) with a time limit: `None` on timeout, close
    /// or error.
    pub async fn recv_within(&mut self, timeout: Duration) -> Option<Bytes> {
        tokio::time::timeout(timeout, self.recv())
            .await
            .ok()
            .and_then(Result::ok)
            .flatten()
    }

    /// Whether the server closes the connection within `timeout`; frames
    /// arriving meanwhile are discarded.
    pub async fn closed_within(&mut self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut scratch = [0u8; 4096];
        loop {
            match tokio::time::timeout_at(deadline, self.stream.read(&mut scratch)).await {
                Err(_) => return false,
                Ok(Ok(0)) | Ok(Err(_)) => return true,
                Ok(Ok(_)) => continue,
            }
        }
    }
}

/// An agent connection over a blocking socket.
#[derive(Debug)]
pub struct BlockingAgentClient {
    stream: std::net::TcpStream,
    buf: BytesMut,
    codec: LengthDelimitedCodec,
}

impl BlockingAgentClient {
    /// Connects within `timeout` (with `TCP_NODELAY`).
    pub fn connect(addr: SocketAddr, timeout: Duration) -> io::Result<BlockingAgentClient> {
        let stream = std::net::TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_nodelay(true)?;
        Ok(BlockingAgentClient {
            stream,
            buf: BytesMut::with_capacity(64 << 10),
            codec: framing::codec(MAX_SERVER_FRAME),
        })
    }

    /// The socket (timeouts, addresses).
    pub fn stream(&self) -> &std::net::TcpStream {
        &self.stream
    }

    /// Sends one message given as bytes.
    pub fn send_bytes(&mut self, payload: &[u8]) -> io::Result<()> {
        io::Write::write_all(&mut self.stream, &frame(payload))
    }

    /// Writes bytes as they are (an already framed message).
    pub fn send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        io::Write::write_all(&mut self.stream, bytes)
    }

    /// The next whole frame; an `UnexpectedEof` error when the server
    /// closed the connection.
    pub fn recv(&mut self) -> io::Result<Bytes> {
        let mut chunk = [0u8; 16 << 10];
        loop {
            if let Some(f) = next_frame(&mut self.codec, &mut self.buf)? {
                return Ok(f);
            }
            let n = io::Read::read(&mut self.stream, &mut chunk)?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}
