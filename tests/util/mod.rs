//! Test harness: start the real server on free ports and talk to it over
//! TCP with a small agent client; the server binary as a child process
//! ([`process`]); scratch directories.
#![allow(dead_code)]

pub mod honest;
pub mod process;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use rcss3d::app::RunSummary;
use rcss3d::config::Config;
use rcss3d::net::client::AgentClient;

/// How long a test waits for one frame before failing.
pub const FRAME_TIMEOUT: Duration = Duration::from_secs(20);

/// A running server.
pub struct TestServer {
    pub agent_addr: SocketAddr,
    pub monitor_addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<RunSummary, rcss3d::app::ServerError>>>,
    /// The task's result, once [`TestServer::ended_within`] saw it end.
    ended: Option<Result<Result<RunSummary, rcss3d::app::ServerError>, tokio::task::JoinError>>,
}

/// A config for tests: loopback, sync mode without the real-time timer,
/// fixed seed, no vision noise unless the test changes it. The first
/// cycle waits for an agent's `scene` (`sync_wait_for_agents`); like every
/// sync-mode server, it waits for each robot's answer to its newest frame,
/// so a test's agents run in lockstep with the server.
pub fn test_config() -> Config {
    Config {
        bind: [127, 0, 0, 1].into(),
        sync_mode: true,
        real_time: false,
        seed: Some(42),
        sync_wait_for_agents: 1,
        ..Config::default()
    }
}

impl TestServer {
    /// Binds free ports and spawns the server.
    pub async fn start(cfg: Config) -> TestServer {
        let agents = TcpListener::bind("127.0.0.1:0").await.expect("bind agents");
        let monitors = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind monitors");
        TestServer::start_on(cfg, agents, monitors, Vec::new())
    }

    /// Spawns the server on bound listeners, with extra services (the web
    /// monitor) attached.
    pub fn start_on(
        cfg: Config,
        agents: TcpListener,
        monitors: TcpListener,
        extensions: Vec<rcss3d::app::Extension>,
    ) -> TestServer {
        let agent_addr = agents.local_addr().expect("addr");
        let monitor_addr = monitors.local_addr().expect("addr");
        let (tx, rx) = oneshot::channel::<()>();
        let server =
            rcss3d::app::run_with(Arc::new(cfg), agents, monitors, extensions, async move {
                let _ = rx.await;
            });
        // In this test's capture span, if it captures logs.
        let task = match capture_span() {
            Some(span) => tokio::spawn(tracing::Instrument::instrument(server, span)),
            None => tokio::spawn(server),
        };
        TestServer {
            agent_addr,
            monitor_addr,
            stop: Some(tx),
            task: Some(task),
            ended: None,
        }
    }

    /// Stops the server and returns its summary.
    pub async fn stop(self) -> RunSummary {
        self.stop_within(Duration::from_secs(20)).await
    }

    /// Stops the server, failing the test unless it has stopped within
    /// `limit`, and returns its summary.
    pub async fn stop_within(mut self, limit: Duration) -> RunSummary {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        let ended = match self.ended.take() {
            Some(ended) => ended,
            None => {
                let task = self.task.take().expect("running");
                tokio::time::timeout(limit, task)
                    .await
                    .unwrap_or_else(|_| panic!("server stops within {} s", limit.as_secs()))
            }
        };
        ended.expect("server task").expect("server result")
    }

    /// Whether the server task has ended by itself.
    pub fn finished(&self) -> bool {
        self.task.as_ref().map(|t| t.is_finished()).unwrap_or(true)
    }

    /// Waits up to `limit` for the server to end by itself; whether it
    /// did. Its result is kept for [`TestServer::stop`].
    pub async fn ended_within(&mut self, limit: Duration) -> bool {
        let Some(task) = self.task.as_mut() else {
            return true;
        };
        match tokio::time::timeout(limit, task).await {
            Ok(ended) => {
                self.ended = Some(ended);
                self.task = None;
                true
            }
            Err(_) => false,
        }
    }

    pub async fn agent(&self) -> TestAgent {
        TestAgent::connect(self.agent_addr).await
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

/// A test agent: the library's agent client, failing the test on I/O
/// errors, and tracking whether a frame is still to be answered.
pub struct TestAgent {
    pub client: AgentClient,
    /// Received a frame that has not been answered with `(syn)` yet.
    pub owes: bool,
}

impl TestAgent {
    pub async fn connect(addr: SocketAddr) -> TestAgent {
        TestAgent {
            client: AgentClient::connect(addr).await.expect("connect"),
            owes: false,
        }
    }

    /// The agent's socket.
    pub fn stream(&self) -> &TcpStream {
        self.client.stream()
    }

    /// Sends one message.
    pub async fn send(&mut self, msg: &str) {
        self.client.send(msg).await.expect("send");
        if msg.contains("(syn)") {
            self.owes = false;
        }
    }

    /// Sends raw bytes (for malformed input tests).
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.client.send_raw(bytes).await.expect("send raw");
    }

    /// Receives one frame as text, failing the test after FRAME_TIMEOUT.
    pub async fn recv(&mut self) -> String {
        match self.try_recv(FRAME_TIMEOUT).await {
            Some(f) => f,
            None => {
                let logs = logs();
                let tail: Vec<&str> = logs.lines().rev().take(30).collect();
                panic!(
                    "no frame from the server in time; last log lines:\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                );
            }
        }
    }

    /// Receives one frame, or `None` on timeout or close.
    pub async fn try_recv(&mut self, timeout: Duration) -> Option<String> {
        let got = self
            .client
            .recv_within(timeout)
            .await
            .and_then(|f| String::from_utf8(f.to_vec()).ok());
        if got.is_some() {
            self.owes = true;
        }
        got
    }

    /// Whether the server closed the connection within `timeout`.
    pub async fn closed_within(&mut self, timeout: Duration) -> bool {
        self.client.closed_within(timeout).await
    }

    /// Waits for the next frame unless one is already unanswered, so the
    /// agent owes the server exactly one answer afterwards.
    pub async fn settle(&mut self) {
        if !self.owes {
            self.recv().await;
        }
    }

    /// scene + wait for the first frame.
    pub async fn create(&mut self, robot_type: u8) -> String {
        self.send(&format!(
            "(scene rsg/agent/nao/nao_hetero.rsg {robot_type})(syn)"
        ))
        .await;
        self.recv().await
    }

    /// scene, init, until the GS with the team arrives; returns (side, unum).
    pub async fn join(&mut self, team: &str, unum: u8, robot_type: u8) -> (String, u8) {
        self.create(robot_type).await;
        self.send(&format!("(init (unum {unum})(teamname {team}))(syn)"))
            .await;
        for _ in 0..10 {
            let f = self.recv().await;
            if let Some(i) = f.find("(GS (unum ") {
                let rest = &f[i + 10..];
                let n: u8 = rest[..rest.find(')').expect(")")].parse().expect("unum");
                let side = if rest.contains("(team left)") {
                    "left"
                } else {
                    "right"
                };
                return (side.to_string(), n);
            }
            self.send("(syn)").await;
        }
        panic!("no GS with unum/team after init");
    }

    /// Answers one frame with `(syn)` and returns the next frame.
    pub async fn cycle(&mut self, commands: &str) -> String {
        self.send(&format!("{commands}(syn)")).await;
        self.recv().await
    }
}

/// The value of `(time (now X))` in a frame.
pub fn now(frame: &str) -> f32 {
    let i = frame.find("(time (now ").expect("time") + 11;
    frame[i..i + frame[i..].find(')').expect(")")]
        .parse()
        .expect("number")
}

/// The angle of one joint perceptor in a frame.
pub fn joint(frame: &str, name: &str) -> f32 {
    let key = format!("(HJ (n {name}) (ax ");
    let i = frame
        .find(&key)
        .unwrap_or_else(|| panic!("{name} in {frame}"))
        + key.len();
    frame[i..i + frame[i..].find(')').expect(")")]
        .parse()
        .expect("number")
}

/// The sequence of perceptor tags (and HJ/FRP names) in a frame.
pub fn shape(frame: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let b = frame.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'(' => {
                if depth == 0 {
                    let end = frame[i + 1..]
                        .find(' ')
                        .map(|e| i + 1 + e)
                        .unwrap_or(b.len());
                    let tag = &frame[i + 1..end];
                    if tag == "HJ" || tag == "FRP" {
                        let n = frame[end..].find("(n ").map(|k| end + k + 3).expect("name");
                        let e = n + frame[n..].find(')').expect(")");
                        out.push(format!("{tag}:{}", &frame[n..e]));
                    } else {
                        out.push(tag.to_string());
                    }
                }
                depth += 1;
            }
            b')' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    out
}

/// The log lines of the servers this test started (since its
/// [`capture_logs`]); empty if it captures none. Other tests' lines never
/// show here.
pub fn logs() -> String {
    CAPTURE.with(|c| {
        c.borrow()
            .as_ref()
            .map(|c| {
                String::from_utf8_lossy(&c.buf.lock().unwrap_or_else(|e| e.into_inner()))
                    .into_owned()
            })
            .unwrap_or_default()
    })
}

/// Captures the log lines of the servers this test starts from now on
/// (idempotent within a test). Call at the start of a test whose log lines
/// are checked, before its [`TestServer::start`].
///
/// Each test runs on its own thread; the capture belongs to that thread.
/// A server started with a capture runs inside the capture's span (its
/// tasks and its simulation thread inherit it), and one process-wide
/// subscriber writes every line to the buffer of the span it was logged
/// in, so a test cannot see, nor pass on, another test's line.
pub fn capture_logs() {
    CAPTURE.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            *c = Some(Capture::new());
        }
    });
}

/// The span a server of this test runs in, if the test captures logs.
fn capture_span() -> Option<tracing::Span> {
    CAPTURE.with(|c| c.borrow().as_ref().map(|c| c.span.clone()))
}

/// Waits until this test's captured logs contain `needle` (up to 10 s),
/// woken by each line written.
pub async fn wait_for_log(needle: &str) -> bool {
    wait_for_logs(|text| text.contains(needle)).await
}

/// Waits until `done` holds for this test's captured logs (up to 10 s),
/// woken by each line written.
pub async fn wait_for_logs(done: impl Fn(&str) -> bool) -> bool {
    let Some(sink) = CAPTURE.with(|c| c.borrow().as_ref().map(|c| c.sink())) else {
        return false;
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let written = sink.written.notified();
        tokio::pin!(written);
        written.as_mut().enable();
        if done(&String::from_utf8_lossy(
            &sink.buf.lock().unwrap_or_else(|e| e.into_inner()),
        )) {
            return true;
        }
        if tokio::time::timeout_at(deadline, written).await.is_err() {
            return false;
        }
    }
}

thread_local! {
    /// This test's capture (libtest runs every test on a thread of its own).
    static CAPTURE: std::cell::RefCell<Option<Capture>> = const { std::cell::RefCell::new(None) };
    /// Where the line being written on this thread goes: set by
    /// [`Router`] for each event, just before the formatter writes it.
    static CURRENT: std::cell::RefCell<Option<Sink>> = const { std::cell::RefCell::new(None) };
}

/// The target of capture spans: only the router sees them, so the log
/// lines themselves look as in the server's own output.
const CAPTURE_TARGET: &str = "rcss3d_test_capture";

/// A capture buffer and the wake-up of its waiters.
#[derive(Clone)]
struct Sink {
    buf: Arc<std::sync::Mutex<Vec<u8>>>,
    written: Arc<tokio::sync::Notify>,
}

struct Capture {
    buf: Arc<std::sync::Mutex<Vec<u8>>>,
    written: Arc<tokio::sync::Notify>,
    span: tracing::Span,
}

/// Sinks of capture spans not created yet, by capture number.
static PENDING: std::sync::Mutex<Vec<(u64, Sink)>> = std::sync::Mutex::new(Vec::new());

impl Capture {
    fn new() -> Capture {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        install_subscriber();
        let buf = Arc::new(std::sync::Mutex::new(Vec::new()));
        let written = Arc::new(tokio::sync::Notify::new());
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        PENDING.lock().unwrap_or_else(|e| e.into_inner()).push((
            id,
            Sink {
                buf: buf.clone(),
                written: written.clone(),
            },
        ));
        let span = tracing::info_span!(target: CAPTURE_TARGET, "test", capture = id);
        assert!(!span.is_disabled(), "the capture span is recorded");
        Capture { buf, written, span }
    }

    fn sink(&self) -> Sink {
        Sink {
            buf: self.buf.clone(),
            written: self.written.clone(),
        }
    }
}

/// Installs the process-wide subscriber (once): the `RCSS_TEST_LOG`
/// filter (default `rcss3d=info`), lines formatted as the server binary
/// formats them (without colour) into the capture of the span they were
/// logged in; lines outside any capture are dropped.
fn install_subscriber() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::Layer;
        let spec = std::env::var("RCSS_TEST_LOG").unwrap_or_else(|_| "rcss3d=info".into());
        let lines = tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(|| ThreadSink)
            .with_filter(tracing_subscriber::EnvFilter::new(&spec));
        let router = Router.with_filter(tracing_subscriber::EnvFilter::new(format!(
            "{spec},{CAPTURE_TARGET}=info"
        )));
        // The router sees each event before the formatter writes it.
        let subscriber = tracing_subscriber::registry().with(router).with(lines);
        tracing::subscriber::set_global_default(subscriber).expect("one test log subscriber");
    });
}

/// Names, for each event, the capture its line goes to.
struct Router;

impl<S> tracing_subscriber::Layer<S> for Router
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if attrs.metadata().target() != CAPTURE_TARGET {
            return;
        }
        struct Number(Option<u64>);
        impl tracing::field::Visit for Number {
            fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
                if field.name() == "capture" {
                    self.0 = Some(value);
                }
            }
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
        }
        let mut n = Number(None);
        attrs.record(&mut n);
        let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = pending.iter().position(|(k, _)| Some(*k) == n.0) {
            let (_, sink) = pending.swap_remove(i);
            if let Some(span) = ctx.span(id) {
                span.extensions_mut().insert(sink);
            }
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: tracing_subscriber::layer::Context<'_, S>) {
        let sink = ctx.event_scope(event).and_then(|scope| {
            scope
                .from_root()
                .find_map(|span| span.extensions().get::<Sink>().cloned())
        });
        CURRENT.with(|c| *c.borrow_mut() = sink);
    }
}

/// The formatter's writer: the sink the router named for this thread's
/// current event.
struct ThreadSink;

impl std::io::Write for ThreadSink {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        CURRENT.with(|c| {
            if let Some(sink) = c.borrow().as_ref() {
                sink.buf
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend_from_slice(data);
                sink.written.notify_waiters();
            }
        });
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An agent answering every frame with `(syn)` in the background, so the
/// sync barrier keeps moving while a test works with other agents.
pub struct AutoSync {
    stop: Arc<std::sync::atomic::AtomicBool>,
    /// Cycle (now * 50, rounded) of the newest frame received.
    latest: Arc<std::sync::atomic::AtomicU64>,
    /// Group stop: return on the first frame of this cycle or later.
    target: Arc<std::sync::atomic::AtomicU64>,
    task: JoinHandle<TestAgent>,
}

impl TestAgent {
    /// Hands the agent to a background task that answers every frame.
    pub fn autosync(self) -> AutoSync {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let stop = Arc::new(AtomicBool::new(false));
        let latest = Arc::new(AtomicU64::new(0));
        let target = Arc::new(AtomicU64::new(u64::MAX));
        let (flag, seen, until) = (stop.clone(), latest.clone(), target.clone());
        let task = tokio::spawn(async move {
            let mut a = self;
            loop {
                if a.owes {
                    a.send("(syn)").await;
                }
                if flag.load(Ordering::Acquire) {
                    return a;
                }
                if let Some(f) = a.try_recv(Duration::from_millis(20)).await {
                    let c = (now(&f) * 50.0).round() as u64;
                    seen.store(c, Ordering::Release);
                    if c >= until.load(Ordering::Acquire) {
                        return a;
                    }
                }
            }
        });
        AutoSync {
            stop,
            latest,
            target,
            task,
        }
    }
}

impl AutoSync {
    /// Stops a group of agents on the same frame: each keeps answering
    /// until it receives the frame of a common cycle a little ahead, and
    /// returns owing exactly that frame.
    pub async fn stop_all(group: Vec<AutoSync>) -> Vec<TestAgent> {
        use std::sync::atomic::Ordering;
        let newest = group
            .iter()
            .map(|g| g.latest.load(Ordering::Acquire))
            .max()
            .unwrap_or(0);
        for g in &group {
            g.target.store(newest + 5, Ordering::Release);
        }
        let mut out = Vec::new();
        for g in group {
            out.push(
                tokio::time::timeout(Duration::from_secs(60), g.task)
                    .await
                    .expect("group stops")
                    .expect("autosync task"),
            );
        }
        out
    }

    /// Stops answering and returns the agent. It has answered every frame
    /// it received (`owes == false`); its next frame comes once the other
    /// agents have answered.
    pub async fn stop(self) -> TestAgent {
        self.stop.store(true, std::sync::atomic::Ordering::Release);
        tokio::time::timeout(Duration::from_secs(30), self.task)
            .await
            .expect("autosync stops")
            .expect("autosync task")
    }

    /// Ends the background task and closes the agent's connection.
    pub fn abort(self) {
        self.task.abort();
    }
}

impl TestServer {
    /// Connects `types.len()` agents one after the other (so connection ids
    /// are the same every run), creates their robots, and has agent i join
    /// `teams[i % teams.len()]` with uniform number `i / teams.len() + 1`.
    /// The server config should set `sync_wait_for_agents` to the count so
    /// the match starts in the same cycle every run. Every agent owes the
    /// server one answer afterwards.
    pub async fn scripted_agents(&self, types: &[u8], teams: &[&str]) -> Vec<TestAgent> {
        let mut agents = Vec::new();
        for t in types {
            let mut a = self.agent().await;
            a.send(&format!("(scene rsg/agent/nao/nao_hetero.rsg {t})(syn)"))
                .await;
            agents.push(a);
        }
        for a in agents.iter_mut() {
            a.recv().await;
        }
        for (i, a) in agents.iter_mut().enumerate() {
            let team = teams[i % teams.len()];
            let unum = i / teams.len() + 1;
            a.send(&format!("(init (unum {unum})(teamname {team}))(syn)"))
                .await;
        }
        for a in agents.iter_mut() {
            a.recv().await;
        }
        agents
    }
}

/// A scratch directory for one test, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A fresh, empty directory named after the test binary's process and
    /// `tag` (unique within the binary).
    pub fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("rcss3d-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
