//! Every monitor/trainer command of docs/protocol.md#monitor-commands shown
//! to take effect in the world or the game state of the real server.

mod util;

use std::time::Duration;

use rcss3d::monitor::client::{MonitorClient, TrackedScene};
use rcss3d::monitor::FrameKind;
use rcss3d::rules::{PlayMode, Side};
use util::{capture_logs, test_config, wait_for_log, AutoSync, TestServer};

/// Reads monitor messages until `cond` holds (or fails after 400).
async fn wait_until(mon: &mut MonitorClient, what: &str, cond: impl Fn(&TrackedScene) -> bool) {
    for _ in 0..400 {
        let msg = tokio::time::timeout(Duration::from_secs(10), mon.next_message())
            .await
            .expect("monitor message in time")
            .expect("valid monitor message");
        assert!(msg.is_some(), "monitor closed while waiting for: {what}");
        if cond(mon.scene()) {
            return;
        }
    }
    panic!("never saw: {what}");
}

fn robot_pos(s: &TrackedScene, side: Side, unum: u32) -> Option<nalgebra::Vector3<f32>> {
    s.robots()
        .into_iter()
        .find(|r| r.side == side && r.unum == unum)
        .map(|r| r.position)
}

struct Match {
    server: TestServer,
    left: AutoSync,
    right: Option<AutoSync>,
    mon: MonitorClient,
}

async fn start() -> Match {
    let mut cfg = test_config();
    cfg.monitor.monitor_step = 1;
    let server = TestServer::start(cfg).await;
    let mut l = server.agent().await;
    l.join("TrainL", 1, 0).await;
    let left = l.autosync();
    let mut r = server.agent().await;
    r.join("TrainR", 1, 0).await;
    let right = Some(r.autosync());
    let mon = MonitorClient::connect(server.monitor_addr)
        .await
        .expect("monitor");
    Match {
        server,
        left,
        right,
        mon,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn game_state_commands() {
    let mut m = start().await;
    let mon = &mut m.mon;
    wait_until(mon, "both robots", |s| s.robots().len() == 2).await;

    mon.send("(kickOff Left)").await.expect("send");
    wait_until(mon, "KickOff_Left", |s| {
        s.game.play_mode() == Some(PlayMode::KickOffLeft)
    })
    .await;

    mon.send("(playMode corner_kick_right)")
        .await
        .expect("send");
    wait_until(mon, "corner_kick_right", |s| {
        s.game.play_mode() == Some(PlayMode::CornerKickRight)
    })
    .await;

    mon.send("(dropBall)").await.expect("send");
    wait_until(mon, "PlayOn after drop ball", |s| {
        s.game.play_mode() == Some(PlayMode::PlayOn)
    })
    .await;

    mon.send("(time 100)").await.expect("send");
    wait_until(mon, "game time 100", |s| {
        (100.0..101.0).contains(&s.game.time)
    })
    .await;
    mon.send("(time -5)").await.expect("send");

    mon.send("(score (left 2) (right 3))").await.expect("send");
    wait_until(mon, "score 2:3", |s| {
        s.game.score_left == 2 && s.game.score_right == 3
    })
    .await;

    // Ignored commands keep the connection and change nothing.
    mon.send("(init)(getAck)(agent (team Left) (unum 1) (battery 50))(agent (team Left)(unum 1)(temperature 30))(bogus 1)")
        .await
        .expect("send");
    mon.send("(reqfullstate)").await.expect("send");
    let mut got_full = false;
    for _ in 0..50 {
        let msg = mon.next_message().await.expect("message").expect("open");
        if msg.kind == FrameKind::Full {
            got_full = true;
            break;
        }
    }
    assert!(got_full, "reqfullstate gives a full state");
    assert_eq!(mon.scene().game.score_left, 2);

    mon.send("(killsim)").await.expect("send");
    assert!(
        m.server.ended_within(Duration::from_secs(10)).await,
        "killsim stops the server"
    );
    m.left.abort();
    if let Some(r) = m.right.take() {
        r.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn world_commands() {
    let mut m = start().await;
    let mon = &mut m.mon;
    wait_until(mon, "both robots", |s| s.robots().len() == 2).await;
    // In BeforeKickOff the referee holds the ball at the centre.
    mon.send("(playMode PlayOn)").await.expect("send");
    wait_until(mon, "PlayOn", |s| {
        s.game.play_mode() == Some(PlayMode::PlayOn)
    })
    .await;

    mon.send("(ball (pos 3.0 -2.0 0.042))").await.expect("send");
    wait_until(mon, "ball at (3, -2)", |s| {
        s.ball_position()
            .is_some_and(|b| (b.x - 3.0).abs() < 0.05 && (b.y + 2.0).abs() < 0.05)
    })
    .await;
    mon.send("(ball (vel 2.0 0.0 0.0))").await.expect("send");
    wait_until(mon, "ball rolling in +x", |s| {
        s.ball_position().is_some_and(|b| b.x > 3.3)
    })
    .await;

    mon.send("(agent (team Left)(unum 1)(pos -5.0 4.0 0.5))")
        .await
        .expect("send");
    wait_until(mon, "left 1 at (-5, 4)", |s| {
        robot_pos(s, Side::Left, 1)
            .is_some_and(|p| (p.x + 5.0).abs() < 0.2 && (p.y - 4.0).abs() < 0.2)
    })
    .await;
    // FCPCodebase's order: unum before team, move with a yaw.
    mon.send("(agent (unum 1) (team Right) (move 6.0 -3.0 0.5 90))")
        .await
        .expect("send");
    wait_until(mon, "right 1 at (6, -3)", |s| {
        robot_pos(s, Side::Right, 1)
            .is_some_and(|p| (p.x - 6.0).abs() < 0.2 && (p.y + 3.0).abs() < 0.2)
    })
    .await;

    mon.send("(repos (unum 1) (team Left))")
        .await
        .expect("send");
    wait_until(mon, "left 1 repositioned outside", |s| {
        robot_pos(s, Side::Left, 1)
            .is_some_and(|p| (p.x + 5.0).abs() > 0.5 || (p.y - 4.0).abs() > 0.5)
    })
    .await;

    // Select the right robot and push it away with (agent).
    let before = robot_pos(mon.scene(), Side::Right, 1).expect("right robot");
    mon.send("(select (unum 1) (team Right))(agent)")
        .await
        .expect("send");
    wait_until(mon, "right 1 pushed 2.2-4.2 m", |s| {
        robot_pos(s, Side::Right, 1).is_some_and(|p| (p - before).xy().norm() > 2.0)
    })
    .await;

    // Kill the selected robot: its connection closes, the monitor gets a
    // full state without it.
    mon.send("(kill)").await.expect("send");
    wait_until(mon, "right robot gone", |s| {
        robot_pos(s, Side::Right, 1).is_none()
    })
    .await;
    let mut right = m.right.take().expect("right agent").stop().await;
    assert!(
        right.closed_within(Duration::from_secs(5)).await,
        "killed agent's connection closes"
    );
    // The left agent plays on.
    wait_until(mon, "left still there", |s| {
        robot_pos(s, Side::Left, 1).is_some()
    })
    .await;
    m.left.abort();
    m.server.stop().await;
}

/// Reads `n` monitor messages, checking `cond` on each.
async fn holds_for(
    mon: &mut MonitorClient,
    n: usize,
    what: &str,
    cond: impl Fn(&TrackedScene) -> bool,
) {
    for _ in 0..n {
        let msg = tokio::time::timeout(Duration::from_secs(10), mon.next_message())
            .await
            .expect("monitor message in time")
            .expect("valid monitor message");
        assert!(msg.is_some(), "monitor closed while checking: {what}");
        assert!(cond(mon.scene()), "no longer true: {what}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trainer_positions_are_clamped_into_the_field_area() {
    capture_logs();
    let mut m = start().await;
    let mon = &mut m.mon;
    wait_until(mon, "both robots", |s| s.robots().len() == 2).await;
    // In GameOver the referee moves neither the ball nor the robots.
    mon.send("(playMode GameOver)").await.expect("send");
    wait_until(mon, "GameOver", |s| {
        s.game.play_mode() == Some(PlayMode::GameOver)
    })
    .await;

    // A robot asked for 59 m under the centre spot stands on it instead.
    mon.send("(agent (unum 1)(team Left)(pos 0 0 -59))")
        .await
        .expect("send");
    wait_until(mon, "left 1 standing on the centre spot", |s| {
        robot_pos(s, Side::Left, 1)
            .is_some_and(|p| p.x.abs() < 0.05 && p.y.abs() < 0.05 && (0.3..0.5).contains(&p.z))
    })
    .await;
    // It stays there, above the ground (it may sit down or fall over).
    holds_for(mon, 25, "left 1 stays at the centre spot", |s| {
        robot_pos(s, Side::Left, 1)
            .is_some_and(|p| p.x.abs() < 0.6 && p.y.abs() < 0.6 && (0.05..0.6).contains(&p.z))
    })
    .await;
    assert!(wait_for_log("trainer position clamped").await);
    let line = util::logs()
        .lines()
        .find(|l| l.contains("trainer position clamped") && l.contains("agent pos"))
        .map(str::to_owned)
        .expect("log line");
    assert!(
        line.contains("TrainL") && line.contains("unum=1") && line.contains("-59"),
        "{line}"
    );

    // `move` (upright) is clamped the same way, the feet on the ground.
    mon.send("(agent (unum 1)(team Right)(move 59 -59 -5 0))")
        .await
        .expect("send");
    wait_until(mon, "right 1 standing at (20, -15)", |s| {
        robot_pos(s, Side::Right, 1).is_some_and(|p| {
            (p.x - 20.0).abs() < 0.05 && (p.y + 15.0).abs() < 0.05 && (0.3..0.5).contains(&p.z)
        })
    })
    .await;

    // The ball asked for 59 m out on both axes lands at the area's corner:
    // 15 + 5 m along x, 10 + 5 m along y (default field, BorderSize 0).
    // `pos` keeps the ball's velocity, and the robot put on the centre
    // spot has pushed it away: `vel` stops it.
    mon.send("(ball (pos 59 59 0.1)(vel 0 0 0))")
        .await
        .expect("send");
    let at_corner = |s: &TrackedScene| {
        s.ball_position().is_some_and(|b| {
            (b.x - 20.0).abs() < 0.05 && (b.y - 15.0).abs() < 0.05 && (0.03..0.11).contains(&b.z)
        })
    };
    wait_until(mon, "ball at (20, 15)", at_corner).await;
    holds_for(mon, 10, "ball stays at (20, 15)", at_corner).await;
    // Never below the ground: a ball asked for under it rests on it.
    mon.send("(ball (pos 1 2 -3))").await.expect("send");
    wait_until(mon, "ball resting at (1, 2)", |s| {
        s.ball_position().is_some_and(|b| {
            (b.x - 1.0).abs() < 0.05 && (b.y - 2.0).abs() < 0.05 && (0.03..0.06).contains(&b.z)
        })
    })
    .await;
    m.left.abort();
    if let Some(r) = m.right.take() {
        r.abort();
    }
    m.server.stop().await;
}
