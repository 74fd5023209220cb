//! Stopping the whole server (agents, monitors, web viewers) ends every
//! task it started, connection tasks included, before `run` returns; the
//! clients, whether they read or not, find their sockets closed.

use std::time::Duration;

use rcss3d::web::WebConfig;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio_tungstenite::MaybeTlsStream;

use crate::harness::{join_and_beam, one_at_a_time, small_window_viewer, WebServer};
use crate::util::test_config;

/// Reads `stream` to its end; true when the server has closed it (what
/// it sent before is still read first).
async fn closed(stream: &mut TcpStream) -> bool {
    let mut buf = vec![0u8; 64 * 1024];
    let drained = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    });
    drained.await.is_ok()
}

// One thread: a task that ends wakes its waiters only after it is gone,
// so the count of live tasks right after `stop` is exact.
#[tokio::test]
async fn stopping_the_server_joins_every_connection_task() {
    let _turn = one_at_a_time().await;
    let tasks = || {
        tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks()
    };
    let before = tasks();
    let web = WebConfig {
        // Longer than the test: the viewer that stops reading is not
        // given up on for that.
        stall_timeout: Duration::from_secs(600),
        send_buffer_bytes: Some(4096),
        ..WebConfig::default()
    };
    let server = WebServer::start(test_config(), web).await;
    // An agent that never asks for a robot, a monitor and a viewer that
    // never read, and one agent playing.
    let mut silent_agent = TcpStream::connect(server.server.agent_addr)
        .await
        .expect("connect");
    let mut idle_monitor = TcpStream::connect(server.monitor_addr)
        .await
        .expect("connect");
    let stalled_viewer = small_window_viewer(server.web_addr).await;
    let mut agent = join_and_beam(&server, "Stop", 1, 0, -3.0, 0.0).await;
    // Enough frames that the sends to the viewer and the monitor block
    // (a few kilobytes each, their sockets take some tens).
    for _ in 0..300 {
        agent.cycle("").await;
    }
    assert!(
        tasks() > before + 4,
        "connection tasks run: {} beside {before}",
        tasks()
    );
    let stopping = std::time::Instant::now();
    server.server.stop().await;
    println!("stopped in {:?}", stopping.elapsed());
    assert_eq!(
        tasks(),
        before,
        "every task the server started has ended when it has stopped"
    );
    let MaybeTlsStream::Plain(mut viewer_socket) = stalled_viewer.into_inner() else {
        panic!("a plain TCP viewer");
    };
    assert!(
        closed(&mut viewer_socket).await,
        "the viewer's socket is closed"
    );
    assert!(
        closed(&mut idle_monitor).await,
        "the monitor's socket is closed"
    );
    assert!(
        closed(&mut silent_agent).await,
        "the silent agent's socket is closed"
    );
    assert!(
        agent.closed_within(Duration::from_secs(5)).await,
        "the playing agent's socket is closed"
    );
}
