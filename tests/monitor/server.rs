//! The monitor port over real loopback TCP.

use std::time::Duration;

use rcss3d::monitor::client::MonitorClient;
use rcss3d::monitor::{FrameKind, MonitorCommand, MonitorConfig};
use rcss3d::net::client::AgentClient;
use rcss3d::rules::{PlayMode, Side};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

use crate::util::{full_match_robots, robot, snapshot, MonitorFeed};

const T: Duration = Duration::from_secs(5);

async fn next(c: &mut MonitorClient) -> rcss3d::monitor::client::Received {
    timeout(T, c.next_message())
        .await
        .expect("timed out waiting for a message")
        .expect("valid message")
        .expect("connection open")
}

/// Checks that the client's tracked scene shows `snap`'s ball and robots.
fn assert_scene_matches(c: &MonitorClient, snap: &rcss3d::sim::snapshot::WorldSnapshot) {
    let scene = c.scene();
    let ball = scene.ball_position().unwrap();
    assert!(
        (ball - snap.ball.translation.vector).norm() < 0.01,
        "ball {ball:?}"
    );
    let robots = scene.robots();
    assert_eq!(robots.len(), snap.robots.len());
    for (seen, r) in robots.iter().zip(&snap.robots) {
        assert_eq!(Some(seen.side), r.side);
        assert_eq!(seen.unum, u32::from(r.unum));
        let torso = r.part("torso").unwrap().translation.vector;
        assert!(
            (seen.position - torso).norm() < 0.01,
            "robot {} at {:?}",
            r.unum,
            seen.position
        );
    }
    assert!((scene.game.time - snap.game.game_time).abs() < 1e-4);
    assert_eq!(scene.game.play_mode, u32::from(snap.game.play_mode.index()));
}

#[tokio::test]
async fn first_message_is_a_full_state_then_deltas() {
    let server = MonitorFeed::start(MonitorConfig::default()).await;
    server.publish(snapshot(0, [0.0, 0.0], full_match_robots(0.0)));
    let mut c = MonitorClient::connect(server.addr).await.unwrap();
    let first = next(&mut c).await;
    assert_eq!(first.kind, FrameKind::Full);
    assert!(first.text.starts_with("((FieldLength 30)"));
    for i in 1..=20u64 {
        let mut s = snapshot(
            2 * i,
            [0.1 * i as f32, 0.0],
            full_match_robots(0.01 * i as f32),
        );
        s.game.game_time = 0.04 * i as f32;
        s.game.play_mode = PlayMode::PlayOn;
        server.publish(s.clone());
        let m = next(&mut c).await;
        assert_eq!(m.kind, FrameKind::Delta);
        assert_scene_matches(&c, &s);
    }
    assert_eq!(c.scene().full_states, 1);
    server.stop().await;
}

/// Two monitors connecting at different times each get a full state first
/// and stay consistent; a robot joining and leaving gives both a full state.
#[tokio::test]
async fn two_monitors_stay_consistent_and_see_structure_changes() {
    let server = MonitorFeed::start(MonitorConfig::default()).await;
    let mut robots = vec![robot(1, Some(Side::Left), 1, 0, -3.0, 0.0, 0.0)];
    let mut s = snapshot(0, [0.0, 0.0], robots.clone());
    server.publish(s.clone());
    let mut a = MonitorClient::connect(server.addr).await.unwrap();
    assert_eq!(next(&mut a).await.kind, FrameKind::Full);
    for i in 1..=5u64 {
        s = snapshot(2 * i, [0.2 * i as f32, 0.0], robots.clone());
        server.publish(s.clone());
        assert_eq!(next(&mut a).await.kind, FrameKind::Delta);
    }
    let mut b = MonitorClient::connect(server.addr).await.unwrap();
    assert_eq!(next(&mut b).await.kind, FrameKind::Full);
    assert_scene_matches(&b, &s);
    for i in 6..=10u64 {
        s = snapshot(2 * i, [0.2 * i as f32, 0.1], robots.clone());
        server.publish(s.clone());
        assert_eq!(next(&mut a).await.kind, FrameKind::Delta);
        assert_eq!(next(&mut b).await.kind, FrameKind::Delta);
        assert_scene_matches(&a, &s);
        assert_scene_matches(&b, &s);
    }
    // A robot joins.
    robots.push(robot(2, Some(Side::Right), 1, 4, 3.0, 0.0, 3.1));
    s = snapshot(22, [1.0, 0.0], robots.clone());
    server.publish(s.clone());
    assert_eq!(next(&mut a).await.kind, FrameKind::Full);
    assert_eq!(next(&mut b).await.kind, FrameKind::Full);
    assert_scene_matches(&a, &s);
    assert_scene_matches(&b, &s);
    // It leaves.
    robots.pop();
    s = snapshot(24, [1.0, 0.0], robots.clone());
    server.publish(s.clone());
    assert_eq!(next(&mut a).await.kind, FrameKind::Full);
    assert_eq!(next(&mut b).await.kind, FrameKind::Full);
    assert_scene_matches(&b, &s);
    server.stop().await;
}

#[tokio::test]
async fn reqfullstate_gives_the_requester_a_full_state() {
    let mut server = MonitorFeed::start(MonitorConfig::default()).await;
    server.publish(snapshot(0, [0.0, 0.0], vec![]));
    let mut a = MonitorClient::connect(server.addr).await.unwrap();
    let mut b = MonitorClient::connect(server.addr).await.unwrap();
    next(&mut a).await;
    next(&mut b).await;
    a.send("(reqfullstate)").await.unwrap();
    // The server handles it locally: `a`'s next full state is the sign
    // that its reader has taken the command; `b` meanwhile gets deltas.
    publish_until_full(&server, &mut a, Some(&mut b)).await;
    assert!(server.commands.try_recv().is_err(), "not forwarded");
    server.stop().await;
}

/// Publishes snapshots, one per message received, until `client` receives
/// a full state (at most 100). Each of `other`'s messages meanwhile must be
/// a delta. The monitor's reader handles one connection's frames in
/// order, so once the full state asked for arrives, every command sent
/// before the `(reqfullstate)` has been handled too.
async fn publish_until_full(
    server: &MonitorFeed,
    client: &mut MonitorClient,
    mut other: Option<&mut MonitorClient>,
) {
    for cycle in 1..=100 {
        server.publish(snapshot(2 * cycle, [0.0, 0.0], vec![]));
        let kind = next(client).await.kind;
        if let Some(o) = other.as_deref_mut() {
            assert_eq!(next(o).await.kind, FrameKind::Delta, "only the requester");
        }
        if kind == FrameKind::Full {
            return;
        }
    }
    panic!("no full state after 100 snapshots");
}

#[tokio::test]
async fn commands_are_forwarded_with_the_monitor_id() {
    let mut server = MonitorFeed::start(MonitorConfig::default()).await;
    let mut a = MonitorClient::connect(server.addr).await.unwrap();
    a.send("(kickOff Left)").await.unwrap();
    // Unknown and malformed commands are ignored; the monitor stays.
    a.send("(bogus 1)(ball (pos 1 2))").await.unwrap();
    a.send("(agent (unum 3) (team Left) (move -14 0.5 0.5 -90))(init)")
        .await
        .unwrap();
    let r1 = timeout(T, server.commands.recv()).await.unwrap().unwrap();
    assert_eq!(r1.command, MonitorCommand::KickOff(Some(Side::Left)));
    assert_eq!(r1.monitor, 1);
    let r2 = timeout(T, server.commands.recv()).await.unwrap().unwrap();
    assert!(matches!(r2.command, MonitorCommand::AgentMove { .. }));
    // The connection is still served.
    server.publish(snapshot(0, [0.0, 0.0], vec![]));
    assert_eq!(next(&mut a).await.kind, FrameKind::Full);
    server.stop().await;
}

#[tokio::test]
async fn read_only_port_refuses_state_changes() {
    let cfg = MonitorConfig {
        read_only: true,
        ..MonitorConfig::default()
    };
    let mut server = MonitorFeed::start(cfg).await;
    server.publish(snapshot(0, [0.0, 0.0], vec![]));
    let mut a = MonitorClient::connect(server.addr).await.unwrap();
    next(&mut a).await;
    a.send("(killsim)(ball (pos 1 1 0.042))(reqfullstate)")
        .await
        .unwrap();
    // reqfullstate still works, and once its full state arrives the two
    // commands before it have been handled: nothing reached the simulation.
    publish_until_full(&server, &mut a, None).await;
    assert!(server.commands.try_recv().is_err());
    // The client was told why, once per refused command, in messages
    // RoboViz reads as usual (the client checks each against its rules).
    assert_eq!(
        a.scene().refused,
        [
            "the monitor port is read-only",
            "the monitor port is read-only"
        ]
    );
    server.stop().await;
}

#[tokio::test]
async fn trainer_secret_unlocks_commands() {
    let cfg = MonitorConfig {
        trainer_secret: Some("open sesame".replace(' ', "_")),
        ..MonitorConfig::default()
    };
    let mut server = MonitorFeed::start(cfg).await;
    let mut a = MonitorClient::connect(server.addr).await.unwrap();
    a.send("(dropBall)").await.unwrap();
    a.send("(auth wrong)(dropBall)").await.unwrap();
    a.send("(auth open_sesame)(killsim)").await.unwrap();
    let r = timeout(T, server.commands.recv()).await.unwrap().unwrap();
    assert_eq!(
        r.command,
        MonitorCommand::KillSim,
        "only the authenticated command passes"
    );
    server.stop().await;
}

/// A client that never reads does not hold up the others, and its
/// commands are still taken (FCPCodebase scripts behave like this).
#[tokio::test]
async fn a_monitor_that_never_reads_stalls_nothing() {
    let mut server = MonitorFeed::start(MonitorConfig::default()).await;
    // A framed client that reads only when told to.
    let mut lazy = AgentClient::connect(server.addr).await.unwrap();
    let mut good = MonitorClient::connect(server.addr).await.unwrap();
    let mut last = None;
    // ~100 KB per message: the lazy socket's buffers fill after a few.
    for i in 0..200u64 {
        let s = snapshot(
            2 * i,
            [0.01 * i as f32, 0.0],
            full_match_robots(0.02 * i as f32),
        );
        server.publish(s.clone());
        let m = next(&mut good).await;
        if i == 0 {
            assert_eq!(m.kind, FrameKind::Full);
        }
        last = Some(s);
    }
    assert_eq!(good.scene().full_states, 1);
    if let Some(s) = &last {
        let ball = good.scene().ball_position().unwrap();
        assert!((ball - s.ball.translation.vector).norm() < 0.01);
    }
    // The lazy client can still command.
    let cmd = b"(dropBall)";
    lazy.send_bytes(cmd).await.unwrap();
    let r = timeout(T, server.commands.recv()).await.unwrap().unwrap();
    assert_eq!(r.command, MonitorCommand::DropBall);
    // When it finally reads, it gets whole frames: a full state, then
    // deltas that apply to it, ending with the newest snapshot although
    // nothing was published after it stopped reading.
    let mut seen = rcss3d::monitor::client::TrackedScene::default();
    let target = last.unwrap().ball.translation.vector;
    let mut frames = 0;
    loop {
        let buf = timeout(T, lazy.recv())
            .await
            .unwrap()
            .unwrap()
            .expect("a whole frame");
        assert!(!buf.is_empty());
        seen.apply(std::str::from_utf8(&buf).unwrap()).unwrap();
        frames += 1;
        if (seen.ball_position().unwrap() - target).norm() < 0.006 {
            break;
        }
        assert!(frames < 200, "never caught up");
    }
    assert!(
        frames < 100,
        "it skipped snapshots instead of queueing them all: {frames}"
    );
    assert_eq!(seen.full_states, 1);
    server.stop().await;
}

#[tokio::test]
async fn stall_timeout_drops_a_monitor_that_never_reads() {
    let cfg = MonitorConfig {
        stall_timeout_secs: Some(0.3),
        ..MonitorConfig::default()
    };
    let server = MonitorFeed::start(cfg).await;
    // A small receive window so the server's buffers fill quickly.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut lazy = socket.connect(server.addr).await.unwrap();
    let mut good = MonitorClient::connect(server.addr).await.unwrap();
    for i in 0..300u64 {
        server.publish(snapshot(
            2 * i,
            [0.01 * i as f32, 0.0],
            full_match_robots(0.02 * i as f32),
        ));
        next(&mut good).await;
        // The pace of the cycles the lazy monitor falls behind: the
        // publishing rate is the thing tested, not a wait.
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let mut sink = Vec::new();
    let closed = timeout(T, lazy.read_to_end(&mut sink)).await;
    assert!(closed.is_ok(), "lazy monitor still connected");
    // The other monitor is unaffected.
    server.publish(snapshot(100, [0.0, 0.0], full_match_robots(0.0)));
    assert_eq!(next(&mut good).await.kind, FrameKind::Delta);
    server.stop().await;
}

#[tokio::test]
async fn oversized_command_frame_closes_only_that_connection() {
    let cfg = MonitorConfig {
        max_command_frame: 1024,
        ..MonitorConfig::default()
    };
    let server = MonitorFeed::start(cfg).await;
    server.publish(snapshot(0, [0.0, 0.0], vec![]));
    let mut good = MonitorClient::connect(server.addr).await.unwrap();
    next(&mut good).await;
    let mut bad = TcpStream::connect(server.addr).await.unwrap();
    // Written by hand: only the prefix, announcing 10 MB (over the 1 kB
    // limit); the client's encoder would send the whole payload.
    bad.write_all(&(10_000_000u32).to_be_bytes()).await.unwrap();
    // The server closes it: reads end (after the first full state, if any).
    let mut sink = Vec::new();
    let closed = timeout(T, bad.read_to_end(&mut sink)).await;
    assert!(closed.is_ok(), "connection not closed");
    server.publish(snapshot(2, [0.0, 0.0], vec![]));
    assert_eq!(next(&mut good).await.kind, FrameKind::Delta);
    server.stop().await;
}

#[tokio::test]
async fn shutdown_closes_monitors() {
    let server = MonitorFeed::start(MonitorConfig::default()).await;
    server.publish(snapshot(0, [0.0, 0.0], vec![]));
    let mut a = MonitorClient::connect(server.addr).await.unwrap();
    next(&mut a).await;
    server.stop().await;
    let end = timeout(T, a.next_message()).await.unwrap();
    assert!(matches!(end, Ok(None) | Err(_)));
}
