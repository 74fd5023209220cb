//! Bad input: every row of the bad-input table gets a real-socket test. Each test keeps
//! a well-behaved "witness" agent cycling while a bad client misbehaves,
//! and checks the log line, that nothing panicked and that the witness's
//! cycles went on (time +0.02 per frame).

mod util;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rcss3d::config::Config;
use rcss3d::net::client::frame;
use util::process::ServerProcess;
use util::{capture_logs, joint, now, test_config, wait_for_log, Scratch, TestAgent, TestServer};

/// Runs `n` witness cycles and checks the clock advanced one step each.
async fn witness_cycles(w: &mut TestAgent, n: usize) {
    let mut t = now(&w.cycle("").await);
    for _ in 0..n {
        let f = w.cycle("").await;
        let t2 = now(&f);
        assert!((t2 - t - 0.02).abs() < 0.011, "witness clock {t} -> {t2}");
        t = t2;
    }
}

async fn setup(team: &str) -> (TestServer, TestAgent) {
    capture_logs();
    let server = TestServer::start(test_config()).await;
    let mut w = server.agent().await;
    w.join(team, 1, 0).await;
    (server, w)
}

/// A bad agent that has a robot and a team, cycling in lockstep with the
/// witness (sync mode needs both to answer).
async fn joined_pair(team: &str) -> (TestServer, TestAgent, TestAgent) {
    let (server, w) = setup(team).await;
    let mut b = server.agent().await;
    let w = create_beside(
        w,
        &mut b,
        1,
        &format!("(init (unum 2)(teamname {team}))(syn)"),
    )
    .await;
    (server, w, b)
}

/// Creates `b`'s robot while the witness keeps the barrier moving, then
/// `b` answers its first frame with `reply`; both owe the server one
/// answer afterwards.
async fn create_beside(w: TestAgent, b: &mut TestAgent, robot_type: u8, reply: &str) -> TestAgent {
    let syncing = w.autosync();
    b.create(robot_type).await;
    let mut w = syncing.stop().await;
    b.send(reply).await;
    w.settle().await;
    b.recv().await;
    w
}

/// Both agents play `n` cycles; the witness's clock advances one step each.
async fn pair_cycles(w: &mut TestAgent, b: &mut TestAgent, n: usize) {
    for _ in 0..n {
        let before = now(&both_cycle_w(w, b).await);
        let after = now(&both_cycle_w(w, b).await);
        assert!(
            (after - before - 0.02).abs() < 0.011,
            "witness clock {before} -> {after}"
        );
    }
}

/// Like `both_cycle` but returns the witness's frame.
async fn both_cycle_w(w: &mut TestAgent, b: &mut TestAgent) -> String {
    w.send("(syn)").await;
    b.send("(syn)").await;
    let f = w.recv().await;
    b.recv().await;
    f
}

async fn both_cycle(w: &mut TestAgent, b: &mut TestAgent, b_msg: &str) -> String {
    w.send("(syn)").await;
    b.send(b_msg).await;
    w.recv().await;
    b.recv().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_sexpression_is_logged_and_the_client_keeps_playing() {
    let (server, mut w, mut b) = joined_pair("BadSexp").await;
    // The error drops the rest of the message, its `(syn)` too: the
    // server waits for the next one, sent as one frame in two writes (the
    // length prefix, then the payload).
    w.send("(syn)").await;
    b.send("(he1 1.0))(he2 (((").await;
    let syn = frame(b"(syn)");
    b.send_raw(&syn[..4]).await;
    b.send_raw(&syn[4..]).await;
    w.recv().await;
    let f = b.recv().await;
    assert!(f.starts_with("(time"));
    assert!(wait_for_log("malformed S-expression").await);
    // The command before the error was applied; the client keeps playing.
    let mut last = String::new();
    for _ in 0..4 {
        last = both_cycle(&mut w, &mut b, "(syn)").await;
    }
    assert!(joint(&last, "hj1") > 1.0, "{last}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_effector_is_logged_with_team_and_unum() {
    let (server, mut w, mut b) = joined_pair("Unknown").await;
    for _ in 0..3 {
        both_cycle(&mut w, &mut b, "(frobnicate 1)(pass)(lle7 1)(syn)").await;
    }
    assert!(wait_for_log("unknown effector `frobnicate`").await);
    assert!(wait_for_log("unknown effector `lle7` for robot type 1").await);
    let logs = util::logs();
    let line = logs
        .lines()
        .find(|l| l.contains("frobnicate"))
        .expect("log line");
    assert!(
        line.contains("Unknown") && line.contains("unum=2") && line.contains("conn="),
        "{line}"
    );
    pair_cycles(&mut w, &mut b, 3).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gib_length_prefix_closes_only_that_connection() {
    let (server, mut w) = setup("Huge").await;
    let mut bad = server.agent().await;
    // Written by hand: the prefix lies (2 GiB announced, over any limit),
    // which the client's encoder cannot produce.
    bad.send_raw(&[0x80, 0, 0, 0, b'(', b's']).await;
    assert!(
        bad.closed_within(Duration::from_secs(5)).await,
        "connection must be closed"
    );
    assert!(wait_for_log("bad frame from agent").await);
    witness_cycles(&mut w, 10).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_length_frame_is_harmless() {
    let (server, mut w, mut b) = joined_pair("Zero").await;
    b.send_raw(&frame(b"")).await;
    let f = both_cycle(&mut w, &mut b, "(syn)").await;
    assert!(f.starts_with("(time"));
    pair_cycles(&mut w, &mut b, 3).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_a_frame_then_vanish() {
    let (server, mut w, mut b) = joined_pair("Half").await;
    // Written by hand: a prefix announcing 50 bytes, then only 3 of them
    // (a frame that never completes).
    b.send_raw(&[0, 0, 0, 50, b'(', b's', b'y']).await;
    drop(b);
    assert!(wait_for_log("agent left").await);
    witness_cycles(&mut w, 10).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_without_scene_does_not_block() {
    let (server, mut w) = setup("NoScene").await;
    let _silent = server.agent().await;
    witness_cycles(&mut w, 20).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_ascii_bytes() {
    let (server, mut w, mut b) = joined_pair("Bytes").await;
    let mut msg = b"(say h\xffi)(\xff\xfe 1)(he1 \xc3\xa9)".to_vec();
    msg.extend_from_slice(b"(syn)");
    b.send_raw(&frame(&msg)).await;
    w.send("(syn)").await;
    w.recv().await;
    let f = b.recv().await;
    assert!(
        !f.contains("(hear"),
        "an invalid say must not be heard: {f}"
    );
    assert!(wait_for_log("`say` dropped").await);
    pair_cycles(&mut w, &mut b, 3).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nan_and_huge_numbers_in_beam_and_joints() {
    let (server, mut w, mut b) = joined_pair("Nan").await;
    both_cycle(
        &mut w,
        &mut b,
        "(beam nan 0 0)(beam 1 2 inf)(he1 nan)(he2 1e30)(lae1 -1e300)(syn)",
    )
    .await;
    assert!(wait_for_log("speed is NaN").await);
    assert!(wait_for_log("non-finite value").await);
    let mut f = String::new();
    for _ in 0..3 {
        f = both_cycle(&mut w, &mut b, "(syn)").await;
    }
    // Huge speeds clamp to the limit; the robot is intact (no NaN anywhere).
    assert!(!f.contains("nan"), "{f}");
    assert!(joint(&f, "hj2") > 5.0, "{f}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_before_scene_and_second_scene() {
    let (server, w) = setup("Order").await;
    let ws = w.autosync();
    let mut b = server.agent().await;
    b.send("(init (unum 3)(teamname Order))(beam 1 1 0)").await;
    assert!(wait_for_log("command before the robot exists dropped").await);
    let f = b.create(2).await;
    assert!(!f.contains("(unum"), "the early init was dropped: {f}");
    b.send("(scene rsg/agent/nao/nao_hetero.rsg 0)(syn)").await;
    b.recv().await;
    assert!(wait_for_log("second `scene` ignored").await);
    for _ in 0..3 {
        let f = b.cycle("").await;
        assert_eq!(f.matches("(HJ ").count(), 22, "one robot, 22 joints: {f}");
        assert!(!f.contains("(unum"), "{f}");
    }
    let mut w = ws.stop().await;
    b.send("(syn)").await;
    w.settle().await;
    b.recv().await;
    pair_cycles(&mut w, &mut b, 2).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn third_team_and_unum_twelve_are_refused() {
    let (server, w) = setup("Third1").await;
    // A second team takes the right side.
    let mut r = server.agent().await;
    let w = create_beside(w, &mut r, 0, "(init (unum 1)(teamname Third2))(syn)").await;
    let mut others = vec![w.autosync(), r.autosync()];
    for (team, unum, expect) in [("Third3", 1, "third team"), ("Third1", 12, "outside 0..11")] {
        let mut b = server.agent().await;
        b.create(0).await;
        b.send(&format!("(init (unum {unum})(teamname {team}))(syn)"))
            .await;
        for _ in 0..4 {
            let f = b.recv().await;
            assert!(!f.contains("(unum"), "{team}/{unum} must not join: {f}");
            b.send("(syn)").await;
        }
        assert!(wait_for_log(expect).await, "log line: {expect}");
        drop(b);
    }
    // The others kept playing throughout.
    let mut w = others.remove(0).stop().await;
    others.remove(0).abort();
    w.settle().await;
    witness_cycles(&mut w, 5).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_simultaneous_connections() {
    capture_logs();
    let server = TestServer::start(test_config()).await;
    let addr = server.agent_addr;
    let mut tasks = Vec::new();
    for i in 0..30u8 {
        tasks.push(tokio::spawn(async move {
            let mut a = TestAgent::connect(addr).await;
            a.create(i % 5).await;
            let mut t = 0.0;
            for _ in 0..20 {
                let f = a.cycle("(he1 0.3)").await;
                let t2 = now(&f);
                assert!(t2 > t);
                t = t2;
            }
        }));
    }
    for t in tasks {
        t.await.expect("agent task");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_beamed_onto_one_spot_stays_sane() {
    capture_logs();
    let mut cfg = test_config();
    cfg.sync_wait_for_agents = 6;
    let server = TestServer::start(cfg).await;
    let mut agents = Vec::new();
    for _ in 0..6 {
        agents.push(server.agent().await);
    }
    for (i, a) in agents.iter_mut().enumerate() {
        a.send(&format!(
            "(scene rsg/agent/nao/nao_hetero.rsg {})(syn)",
            i % 3
        ))
        .await;
    }
    for a in agents.iter_mut() {
        a.recv().await;
    }
    for (i, a) in agents.iter_mut().enumerate() {
        a.send(&format!("(init (unum {})(teamname Pile))(syn)", i + 1))
            .await;
    }
    for a in agents.iter_mut() {
        a.recv().await;
    }
    for a in agents.iter_mut() {
        a.send("(beam -3 0 0)(syn)").await;
    }
    for _ in 0..150 {
        for a in agents.iter_mut() {
            let f = a.recv().await;
            assert!(!f.contains("nan"), "{f}");
        }
        for a in agents.iter_mut() {
            a.send("(syn)").await;
        }
    }
    assert!(
        !util::logs().contains("flung away"),
        "the solver flung a robot away"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_over_the_inbound_rate_closes_only_that_connection() {
    capture_logs();
    let server = TestServer::start(Config {
        max_agent_bytes_per_sec: Some(20_000),
        max_agent_frame: 4096,
        ..test_config()
    })
    .await;
    let mut w = server.agent().await;
    w.join("Flood", 1, 0).await;
    // The witness's own ~40-byte answers stay far below 20 kB/s.
    witness_cycles(&mut w, 5).await;
    // 200 frames of 4 kB in one go: 800 kB against a 20 kB burst.
    let mut bad = server.agent().await;
    let mut payload = vec![b' '; 4000];
    payload.extend_from_slice(b"(syn)");
    let frame = frame(&payload);
    let flood: Vec<u8> = frame
        .iter()
        .copied()
        .cycle()
        .take(frame.len() * 200)
        .collect();
    bad.send_raw(&flood).await;
    assert!(
        bad.closed_within(Duration::from_secs(5)).await,
        "the flooding connection must be closed"
    );
    assert!(wait_for_log("over its inbound byte rate").await);
    witness_cycles(&mut w, 10).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scene_arguments_the_file_does_not_declare_are_refused() {
    let (server, w) = setup("Undeclared").await;
    let ws = w.autosync();
    let mut b = server.agent().await;
    // nao.rsg has no templ line: it takes no arguments.
    b.send("(scene rsg/agent/nao/nao.rsg 1 2)(syn)").await;
    assert!(
        wait_for_log("rsg/agent/nao/nao.rsg takes 0 argument(s)").await,
        "the refusal says why"
    );
    let line = util::logs()
        .lines()
        .find(|l| l.contains("takes 0 argument(s)"))
        .map(str::to_owned)
        .expect("log line");
    assert!(
        line.contains("scene refused; the agent gets no robot"),
        "{line}"
    );
    assert!(
        b.try_recv(Duration::from_millis(300)).await.is_none(),
        "no robot, no frame"
    );
    // nao_hetero.rsg declares one argument.
    b.send("(scene rsg/agent/nao/nao_hetero.rsg)(syn)").await;
    assert!(wait_for_log("nao_hetero.rsg takes 1 argument(s)").await);
    // The connection stays usable: a declared request builds the robot.
    let f = b.create(1).await;
    assert_eq!(f.matches("(HJ ").count(), 22, "{f}");
    ws.abort();
    server.stop().await;
}

/// Distinct robot requests the memory test makes, each on a connection of
/// its own.
const SCENE_SPELLINGS: usize = 5_000;

/// Connections the memory test keeps open at once.
const PARALLEL_CONNECTIONS: usize = 48;

/// Peak RSS the server may reach in the memory test.
const MAX_PEAK_RSS_KB: u64 = 64 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_scene_spellings_over_short_connections_do_not_grow_memory() {
    // The server binary in real time, as in a match. A client whose scene
    // is refused is closed after the (short) join timeout, which tells the
    // test the request was handled; one whose robot is built gets a frame.
    let dir = Scratch::new("scene-spellings");
    let conf = dir.0.join("server.ron");
    std::fs::write(
        &conf,
        "(seed: 7, agent_idle_timeout_secs: 0.05, max_agents: 64)",
    )
    .expect("config");
    let log = dir.0.join("server.log");
    let out = std::fs::File::create(&log).expect("log file");
    let stdout = out.try_clone().expect("log file");
    let mut server = ServerProcess::start_with_stdout(Some(stdout), |c| {
        c.arg("--config")
            .arg(&conf)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stderr(out);
    });
    let addr = server.agent_addr();
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let clients: Vec<_> = (0..PARALLEL_CONNECTIONS)
        .map(|_| {
            let next = next.clone();
            tokio::spawn(async move {
                let mut robots = 0;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= SCENE_SPELLINGS {
                        return robots;
                    }
                    let mut a = TestAgent::connect(addr).await;
                    // Two small integers: 5,000 different requests.
                    a.send(&format!(
                        "(scene rsg/agent/nao/nao.rsg {} {})",
                        i / 100,
                        i % 100
                    ))
                    .await;
                    // A frame (a robot was built) or the close.
                    if a.try_recv(Duration::from_secs(5)).await.is_some() {
                        robots += 1;
                    }
                }
            })
        })
        .collect();
    let mut robots = 0;
    for c in clients {
        robots += tokio::time::timeout(Duration::from_secs(180), c)
            .await
            .expect("the requests are handled in bounded time")
            .expect("client");
    }
    let elapsed = started.elapsed();
    let peak_kb = rcss3d::procfs::status_kib(server.child.id(), "VmHWM").expect("VmHWM");
    let _ = server.terminate(Duration::from_secs(10));
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    println!(
        "{SCENE_SPELLINGS} scene spellings over {PARALLEL_CONNECTIONS} parallel short \
         connections in {elapsed:?}: {robots} robots built, server peak RSS {peak_kb} kB"
    );
    assert!(peak_kb <= MAX_PEAK_RSS_KB, "peak RSS {peak_kb} kB");
    assert_eq!(
        robots, 0,
        "nao.rsg takes no arguments: no robot for any request"
    );
    assert!(
        text.contains("takes 0 argument(s)"),
        "the refusal is logged:\n{}",
        &text[..text.len().min(4000)]
    );
}
