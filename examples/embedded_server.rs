//! A server inside your own program: a training loop or a test harness
//! that starts the simulator on free ports, runs agents against it in sync
//! mode (as fast as the machine allows, the same result every time for
//! the same seed) and stops it when done.
//!
//! ```text
//! cargo run --release --example embedded_server
//! ```
//!
//! What it shows:
//! * a [`Config`] built in code (the same keys as `conf/server.ron`);
//! * [`rcss3d::app::run`] on listeners you bound yourself, with a
//!   shutdown future;
//! * one agent in lockstep: each `(syn)` lets the server run one cycle.

use std::error::Error;
use std::sync::Arc;

use rcss3d::config::Config;
use rcss3d::net::client::AgentClient;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// Cycles the agent lets the server run (20 ms each: 5 s of match time).
const CYCLES: u32 = 250;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let cfg = Config {
        sync_mode: true,
        real_time: false,
        seed: Some(7),
        ..Config::default()
    };
    // Port 0: the system picks free ports, so several servers can run side
    // by side (one per training environment).
    let agents = TcpListener::bind("127.0.0.1:0").await?;
    let monitors = TcpListener::bind("127.0.0.1:0").await?;
    let agent_addr = agents.local_addr()?;
    println!(
        "agents on {agent_addr}, monitors on {}",
        monitors.local_addr()?
    );

    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let server = tokio::spawn(rcss3d::app::run(Arc::new(cfg), agents, monitors, async {
        let _ = stop_rx.await;
    }));

    // One agent: a type-0 robot that stands still and answers every frame.
    let mut agent = AgentClient::connect(agent_addr).await?;
    agent.send("(scene rsg/agent/nao/nao_hetero.rsg 0)").await?;
    agent.recv().await?.ok_or("no first frame")?;
    agent.send("(init (unum 1) (teamname Embedded))").await?;
    let mut last = Vec::new();
    for _ in 0..CYCLES {
        let frame = agent.recv().await?.ok_or("server closed")?;
        last = frame.to_vec();
        agent.send("(syn)").await?;
    }
    let text = String::from_utf8_lossy(&last);
    let time = text
        .split("(now ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or("?");
    println!("after {CYCLES} answered frames the server time is {time} s");

    let _ = stop_tx.send(());
    let summary = server.await??;
    println!(
        "server stopped after {} cycles (seed {}); the results:\n{}",
        summary.cycles,
        summary.seed,
        summary.results.to_text()
    );
    Ok(())
}
