//! Hostile clients on the monitor port of the whole server: connections
//! that never read cannot lock RoboViz or a trainer out, the slot limit
//! still holds against monitors that read, and wrong trainer secrets are
//! slowed down and cut off while the right one works.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rcss3d::config::Config;
use rcss3d::monitor::client::MonitorClient;
use rcss3d::monitor::control::{send_control, Control, ControlOptions, ControlOutcome};
use rcss3d::rules::PlayMode;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::time::timeout;

use crate::harness::TestServer;

/// A server that runs in real time with nobody on the field: monitor
/// messages every 40 ms, as RoboViz sees them before a match.
fn real_time() -> Config {
    Config {
        bind: [127, 0, 0, 1].into(),
        seed: Some(7),
        ..Config::default()
    }
}

/// A monitor that reads every message in the background, like RoboViz.
struct Reader {
    /// Messages read so far; closed with the connection.
    messages: tokio::sync::watch::Receiver<u64>,
    closed: Arc<AtomicBool>,
    leave: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Reader {
    fn start(mut client: MonitorClient) -> Reader {
        let (m, messages) = tokio::sync::watch::channel(0u64);
        let closed = Arc::new(AtomicBool::new(false));
        let c = closed.clone();
        let (leave, mut leave_rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let mut leaving = false;
            loop {
                tokio::select! {
                    message = client.next_message() => match message {
                        Ok(Some(_)) => {
                            m.send_modify(|n| *n += 1);
                        }
                        _ => break,
                    },
                    Ok(()) = &mut leave_rx, if !leaving => {
                        // A frame over the server's limit: it closes the
                        // connection.
                        leaving = true;
                        let _ = client.send_bytes(&vec![b' '; 1 << 20]).await;
                    }
                };
            }
            c.store(true, Ordering::Relaxed);
        });
        Reader {
            messages,
            closed,
            leave: Some(leave),
            task,
        }
    }

    /// Makes the server close the connection and waits until it has.
    async fn leave(mut self) {
        if let Some(leave) = self.leave.take() {
            let _ = leave.send(());
        }
        timeout(Duration::from_secs(20), self.task)
            .await
            .expect("the server closes a monitor that sends a bad frame")
            .expect("reader task");
    }

    /// Waits until `n` more messages have arrived (each a monitor step).
    async fn wait_messages(&self, n: u64) {
        let mut messages = self.messages.clone();
        let until = *messages.borrow_and_update() + n;
        timeout(Duration::from_secs(20), messages.wait_for(|m| *m >= until))
            .await
            .expect("the reading monitor keeps getting messages")
            .expect("reader cut off");
    }
}

/// Connects a monitor and times its first message.
async fn first_message_within(addr: std::net::SocketAddr) -> (MonitorClient, Duration) {
    let started = Instant::now();
    let mut client = MonitorClient::connect(addr).await.expect("connect");
    let first = timeout(Duration::from_secs(10), client.next_message())
        .await
        .expect("a first message")
        .expect("valid message");
    assert!(first.is_some(), "closed before the first message");
    (client, started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_that_never_read_cannot_lock_monitors_out() {
    let cfg = real_time();
    let slots = cfg.monitor.max_monitors;
    let server = TestServer::start(cfg).await;
    // Every slot taken by a connection that neither reads nor writes.
    let mut idle = Vec::new();
    for _ in 0..slots {
        idle.push(
            TcpStream::connect(server.monitor_addr)
                .await
                .expect("connect"),
        );
    }

    // A monitor that reads (RoboViz) gets in and gets its first message.
    let (viewer, waited) = first_message_within(server.monitor_addr).await;
    assert!(
        waited < Duration::from_secs(5),
        "first message after {waited:?}"
    );
    let viewer = Reader::start(viewer);

    // A trainer (`rcss3d ctl`) gets in and its command takes effect,
    // while the idle connections stay.
    let started = Instant::now();
    let outcome = send_control(
        &server.monitor_addr.to_string(),
        &Control::PlayMode(PlayMode::PlayOn),
        &ControlOptions {
            secret: None,
            wait: Some(Duration::from_secs(5)),
        },
    )
    .await
    .expect("the trainer command takes effect");
    assert!(
        matches!(outcome, ControlOutcome::Confirmed(_)),
        "{outcome:?}"
    );
    let trainer_took = started.elapsed();
    assert!(trainer_took < Duration::from_secs(5));
    println!(
        "{slots} idle monitors: reader's first message after {waited:?}, \
         trainer command confirmed after {trainer_took:?}"
    );

    // The reading monitor was never taken for an idle one.
    viewer.wait_messages(25).await;
    assert!(!viewer.closed.load(Ordering::Relaxed));
    viewer.task.abort();
    drop(idle);
    server.stop().await;
}

/// Reads what the server sent; true when it closes the connection within
/// `within`.
async fn closed_by_server(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = vec![0u8; 64 << 10];
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_slot_limit_holds_and_a_newcomer_replaces_one_idle_monitor() {
    let mut cfg = real_time();
    cfg.monitor.max_monitors = 3;
    let server = TestServer::start(cfg).await;
    let mut idle = Vec::new();
    for _ in 0..3 {
        idle.push(
            TcpStream::connect(server.monitor_addr)
                .await
                .expect("connect"),
        );
    }
    let (client, waited) = first_message_within(server.monitor_addr).await;
    assert!(
        waited < Duration::from_secs(5),
        "first message after {waited:?}"
    );
    let reader = Reader::start(client);
    reader.wait_messages(5).await;
    // Exactly one idle connection made room: the oldest.
    let mut closed = Vec::new();
    for s in &mut idle {
        closed.push(closed_by_server(s, Duration::from_secs(2)).await);
    }
    assert_eq!(closed, [true, false, false]);
    reader.task.abort();
    server.stop().await;

    // Without replacing, monitors that read keep their slots: a fourth
    // waits, gets none, and is closed without a message.
    let mut cfg = real_time();
    cfg.monitor.max_monitors = 3;
    cfg.monitor.evict_lag_secs = None;
    cfg.monitor.admission_wait_secs = 0.5;
    let server = TestServer::start(cfg).await;
    let mut readers = Vec::new();
    for _ in 0..3 {
        let (client, _) = first_message_within(server.monitor_addr).await;
        readers.push(Reader::start(client));
    }
    let mut fourth = TcpStream::connect(server.monitor_addr)
        .await
        .expect("connect");
    let mut buf = [0u8; 64];
    let read = timeout(Duration::from_secs(10), fourth.read(&mut buf))
        .await
        .expect("the fourth is closed within 10 s");
    assert!(matches!(read, Ok(0) | Err(_)), "the fourth got {read:?}");
    for r in &readers {
        r.wait_messages(5).await;
    }
    // Once one has left, a newcomer gets its slot.
    readers.pop().expect("three").leave().await;
    let (_client, waited) = first_message_within(server.monitor_addr).await;
    assert!(
        waited < Duration::from_secs(5),
        "first message after {waited:?}"
    );
    for r in readers {
        r.task.abort();
    }
    server.stop().await;
}

/// Whether a fresh monitor shows `mode` within a few messages.
async fn play_mode_is(addr: std::net::SocketAddr, mode: PlayMode) -> bool {
    let mut m = MonitorClient::connect(addr).await.expect("connect");
    for _ in 0..5 {
        match timeout(Duration::from_secs(10), m.next_message()).await {
            Ok(Ok(Some(_))) => {}
            other => panic!("monitor stream ended: {other:?}"),
        }
    }
    m.scene().game.play_mode() == Some(mode)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_trainer_secrets_are_slowed_down_and_cut_off() {
    let mut cfg = real_time();
    cfg.monitor.trainer_secret = Some("right".into());
    cfg.monitor.max_auth_failures = Some(3);
    cfg.monitor.auth_failure_delay_secs = 0.2;
    let server = TestServer::start(cfg).await;
    let addr = server.monitor_addr;

    // Many guesses in one go, the right one among the later ones: the
    // third wrong one closes the connection, so the right one and the
    // command after it are never read.
    let mut guesser = MonitorClient::connect(addr).await.expect("connect");
    let mut guesses: String = (0..100).map(|k| format!("(auth wrong{k})")).collect();
    guesses.push_str("(auth right)(playMode PlayOn)");
    let started = Instant::now();
    guesser.send(&guesses).await.expect("send");
    let closed = timeout(Duration::from_secs(20), async {
        loop {
            match guesser.next_message().await {
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => return,
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the guessing connection stayed open");
    // Three wrong secrets, the n-th on the server waiting n x 0.2 s.
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(1200), "closed after {took:?}");
    assert!(play_mode_is(addr, PlayMode::BeforeKickOff).await);

    // The wait grows with the wrong secrets on the whole server: the
    // fourth one (on a new connection) holds the next command 0.8 s.
    let mut typo = MonitorClient::connect(addr).await.expect("connect");
    timeout(Duration::from_secs(10), typo.next_message())
        .await
        .expect("first message")
        .expect("valid");
    let started = Instant::now();
    typo.send("(auth typo)(auth right)(playMode PlayOn)")
        .await
        .expect("send");
    let mut seen = false;
    while !seen {
        match timeout(Duration::from_secs(10), typo.next_message()).await {
            Ok(Ok(Some(_))) => seen = typo.scene().game.play_mode() == Some(PlayMode::PlayOn),
            other => panic!("stream ended before the command took effect: {other:?}"),
        }
    }
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(800),
        "took effect after {took:?}"
    );

    // The right secret at once: no wait.
    let started = Instant::now();
    let outcome = send_control(
        &addr.to_string(),
        &Control::PlayMode(PlayMode::BeforeKickOff),
        &ControlOptions {
            secret: Some("right".into()),
            wait: Some(Duration::from_secs(5)),
        },
    )
    .await
    .expect("the right secret works");
    assert!(
        matches!(outcome, ControlOutcome::Confirmed(_)),
        "{outcome:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    server.stop().await;
}
