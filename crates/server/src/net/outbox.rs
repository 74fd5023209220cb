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
use tokio::sync::Notify;

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
/// waiting.
pub fn outbox(socket: OwnedWriteHalf, capacity: usize) -> (Outbox, OutboxWriter) {
    let shared = Arc::new(Shared {
        socket,
        state: Mutex::new(State::default()),
        wake: Notify::new(),
        capacity: capacity.max(1),
    });
    (
        Outbox {
            shared: shared.clone(),
        },
        OutboxWriter { shared },
    )
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held left the state consistent (every
        // update is a single assignment or queue operation).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
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
                Ok(n) if n == frame.len() => return Ok(()),
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
        }
    }
}
