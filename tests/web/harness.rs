//! The real server with the web monitor on loopback, agents that join and
//! beam, and the truth the page is checked against: what a monitor on the
//! monitor port sees (live) or what the log's lines give (replay).

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use nalgebra::Vector3;
use rcss3d::app::RunSummary;
use rcss3d::config::Config;
use rcss3d::monitor::client::{MonitorClient, TrackedScene};
use rcss3d::rules::Side;
use rcss3d::web::{ReplayArgs, WebConfig};
use tokio::net::TcpListener;

use crate::util::{TestAgent, TestServer};

/// Tests of this binary take turns: sync-mode servers run flat out, and
/// the timing test must not share the two cores with them.
pub async fn one_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}

/// The whole server (`tests/util`'s `TestServer`) with the web monitor
/// attached on a port of its own.
pub struct WebServer {
    pub server: TestServer,
    pub monitor_addr: SocketAddr,
    pub web_addr: SocketAddr,
}

impl WebServer {
    pub async fn start(cfg: Config, web: WebConfig) -> WebServer {
        let bind = |_: ()| TcpListener::bind("127.0.0.1:0");
        let agents = bind(()).await.expect("bind agents");
        let monitors = bind(()).await.expect("bind monitors");
        let pages = bind(()).await.expect("bind web");
        let web_addr = pages.local_addr().expect("addr");
        let ext = rcss3d::web::live_on(pages, &cfg, web).expect("web monitor");
        let server = TestServer::start_on(cfg, agents, monitors, vec![ext]);
        WebServer {
            monitor_addr: server.monitor_addr,
            web_addr,
            server,
        }
    }

    pub fn url(&self, fragment: &str) -> String {
        format!("http://{}/{fragment}", self.web_addr)
    }

    pub async fn agent(&self) -> TestAgent {
        self.server.agent().await
    }

    pub async fn monitor(&self) -> MonitorClient {
        MonitorClient::connect(self.monitor_addr)
            .await
            .expect("monitor connects")
    }

    pub async fn stop(self) -> RunSummary {
        self.server.stop_within(Duration::from_secs(30)).await
    }
}

/// Joins `team` with `unum` and `robot_type` and beams to (x, y).
pub async fn join_and_beam(
    server: &WebServer,
    team: &str,
    unum: u8,
    robot_type: u8,
    x: f32,
    y: f32,
) -> TestAgent {
    let mut a = server.agent().await;
    a.join(team, unum, robot_type).await;
    a.send(&format!("(beam {x} {y} 0)(syn)")).await;
    a
}

/// Reads monitor messages until none has come for `quiet` (the simulation
/// stands still), then the exact scene it stands at: the full state a
/// fresh monitor connection gets first. (The running stream's deltas leave
/// out moves under the monitor protocol's 5 mm threshold, so a robot that
/// creeps slowly is not exactly where that stream last put it.)
pub async fn settle(server: &WebServer, mon: &mut MonitorClient, quiet: Duration) -> TrackedScene {
    loop {
        match tokio::time::timeout(quiet, mon.next_message()).await {
            Err(_) => break,
            Ok(Ok(Some(_))) => {}
            Ok(other) => panic!("monitor stream ended: {other:?}"),
        }
    }
    let mut fresh = server.monitor().await;
    match tokio::time::timeout(Duration::from_secs(5), fresh.next_message()).await {
        Ok(Ok(Some(_))) => fresh.scene().clone(),
        other => panic!("no full state for a fresh monitor: {other:?}"),
    }
}

/// What the page must show, taken from a monitor scene.
#[derive(Debug, Clone)]
pub struct Truth {
    pub ball: Vector3<f32>,
    /// (side, unum, torso centre).
    pub robots: Vec<(Side, u32, Vector3<f32>)>,
    pub play_mode: Option<String>,
    pub score: (u32, u32),
}

impl Truth {
    pub fn of(scene: &TrackedScene) -> Truth {
        Truth {
            ball: scene.ball_position().expect("ball in the scene"),
            robots: scene
                .robots()
                .into_iter()
                .map(|r| (r.side, r.unum, r.position))
                .collect(),
            play_mode: scene.game.play_mode().map(|m| m.name().to_owned()),
            score: (scene.game.score_left, scene.game.score_right),
        }
    }
}

/// Every line of a log (plain or gzip), applied in order: the scene after
/// line `k` for each k.
pub fn log_scenes(path: &Path) -> Vec<TrackedScene> {
    use std::io::Read;
    let raw = std::fs::read(path).expect("log file");
    let text = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut s = String::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_string(&mut s)
            .expect("gzip log");
        s
    } else {
        String::from_utf8(raw).expect("text log")
    };
    let mut scene = TrackedScene::default();
    text.lines()
        .map(|line| {
            scene.apply(line).expect("every log line applies");
            scene.clone()
        })
        .collect()
}

/// The log player's page for `log` on a free loopback port, until
/// [`stop`](Self::stop).
pub struct LogPlayer {
    pub addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), rcss3d::web::WebError>>,
}

impl LogPlayer {
    pub async fn start(log: &Path) -> LogPlayer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let args = ReplayArgs {
            file: log.to_path_buf(),
            web_port: addr.port(),
            bind: None,
        };
        let task = tokio::spawn(async move {
            rcss3d::web::replay_on(
                listener,
                &args,
                &Config::default(),
                WebConfig::default(),
                async {
                    let _ = stopped.await;
                },
            )
            .await
        });
        LogPlayer { addr, stop, task }
    }

    /// Stops the player; fails the test unless it stops within 20 s
    /// without an error.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        tokio::time::timeout(Duration::from_secs(20), self.task)
            .await
            .expect("player stops")
            .expect("player task")
            .expect("player ran");
    }
}

/// A WebSocket viewer of the web monitor.
pub type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A viewer whose socket takes only a few kilobytes: once it stops
/// reading, the server's sends to it block soon.
pub async fn small_window_viewer(addr: SocketAddr) -> Ws {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    let stream = socket.connect(addr).await.expect("connect");
    let (ws, _) = tokio_tungstenite::client_async(
        format!("ws://{addr}/ws"),
        tokio_tungstenite::MaybeTlsStream::Plain(stream),
    )
    .await
    .expect("upgrade");
    ws
}
