//! Real clients never stall the server: the sync-mode handshake of a
//! client that drives a whole team from one loop, a slow-starting agent,
//! a silent agent with and without a sync timeout, `init` and `beam` in
//! one cycle, `(killsim)` while the server waits at the sync barrier,
//! idle connections that would hold the agent slots, out-of-range
//! `(time ...)`, a referee move of a lying robot, a reset connection, and
//! FC Portugal's start-up (one frame per answer, also with slow steps).
//! Every test runs the real TCP server.

mod util;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;

use rcss3d::config::Config;
use rcss3d::monitor::client::MonitorClient;
use util::{
    capture_logs, logs, now, test_config, wait_for_log, wait_for_logs, TestAgent, TestServer,
};

/// Longest a test waits for a frame before it calls the server stalled.
const STALL: Duration = Duration::from_secs(5);

/// One agent of the one-loop client.
struct LoopAgent {
    agent: TestAgent,
    unum: u8,
    /// Frames read so far.
    frames: usize,
    /// The GS naming its own number has arrived.
    joined: bool,
}

/// A client that drives all its agents from one loop, the way a team
/// script written in one process does: every round it reads one frame of
/// each agent in turn (blocking) and answers it. A new agent is connected
/// at the end of a round with `scene` and nothing else; once its first
/// frame has come it sends `init` alone, and then nothing at all until it
/// reads a frame whose GS shows its number (FCPCodebase-style clients wait
/// for that before acting). From then on it answers every frame with
/// `(syn)`. Returns the number of rounds played with all eleven agents.
async fn one_loop_team(server: &TestServer, team: &str) -> usize {
    let mut agents: Vec<LoopAgent> = Vec::new();
    let mut rounds_with_all = 0;
    let mut round = 0;
    let mut waiting_rounds = 0;
    while rounds_with_all < 15 {
        round += 1;
        assert!(
            round < 400 && waiting_rounds < 200,
            "{team}: no progress after {round} rounds"
        );
        for a in agents.iter_mut() {
            // A new agent's first frame comes a cycle or two after its
            // `scene`, once the others have answered: poll for it rather
            // than block the whole loop on it.
            if a.frames == 0 {
                match a.agent.try_recv(Duration::from_millis(1)).await {
                    Some(_) => {
                        a.frames = 1;
                        a.agent
                            .send(&format!("(init (unum {})(teamname {team}))", a.unum))
                            .await;
                    }
                    None => waiting_rounds += 1,
                }
                continue;
            }
            let Some(frame) = a.agent.try_recv(STALL).await else {
                panic!(
                    "{team}: agent {} waited {STALL:?} for frame {} in round {round}: the server stalled",
                    a.unum,
                    a.frames + 1
                );
            };
            a.frames += 1;
            if frame.contains(&format!("(GS (unum {})", a.unum)) {
                a.joined = true;
            }
            if a.joined {
                a.agent.send("(he1 0.5)(syn)").await;
            }
        }
        if agents.len() == 11 && agents.iter().all(|a| a.joined) {
            rounds_with_all += 1;
        }
        // A new agent every third round until there are eleven, at the end
        // of a round: its first frame comes once the others have answered.
        if agents.len() < 11 && round % 3 == 1 {
            // A legal team: at most 7 robots of one type, at least 3 types.
            const TYPES: [u8; 11] = [0, 1, 1, 1, 2, 3, 3, 3, 4, 4, 4];
            let mut a = server.agent().await;
            a.send(&format!(
                "(scene rsg/agent/nao/nao_hetero.rsg {})",
                TYPES[agents.len()]
            ))
            .await;
            agents.push(LoopAgent {
                agent: a,
                unum: agents.len() as u8 + 1,
                frames: 0,
                joined: false,
            });
        }
    }
    rounds_with_all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_loop_client_with_eleven_new_agents_never_stalls_the_barrier_with_the_reference_grace(
) {
    capture_logs();
    // Many runs: the handshake used to stall depending on how the client's
    // messages and the server's cycles interleaved.
    for run in 0..6 {
        // This client reads a new agent's first frame only at its turn in
        // a round, after the others' frames of the next cycle: it needs the
        // reference's grace period (the server's default waits for every
        // robot's answer from its first frame on, so that runs are
        // reproducible and slow starters are not run ahead of).
        let server = TestServer::start(Config {
            sync_wait_for_agents: 0,
            sync_grace_frames: 5,
            ..test_config()
        })
        .await;
        let rounds = one_loop_team(&server, &format!("Loop{run}")).await;
        assert_eq!(rounds, 15);
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_in_lockstep_from_its_first_frame_never_gets_frames_ahead_of_its_answers() {
    // A replay or training client: `scene`, then from its first frame on
    // it answers every frame with `(syn)`. Once it has answered, the
    // server waits for it: it never finds frames queued that were sent
    // without waiting for its answer, so its percepts stay in step with
    // its commands.
    let server = TestServer::start(Config {
        sync_wait_for_agents: 0,
        ..test_config()
    })
    .await;
    let mut a = server.agent().await;
    a.send("(scene rsg/agent/nao/nao_hetero.rsg 0)").await;
    a.recv().await;
    a.send("(init (unum 1)(teamname Step))(syn)").await;
    // The frame that answers it; frames the server sent before that first
    // answer reached it (still in the grace period) may be queued: read
    // them, answer the newest.
    let mut last = now(&a.recv().await);
    while let Some(frame) = a.try_recv(Duration::from_millis(60)).await {
        last = now(&frame);
    }
    a.send("(syn)").await;
    for answered in 1..=10 {
        // Slower than the server: every frame the server could send
        // without waiting would pile up here. (A slow client: the sleep
        // is the thing tested.)
        tokio::time::sleep(Duration::from_millis(60)).await;
        let frame = a.recv().await;
        assert!(
            a.try_recv(Duration::from_millis(60)).await.is_none(),
            "a second frame queued after {answered} answers"
        );
        let t = now(&frame);
        assert!(
            (t - last - 0.02).abs() < 1e-3,
            "time went from {last} to {t} after {answered} answers"
        );
        last = t;
        a.send("(syn)").await;
    }
    server.stop().await;
}

/// Sends `(killsim)` and returns how long the server took to end (5 s if
/// it did not).
async fn killsim(server: &mut TestServer) -> Duration {
    let mut mon = MonitorClient::connect(server.monitor_addr)
        .await
        .expect("monitor");
    let t0 = Instant::now();
    mon.send("(killsim)").await.expect("send");
    server.ended_within(Duration::from_secs(5)).await;
    t0.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killsim_ends_a_sync_server_waiting_for_its_first_agent() {
    capture_logs();
    let mut server = TestServer::start(test_config()).await;
    // The simulation thread has started: the next thing it does is wait
    // at the barrier for an agent, long before the `(killsim)` has gone
    // through the monitor connection.
    assert!(wait_for_log("simulation running").await);
    let took = killsim(&mut server).await;
    assert!(server.finished(), "still running {took:?} after (killsim)");
    assert!(took < Duration::from_secs(1), "took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killsim_ends_a_sync_server_waiting_for_a_silent_agent() {
    capture_logs();
    let mut server = TestServer::start(test_config()).await;
    let mut a = server.agent().await;
    a.join("Silent", 1, 0).await;
    for _ in 0..10 {
        a.cycle("").await;
    }
    // The agent owes an answer to the frame it has received and never
    // sends it: the server, done with that cycle, waits at the barrier.
    let took = killsim(&mut server).await;
    assert!(server.finished(), "still running {took:?} after (killsim)");
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(a.closed_within(Duration::from_secs(2)).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_without_a_robot_are_closed_or_evicted_and_a_real_agent_can_then_join() {
    capture_logs();
    let server = TestServer::start(Config {
        max_agents: 7,
        agent_idle_timeout_secs: Some(1.0),
        ..test_config()
    })
    .await;
    let mut witness = server.agent().await;
    witness.join("Idle", 1, 0).await;
    let mut hung = server.agent().await;
    let witness = witness.autosync();
    hung.join("Idle", 3, 0).await;
    // Connections that keep the server waiting: an agent in a team that
    // stops in the middle of a frame (the sync barrier waits for it), four
    // that never get a robot, and one whose robot exists but which never
    // sends its `init`.
    // Written by hand: a prefix announcing 40 bytes, then only 2 of them.
    hung.send_raw(&[0, 0, 0, 40, b'(', b's']).await;
    let mut silent = server.agent().await;
    let mut half = server.agent().await;
    // The same frame that never completes, from a client without a robot.
    half.send_raw(&[0, 0, 0, 40, b'(', b's']).await;
    let mut garbage = server.agent().await;
    garbage.send("(he1 1)(syn)").await;
    let mut bad_scene = server.agent().await;
    bad_scene.send("(scene rsg/agent/nosuch.rsg)").await;
    let mut no_init = server.agent().await;
    no_init.send("(scene rsg/agent/nao/nao_hetero.rsg 0)").await;
    // All seven slots are taken (the server accepts connections in the
    // order they were made): a newcomer takes the slot of the oldest
    // connection without a robot, the silent one.
    let mut newcomer = server.agent().await;
    newcomer
        .send("(scene rsg/agent/nao/nao_hetero.rsg 1)")
        .await;
    assert!(
        silent.closed_within(Duration::from_secs(1)).await,
        "the oldest connection without a robot must make room"
    );
    // After the timeout every connection without a robot, and the one
    // with an unfinished frame, is closed...
    let t0 = Instant::now();
    for (name, c) in [
        ("hung", &mut hung),
        ("half", &mut half),
        ("garbage", &mut garbage),
        ("bad scene", &mut bad_scene),
    ] {
        assert!(
            c.closed_within(Duration::from_secs(4)).await,
            "{name} still open after {:?}",
            t0.elapsed()
        );
    }
    assert!(
        t0.elapsed() < Duration::from_secs(3),
        "closed after {:?}",
        t0.elapsed()
    );
    // ... but never one whose robot exists, however long it takes to send
    // its `init` (the reference has no timeouts at all).
    assert!(!no_init.closed_within(Duration::from_millis(1500)).await);
    assert!(!newcomer.closed_within(Duration::from_millis(10)).await);
    for what in [
        "no robot (`scene`) in time",
        "frame unfinished",
        "every agent slot taken",
        "scene refused",
    ] {
        assert!(
            logs().contains(what),
            "no log line naming {what}:\n{}",
            logs()
        );
    }
    // They hold up the sync barrier, as on the reference, until they
    // leave; then a real agent joins.
    drop(no_init);
    drop(newcomer);
    let mut real = server.agent().await;
    let (side, unum) = real.join("Idle", 2, 0).await;
    assert_eq!((side.as_str(), unum), ("left", 2));
    witness.abort();
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_clients_reconnecting_in_a_loop_never_lock_a_real_agent_out() {
    capture_logs();
    let server = TestServer::start(Config {
        sync_wait_for_agents: 0,
        ..test_config()
    })
    .await;
    // Seventy clients (more than the 64 slots) that connect, say nothing,
    // and reconnect the moment they are closed, for a bounded time.
    let stop = Arc::new(AtomicBool::new(false));
    let addr = server.agent_addr;
    let mut silent = Vec::new();
    for _ in 0..70 {
        let stop = stop.clone();
        silent.push(tokio::spawn(async move {
            let mut connections = 0u32;
            while !stop.load(Ordering::Acquire) && connections < 100_000 {
                let Ok(mut s) = tokio::net::TcpStream::connect(addr).await else {
                    // The client's own pause before it retries a refused
                    // connection (part of the client tested).
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    continue;
                };
                connections += 1;
                let mut buf = [0u8; 64];
                // Held until the server closes it (or the test ends).
                let _ = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf)).await;
            }
            connections
        }));
    }
    // They have filled every slot once a newcomer evicts one of them.
    assert!(wait_for_log("every agent slot taken").await);
    let mut joined = 0;
    for attempt in 0..10u8 {
        let try_join = async {
            let mut a = server.agent().await;
            a.join("Real", 1 + attempt % 11, 0).await
        };
        if let Ok((side, _)) = tokio::time::timeout(Duration::from_secs(5), try_join).await {
            assert_eq!(side, "left");
            joined += 1;
        }
    }
    stop.store(true, Ordering::Release);
    let mut total = 0;
    for t in silent {
        total += t.await.expect("silent client");
    }
    eprintln!("silent clients: {total} connections; a real agent joined in {joined} of 10 tries");
    assert!(joined >= 9, "a real agent joined in {joined} of 10 tries");
    assert!(
        total > 70,
        "the silent clients reconnected ({total} connections)"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_starting_agent_is_waited_for_and_never_cut_off() {
    // FC Portugal's agent sends `scene`, then builds itself for seconds
    // before its `init`. The server must neither run ahead of the robot
    // (its frames would pile up and be dropped) nor close the connection.
    capture_logs();
    let idle = Duration::from_millis(400);
    let server = TestServer::start(Config {
        sync_wait_for_agents: 0,
        agent_idle_timeout_secs: Some(idle.as_secs_f32()),
        ..test_config()
    })
    .await;
    let mut a = server.agent().await;
    a.send("(scene rsg/agent/nao/nao_hetero.rsg 2)").await;
    // The agent building itself, three idle timeouts long (a slow client:
    // the sleep is the thing tested).
    tokio::time::sleep(3 * idle).await;
    let mut during_pause = 0;
    while a.try_recv(Duration::from_millis(200)).await.is_some() {
        during_pause += 1;
    }
    assert!(
        (1..=3).contains(&during_pause),
        "{during_pause} frames sent while the agent prepared its init"
    );
    a.send("(init (unum 0)(teamname Slow))(syn)").await;
    let mut side = None;
    for _ in 0..10 {
        let f = a.recv().await;
        if f.contains("(GS (unum 1) (team left)") {
            side = Some("left");
            break;
        }
        a.send("(syn)").await;
    }
    assert_eq!(side, Some("left"), "the agent never got its side");
    assert!(!logs().contains("frame dropped"), "{}", logs());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_agent_costs_one_sync_timeout_then_rejoins_when_it_answers() {
    capture_logs();
    let server = TestServer::start(Config {
        sync_timeout_ms: Some(400),
        sync_wait_for_agents: 2,
        ..test_config()
    })
    .await;
    let mut agents = server.scripted_agents(&[0, 1], &["Tick", "Tock"]).await;
    let mut quiet = agents.pop().expect("two agents");
    let mut busy = agents.pop().expect("two agents");
    // `quiet` stops answering: `busy` waits one timeout, then runs on at
    // full speed (waiting a timeout per cycle, 100 cycles would take 40 s).
    let t0 = Instant::now();
    let mut last = now(&busy.cycle("").await);
    for _ in 0..100 {
        let t = now(&busy.cycle("").await);
        assert!(
            (t - last - 0.02).abs() < 1e-3,
            "time went from {last} to {t}"
        );
        last = t;
    }
    assert!(
        t0.elapsed() < Duration::from_secs(8),
        "100 cycles took {:?}",
        t0.elapsed()
    );
    let timeouts = || logs().matches("sync timeout").count();
    assert_eq!(timeouts(), 1, "{}", logs());
    // It answers again: it is back in the lockstep, so when it falls
    // silent once more the cycle waits for it again (a second timeout).
    quiet.send("(syn)").await;
    assert!(wait_for_log("back in the sync lockstep").await);
    for _ in 0..3 {
        busy.cycle("").await;
    }
    assert_eq!(timeouts(), 2, "{}", logs());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_and_beam_in_consecutive_messages_of_one_cycle_take_effect_in_order() {
    let server = TestServer::start(test_config()).await;
    let mut a = server.agent().await;
    a.create(0).await;
    // Two messages before the `(syn)`: both land in the same read phase,
    // the beam after the init it needs.
    a.send("(init (unum 1)(teamname Order))").await;
    a.send("(beam -5 3 90)").await;
    a.send("(syn)").await;
    for _ in 0..5 {
        a.cycle("").await;
    }
    let summary = server.stop().await;
    let robot = summary.last.robots.first().expect("one robot");
    let torso = robot
        .parts
        .iter()
        .find(|p| &*p.name == "torso")
        .expect("torso part");
    let p = torso.pose.translation.vector;
    assert!(
        (p.x + 5.0).abs() < 0.2 && (p.y - 3.0).abs() < 0.2,
        "the robot stands at ({:.2}, {:.2}), not at the beam position",
        p.x,
        p.y
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_waiting_for_a_scripted_start_is_not_idle() {
    capture_logs();
    let idle = Duration::from_millis(250);
    let server = TestServer::start(Config {
        agent_idle_timeout_secs: Some(idle.as_secs_f32()),
        sync_wait_for_agents: 2,
        ..test_config()
    })
    .await;
    let mut first = server.agent().await;
    first
        .send("(scene rsg/agent/nao/nao_hetero.rsg 0)(syn)")
        .await;
    // The server waits for the second agent, four idle timeouts long: the
    // first one is waiting for the server, not the other way round. (The
    // second agent's lateness is the thing tested.)
    tokio::time::sleep(4 * idle).await;
    let mut second = server.agent().await;
    second
        .send("(scene rsg/agent/nao/nao_hetero.rsg 0)(syn)")
        .await;
    first.recv().await;
    second.recv().await;
    first.send("(init (unum 1)(teamname Wait))(syn)").await;
    second.send("(init (unum 2)(teamname Wait))(syn)").await;
    for _ in 0..5 {
        first.recv().await;
        second.recv().await;
        first.send("(syn)").await;
        second.send("(syn)").await;
    }
    server.stop().await;
}

/// The game time of the newest frame (`(t X)` in GS).
fn game_time(frame: &str) -> f32 {
    let i = frame.find("(t ").expect("t") + 3;
    frame[i..i + frame[i..].find(')').expect(")")]
        .parse()
        .expect("number")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_range_time_from_a_monitor_is_refused() {
    capture_logs();
    let server = TestServer::start(test_config()).await;
    let mut a = server.agent().await;
    a.join("Clock", 1, 0).await;
    let mut mon = MonitorClient::connect(server.monitor_addr)
        .await
        .expect("monitor");
    for bad in [
        "(time 1e30)",
        "(time 10001)",
        "(time -1)",
        "(time nan)",
        "(time inf)",
    ] {
        mon.send(bad).await.expect("send");
    }
    mon.send("(time 5)").await.expect("send");
    // Commands are applied in the read phase; give them a few cycles.
    let mut f = String::new();
    for _ in 0..20 {
        f = a.cycle("").await;
        if game_time(&f) >= 5.0 {
            break;
        }
    }
    let t = game_time(&f);
    assert!((5.0..5.5).contains(&t), "game time {t} in {f}");
    assert!(!f.contains("GameOver"), "{f}");
    assert!(wait_for_log("bad time value").await, "refusal logged");
    server.stop().await;
}

/// The torso of the right team's robot in the final snapshot of a run:
/// its centre and the z component of its up axis (1 upright, ~0 lying).
fn right_torso(summary: &rcss3d::app::RunSummary) -> (nalgebra::Vector3<f32>, f32) {
    let r = summary
        .last
        .robots
        .iter()
        .find(|r| r.side == Some(rcss3d::rules::Side::Right))
        .expect("right robot in the final snapshot");
    let torso = r
        .parts
        .iter()
        .find(|p| &*p.name == "torso")
        .expect("torso part");
    let up = torso.pose.rotation * nalgebra::Vector3::z();
    (torso.pose.translation.vector, up.z)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lying_robot_moved_by_the_referee_is_still_lying() {
    capture_logs();
    let server = TestServer::start(test_config()).await;
    let mut a = server.agent().await;
    let (side, _) = a.join("Lying", 1, 0).await;
    assert_eq!(side, "left");
    let mut r = server.agent().await;
    let witness = a.autosync();
    r.join("Lying2", 1, 0).await;
    // The right robot throws itself over by swinging both hips fast.
    let mut lying_frames = 0;
    for i in 0..300 {
        let cmd = if i < 40 {
            "(lle3 6)(rle3 6)"
        } else {
            "(lle3 0)(rle3 0)"
        };
        let f = r.cycle(cmd).await;
        // At rest the accelerometer reads gravity's reaction in the torso
        // frame: +9.81 along z upright, less the more the torso is tilted.
        let acc_z = acc(&f).z;
        lying_frames = if acc_z < 4.0 { lying_frames + 1 } else { 0 };
        if lying_frames >= 25 {
            break;
        }
    }
    assert!(lying_frames >= 25, "the robot did not come to lie still");
    // The trainer drags it, lying, into the left half; before kick-off the
    // referee clears every team from the opponent's half (docs/protocol.md#referee-moves), so it moves the robot back in the next referee cycle.
    let mut mon = MonitorClient::connect(server.monitor_addr)
        .await
        .expect("monitor");
    let right_x = |mon: &MonitorClient| {
        mon.scene()
            .robots()
            .iter()
            .find(|v| v.side == rcss3d::rules::Side::Right)
            .map(|v| v.position.x)
    };
    let mut before = None;
    while before.is_none() {
        mon.next_message().await.expect("message").expect("open");
        before = right_x(&mon);
    }
    let before = before.expect("the right robot on the monitor");
    mon.send("(agent (team Right)(unum 1)(pos -3 0 0.2))")
        .await
        .expect("send");
    // The command is carried out in the read phase after it reaches the
    // server: this agent's answers keep the cycles going until the
    // monitor shows the robot moved (by the trainer or already back by
    // the referee); three cycles later the server stops.
    let (moved_tx, moved) = tokio::sync::watch::channel(false);
    let watcher = tokio::spawn(async move {
        while let Ok(Some(_)) = mon.next_message().await {
            if right_x(&mon).is_some_and(|x| (x - before).abs() > 0.5) {
                moved_tx.send_replace(true);
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while !*moved.borrow() {
        assert!(Instant::now() < deadline, "the trainer's move never showed");
        r.cycle("").await;
    }
    for _ in 0..3 {
        r.cycle("").await;
    }
    watcher.abort();
    let _w = witness.stop().await;
    let summary = server.stop().await;
    drop(r);
    let (pos, up_z) = right_torso(&summary);
    assert!(
        pos.x > 1.0,
        "the right robot was not moved out of the left half: {pos:?}"
    );
    assert!(
        up_z < 0.5,
        "the moved robot stands upright (torso up.z = {up_z})"
    );
}

/// The ACC vector of a frame.
fn acc(frame: &str) -> nalgebra::Vector3<f32> {
    let key = "(ACC (n torso) (a ";
    let i = frame.find(key).expect("ACC") + key.len();
    let v: Vec<f32> = frame[i..i + frame[i..].find(')').expect(")")]
        .split(' ')
        .map(|x| x.parse().expect("number"))
        .collect();
    nalgebra::Vector3::new(v[0], v[1], v[2])
}

/// SO_LINGER 0: closing the socket sends an RST instead of a FIN. (Tokio
/// deprecates linger because a non-zero one blocks on drop; zero does not.)
#[allow(deprecated)]
fn reset_on_drop(s: &tokio::net::TcpStream) {
    s.set_linger(Some(Duration::ZERO)).expect("linger");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_connection_is_an_ordinary_disconnect() {
    capture_logs();
    let server = TestServer::start(test_config()).await;
    let mut a = server.agent().await;
    a.join("Reset", 1, 0).await;
    let mut b = server.agent().await;
    let a = a.autosync();
    b.join("Reset", 2, 0).await;
    let peer = b.stream().local_addr().expect("addr").to_string();
    // Half a frame buffered (written by hand: a prefix announcing 30
    // bytes, then only 2), then an RST (linger 0) instead of a FIN.
    b.send_raw(&[0, 0, 0, 30, b'(', b's']).await;
    reset_on_drop(b.stream());
    drop(b);
    let mon = tokio::net::TcpStream::connect(server.monitor_addr)
        .await
        .expect("monitor");
    let mon_peer = mon.local_addr().expect("addr").to_string();
    // Reset once the server has taken the monitor connection.
    let has_line = |peer: &str, what: &str| {
        let (peer, what) = (peer.to_owned(), what.to_owned());
        move |text: &str| text.lines().any(|l| l.contains(&peer) && l.contains(&what))
    };
    assert!(
        wait_for_logs(has_line(&mon_peer, "monitor connected")).await,
        "{}",
        logs()
    );
    reset_on_drop(&mon);
    drop(mon);
    assert!(
        wait_for_logs(has_line(&peer, "agent disconnected")).await,
        "no disconnect line: {}",
        logs()
    );
    let text = logs();
    let mine: Vec<&str> = text.lines().filter(|l| l.contains(&peer)).collect();
    assert!(
        mine.iter()
            .all(|l| !l.contains("WARN") && !l.contains("bad frame")),
        "a reset is not bad input: {mine:#?}"
    );
    assert!(
        mine.iter()
            .any(|l| l.contains("INFO") && l.contains("closed by peer")),
        "{mine:#?}"
    );
    assert!(
        wait_for_logs(has_line(&mon_peer, "monitor disconnected")).await,
        "{}",
        logs()
    );
    let text = logs();
    let mon_lines: Vec<&str> = text.lines().filter(|l| l.contains(&mon_peer)).collect();
    assert!(
        mon_lines.iter().all(|l| !l.contains("WARN")),
        "{mon_lines:#?}"
    );
    a.abort();
    server.stop().await;
}

/// Reads the frame that answers the agent's last message and fails if a
/// second one follows within `window`: in sync mode every frame waits for
/// the answer to the one before, so an agent that reads a frame and then
/// looks whether another is readable (FC Portugal's does, and logs "The
/// agent lost 1 packet!" when one is) never finds one.
async fn only_frame(a: &mut TestAgent, window: Duration, after: &str) -> String {
    let frame = a.recv().await;
    if let Some(extra) = a.try_recv(window).await {
        panic!(
            "a second frame (time {}) followed the one at time {} after {after}: \
             the server ran a cycle the agent had not answered",
            now(&extra),
            now(&frame)
        );
    }
    frame
}

/// FC Portugal's start-up and its gym's reset, with the delays a slow
/// Python start puts between its messages: `scene`, then `init` alone (no
/// `(syn)`: before its first `(syn)` any message answers a frame), three
/// times `(syn)`, then the monitor port and 25 + 8 trainer beams, each
/// followed by joint speeds and `(syn)`. Every answer gets exactly one
/// frame; the `init` is answered by the frame built before it took
/// effect, and the next one (the first to name the agent's number) waits
/// for the agent's next message.
async fn fcp_style_start(pause: Duration) {
    let server = TestServer::start(test_config()).await;
    let window = Duration::from_millis(250);
    let mut a = server.agent().await;
    a.send("(scene rsg/agent/nao/nao_hetero.rsg 0)").await;
    only_frame(&mut a, window, "the scene").await;
    // Building the agent: seconds on a cold start (a slow client: the
    // sleeps of this function are the thing tested).
    tokio::time::sleep(pause).await;
    a.send("(init (unum 1)(teamname Cold))").await;
    let mut last = now(&only_frame(&mut a, window, "the init").await);
    let mut named = false;
    for i in 1..=3 {
        tokio::time::sleep(pause).await;
        a.send("(syn)").await;
        let f = only_frame(&mut a, window, &format!("(syn) {i} of the start")).await;
        named |= f.contains("(GS (unum 1) (team left)");
        let t = now(&f);
        assert!(
            (t - last - 0.02).abs() < 1e-3,
            "time went from {last} to {t}"
        );
        last = t;
    }
    assert!(named, "no frame of the start named the agent's number");
    let mut mon = MonitorClient::connect(server.monitor_addr)
        .await
        .expect("monitor");
    for i in 1..=33 {
        mon.send("(agent (unum 1) (team Left) (move -3 0 0.5 -90))")
            .await
            .expect("trainer beam");
        // Every other beam may reach the server while it waits at the
        // barrier, the others before the agent's answer.
        if i % 2 == 0 {
            tokio::time::sleep(pause / 4).await;
        }
        a.send("(he1 0.01)(he2 0)(lle1 0)(rle1 0)(syn)").await;
        let f = only_frame(
            &mut a,
            Duration::from_millis(40),
            &format!("reset step {i}"),
        )
        .await;
        let t = now(&f);
        assert!(
            (t - last - 0.02).abs() < 1e-3,
            "time went from {last} to {t}"
        );
        last = t;
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_fcp_style_start_gets_one_frame_per_answer() {
    fcp_style_start(Duration::ZERO).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_fcp_style_start_with_slow_steps_gets_one_frame_per_answer() {
    fcp_style_start(Duration::from_millis(300)).await;
}
