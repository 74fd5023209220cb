//! The agent accept loop and the per-connection handler.
//!
//! Each connection runs one task that reads frames, parses and decodes them
//! (so parsing runs in parallel with the simulation) and forwards the
//! commands to the simulation thread. The perception frames go out through
//! the connection's [`outbox`](crate::net::outbox): written by the
//! simulation thread when the socket takes them at once, else by a writer
//! task of the connection. A bad frame or a vanished client ends only that
//! connection. Both tasks belong to the port's [`Connections`], which
//! joins them on shutdown; a connection held back (the simulation behind,
//! its budget spent) waits for the simulation's wake-up, not a timer.
//!
//! What one connection can make the server hold is bounded: its read
//! buffer (one frame of at most `max_agent_frame` bytes), the parse of one
//! frame (at most [`MAX_NODES`] elements), at most
//! [`MAX_PENDING_MESSAGES`] decoded messages waiting for the simulation,
//! and `agent_queue` outgoing frames; and it hands the simulation at most
//! [`MAX_COMMANDS_PER_CYCLE`] commands a cycle. A connection that keeps the
//! server waiting for its `scene`, or leaves a frame unfinished, is closed
//! after `agent_idle_timeout_secs`; when every slot is taken, a new
//! connection takes the slot of the oldest one that has not asked for a
//! robot yet (`Slots`), so clients that connect and stay silent, however
//! fast they reconnect, cannot lock real agents out. Lines about
//! connections that never joined a team go through one [`SharedLogLimit`]
//! (a bucket per kind of line), so a connection flood cannot flood the log
//! nor hide the other kinds; those of agents in a team through another,
//! with room for a whole match at once.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use futures::StreamExt;
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;
use tokio_util::codec::{Decoder, FramedRead, LengthDelimitedCodec};
use tokio_util::sync::CancellationToken;
use tracing::{debug, Instrument};

use crate::command::decode_all;
use crate::config::Config;
use crate::framing::is_disconnect;
use crate::limited;
use crate::log_limit::{LogLimit, SharedLogLimit};
use crate::net::connections::{Connections, SHUTDOWN_GRACE};
use crate::net::handshake::SceneDeadline;
use crate::net::inputs::{InFlight, Input, InputSender};
use crate::net::outbox::outbox;
use crate::net::rate::ByteBudget;
use crate::sexp::{parse, ParseError, MAX_NODES};
use crate::sim::cycle::{AgentStatus, ConnId};

/// Messages a connection may have queued to the simulation before it stops
/// reading from its socket (TCP back-pressure then slows the client). Real
/// agents have one or two in flight (`scene` then `init`; one a cycle).
pub const MAX_PENDING_MESSAGES: usize = 8;

/// Commands one connection may send the simulation per cycle (a message
/// counts as at least one); then it stops reading until the next cycle.
/// A real agent sends about 26 (24 joints, `say`, `syn`), also when it
/// sends each in a message of its own; this bounds the work a flood of
/// small messages can cause the simulation each cycle. (In sync mode an
/// agent that sends more before its `(syn)` holds up the cycle.)
pub const MAX_COMMANDS_PER_CYCLE: usize = 256;

/// What an agent's socket gave.
enum Inbound {
    /// A whole frame's payload.
    Frame(BytesMut),
    /// The first bytes of a frame: its remaining bytes are now due.
    Started,
}

/// The agent framing ([`crate::framing::codec`]) that also says when a
/// frame starts to arrive, so that the connection times an unfinished
/// frame from then on without looking at its buffer now and then.
struct AgentFrames {
    codec: LengthDelimitedCodec,
    /// Part of a frame has arrived (in the buffer, or its length prefix
    /// already taken by the codec).
    started: bool,
}

impl Decoder for AgentFrames {
    type Item = Inbound;
    type Error = std::io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Inbound>, std::io::Error> {
        let had_bytes = !src.is_empty();
        match self.codec.decode(src)? {
            Some(frame) => {
                self.started = false;
                Ok(Some(Inbound::Frame(frame)))
            }
            None if had_bytes && !self.started => {
                self.started = true;
                Ok(Some(Inbound::Started))
            }
            None => Ok(None),
        }
    }
}

/// One open agent connection's slot.
#[derive(Debug)]
struct Slot {
    /// The connection has not asked for a robot (or its request was
    /// refused): it may be evicted for a newcomer.
    awaiting_scene: bool,
    /// Tells the connection's task to close.
    evict: Arc<Notify>,
}

/// The agent slots: every open connection, in accept order. At most
/// `max_agents` are held; a newcomer evicts the oldest connection that
/// has not asked for a robot, or is refused when every connection has one.
#[derive(Debug, Default)]
struct Slots {
    open: Mutex<BTreeMap<ConnId, Slot>>,
}

/// What the accept loop does with a new connection.
enum Admission {
    /// A slot was free.
    Free,
    /// The slot of this connection, which had not asked for a robot.
    Evicted(ConnId),
    /// Every slot holds a connection with a robot.
    Full,
}

impl Slots {
    fn open(&self) -> MutexGuard<'_, BTreeMap<ConnId, Slot>> {
        // Every update is a single map operation: a panic elsewhere while
        // the lock was held cannot have left it half done.
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Gives `conn` a slot if one is free or can be freed.
    fn admit(&self, conn: ConnId, max: usize) -> (Admission, Arc<Notify>) {
        let evict = Arc::new(Notify::new());
        let mut open = self.open();
        let admission = if open.len() < max {
            Admission::Free
        } else if let Some(oldest) = open.iter().find(|(_, s)| s.awaiting_scene).map(|(c, _)| *c) {
            if let Some(slot) = open.remove(&oldest) {
                slot.evict.notify_one();
            }
            Admission::Evicted(oldest)
        } else {
            return (Admission::Full, evict);
        };
        open.insert(
            conn,
            Slot {
                awaiting_scene: true,
                evict: evict.clone(),
            },
        );
        (admission, evict)
    }

    fn set_awaiting_scene(&self, conn: ConnId, awaiting: bool) {
        if let Some(slot) = self.open().get_mut(&conn) {
            slot.awaiting_scene = awaiting;
        }
    }

    fn release(&self, conn: ConnId) {
        self.open().remove(&conn);
    }
}

/// Accepts agent connections until `shutdown` turns true, then closes
/// them and returns once their tasks have ended (see [`Connections`]).
/// `cycle` follows the simulation's cycle counter (for the per-cycle
/// budget).
pub async fn accept_agents(
    listener: TcpListener,
    inputs: InputSender,
    cfg: Arc<Config>,
    cycle: watch::Receiver<u64>,
    mut shutdown: watch::Receiver<bool>,
) {
    let next_id = AtomicU64::new(1);
    let slots = Arc::new(Slots::default());
    let conns = Connections::new("agent");
    let anonymous_log = Arc::new(SharedLogLimit::for_clients());
    let team_log = Arc::new(SharedLogLimit::new(LogLimit::for_team_changes));
    loop {
        let (stream, peer) = tokio::select! {
            accepted = conns.accept(&listener, &anonymous_log) => accepted,
            _ = shutdown.wait_for(|stop| *stop) => break,
        };
        let conn = next_id.fetch_add(1, Ordering::Relaxed);
        let (admission, evict) = slots.admit(conn, cfg.max_agents);
        match admission {
            Admission::Free => {}
            Admission::Evicted(old) => {
                limited!(anonymous_log.admit("evicted"), warn!(conn = old, max = cfg.max_agents, "every agent slot taken; closing the oldest connection without a robot for a new one"));
            }
            Admission::Full => {
                limited!(
                    anonymous_log.admit("refused"),
                    warn!(conn, %peer, max = cfg.max_agents, "every agent slot holds a robot; refusing connection")
                );
                drop(stream);
                continue;
            }
        }
        let span = tracing::info_span!("agent", conn, %peer, team = tracing::field::Empty, unum = tracing::field::Empty);
        let handler = Handler {
            conn,
            peer,
            inputs: inputs.clone(),
            cfg: cfg.clone(),
            stop: conns.stopping().clone(),
            conns: conns.clone(),
            anonymous_log: anonymous_log.clone(),
            team_log: team_log.clone(),
            joined: false,
            cycle: cycle.clone(),
            slots: slots.clone(),
            evict,
        };
        conns.spawn(handler.run(stream).instrument(span));
    }
    drop(listener);
    conns.shutdown(SHUTDOWN_GRACE).await;
}

struct Handler {
    conn: ConnId,
    peer: SocketAddr,
    inputs: InputSender,
    cfg: Arc<Config>,
    /// Cancelled when the server stops.
    stop: CancellationToken,
    /// The agent port's connection tasks (the writer task joins them).
    conns: Connections,
    anonymous_log: Arc<SharedLogLimit>,
    /// Thins the lines of agents in a team, apart from the others (a
    /// whole match at once, then one a second per kind).
    team_log: Arc<SharedLogLimit>,
    /// The agent is in a team.
    joined: bool,
    /// The simulation's cycle counter.
    cycle: watch::Receiver<u64>,
    /// The slot table, to say when the connection has asked for a robot
    /// and to give the slot back.
    slots: Arc<Slots>,
    /// Notified when a newcomer takes this connection's slot.
    evict: Arc<Notify>,
}

impl Handler {
    /// `Some(skipped)` when a line may be written: through the limit of
    /// agents in a team or that of the others.
    fn may_log(&self, kind: &'static str) -> Option<crate::log_limit::Skipped> {
        if self.joined {
            self.team_log.admit(kind)
        } else {
            self.anonymous_log.admit(kind)
        }
    }

    /// The simulation's news about the agent: its team and number for the
    /// log span, and whether it still owes its `scene` (join deadline,
    /// slot).
    fn agent_status(&mut self, status: &AgentStatus, scene: &mut SceneDeadline) {
        if let AgentStatus::Joined { team, unum } = status {
            tracing::Span::current().record("team", team.as_str());
            tracing::Span::current().record("unum", unum);
            self.joined = true;
        }
        scene.status(status, Instant::now());
        self.slots
            .set_awaiting_scene(self.conn, scene.awaiting_scene());
    }

    async fn run(mut self, stream: TcpStream) {
        let Some(mut s) = self.connect(stream) else {
            return;
        };
        let reason = loop {
            if let Some(reason) = self.turn(&mut s).await {
                break reason;
            }
        };
        limited!(
            self.may_log("disconnected"),
            info!(%reason, "agent disconnected")
        );
        // Dropping the write half (with the task) closes the socket.
        s.writer.abort();
        self.slots.release(self.conn);
        let _ = self.inputs.send(Input::Gone {
            conn: self.conn,
            reason,
        });
    }

    /// Splits the socket, starts its writer task and tells the simulation
    /// of the connection; `None` when the simulation has gone.
    fn connect(&mut self, stream: TcpStream) -> Option<Session> {
        if let Err(e) = stream.set_nodelay(true) {
            debug!(cause = %e, "could not set TCP_NODELAY");
        }
        let (read_half, write_half) = stream.into_split();
        let codec = AgentFrames {
            codec: crate::framing::codec(self.cfg.max_agent_frame),
            started: false,
        };
        let frames = FramedRead::new(read_half, codec);
        // What the socket does not take at once is written by a task of its
        // own, so a client that does not read never blocks this loop (its
        // deadlines, its reading).
        let (out, writer) = outbox(write_half, self.cfg.agent_queue);
        let writer = self.conns.spawn(writer.run().in_current_span());
        let pending = Arc::new(InFlight::default());
        let (status_tx, status_rx) = watch::channel(AgentStatus::Connecting);
        // The burst holds at least one largest frame with its prefix.
        let min_burst = self.cfg.max_agent_frame as u64 + 4;
        let idle = self.cfg.agent_idle_timeout();
        let s = Session {
            frames,
            writer,
            pending: pending.clone(),
            status: StatusFeed {
                rx: status_rx,
                open: true,
                news: false,
            },
            scene: SceneDeadline::new(idle, Instant::now()),
            budget: CycleBudget {
                bytes: self
                    .cfg
                    .max_agent_bytes_per_sec
                    .map(|rate| ByteBudget::new(rate, rate.max(min_burst), Instant::now())),
                cycle: u64::MAX,
                spent: 0,
            },
            partial_since: None,
            idle,
        };
        limited!(self.may_log("connected"), info!("agent connected"));
        let connected = Input::Connected {
            conn: self.conn,
            peer: self.peer,
            out,
            status: status_tx,
            pending,
        };
        if self.inputs.send(connected).is_err() {
            s.writer.abort();
            self.slots.release(self.conn);
            return None;
        }
        Some(s)
    }

    /// One turn of the connection: the simulation's news taken, then one
    /// event waited for (a frame, room to read again, a deadline, the
    /// end). `Some(reason)` when the connection is to close.
    async fn turn(&mut self, s: &mut Session) -> Option<String> {
        if std::mem::take(&mut s.status.news) || s.status.rx.has_changed().unwrap_or(false) {
            let status = s.status.rx.borrow_and_update().clone();
            self.agent_status(&status, &mut s.scene);
        }
        // Back-pressure: stop reading while the simulation is behind,
        // or when this cycle's budget is spent, until it processes a
        // message or starts a cycle (both wake this task).
        let cycle = *self.cycle.borrow_and_update();
        if cycle != s.budget.cycle {
            s.budget.cycle = cycle;
            s.budget.spent = 0;
        }
        let behind = s.pending.get() >= MAX_PENDING_MESSAGES;
        let spent_all = s.budget.spent >= MAX_COMMANDS_PER_CYCLE;
        let may_read = !behind && !spent_all;
        let now = Instant::now();
        // A frame counts as unfinished only while this side reads:
        // the clock starts again when back-pressure ends.
        if may_read && s.frames.decoder().started {
            s.partial_since.get_or_insert(now);
        } else {
            s.partial_since = None;
        }
        let unfinished = s.partial_since.zip(s.idle).map(|(t, d)| t + d);
        let wake = [s.scene.deadline(), unfinished].into_iter().flatten().min();
        tokio::select! {
            frame = s.frames.next(), if may_read => match frame {
                None => Some("closed by peer".into()),
                Some(Err(e)) if is_disconnect(&e) => Some(format!("closed by peer ({e})")),
                Some(Err(e)) => {
                    limited!(self.may_log("bad frame"), warn!(cause = %e, "bad frame from agent; closing connection"));
                    Some(format!("bad frame: {e}"))
                }
                Some(Ok(Inbound::Started)) => None,
                Some(Ok(Inbound::Frame(payload))) => self.frame(s, &payload).err(),
            },
            _ = s.pending.below(MAX_PENDING_MESSAGES), if behind => None,
            next = self.cycle.changed(), if spent_all => next.is_err().then(|| "server stopping".into()),
            // News from the simulation (joined, scene refused): taken
            // at the top of the loop.
            open = s.status.rx.changed(), if s.status.open => {
                s.status.open = open.is_ok();
                s.status.news = s.status.open;
                None
            }
            _ = self.evict.notified() => Some("evicted: every agent slot taken and no robot asked for".into()),
            reason = &mut s.writer => Some(match reason {
                Ok(Some(reason)) => reason,
                Ok(None) => "server shutdown".into(),
                Err(e) => format!("writer failed: {e}"),
            }),
            _ = tokio::time::sleep_until(wake.unwrap_or(now).into()), if wake.is_some() => {
                self.deadline(s, unfinished)
            }
            _ = self.stop.cancelled() => Some("server shutdown".into()),
        }
    }

    /// A whole frame: counted against the byte rate, parsed, decoded and
    /// handed to the simulation. `Err(reason)` closes the connection.
    fn frame(&mut self, s: &mut Session, payload: &[u8]) -> Result<(), String> {
        s.partial_since = None;
        if let Some(b) = s.budget.bytes.as_mut() {
            if !b.take(payload.len() + 4, Instant::now()) {
                let rate = b.rate();
                limited!(
                    self.may_log("over rate"),
                    warn!(
                        limit = rate,
                        "agent over its inbound byte rate; closing connection"
                    )
                );
                return Err(format!("over the inbound rate of {rate} bytes/s"));
            }
        }
        if payload.is_empty() {
            return Ok(());
        }
        let parsed = parse(payload);
        if let Some(ParseError::TooManyNodes { .. }) = parsed.error {
            limited!(
                self.may_log("too many elements"),
                warn!(
                    bytes = payload.len(),
                    max = MAX_NODES,
                    "message with too many elements from agent; closing connection"
                )
            );
            return Err(format!("more than {MAX_NODES} elements in one message"));
        }
        let commands = decode_all(&parsed);
        s.budget.spent += commands.len().max(1);
        s.pending.sent();
        let message = Input::Message {
            conn: self.conn,
            commands,
            parse_error: parsed.error,
        };
        if self.inputs.send(message).is_err() {
            return Err("server stopping".into());
        }
        Ok(())
    }

    /// A deadline passed: the `scene` one or that of an unfinished frame
    /// (`unfinished`). `Some(reason)` when the connection is to close.
    fn deadline(&mut self, s: &mut Session, unfinished: Option<Instant>) -> Option<String> {
        // News that came with the deadline (a `scene` received)
        // is taken before the deadline is enforced.
        if s.status.rx.has_changed().unwrap_or(false) {
            return None;
        }
        let now = Instant::now();
        let secs = s.idle.map(|d| d.as_secs_f32()).unwrap_or(0.0);
        if s.scene.deadline().is_some_and(|d| d <= now) {
            limited!(
                self.may_log("kept waiting"),
                warn!(
                    seconds = secs,
                    "agent asked for no robot (`scene`) in time; closing connection"
                )
            );
            return Some(format!("no `scene` within {secs} s"));
        }
        if unfinished.is_some_and(|d| d <= now) && s.frames.decoder().started {
            limited!(
                self.may_log("frame unfinished"),
                warn!(
                    seconds = secs,
                    buffered = s.frames.read_buffer().len(),
                    "agent left a frame unfinished; closing connection"
                )
            );
            return Some(format!("frame unfinished for {secs} s"));
        }
        None
    }
}

/// One agent connection's state between turns.
struct Session {
    frames: FramedRead<OwnedReadHalf, AgentFrames>,
    /// The outbox's writer task; its end ends the connection.
    writer: JoinHandle<Option<String>>,
    /// Messages handed to the simulation and not yet processed.
    pending: Arc<InFlight>,
    status: StatusFeed,
    scene: SceneDeadline,
    budget: CycleBudget,
    /// Since when a started frame has been waiting for its remaining bytes.
    partial_since: Option<Instant>,
    /// `agent_idle_timeout_secs`, `None` when off.
    idle: Option<Duration>,
}

/// The simulation's news about the agent.
struct StatusFeed {
    rx: watch::Receiver<AgentStatus>,
    /// The simulation still holds the sender.
    open: bool,
    /// `rx.changed()` has seen a new status (and marked it read).
    news: bool,
}

/// What the connection may still send: bytes a second, commands a cycle.
struct CycleBudget {
    /// `None` when `max_agent_bytes_per_sec` is `None` (no limit).
    bytes: Option<ByteBudget>,
    /// The cycle the commands of `spent` were handed to the simulation in.
    cycle: u64,
    spent: usize,
}
