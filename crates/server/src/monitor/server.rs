//! The monitor port: accept loop and one handler per connection.
//!
//! Every connection follows the simulation through a `watch` channel of
//! snapshots. Its writer builds the next message against what *that*
//! connection last received ([`ConsumerState`]) and hands it to a small
//! bounded queue drained by a socket task. When the queue is full the
//! snapshot is skipped without touching the consumer state, so a slow or
//! non-reading monitor never blocks the simulation or other monitors, and
//! the deltas it eventually gets are still exact. Frames are written whole
//! and in order; a length of zero is never sent. The reader decodes
//! commands and forwards them to the simulation; `(reqfullstate)` and
//! `(auth ...)` are handled here. It handles at most `commands_per_step`
//! commands per monitor step and then stops reading until the next step,
//! so a flooding monitor cannot stall the simulation or grow the server's
//! memory; its warnings go through a [`LogLimit`] per connection.
//!
//! Hostile clients. The slots are limited (`max_monitors`); when all are
//! taken, a newcomer waits a little and the monitor that has left a message
//! unread longest ([`Progress`]) makes room for it, so connections that
//! never read cannot lock RoboViz or a trainer out. The waiting newcomer
//! looks again when a connection ends, when one starts to lag or would
//! have lagged long enough, and when its wait is over; connection tasks
//! live in the port's [`Connections`], joined on shutdown. Wrong trainer secrets
//! cost the connection a pause that grows with the wrong secrets seen on
//! the whole server (`AuthFailures`), and a few of them close it.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch, Notify};
use tokio_util::codec::FramedRead;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, info_span, warn, Instrument};

use super::backlog::{peer_window, Backlog, Progress};
use super::command::parse_commands;
use super::config::{FieldParams, MonitorConfig};
use super::frame::{ConsumerState, FrameBuilder};
use crate::command::trainer::{MonitorCommand, MonitorRequest};
use crate::framing::{self, is_disconnect};
use crate::limited;
use crate::log_limit::{LogLimit, SharedLogLimit};
use crate::net::connections::{Connections, SHUTDOWN_GRACE};
use crate::sim::snapshot::WorldSnapshot;

/// Latest world snapshot, published by the simulation every monitor step
/// (`None` until the first cycle).
pub type SnapshotReceiver = watch::Receiver<Option<Arc<WorldSnapshot>>>;

/// Serves monitors on `listener` until `shutdown` completes, then closes
/// every connection and returns once their tasks have ended (within
/// [`SHUTDOWN_GRACE`]).
///
/// Each connection gets a full state first (as soon as a snapshot exists),
/// then one message per new snapshot it has room for. Commands go to
/// `commands` as [`MonitorRequest`]s. A connection ends when its peer
/// closes, sends a bad frame, stalls past the configured limit, sends too
/// many wrong trainer secrets, is cut off to make room for a newcomer
/// while not reading, or when the snapshot sender or the command receiver
/// is dropped.
pub async fn serve(
    listener: TcpListener,
    snapshots: SnapshotReceiver,
    commands: mpsc::Sender<MonitorRequest>,
    cfg: Arc<MonitorConfig>,
    field: FieldParams,
    shutdown: impl Future<Output = ()>,
) {
    let builder = Arc::new(FrameBuilder::new(&field));
    let conns = Connections::new("monitor");
    let mut slots = Slots::new(&cfg);
    // Connections that have ended, by id, to free their slots.
    let (ended_tx, mut ended_rx) = mpsc::unbounded_channel::<u64>();
    let mut next_id = 0u64;
    // Connection lines (accepted, refused, closed) of all monitors.
    let conn_log = Arc::new(SharedLogLimit::for_clients());
    let auth_failures = Arc::new(AuthFailures::default());
    // A newcomer waiting for a slot, and since when.
    let mut waiting: Option<(TcpStream, SocketAddr, Instant)> = None;
    tokio::pin!(shutdown);
    loop {
        if let Some((stream, peer, since)) = waiting.take() {
            match slots.admit(Instant::now(), since, &conn_log) {
                Admission::Now => {
                    next_id += 1;
                    let conn = Connection {
                        id: next_id,
                        peer,
                        snapshots: snapshots.clone(),
                        commands: commands.clone(),
                        cfg: cfg.clone(),
                        builder: builder.clone(),
                        cancel: conns.stopping().child_token(),
                        conns: conns.clone(),
                        ended: ended_tx.clone(),
                        conn_log: conn_log.clone(),
                        progress: Arc::new(
                            Progress::new(slots.epoch).notify_lag(slots.lagging.clone()),
                        ),
                        auth_failures: auth_failures.clone(),
                    };
                    slots.add(next_id, conn.progress.clone(), conn.cancel.clone());
                    let span = info_span!("monitor", id = next_id, %peer);
                    conns.spawn(conn.run(stream).instrument(span));
                }
                Admission::Wait => waiting = Some((stream, peer, since)),
                Admission::Refuse => {
                    limited!(
                        conn_log.admit("refused"),
                        warn!(%peer, limit = cfg.max_monitors, "too many monitors, all reading; connection closed")
                    );
                    drop(stream);
                }
            }
        }
        // A waiting newcomer looks again when the next monitor may have
        // lagged long enough or its own wait is over.
        let look_again = match &waiting {
            Some((_, _, since)) => slots.look_again(*since),
            None => None,
        };
        let (stream, peer) = tokio::select! {
            // A slot freed before the newcomer came is free for it.
            biased;
            _ = &mut shutdown => break,
            Some(id) = ended_rx.recv() => {
                slots.remove(id);
                continue;
            }
            _ = slots.lagging.notified(), if waiting.is_some() => continue,
            _ = tokio::time::sleep_until(look_again.unwrap_or_else(Instant::now).into()),
                if look_again.is_some() => continue,
            accepted = conns.accept(&listener, &conn_log), if waiting.is_none() => accepted,
        };
        waiting = Some((stream, peer, Instant::now()));
    }
    drop(listener);
    conns.shutdown(SHUTDOWN_GRACE).await;
}

/// What to do with a newcomer.
#[derive(Debug, PartialEq, Eq)]
enum Admission {
    Now,
    Wait,
    Refuse,
}

/// The open connections, for making room.
struct Slots {
    epoch: Instant,
    max: usize,
    evict_lag: Option<Duration>,
    admission_wait: Duration,
    open: HashMap<u64, (Arc<Progress>, CancellationToken)>,
    /// Connections cut off to make room that have not ended yet: they
    /// still hold their slot.
    leaving: usize,
    /// Notified when a connection starts to lag.
    lagging: Arc<Notify>,
    /// Set when a newcomer waited in vain; while no slot frees after
    /// that, newcomers are refused at once.
    refusing: bool,
}

impl Slots {
    fn new(cfg: &MonitorConfig) -> Slots {
        let secs = |s: f32| Duration::from_secs_f32(s.max(0.0));
        Slots {
            epoch: Instant::now(),
            max: cfg.max_monitors.max(1),
            evict_lag: cfg.evict_lag_secs.map(secs),
            admission_wait: secs(cfg.admission_wait_secs),
            open: HashMap::new(),
            leaving: 0,
            lagging: Arc::new(Notify::new()),
            refusing: false,
        }
    }

    fn add(&mut self, id: u64, progress: Arc<Progress>, cancel: CancellationToken) {
        self.open.insert(id, (progress, cancel));
    }

    fn remove(&mut self, id: u64) {
        if self.open.remove(&id).is_none() {
            self.leaving = self.leaving.saturating_sub(1);
        }
        self.refusing = false;
    }

    /// Whether a newcomer that has waited since `since` gets a slot now;
    /// cuts off the monitor that lags most, beyond the limit, to make room.
    fn admit(&mut self, now: Instant, since: Instant, log: &SharedLogLimit) -> Admission {
        if self.open.len() + self.leaving < self.max {
            return Admission::Now;
        }
        if self.leaving == 0 {
            if let Some((id, lag)) = self.victim(now) {
                if let Some((_, cancel)) = self.open.remove(&id) {
                    limited!(
                        log.admit("evicted"),
                        warn!(
                            monitor = id,
                            unread_secs = lag.as_secs_f32(),
                            "monitor not seen reading; closed to make room for a new one"
                        )
                    );
                    cancel.cancel();
                    self.leaving += 1;
                }
                return Admission::Wait;
            }
        }
        if self.leaving > 0 {
            // Room comes when the one cut off has ended.
            return Admission::Wait;
        }
        if self.refusing || now.saturating_duration_since(since) >= self.admission_wait {
            self.refusing = true;
            return Admission::Refuse;
        }
        Admission::Wait
    }

    /// When a newcomer that has waited since `since` may get an answer
    /// other than "wait" from [`Slots::admit`], as things stand: when its
    /// wait is over or a monitor would have lagged beyond the limit,
    /// whichever comes first. `None` while a monitor cut off to make room
    /// is still ending (its end wakes the accept loop). A monitor that
    /// starts to lag later notifies [`Slots::lagging`].
    fn look_again(&self, since: Instant) -> Option<Instant> {
        if self.leaving > 0 {
            return None;
        }
        let give_up = since + self.admission_wait;
        let Some(limit) = self.evict_lag else {
            return Some(give_up);
        };
        // `victim` wants more than the limit: look just after it.
        let past = limit + Duration::from_millis(1);
        let victim_at = self
            .open
            .values()
            .filter_map(|(p, _)| {
                let lagging = p.lagging_since().map(|t| t + past);
                let silent = (!p.seen_reading()).then(|| p.admitted() + past);
                lagging.into_iter().chain(silent).min()
            })
            .min();
        Some(victim_at.map_or(give_up, |t| t.min(give_up)))
    }

    /// The monitor to close for a newcomer: the one that has left a
    /// message unread longest, if longer than the limit; else the oldest
    /// one not seen reading, if connected longer than the limit. Monitors
    /// seen reading and keeping up stay.
    fn victim(&self, now: Instant) -> Option<(u64, Duration)> {
        let limit = self.evict_lag?;
        let candidates = self.open.iter().map(|(id, (p, _))| (*id, p, p.lag(now)));
        let laggard = candidates
            .clone()
            .filter(|(_, _, lag)| *lag > limit)
            .max_by_key(|(id, _, lag)| (*lag, std::cmp::Reverse(*id)));
        if let Some((id, _, lag)) = laggard {
            return Some((id, lag));
        }
        candidates
            .filter(|(_, p, _)| !p.seen_reading() && p.age(now) > limit)
            .min_by_key(|(id, _, _)| *id)
            .map(|(id, _, lag)| (id, lag))
    }
}

/// Wrong trainer secrets on the whole server in the last minute.
#[derive(Debug, Default)]
struct AuthFailures {
    recent: Mutex<VecDeque<Instant>>,
}

/// The window in which wrong secrets count towards the delay.
const AUTH_FAILURE_WINDOW: Duration = Duration::from_secs(60);
/// The delay grows up to this many times its base.
const AUTH_DELAY_STEPS: u32 = 30;

impl AuthFailures {
    /// Records one wrong secret at `now`; returns how many there have been
    /// in the last minute, this one included (at most [`AUTH_DELAY_STEPS`]).
    fn record(&self, now: Instant) -> u32 {
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        while recent
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) > AUTH_FAILURE_WINDOW)
        {
            recent.pop_front();
        }
        if recent.len() >= AUTH_DELAY_STEPS as usize {
            recent.pop_front();
        }
        recent.push_back(now);
        recent.len() as u32
    }
}

struct Connection {
    id: u64,
    peer: SocketAddr,
    snapshots: SnapshotReceiver,
    commands: mpsc::Sender<MonitorRequest>,
    cfg: Arc<MonitorConfig>,
    builder: Arc<FrameBuilder>,
    cancel: CancellationToken,
    /// The port's connection tasks (the socket task joins them).
    conns: Connections,
    /// Takes this connection's id when it ends, to free its slot.
    ended: mpsc::UnboundedSender<u64>,
    conn_log: Arc<SharedLogLimit>,
    progress: Arc<Progress>,
    auth_failures: Arc<AuthFailures>,
}

impl Connection {
    /// Serves the connection until it ends.
    async fn run(self, stream: TcpStream) {
        limited!(self.conn_log.admit("connected"), info!("monitor connected"));
        let _ = stream.set_nodelay(true);
        if let Some(bytes) = self.cfg.send_buffer_bytes {
            let sock = socket2::SockRef::from(&stream);
            if let Err(err) = sock.set_send_buffer_size(bytes) {
                debug!(cause = %err, "cannot set the send buffer");
            }
        }
        let (rd, wr) = stream.into_split();
        let full_requested = Arc::new(AtomicBool::new(false));
        let (queue_tx, queue_rx) = mpsc::channel::<Bytes>(self.cfg.queue_frames.max(1));
        let (refusals_tx, refusals_rx) = mpsc::channel::<&'static str>(MAX_PENDING_REFUSALS);
        let socket = self.conns.spawn(
            write_socket(wr, queue_rx, self.cancel.clone(), self.progress.clone())
                .in_current_span(),
        );
        // The current snapshot starts this connection's first step.
        let mut steps = self.snapshots.clone();
        steps.borrow_and_update();
        let reader = Reader {
            id: self.id,
            commands: self.commands.clone(),
            cfg: self.cfg.clone(),
            full_requested: full_requested.clone(),
            authenticated: false,
            steps,
            // Without a limit the budget is never spent.
            budget: self.cfg.commands_per_step.unwrap_or(usize::MAX),
            refilled: Instant::now(),
            log: LogLimit::for_clients(),
            auth_failures: self.auth_failures.clone(),
            wrong_secrets: 0,
            refusals: refusals_tx,
        };
        let cancel = self.cancel.clone();
        tokio::select! {
            _ = reader.run(rd, self.cancel.clone()) => {}
            _ = self.write_loop(queue_tx, full_requested, refusals_rx) => {}
            _ = cancel.cancelled() => {}
        }
        // The slot is free before the socket closes: a client that sees
        // the close and connects again finds it free.
        let _ = self.ended.send(self.id);
        self.cancel.cancel();
        let _ = socket.await;
        limited!(
            self.conn_log.admit("disconnected"),
            info!(peer = %self.peer, "monitor disconnected")
        );
    }

    /// Builds one message per snapshot this connection has room for.
    /// While it waits for room, newer snapshots replace older ones in the
    /// watch channel, so it always sends the newest state it can.
    ///
    /// A refused command is answered at once with a message built from the
    /// current snapshot that carries `(refused REASON)` among its
    /// predicates (docs/protocol.md#refused-commands); before the first
    /// snapshot the reason waits for the first message.
    async fn write_loop(
        &self,
        queue: mpsc::Sender<Bytes>,
        full_requested: Arc<AtomicBool>,
        mut refusals: mpsc::Receiver<&'static str>,
    ) {
        let mut snapshots = self.snapshots.clone();
        let mut state = ConsumerState::new();
        let mut text = String::with_capacity(64 * 1024);
        let mut pending: Vec<&'static str> = Vec::new();
        let stall_limit = self.cfg.stall_timeout_secs.map(Duration::from_secs_f32);
        // The current snapshot counts as new for a fresh connection.
        snapshots.mark_changed();
        loop {
            tokio::select! {
                changed = snapshots.changed() => {
                    if changed.is_err() {
                        debug!("snapshot publisher gone");
                        return;
                    }
                }
                Some(reason) = refusals.recv() => {
                    if pending.len() < MAX_PENDING_REFUSALS {
                        pending.push(reason);
                    }
                }
            }
            let reserved = match stall_limit {
                None => queue.reserve().await,
                Some(limit) => match tokio::time::timeout(limit, queue.reserve()).await {
                    Ok(r) => r,
                    Err(_) => {
                        limited!(
                            self.conn_log.admit("not reading"),
                            warn!(
                                seconds = limit.as_secs_f32(),
                                "monitor not reading; connection closed"
                            )
                        );
                        return;
                    }
                },
            };
            let Ok(permit) = reserved else { return };
            // Reasons sent before a `(reqfullstate)` ride with the full
            // state it asks for.
            while let Ok(reason) = refusals.try_recv() {
                if pending.len() < MAX_PENDING_REFUSALS {
                    pending.push(reason);
                }
            }
            let Some(snap) = snapshots.borrow_and_update().clone() else {
                continue;
            };
            if full_requested.swap(false, Ordering::Relaxed) {
                state.request_full_state();
            }
            text.clear();
            let kind = self.builder.write(&mut state, &snap, &mut text);
            add_refusals(&mut text, &mut pending);
            // The builder never writes an empty message (it has at least
            // its three parts), so `None` means too large for the prefix.
            let Some(frame) = framing::encode(text.as_bytes()) else {
                warn!(
                    bytes = text.len(),
                    "message too large for the length prefix"
                );
                return;
            };
            tracing::trace!(
                ?kind,
                bytes = text.len(),
                cycle = snap.cycle,
                "monitor message"
            );
            permit.send(frame);
        }
    }
}

/// Refusal reasons a connection holds for its next message; more are
/// dropped (a client that floods refused commands learns the reason from
/// the first ones).
const MAX_PENDING_REFUSALS: usize = 4;

/// Appends `(refused REASON)` for each pending reason to the predicate
/// list of the message in `text`, which ends where the header begins (no
/// predicate is named `RSG` or `RDS`, and values hold no parentheses).
fn add_refusals(text: &mut String, pending: &mut Vec<&'static str>) {
    if pending.is_empty() {
        return;
    }
    let Some(end) = text
        .find(")(RDS 0 1)(")
        .or_else(|| text.find(")(RSG 0 1)("))
    else {
        return;
    };
    let mut predicates = String::new();
    for reason in pending.drain(..) {
        predicates.push_str("(refused ");
        predicates.push_str(reason);
        predicates.push(')');
    }
    text.insert_str(end, &predicates);
}

/// Drains the queue into the socket, one whole frame at a time, and keeps
/// `progress` up to date: before each write it reads what the peer has
/// read of the earlier ones.
async fn write_socket(
    mut wr: OwnedWriteHalf,
    mut queue: mpsc::Receiver<Bytes>,
    cancel: CancellationToken,
    progress: Arc<Progress>,
) {
    let mut backlog = Backlog::default();
    if let Some(w) = peer_window(wr.as_ref()) {
        backlog.update(w);
    }
    loop {
        let frame = tokio::select! {
            _ = cancel.cancelled() => break,
            frame = queue.recv() => frame,
        };
        let Some(frame) = frame else { break };
        if let Some(w) = peer_window(wr.as_ref()) {
            progress.unread_since(backlog.update(w));
            if backlog.seen_reading {
                progress.reads();
            }
        }
        let now = Instant::now();
        progress.writing(Some(now));
        // A frame is never empty: the payload has at least its three parts.
        let result = tokio::select! {
            _ = cancel.cancelled() => break,
            r = wr.write_all(&frame) => r,
        };
        progress.writing(None);
        backlog.wrote(frame.len(), now);
        if let Err(err) = result {
            debug!(cause = %err, "monitor write failed");
            cancel.cancel();
            break;
        }
    }
    let _ = wr.shutdown().await;
}

/// The longest a monitor over its command budget waits for a new one:
/// one monitor step at the default 50 Hz and `monitor_step` 2.
const BUDGET_REFILL: Duration = Duration::from_millis(40);

struct Reader {
    id: u64,
    commands: mpsc::Sender<MonitorRequest>,
    cfg: Arc<MonitorConfig>,
    full_requested: Arc<AtomicBool>,
    authenticated: bool,
    /// Monitor steps: a new snapshot means a new step's command budget.
    steps: SnapshotReceiver,
    /// Commands this connection may still have handled in this step.
    budget: usize,
    /// When the budget was last filled.
    refilled: Instant,
    /// Thins this connection's warnings.
    log: LogLimit,
    /// Wrong secrets on the whole server.
    auth_failures: Arc<AuthFailures>,
    /// Wrong secrets on this connection.
    wrong_secrets: u32,
    /// Reasons for refused commands, told to the client by the writer.
    refusals: mpsc::Sender<&'static str>,
}

/// The reasons a monitor is told, as plain words (no parentheses: they are
/// atoms of a predicate).
const REFUSED_READ_ONLY: &str = "the monitor port is read-only";
const REFUSED_NO_SECRET: &str = "the monitor port needs the trainer secret";
const REFUSED_WRONG_SECRET: &str = "wrong trainer secret";

impl Reader {
    /// Tells the client why a command was refused; dropped when its
    /// earlier reasons are still waiting to be sent.
    fn refuse(&self, reason: &'static str) {
        let _ = self.refusals.try_send(reason);
    }

    async fn run(mut self, rd: OwnedReadHalf, cancel: CancellationToken) {
        let mut frames = FramedRead::new(rd, framing::codec(self.cfg.max_command_frame));
        loop {
            let next = tokio::select! {
                _ = cancel.cancelled() => return,
                next = frames.next() => next,
            };
            match next {
                None => return,
                Some(Err(err)) if is_disconnect(&err) => {
                    debug!(cause = %err, "monitor closed the connection");
                    return;
                }
                Some(Err(err)) => {
                    limited!(
                        self.log.admit(Instant::now()),
                        warn!(cause = %err, "bad frame from monitor; connection closed")
                    );
                    return;
                }
                Some(Ok(payload)) => {
                    if !self.handle_frame(&payload, &cancel).await {
                        return;
                    }
                }
            }
        }
    }

    /// Takes one command from this step's budget, first waiting for the
    /// next monitor step when it is spent, or until [`BUDGET_REFILL`] after
    /// the last refill while the simulation does not step (a sync-mode server waiting for its
    /// agents still takes commands, `(killsim)` among them). False when the
    /// connection or the simulation is going away.
    async fn spend(&mut self, cancel: &CancellationToken) -> bool {
        let Some(limit) = self.cfg.commands_per_step else {
            return true;
        };
        if self.budget == 0 {
            let refill = self.refilled + BUDGET_REFILL;
            tokio::select! {
                _ = cancel.cancelled() => return false,
                changed = self.steps.changed() => {
                    if changed.is_err() {
                        return false;
                    }
                }
                _ = tokio::time::sleep_until(refill.into()) => {}
            }
            self.budget = limit;
            self.refilled = Instant::now();
        }
        // A limit of 0 (refused when a configuration is loaded) lets one
        // command through per step rather than underflowing.
        self.budget = self.budget.saturating_sub(1);
        true
    }

    /// Returns false when the simulation no longer takes commands.
    async fn handle_frame(&mut self, payload: &[u8], cancel: &CancellationToken) -> bool {
        let commands = parse_commands(payload);
        if commands.is_empty() && !self.spend(cancel).await {
            return false;
        }
        for parsed in commands {
            if !self.spend(cancel).await {
                return false;
            }
            let command = match parsed {
                Ok(c) => c,
                Err(err) => {
                    limited!(
                        self.log.admit(Instant::now()),
                        warn!(cause = %err, "monitor command ignored")
                    );
                    continue;
                }
            };
            debug!(?command, "monitor command");
            match command {
                MonitorCommand::ReqFullState => {
                    self.full_requested.store(true, Ordering::Relaxed);
                    continue;
                }
                MonitorCommand::Auth(secret) => {
                    if !self.authenticate(&secret, cancel).await {
                        return false;
                    }
                    continue;
                }
                MonitorCommand::Ignored(_) => continue,
                _ => {}
            }
            if self.cfg.read_only {
                limited!(
                    self.log.admit(Instant::now()),
                    warn!(?command, "read-only monitor port: command refused")
                );
                self.refuse(REFUSED_READ_ONLY);
                continue;
            }
            if self.cfg.trainer_secret.is_some() && !self.authenticated {
                limited!(
                    self.log.admit(Instant::now()),
                    warn!(?command, "trainer command without `(auth SECRET)`: refused")
                );
                self.refuse(REFUSED_NO_SECRET);
                continue;
            }
            let request = MonitorRequest {
                monitor: self.id,
                command,
            };
            if self.commands.send(request).await.is_err() {
                debug!("simulation no longer takes monitor commands");
                return false;
            }
        }
        true
    }

    /// Checks a secret. A wrong one makes this connection wait
    /// `auth_failure_delay_secs` times the number of wrong secrets on the
    /// server in the last minute before it reads on; the
    /// `max_auth_failures`-th closes it after that wait. False when the
    /// connection is to be closed.
    async fn authenticate(&mut self, given: &str, cancel: &CancellationToken) -> bool {
        let Some(secret) = &self.cfg.trainer_secret else {
            debug!("`(auth ...)` without a configured secret: ignored");
            return true;
        };
        if constant_time_eq(secret.as_bytes(), given.as_bytes()) {
            self.authenticated = true;
            info!("trainer authenticated");
            return true;
        }
        self.authenticated = false;
        self.wrong_secrets = self.wrong_secrets.saturating_add(1);
        let server_wide = self.auth_failures.record(Instant::now());
        let delay = Duration::from_secs_f32(self.cfg.auth_failure_delay_secs.max(0.0))
            .saturating_mul(server_wide);
        let last = self
            .cfg
            .max_auth_failures
            .is_some_and(|limit| self.wrong_secrets >= limit);
        if last || self.log.admit(Instant::now()).is_some() {
            warn!(
                attempts = self.wrong_secrets,
                server_wide,
                delay_secs = delay.as_secs_f32(),
                "wrong trainer secret: refused{}",
                if last { "; connection closed" } else { "" }
            );
        }
        self.refuse(REFUSED_WRONG_SECRET);
        tokio::select! {
            _ = cancel.cancelled() => return false,
            _ = tokio::time::sleep(delay) => {}
        }
        !last
    }
}

/// Compares without an early exit, so timing does not reveal the prefix.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = u8::from(a.len() != b.len());
    for (i, x) in a.iter().enumerate() {
        diff |= x ^ b.get(i).copied().unwrap_or(0);
    }
    diff == 0
}
