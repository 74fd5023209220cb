//! The sending side of one agent connection: the frames the simulation
//! hands it, written to the socket in order and whole.
//!
//! The simulation thread writes a frame itself when nothing waits before
//! it and the socket takes it at once, which is the usual case: a client
//! that reads its frames. So a frame leaves the moment the simulation has
//! it, and it costs no wake-up of the network thread (in a virtual
//! machine waking a sleeping thread on another core is a good part of a
//! one-robot cycle). What the socket does not take (the rest of a frame,
//! and every frame behind it) waits in a queue that the connection's
//! writer task drains when the socket is writable. A client that does not
//! read never blocks the simulation: once `capacity` frames wait, further
//! frames are refused and the simulation drops them whole.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::{watch, Notify};

/// Why a frame was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushError {
    /// `capacity` frames are waiting: the client does not read.
    Full,
    /// A write failed; the connection is ending.
    Closed,
}

/// The simulation's end: hands frames to the connection. Dropping it
/// ends the connection's sending side once the waiting frames are written.
#[derive(Debug)]
pub struct Outbox {
    shared: Arc<Shared>,
}

/// The writer task's end (see [`OutboxWriter::run`]).
#[derive(Debug)]
pub struct OutboxWriter {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    socket: OwnedWriteHalf,
    state: Mutex<State>,
    /// Frames are waiting, or the simulation's end is gone.
    wake: Notify,
    capacity: usize,
    /// Frames written so far (for the connection's join deadline).
    written: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct State {
    /// Frames not yet written; the front one may be the unwritten rest of
    /// a frame the socket took in part.
    queue: VecDeque<Bytes>,
    /// The writer task is writing a frame it took from the queue.
    busy: bool,
    /// The simulation's end was dropped.
    closed: bool,
    /// Why a write failed.
    failed: Option<String>,
}

/// A connection's sending side over `socket`, at most `capacity` frames
/// waiting; the receiver counts the frames written.
pub fn outbox(
    socket: OwnedWriteHalf,
    capacity: usize,
) -> (Outbox, OutboxWriter, watch::Receiver<u64>) {
    let (written, written_rx) = watch::channel(0);
    let shared = Arc::new(Shared {
        socket,
        state: Mutex::new(State::default()),
        wake: Notify::new(),
        capacity: capacity.max(1),
        written,
    });
    (
        Outbox {
            shared: shared.clone(),
        },
        OutboxWriter { shared },
        written_rx,
    )
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held left the state consistent (every
        // update is a single assignment or queue operation).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn frame_written(&self) {
        self.written.send_modify(|n| *n += 1);
    }

    /// Writes as much of `buf` as the socket takes now, without waiting.
    fn write_now(&self, buf: &[u8]) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.socket.try_write(&buf[done..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    /// Writes all of `buf`, waiting for the socket as needed.
    async fn write_all(&self, buf: &[u8]) -> io::Result<()> {
        let mut done = 0;
        while done < buf.len() {
            self.socket.writable().await?;
            done += self.write_now(&buf[done..])?;
        }
        Ok(())
    }
}

impl Outbox {
    /// Hands the connection one frame: written now if nothing waits and
    /// the socket takes it, else queued for the writer task.
    pub fn push(&self, frame: Bytes) -> Result<(), PushError> {
        let shared = &*self.shared;
        let mut state = shared.state();
        if state.failed.is_some() {
            return Err(PushError::Closed);
        }
        if state.queue.is_empty() && !state.busy {
            match shared.write_now(&frame) {
                Ok(n) if n == frame.len() => {
                    drop(state);
                    shared.frame_written();
                    return Ok(());
                }
                Ok(n) => state.queue.push_back(frame.slice(n..)),
                Err(e) => {
                    state.failed = Some(format!("write failed: {e}"));
                    drop(state);
                    shared.wake.notify_one();
                    return Err(PushError::Closed);
                }
            }
        } else if state.queue.len() >= shared.capacity {
            return Err(PushError::Full);
        } else {
            state.queue.push_back(frame);
        }
        drop(state);
        shared.wake.notify_one();
        Ok(())
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        self.shared.state().closed = true;
        self.shared.wake.notify_one();
    }
}

impl OutboxWriter {
    /// Writes the frames the simulation could not write at once, in
    /// order, until a write fails or the simulation's end is gone and
    /// nothing waits. Returns why it stopped.
    pub async fn run(self) -> String {
        let shared = &*self.shared;
        loop {
            let next = {
                let mut state = shared.state();
                if let Some(reason) = &state.failed {
                    return reason.clone();
                }
                let next = state.queue.pop_front();
                if next.is_none() && state.closed {
                    return "closed by server".into();
                }
                state.busy = next.is_some();
                next
            };
            let Some(frame) = next else {
                shared.wake.notified().await;
                continue;
            };
            if let Err(e) = shared.write_all(&frame).await {
                let reason = format!("write failed: {e}");
                shared.state().failed = Some(reason.clone());
                return reason;
            }
            shared.state().busy = false;
            shared.frame_written();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;
    use tokio::net::{TcpListener, TcpStream};

    async fn pair(capacity: usize) -> (Outbox, OutboxWriter, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap());
        let (client, accepted) = tokio::join!(client, listener.accept());
        let (_, write_half) = accepted.unwrap().0.into_split();
        let (out, writer, _) = outbox(write_half, capacity);
        (out, writer, client.unwrap())
    }

    /// Frame `i`: a 4-byte length, then `len` copies of the byte `i`.
    fn frame(i: u8, len: usize) -> Bytes {
        let mut f = (len as u32).to_be_bytes().to_vec();
        f.extend(std::iter::repeat_n(i, len));
        Bytes::from(f)
    }

    #[tokio::test]
    async fn frames_a_slow_client_gets_arrive_whole_and_in_order_and_the_queue_is_bounded() {
        let (out, writer, mut client) = pair(4).await;
        let task = tokio::spawn(writer.run());
        // Far more than the socket buffers hold while the client reads
        // nothing: the first frames go out at once, then one in part, then
        // four wait and the rest are refused.
        let mut taken = Vec::new();
        let mut refused = 0;
        for i in 0..80u8 {
            match out.push(frame(i, 250_000)) {
                Ok(()) => taken.push(i),
                Err(e) => {
                    assert_eq!(e, PushError::Full);
                    refused += 1;
                }
            }
        }
        assert!(refused > 0, "a client that does not read fills the queue");
        drop(out);
        let mut got = Vec::new();
        let mut len = [0u8; 4];
        while client.read_exact(&mut len).await.is_ok() {
            let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
            client.read_exact(&mut body).await.unwrap();
            assert!(
                body.iter().all(|&b| b == body[0]),
                "frame {} mixed",
                body[0]
            );
            got.push(body[0]);
        }
        assert_eq!(
            got, taken,
            "every frame taken arrives once, whole, in order"
        );
        assert_eq!(task.await.unwrap(), "closed by server");
    }

    #[tokio::test]
    async fn a_client_that_went_away_ends_the_writer_with_the_write_error() {
        let (out, writer, client) = pair(4).await;
        let task = tokio::spawn(writer.run());
        drop(client);
        let mut pushes = 0;
        while out.push(frame(1, 1000)) != Err(PushError::Closed) {
            pushes += 1;
            assert!(pushes < 10_000, "writes to a closed peer never failed");
            tokio::task::yield_now().await;
        }
        let reason = task.await.unwrap();
        assert!(reason.starts_with("write failed"), "{reason}");
    }
}
