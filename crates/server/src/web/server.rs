//! The HTTP side: the page's files and one WebSocket per viewer.
//!
//! Live: one encoder task follows the snapshot channel the monitor port
//! follows, turns each snapshot into one binary message, and publishes it
//! on a `watch` channel. Each viewer's task sends the newest message
//! whenever its socket has room: a slow viewer skips messages (latest
//! wins, one message in flight per viewer), a viewer whose send has been
//! blocked for `stall_timeout` is closed, and none of it ever waits the
//! simulation. Connections (HTTP, then WebSocket) are tasks of the web
//! server's [`Connections`], joined on shutdown. Replay: each viewer has its own playback cursor over the
//! frames decoded once at start.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, info_span, warn, Instrument};

use crate::limited;
use crate::net::connections::{Connections, SHUTDOWN_GRACE};

use super::assets;
use super::commands::{self, PageCommand, TrainerAccess};
use super::listener;
use super::replay::ReplayLog;
use super::shapes::{FieldView, RobotShapes};
use super::view::WorldView;
use crate::log_limit::SharedLogLimit;
use crate::monitor::server::SnapshotReceiver;
use crate::monitor::MonitorRequest;
use crate::rules::PlayMode;
use crate::untrusted::logged;

/// Monitor ids of page viewers start here, far above the monitor port's
/// (1, 2, ... in accept order), so log lines tell them apart.
pub const VIEWER_ID_BASE: u64 = 1 << 32;

/// Limits of the web server. The defaults suit a public page on a LAN.
#[derive(Debug, Clone)]
pub struct WebConfig {
    /// Viewers (WebSockets) at once; more get HTTP 503. Default 256.
    pub max_viewers: usize,
    /// Close a viewer whose socket has not taken a message for this long.
    /// Default 30 s.
    pub stall_timeout: Duration,
    /// Messages a viewer may send per second (commands, controls); more
    /// close it. Default 50.
    pub max_messages_per_sec: u32,
    /// Largest message a viewer may send, bytes. Default 4096.
    pub max_message_bytes: usize,
    /// Kernel send buffer per connection, bytes (`None`: the system's,
    /// which grows to megabytes). Default 128 KiB: a few full-match frames.
    pub send_buffer_bytes: Option<usize>,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            max_viewers: 256,
            stall_timeout: Duration::from_secs(30),
            max_messages_per_sec: 50,
            max_message_bytes: 4096,
            send_buffer_bytes: Some(128 * 1024),
        }
    }
}

/// Where a viewer's pictures come from.
enum Source {
    Live {
        frames: watch::Receiver<Option<Bytes>>,
        commands: mpsc::Sender<MonitorRequest>,
        access: TrainerAccess,
    },
    Replay {
        log: Arc<ReplayLog>,
    },
}

struct App {
    hello: String,
    source: Source,
    cfg: WebConfig,
    viewers: Arc<Semaphore>,
    next_id: AtomicU64,
    /// The connection tasks; viewers end when it stops.
    conns: Connections,
    /// Thins the lines viewers cause, each kind apart, so a client
    /// connecting over and over cannot flood the log.
    log: SharedLogLimit,
}

/// The hello message: everything that does not change during a session.
fn hello(mode: &str, field: &FieldView, shapes: &RobotShapes, extra: Value) -> String {
    let modes: Vec<&str> = PlayMode::ALL.iter().map(|m| m.name()).collect();
    let mut v = json!({
        "type": "hello",
        "version": super::view::VERSION,
        "mode": mode,
        "field": field.to_json(),
        "playModes": modes,
        "parts": shapes.to_json(),
    });
    if let (Some(obj), Value::Object(extra)) = (v.as_object_mut(), extra) {
        obj.extend(extra);
    }
    v.to_string()
}

/// Serves the live page until `stop` turns true. `snapshots` is the
/// monitor port's channel; trainer commands go to `commands` when
/// `access` allows.
#[allow(clippy::too_many_arguments)]
pub async fn serve_live(
    listener: TcpListener,
    snapshots: SnapshotReceiver,
    commands: mpsc::Sender<MonitorRequest>,
    access: TrainerAccess,
    field: FieldView,
    shapes: Arc<RobotShapes>,
    cfg: WebConfig,
    mut stop: watch::Receiver<bool>,
) {
    let trainer = match &access {
        TrainerAccess::Allowed => json!({"allowed": true, "reason": ""}),
        TrainerAccess::Refused(why) => json!({"allowed": false, "reason": why}),
    };
    let hello = hello("live", &field, &shapes, json!({ "trainer": trainer }));
    let (frames_tx, frames_rx) = watch::channel(None);
    let conns = Connections::new("web");
    let encoder = tokio::spawn(
        encode_snapshots(snapshots, shapes, frames_tx, conns.stopping().clone()).in_current_span(),
    );
    let app = App {
        hello,
        source: Source::Live {
            frames: frames_rx,
            commands,
            access,
        },
        viewers: Arc::new(Semaphore::new(cfg.max_viewers.max(1))),
        cfg,
        next_id: AtomicU64::new(1),
        conns,
        log: SharedLogLimit::for_clients(),
    };
    serve(listener, app, async move {
        let _ = stop.wait_for(|s| *s).await;
    })
    .await;
    let _ = encoder.await;
}

/// Serves the log player until `shutdown` completes.
pub async fn serve_replay(
    listener: TcpListener,
    log: Arc<ReplayLog>,
    shapes: &RobotShapes,
    name: &str,
    cfg: WebConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let start = log.frames.first().map_or(0.0, |f| f.game_time);
    let end = log.frames.last().map_or(0.0, |f| f.game_time);
    let extra = json!({
        "trainer": {"allowed": false, "reason": "a log is playing"},
        "replay": {
            "frames": log.frames.len(),
            "period": log.period,
            "start": start,
            "end": end,
            "file": name,
        }
    });
    let app = App {
        hello: hello("replay", &log.field, shapes, extra),
        source: Source::Replay { log },
        viewers: Arc::new(Semaphore::new(cfg.max_viewers.max(1))),
        cfg,
        next_id: AtomicU64::new(1),
        conns: Connections::new("web"),
        log: SharedLogLimit::for_clients(),
    };
    serve(listener, app, shutdown).await;
}

async fn serve(
    listener: TcpListener,
    app: App,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let conns = app.conns.clone();
    // Page loads beside the viewers' WebSockets.
    let max_connections = app.cfg.max_viewers + 64;
    let send_buffer = app.cfg.send_buffer_bytes;
    let app = Arc::new(app);
    let router = Router::new()
        .route("/", get(index))
        .route("/ws", get(websocket))
        .route("/{file}", get(asset))
        .with_state(app.clone());
    listener::serve(
        listener,
        router,
        max_connections,
        send_buffer,
        &conns,
        &app.log,
        shutdown,
    )
    .await;
    // Viewers end their loops; HTTP connections their requests.
    conns.shutdown(SHUTDOWN_GRACE).await;
    info!("web server stopped");
}

fn file_response(file: &assets::Asset) -> Response {
    (
        [
            (header::CONTENT_TYPE, file.content_type),
            (header::CACHE_CONTROL, "no-cache"),
            // Nothing but this server: no script, style or image from
            // elsewhere, and the WebSocket back to where the page came from.
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; connect-src 'self'; img-src 'self' data:",
            ),
        ],
        file.body,
    )
        .into_response()
}

async fn index() -> Response {
    match assets::get("index.html") {
        Some(f) => file_response(f),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn asset(axum::extract::Path(file): axum::extract::Path<String>) -> Response {
    match assets::get(&file) {
        Some(f) => file_response(f),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn websocket(
    ws: WebSocketUpgrade,
    headers: HeaderMap,
    State(app): State<Arc<App>>,
) -> Response {
    if let Err(refusal) = same_origin(&headers) {
        warn!(%refusal, "web viewer from another origin; refused");
        return (StatusCode::FORBIDDEN, "cross-origin WebSocket refused").into_response();
    }
    let Ok(permit) = app.viewers.clone().try_acquire_owned() else {
        limited!(
            app.log.admit("refused"),
            warn!(limit = app.cfg.max_viewers, "too many web viewers; refused")
        );
        return (StatusCode::SERVICE_UNAVAILABLE, "too many viewers").into_response();
    };
    let id = app.next_id.fetch_add(1, Ordering::Relaxed);
    let span = info_span!("viewer", id);
    // The upgrade runs in a task of its own: counted from here on.
    let held = app.conns.hold();
    let conns = app.conns.clone();
    ws.max_message_size(app.cfg.max_message_bytes)
        .max_frame_size(app.cfg.max_message_bytes)
        .on_upgrade(move |socket| {
            let viewer = conns.track(
                async move {
                    limited!(app.log.admit("connected"), info!("web viewer connected"));
                    let (tx, rx) = socket.split();
                    let mut viewer = Viewer {
                        id,
                        tx,
                        app: app.clone(),
                        budget: Budget::new(app.cfg.max_messages_per_sec),
                        refusals: 0,
                    };
                    let why = match &app.source {
                        Source::Live { .. } => viewer.live(rx).await,
                        Source::Replay { log } => viewer.replay(rx, log.clone()).await,
                    };
                    if !matches!(why, NOT_READING | WRITE_FAILED) {
                        // The closing handshake, unless the socket is
                        // stuck or the server is stopping.
                        let close = tokio::time::timeout(app.cfg.stall_timeout, viewer.tx.close());
                        tokio::select! {
                            _ = close => {}
                            _ = app.conns.stopping().cancelled() => {}
                        }
                    }
                    drop(permit);
                    limited!(
                        app.log.admit("disconnected"),
                        info!(reason = why, "web viewer disconnected")
                    );
                }
                .instrument(span),
            );
            drop(held);
            async move {
                let _ = viewer.await;
            }
        })
}

/// Why a WebSocket handshake was refused for its `Origin`; shown escaped
/// and cut short, since the header is client text.
#[derive(Debug, PartialEq, Eq)]
pub struct CrossOrigin {
    origin: String,
    host: String,
}

impl std::fmt::Display for CrossOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |s: &str| crate::untrusted::quote(s, 100);
        write!(
            f,
            "Origin `{}` is not the page's own (Host `{}`)",
            shown(&self.origin),
            shown(&self.host)
        )
    }
}

/// Accepts a WebSocket handshake without an `Origin` header (browsers
/// always send one on WebSockets; scripts and tools send none) or with the
/// origin of the page this server serves: `http://` or `https://`, then
/// exactly the `Host` the request was sent to (host names compared without
/// regard to case, a missing port meaning the scheme's default). Anything
/// else, `null` included, is another site's page driving the viewer's
/// browser, and its trainer commands would reach the match.
pub fn same_origin(headers: &HeaderMap) -> Result<(), CrossOrigin> {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let text = |v: Option<&header::HeaderValue>| {
        v.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default()
    };
    let refusal = || CrossOrigin {
        origin: text(Some(origin)),
        host: text(headers.get(header::HOST)),
    };
    let origin = origin.to_str().map_err(|_| refusal())?;
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .ok_or_else(refusal)?;
    let (scheme, authority) = origin.split_once("://").ok_or_else(refusal)?;
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        _ => return Err(refusal()),
    };
    let with_port = |authority: &str| -> Option<(String, u16)> {
        // `[v6]:port`, `name:port`, or either without a port.
        let (name, port) = match authority.rsplit_once(':') {
            Some((name, port)) if !port.contains(']') => (name, port.parse().ok()?),
            _ => (authority, default_port),
        };
        (!name.is_empty()).then(|| (name.to_ascii_lowercase(), port))
    };
    match (with_port(authority), with_port(host)) {
        (Some(a), Some(b)) if a == b => Ok(()),
        _ => Err(refusal()),
    }
}

/// Follows the snapshot channel and publishes one encoded message per
/// snapshot: encoding happens once, whatever the number of viewers.
async fn encode_snapshots(
    mut snapshots: SnapshotReceiver,
    shapes: Arc<RobotShapes>,
    frames: watch::Sender<Option<Bytes>>,
    cancel: CancellationToken,
) {
    snapshots.mark_changed();
    let mut buf = Vec::with_capacity(32 * 1024);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            changed = snapshots.changed() => if changed.is_err() { return },
        }
        let Some(snap) = snapshots.borrow_and_update().clone() else {
            continue;
        };
        buf.clear();
        WorldView::from_snapshot(&snap, &shapes).encode(&mut buf);
        frames.send_replace(Some(Bytes::copy_from_slice(&buf)));
    }
}

/// Messages per second a viewer may send.
struct Budget {
    limit: u32,
    window: Instant,
    used: u32,
}

impl Budget {
    fn new(limit: u32) -> Budget {
        Budget {
            limit: limit.max(1),
            window: Instant::now(),
            used: 0,
        }
    }

    fn take(&mut self) -> bool {
        let now = Instant::now();
        if now.duration_since(self.window) >= Duration::from_secs(1) {
            self.window = now;
            self.used = 0;
        }
        self.used += 1;
        self.used <= self.limit
    }
}

/// Why a viewer's connection ended: its socket took no message for the
/// stall timeout.
const NOT_READING: &str = "not reading";
/// Why a viewer's connection ended: a write failed.
const WRITE_FAILED: &str = "write failed";
/// Why a viewer's connection ended: the server stops.
const STOPPING: &str = "server stopping";

struct Viewer {
    id: u64,
    tx: SplitSink<WebSocket, Message>,
    app: Arc<App>,
    budget: Budget,
    refusals: u64,
}

/// What the reader got: a command, nothing to do, or the end.
enum Inbound {
    Command(PageCommand),
    Nothing,
    End(&'static str),
}

impl Viewer {
    /// Sends one message; `Err` when the viewer is gone or stalled, or
    /// the server stops meanwhile.
    async fn send(&mut self, msg: Message) -> Result<(), &'static str> {
        let stopping = self.app.conns.stopping().clone();
        let sent = tokio::select! {
            sent = tokio::time::timeout(self.app.cfg.stall_timeout, self.tx.send(msg)) => sent,
            _ = stopping.cancelled() => return Err(STOPPING),
        };
        match sent {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                debug!(cause = %e, "web viewer write failed");
                Err(WRITE_FAILED)
            }
            Err(_) => {
                limited!(
                    self.app.log.admit("not reading"),
                    warn!(
                        seconds = self.app.cfg.stall_timeout.as_secs_f32(),
                        "web viewer not reading; closed"
                    )
                );
                Err(NOT_READING)
            }
        }
    }

    async fn send_json(&mut self, v: Value) -> Result<(), &'static str> {
        self.send(Message::Text(v.to_string().into())).await
    }

    /// Decodes one received WebSocket message.
    async fn inbound(&mut self, msg: Option<Result<Message, axum::Error>>) -> Inbound {
        let text = match msg {
            None => return Inbound::End("closed by viewer"),
            Some(Err(e)) => {
                limited!(
                    self.app.log.admit("bad message"),
                    warn!(cause = %logged(&e), "bad message from web viewer; closed")
                );
                return Inbound::End("bad message");
            }
            Some(Ok(Message::Close(_))) => return Inbound::End("closed by viewer"),
            Some(Ok(Message::Text(t))) => t,
            Some(Ok(Message::Binary(_))) => {
                if !self.budget.take() {
                    return self.flooding();
                }
                return Inbound::Nothing;
            }
            Some(Ok(_)) => return Inbound::Nothing,
        };
        if !self.budget.take() {
            return self.flooding();
        }
        match commands::parse(text.as_str()) {
            Ok(c) => Inbound::Command(c),
            Err(why) => {
                self.refusals += 1;
                if self.refusals == 1 || self.refusals.is_multiple_of(100) {
                    limited!(
                        self.app.log.admit("message ignored"),
                        warn!(cause = %logged(&why), refusals = self.refusals, "web viewer message ignored")
                    );
                }
                if self
                    .send_json(json!({"type": "ack", "ok": false, "reason": why}))
                    .await
                    .is_err()
                {
                    return Inbound::End(WRITE_FAILED);
                }
                Inbound::Nothing
            }
        }
    }

    fn flooding(&self) -> Inbound {
        limited!(
            self.app.log.admit("too many messages"),
            warn!(
                limit = self.app.cfg.max_messages_per_sec,
                "web viewer sends too many messages; closed"
            )
        );
        Inbound::End("too many messages")
    }

    async fn live(&mut self, mut rx: SplitStream<WebSocket>) -> &'static str {
        let app = self.app.clone();
        let Source::Live {
            frames,
            commands,
            access,
        } = &app.source
        else {
            return "wrong source";
        };
        if let Err(why) = self.send(Message::Text(app.hello.clone().into())).await {
            return why;
        }
        let mut frames = frames.clone();
        frames.mark_changed();
        loop {
            tokio::select! {
                _ = app.conns.stopping().cancelled() => return STOPPING,
                changed = frames.changed() => {
                    if changed.is_err() {
                        return "simulation stopped";
                    }
                    let Some(frame) = frames.borrow_and_update().clone() else { continue };
                    if let Err(why) = self.send(Message::Binary(frame)).await {
                        return why;
                    }
                }
                msg = rx.next() => match self.inbound(msg).await {
                    Inbound::End(why) => return why,
                    Inbound::Nothing => {}
                    Inbound::Command(PageCommand::Trainer(command)) => {
                        let reply = match access {
                            TrainerAccess::Refused(why) => {
                                self.refusals += 1;
                                if self.refusals == 1 || self.refusals.is_multiple_of(100) {
                                    limited!(self.app.log.admit("command refused"), warn!(?command, reason = why, "web trainer command refused"));
                                }
                                json!({"type": "ack", "ok": false, "reason": why})
                            }
                            TrainerAccess::Allowed => {
                                limited!(self.app.log.admit("trainer command"), info!(?command, "web trainer command"));
                                let request = MonitorRequest {
                                    monitor: VIEWER_ID_BASE + self.id,
                                    command,
                                };
                                match commands.try_send(request) {
                                    Ok(()) => json!({"type": "ack", "ok": true}),
                                    Err(mpsc::error::TrySendError::Full(_)) => json!({
                                        "type": "ack", "ok": false,
                                        "reason": "the simulation is busy; try again"
                                    }),
                                    Err(mpsc::error::TrySendError::Closed(_)) => {
                                        return "simulation stopped";
                                    }
                                }
                            }
                        };
                        if let Err(why) = self.send_json(reply).await {
                            return why;
                        }
                    }
                    Inbound::Command(_) => {
                        let reply = json!({"type": "ack", "ok": false,
                            "reason": "playback controls work only when a log is playing"});
                        if let Err(why) = self.send_json(reply).await {
                            return why;
                        }
                    }
                },
            }
        }
    }

    async fn replay(
        &mut self,
        mut rx: SplitStream<WebSocket>,
        log: Arc<ReplayLog>,
    ) -> &'static str {
        let app = self.app.clone();
        if let Err(why) = self.send(Message::Text(app.hello.clone().into())).await {
            return why;
        }
        let last = log.frames.len().saturating_sub(1);
        let mut cursor = Cursor {
            frame: 0,
            playing: last > 0,
            speed: 1.0,
        };
        let mut show = true;
        let mut status = true;
        let mut next_at = Instant::now();
        loop {
            if show {
                if let Some(f) = log.frames.get(cursor.frame) {
                    if let Err(why) = self.send(Message::Binary(f.bytes.clone())).await {
                        return why;
                    }
                }
                show = false;
            }
            if status {
                let v = json!({"type": "status", "playing": cursor.playing,
                    "speed": cursor.speed, "frame": cursor.frame});
                if let Err(why) = self.send_json(v).await {
                    return why;
                }
                status = false;
            }
            let step = Duration::from_secs_f32(log.period / cursor.speed);
            tokio::select! {
                _ = app.conns.stopping().cancelled() => return STOPPING,
                _ = tokio::time::sleep_until(next_at + step), if cursor.playing => {
                    next_at += step;
                    // After a long stall, do not race to catch up.
                    let now = Instant::now();
                    if next_at + step < now {
                        next_at = now;
                    }
                    cursor.frame = (cursor.frame + 1).min(last);
                    show = true;
                    if cursor.frame == last {
                        cursor.playing = false;
                        status = true;
                    }
                }
                msg = rx.next() => match self.inbound(msg).await {
                    Inbound::End(why) => return why,
                    Inbound::Nothing => {}
                    Inbound::Command(c) => {
                        let before = cursor.frame;
                        match c {
                            PageCommand::Play => {
                                if cursor.frame == last {
                                    cursor.frame = 0;
                                }
                                cursor.playing = last > 0;
                                next_at = Instant::now();
                            }
                            PageCommand::Pause => cursor.playing = false,
                            PageCommand::Step(d) => {
                                cursor.playing = false;
                                let f = i64::try_from(cursor.frame).unwrap_or(i64::MAX);
                                let target = f.saturating_add(d).clamp(0, last as i64);
                                cursor.frame = usize::try_from(target).unwrap_or(0);
                            }
                            PageCommand::Seek(f) => {
                                cursor.frame = usize::try_from(f).unwrap_or(usize::MAX).min(last);
                                next_at = Instant::now();
                            }
                            PageCommand::Speed(s) => cursor.speed = s,
                            PageCommand::Trainer(_) => {
                                let v = json!({"type": "ack", "ok": false,
                                    "reason": "trainer commands need a live match"});
                                if let Err(why) = self.send_json(v).await {
                                    return why;
                                }
                            }
                        }
                        show |= cursor.frame != before || matches!(c, PageCommand::Seek(_));
                        status = true;
                    }
                },
            }
        }
    }
}

/// One viewer's place in a log.
struct Cursor {
    frame: usize,
    playing: bool,
    speed: f32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(origin: Option<&str>, host: Option<&str>) -> bool {
        let mut h = HeaderMap::new();
        if let Some(o) = origin {
            h.insert(header::ORIGIN, o.parse().unwrap());
        }
        if let Some(v) = host {
            h.insert(header::HOST, v.parse().unwrap());
        }
        same_origin(&h).is_ok()
    }

    #[test]
    fn only_the_pages_own_origin_or_none_is_accepted() {
        let host = Some("127.0.0.1:8080");
        assert!(check(None, host));
        assert!(check(Some("http://127.0.0.1:8080"), host));
        assert!(check(Some("HTTP://LocalHost:8080"), Some("localhost:8080")));
        assert!(check(Some("http://field.lan"), Some("field.lan")));
        assert!(check(Some("http://field.lan"), Some("field.lan:80")));
        assert!(check(Some("https://field.lan"), Some("field.lan:443")));
        assert!(check(Some("http://[::1]:8080"), Some("[::1]:8080")));
        assert!(!check(Some("http://evil.example"), host));
        assert!(!check(Some("http://evil.example:8080"), host));
        assert!(!check(Some("http://127.0.0.1:8081"), host));
        assert!(!check(Some("https://127.0.0.1:8080/"), host));
        assert!(!check(Some("null"), host));
        assert!(!check(Some("file://"), host));
        assert!(!check(Some("http://127.0.0.1:8080"), None));
        assert!(!check(Some("http://[::1]"), Some("[::1]:8080")));
    }

    #[test]
    fn refusals_quote_the_headers_escaped_and_short() {
        let mut h = HeaderMap::new();
        let mut long = format!("http://{}", "e".repeat(5000)).into_bytes();
        long.push(0xff);
        h.insert(
            header::ORIGIN,
            header::HeaderValue::from_bytes(&long).unwrap(),
        );
        h.insert(header::HOST, "localhost:8080".parse().unwrap());
        let shown = same_origin(&h).unwrap_err().to_string();
        assert!(shown.len() < 300, "{shown}");
        assert!(shown.starts_with("Origin `http://eee"), "{shown}");
    }
}
