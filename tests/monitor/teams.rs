//! Team names as the whole server admits them and monitors show them:
//! the length limit, and a side left empty before kick-off changing hands
//! only when the configuration allows it.

use std::time::Duration;

use rcss3d::config::Config;
use rcss3d::monitor::client::MonitorClient;
use tokio::time::timeout;

use crate::harness::{capture_logs, wait_for_log, TestAgent, TestServer};

/// Real time, no sync: agents need not answer every frame.
fn config() -> Config {
    Config {
        bind: [127, 0, 0, 1].into(),
        seed: Some(11),
        // Room for the long names of the test in one agent frame.
        max_agent_frame: 64 << 10,
        ..Config::default()
    }
}

/// Sends `init` and returns the side of the first GS that names one, or
/// `None` when 20 frames pass without.
async fn try_join(agent: &mut TestAgent, team: &str, unum: u8) -> Option<String> {
    agent.create(0).await;
    agent
        .send(&format!("(init (unum {unum})(teamname {team}))"))
        .await;
    for _ in 0..20 {
        let f = agent.recv().await;
        if f.contains("(GS (unum ") {
            let side = if f.contains("(team left)") {
                "left"
            } else {
                "right"
            };
            return Some(side.to_owned());
        }
    }
    None
}

/// The team names a monitor shows once `want` robots with a team are on
/// the field.
async fn names_with_robots(
    addr: std::net::SocketAddr,
    want: usize,
) -> (Option<String>, Option<String>) {
    let mut m = MonitorClient::connect(addr).await.expect("monitor");
    for _ in 0..500 {
        match timeout(Duration::from_secs(10), m.next_message()).await {
            Ok(Ok(Some(_))) => {}
            other => panic!("monitor stream ended: {other:?}"),
        }
        if m.scene().robots().len() == want {
            let g = &m.scene().game;
            return (g.team_left.clone(), g.team_right.clone());
        }
    }
    panic!("never {want} robots on the field");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn team_names_over_the_limit_get_no_side() {
    capture_logs();
    let server = TestServer::start(config()).await;
    let limit = Config::default().teams.max_name_bytes;
    for len in [limit + 1, 16 << 10] {
        let mut a = server.agent().await;
        let name = "X".repeat(len);
        assert_eq!(try_join(&mut a, &name, 1).await, None, "{len} bytes");
        assert!(
            wait_for_log(&format!(
                "is {len} bytes long; at most {limit} are accepted"
            ))
            .await,
            "no log line for {len} bytes"
        );
        drop(a);
    }
    // Nothing was bound: a name at the limit takes the left side.
    let mut ok = server.agent().await;
    let name = "Y".repeat(limit);
    assert_eq!(try_join(&mut ok, &name, 1).await.as_deref(), Some("left"));
    let (left, right) = names_with_robots(server.monitor_addr, 1).await;
    assert_eq!(left.as_deref(), Some(name.as_str()));
    assert_eq!(right, None);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_side_left_empty_before_kick_off_changes_hands_only_when_configured() {
    for free in [false, true] {
        let mut cfg = config();
        cfg.teams.free_empty_side_before_kick_off = free;
        let server = TestServer::start(cfg).await;
        let mut typo = server.agent().await;
        assert_eq!(
            try_join(&mut typo, "Aplha", 1).await.as_deref(),
            Some("left")
        );
        let mut beta = server.agent().await;
        assert_eq!(
            try_join(&mut beta, "Beta", 1).await.as_deref(),
            Some("right")
        );
        // The mistyped team leaves: one robot stays on the field.
        drop(typo);
        names_with_robots(server.monitor_addr, 1).await;

        let mut alpha = server.agent().await;
        let side = try_join(&mut alpha, "Alpha", 1).await;
        // Monitors show robots with a team only.
        let on_field = if free { 2 } else { 1 };
        let (left, right) = names_with_robots(server.monitor_addr, on_field).await;
        assert_eq!(right.as_deref(), Some("Beta"));
        if free {
            assert_eq!(side.as_deref(), Some("left"));
            assert_eq!(left.as_deref(), Some("Alpha"));
        } else {
            // As in the reference: the name keeps its side until restart.
            assert_eq!(side, None);
            assert_eq!(left.as_deref(), Some("Aplha"));
        }
        server.stop().await;
    }
}
