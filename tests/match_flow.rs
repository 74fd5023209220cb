//! A match end to end: two short teams over the real server, kick-off from
//! the monitor port, the trainer puts the ball into a goal: agents see
//! `Goal_Left`, then `KickOff_Right`, and the score in GS.

mod util;

use std::time::{Duration, Instant};

use rcss3d::monitor::client::MonitorClient;

use util::{test_config, TestAgent, TestServer};

async fn monitor_send(m: &mut MonitorClient, cmd: &str) {
    m.send(cmd).await.expect("monitor write");
}

fn play_mode(frame: &str) -> &str {
    let i = frame.find("(pm ").expect("pm") + 4;
    &frame[i..i + frame[i..].find(')').expect(")")]
}

/// Cycles every agent once and returns the first agent's frame.
async fn lockstep(agents: &mut [TestAgent]) -> String {
    for a in agents.iter_mut() {
        a.send("(syn)").await;
    }
    let mut first = String::new();
    for (i, a) in agents.iter_mut().enumerate() {
        let f = a.recv().await;
        if i == 0 {
            first = f;
        }
    }
    first
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kick_off_goal_and_kick_off_for_the_other_team() {
    let mut cfg = test_config();
    cfg.sync_wait_for_agents = 4;
    let server = TestServer::start(cfg).await;
    let mut agents = server
        .scripted_agents(&[0, 1, 0, 1], &["Lefties", "Righties"])
        .await;
    for (i, a) in agents.iter_mut().enumerate() {
        a.send(&format!("(beam -{} {} 0)(syn)", 3 + i, i)).await;
    }
    for a in agents.iter_mut() {
        a.recv().await;
    }

    let mut mon = MonitorClient::connect(server.monitor_addr)
        .await
        .expect("monitor");
    monitor_send(&mut mon, "(kickOff Left)").await;
    // The command takes effect in the read phase after it arrives: cycle
    // until it has (for at most 10 s).
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let f = lockstep(&mut agents).await;
        seen.push(play_mode(&f).to_string());
        if play_mode(&f) == "KickOff_Left" {
            break;
        }
    }
    assert_eq!(
        seen.last().map(String::as_str),
        Some("KickOff_Left"),
        "{seen:?}"
    );

    // Play on, then the trainer rolls the ball into the right goal.
    monitor_send(&mut mon, "(playMode PlayOn)").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut mode = String::new();
    while mode != "PlayOn" && Instant::now() < deadline {
        mode = play_mode(&lockstep(&mut agents).await).to_string();
    }
    assert_eq!(mode, "PlayOn");
    monitor_send(&mut mon, "(ball (pos 14.0 0.0 0.1) (vel 5.0 0.0 0.0))").await;
    let mut modes = Vec::new();
    let mut scored = String::new();
    for _ in 0..400 {
        let f = lockstep(&mut agents).await;
        let m = play_mode(&f).to_string();
        if m == "Goal_Left" && scored.is_empty() {
            scored = f.clone();
        }
        if modes.last() != Some(&m) {
            modes.push(m.clone());
        }
        if m == "KickOff_Right" {
            break;
        }
    }
    assert!(
        modes.contains(&"Goal_Left".to_string()),
        "modes seen: {modes:?}"
    );
    assert_eq!(
        modes.last().map(String::as_str),
        Some("KickOff_Right"),
        "{modes:?}"
    );
    assert!(scored.contains("(sl 1) (sr 0)"), "score in GS: {scored}");
    server.stop().await;
}
