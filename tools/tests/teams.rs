//! The load generator as two stand-in teams, as the README starts them:
//! a whole match on the real server binary (halves shortened through the
//! configuration, sync mode so it runs as fast as the machine allows,
//! `AutomaticKickOff` and `AutomaticQuit`), the teams started the moment
//! the server listens.
//!
//! Asserted: the team named by `--team-a` is the left side; the match
//! ends by itself (or by `(killsim)`) with the teams' program exiting 0
//! and printing no measurement; fewer fouls than a handful; every robot
//! inside the field lines in the log's last frame.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, Stdio};
use std::time::Duration;

use rcss3d::monitor::control::LogSummary;

/// The server binary of the same build (built first when this package is
/// tested alone).
fn server_binary() -> PathBuf {
    let loadgen = PathBuf::from(env!("CARGO_BIN_EXE_loadgen"));
    let server = loadgen.with_file_name(format!("rcss3d{}", std::env::consts::EXE_SUFFIX));
    if !server.exists() {
        let mut build = Command::new(env!("CARGO"));
        build.args(["build", "-p", "rcss3d", "--bin", "rcss3d"]);
        if loadgen
            .parent()
            .and_then(|d| d.file_name())
            .is_some_and(|n| n == "release")
        {
            build.arg("--release");
        }
        if let Some(target) = loadgen.parent().and_then(|d| d.parent()) {
            build.arg("--target-dir").arg(target);
        }
        let status = build.status().expect("run cargo build for the server");
        assert!(status.success(), "building the rcss3d server failed");
    }
    server
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// A scratch directory removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("rcss3d-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The value words after `key:` in the server's results summary.
fn summary_field<'a>(summary: &'a str, key: &str) -> Vec<&'a str> {
    summary
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .map(|rest| rest.split_whitespace().collect())
        .unwrap_or_default()
}

/// Waits for the ready line the server (started with a piped stdout)
/// prints once its ports listen; returns its stdout after that line.
fn wait_ready(server: &mut std::process::Child) -> BufReader<ChildStdout> {
    let mut out = BufReader::new(server.stdout.take().expect("piped stdout"));
    let mut line = String::new();
    loop {
        line.clear();
        let read = out.read_line(&mut line).expect("server stdout");
        if read == 0 {
            let status = server.wait().expect("wait");
            panic!("server exited at start: {status}");
        }
        if line.starts_with(r#"{"event":"ready""#) {
            return out;
        }
    }
}

fn run_match(dir: &Path, agents: usize) {
    let conf = dir.join("match.ron");
    std::fs::write(
        &conf,
        "(rules: (RuleHalfTime: 15.0, AutomaticKickOff: true, WaitBeforeKickOff: 1.0, \
         AutomaticQuit: true))",
    )
    .expect("write config");
    let log = dir.join("match.log");
    let agent_port = free_port();
    let mut server = Command::new(server_binary())
        .args([
            "--no-user-config",
            "--bind",
            "127.0.0.1",
            "--sync",
            "--seed",
            "3",
        ])
        .args(["--agent-port", &agent_port.to_string()])
        .args(["--monitor-port", &free_port().to_string()])
        .arg("--config")
        .arg(&conf)
        .arg("--log")
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("server starts");
    let mut stdout = wait_ready(&mut server);
    // The names sort the other way round from the sides they ask for, so
    // neither alphabetical order nor chance gives this result.
    let teams = Command::new(env!("CARGO_BIN_EXE_loadgen"))
        .args(["--agents", &agents.to_string(), "--sync"])
        .args(["--port", &agent_port.to_string()])
        .args(["--team-a", "Zulu", "--team-b", "Alpha"])
        .output()
        .expect("loadgen runs");
    let out = String::from_utf8_lossy(&teams.stdout).into_owned();
    let err = String::from_utf8_lossy(&teams.stderr).into_owned();
    let mut summary = String::new();
    stdout.read_to_string(&mut summary).expect("server stdout");
    server.wait().expect("server ends");
    assert!(
        teams.status.success(),
        "{}\nstdout: {out}\nstderr: {err}",
        teams.status
    );
    assert_eq!(
        out.trim_end(),
        format!(
            "loadgen: Zulu (left) and Alpha (right), {agents} agents: the server ended the match"
        ),
        "stderr: {err}"
    );
    assert!(err.is_empty(), "{err}");
    assert_eq!(
        summary_field(&summary, "teams:"),
        ["Zulu", "Alpha"],
        "{summary}"
    );
    let fouls: u32 = summary_field(&summary, "fouls:")
        .iter()
        .map(|n| n.parse::<u32>().expect("foul count"))
        .sum();
    assert!(fouls < 5, "{fouls} fouls: {summary}");
    let game_time: f32 = summary_field(&summary, "game_time:")[0]
        .parse()
        .expect("game time");
    assert!(game_time >= 30.0, "the match ended early: {summary}");

    let log = LogSummary::of_file(&log).expect("a valid log");
    let robots = log.check.last.robots();
    assert_eq!(robots.len(), agents, "{log}");
    for r in &robots {
        let p = r.position;
        assert!(
            p.x.abs() < 15.0 && p.y.abs() < 10.0,
            "{:?} {} outside the field lines at {p:?}",
            r.side,
            r.unum
        );
    }
}

/// Three robots a side over two 15 s halves: robots that swing their legs
/// as the measuring agents do fall, and the referee records about a
/// hundred fouls in such a match; these record none.
#[test]
fn two_stand_in_teams_play_a_match_that_the_server_ends() {
    let dir = Scratch::new("teams");
    run_match(&dir.0, 6);
}

/// `(killsim)` in the middle of a match ends it as normally as the
/// referee does: the teams' program exits 0 without an error.
#[test]
fn stand_in_teams_end_cleanly_on_killsim() {
    let dir = Scratch::new("teams-killsim");
    let agent_port = free_port();
    let monitor_port = free_port();
    let mut server = Command::new(server_binary())
        .args(["--no-user-config", "--bind", "127.0.0.1", "--sync"])
        .args(["--agent-port", &agent_port.to_string()])
        .args(["--monitor-port", &monitor_port.to_string()])
        .current_dir(&dir.0)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("server starts");
    let mut stdout = wait_ready(&mut server);
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let teams = Command::new(env!("CARGO_BIN_EXE_loadgen"))
        .args(["--agents", "4", "--sync"])
        .args(["--port", &agent_port.to_string()])
        .args(["--team-a", "Alpha", "--team-b", "Beta"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("loadgen starts");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let addr = format!("127.0.0.1:{monitor_port}");
        let mut monitor = rcss3d::monitor::client::MonitorClient::connect(addr.as_str())
            .await
            .expect("monitor connects");
        // Every robot on the field with its team: the match is on.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while monitor.scene().robots().len() < 4 {
            tokio::time::timeout_at(deadline, monitor.next_message())
                .await
                .expect("four robots within 60 s")
                .expect("valid message")
                .expect("connection open");
        }
        monitor.send("(killsim)").await.expect("send");
    });
    let out = teams.wait_with_output().expect("loadgen ends");
    let status = server.wait().expect("server ends");
    assert!(status.success(), "server: {status}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stdout}{stderr}", out.status);
    assert_eq!(
        stdout.trim_end(),
        "loadgen: Alpha (left) and Beta (right), 4 agents: the server ended the match"
    );
    assert!(stderr.is_empty(), "{stderr}");
}
