//! The server binary as a process: SIGTERM during a match completes the log
//! and exits 0 within 2 s; SIGKILL leaves a log of complete lines.

mod util;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rcss3d::monitor::client::check_log;
use util::TestAgent;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

struct Server {
    child: Child,
    agent_port: u16,
    log: PathBuf,
    dir: PathBuf,
}

fn spawn(tag: &str) -> Server {
    let dir = std::env::temp_dir().join(format!("rcss3d-proc-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let log = dir.join("match.log");
    let agent_port = free_port();
    let monitor_port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_rcss3d"))
        .args([
            "--sync",
            "--seed",
            "5",
            "--bind",
            "127.0.0.1",
            "--agent-port",
            &agent_port.to_string(),
            "--monitor-port",
            &monitor_port.to_string(),
            "--log",
        ])
        .arg(&log)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("server binary starts");
    Server {
        child,
        agent_port,
        log,
        dir,
    }
}

async fn connect(port: u16) -> TestAgent {
    for _ in 0..100 {
        if let Ok(s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            drop(s);
            return TestAgent::connect(([127, 0, 0, 1], port).into()).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("server did not come up");
}

async fn play(server: &Server, cycles: usize) -> TestAgent {
    let mut a = connect(server.agent_port).await;
    a.join("Proc", 1, 0).await;
    a.send("(beam -2 0 0)(syn)").await;
    a.recv().await;
    for i in 0..cycles {
        a.cycle(&format!("(he1 {:.3})", (i as f32 * 0.1).sin()))
            .await;
    }
    a
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_completes_the_log_and_exits_zero() {
    let mut server = spawn("term");
    let _agent = play(&server, 150).await;
    let status = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let start = Instant::now();
    let code = loop {
        if let Some(code) = server.child.try_wait().expect("wait") {
            break code;
        }
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "server did not exit within 2 s of SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(code.success(), "exit status {code:?}");
    let text = std::fs::read_to_string(&server.log).expect("log");
    check_log(&text).unwrap_or_else(|e| panic!("log invalid: {e}"));
    let last = text.lines().last().expect("lines");
    assert!(
        last.contains("(RSG 0 1)"),
        "the log ends with a final full state"
    );
    let _ = std::fs::remove_dir_all(&server.dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_leaves_complete_lines() {
    let mut server = spawn("kill");
    let _agent = play(&server, 300).await;
    server.child.kill().expect("SIGKILL");
    let _ = server.child.wait();
    let text = std::fs::read_to_string(&server.log).expect("log");
    assert!(text.ends_with('\n'), "the log ends with a complete line");
    let lines = text.lines().count();
    assert!(lines >= 5, "{lines} lines after 300 cycles");
    check_log(&text).unwrap_or_else(|e| panic!("log invalid after SIGKILL: {e}"));
    let _ = std::fs::remove_dir_all(&server.dir);
}
