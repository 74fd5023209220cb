//! The server binary as a process: SIGTERM during a match completes the log,
//! prints the results and exits 0 within 2 s; SIGKILL leaves a log of
//! complete lines.

mod util;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use rcss3d::monitor::client::check_log;
use util::process::ServerProcess;
use util::{Scratch, TestAgent};

struct Server {
    process: ServerProcess,
    log: PathBuf,
    stdout: PathBuf,
    _dir: Scratch,
}

fn spawn(tag: &str) -> Server {
    let dir = Scratch::new(tag);
    let log = dir.0.join("match.log");
    let stdout = dir.0.join("stdout.txt");
    let out = std::fs::File::create(&stdout).expect("stdout file");
    let process = ServerProcess::start_with_stdout(Some(out), |c| {
        c.args(["--sync", "--seed", "5", "--log"])
            .arg(&log)
            .stderr(Stdio::null());
    });
    Server {
        process,
        log,
        stdout,
        _dir: dir,
    }
}

async fn play(server: &Server, cycles: usize) -> TestAgent {
    let mut a = TestAgent::connect(server.process.agent_addr()).await;
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
async fn sigterm_completes_the_log_prints_the_results_and_exits_zero() {
    let mut server = spawn("term");
    let _agent = play(&server, 150).await;
    let code = server
        .process
        .terminate(Duration::from_secs(2))
        .expect("server exits within 2 s of SIGTERM");
    assert!(code.success(), "exit status {code:?}");
    let text = std::fs::read_to_string(&server.log).expect("log");
    check_log(&text).unwrap_or_else(|e| panic!("log invalid: {e}"));
    let last = text.lines().last().expect("lines");
    assert!(
        last.contains("(RSG 0 1)"),
        "the log ends with a final full state"
    );
    // The results a tournament script reads, on stdout.
    let results = std::fs::read_to_string(&server.stdout).expect("stdout");
    for line in ["teams: Proc -", "score: 0 0", "seed: 5"] {
        assert!(
            results.lines().any(|l| l == line),
            "no `{line}` on stdout:\n{results}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_leaves_complete_lines() {
    let mut server = spawn("kill");
    let _agent = play(&server, 300).await;
    server.process.child.kill().expect("SIGKILL");
    let _ = server.process.child.wait();
    let text = std::fs::read_to_string(&server.log).expect("log");
    assert!(text.ends_with('\n'), "the log ends with a complete line");
    let lines = text.lines().count();
    assert!(lines >= 5, "{lines} lines after 300 cycles");
    check_log(&text).unwrap_or_else(|e| panic!("log invalid after SIGKILL: {e}"));
}
