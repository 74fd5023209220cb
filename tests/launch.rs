//! The server binary as a launcher program meets it: port 0 for every
//! port, the ready line on stdout (and in `--ready-file`) naming the ports
//! really bound, the results file written on stop, and the stop when the
//! launcher's end of stdin closes. Separate processes, loopback TCP.

mod util;

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::time::Duration;

use serde_json::Value;
use util::process::{exit_within, BIN};
use util::{Scratch, TestAgent};

/// A server started on port 0 with its stdin and stdout piped.
struct Launched {
    child: Child,
    stdout: BufReader<ChildStdout>,
}

impl Launched {
    fn start(extra: &[&str]) -> Launched {
        let mut child = Command::new(BIN)
            .args(["--no-user-config", "--bind", "127.0.0.1"])
            .args(["--agent-port", "0", "--monitor-port", "0"])
            .arg("--stop-with-stdin")
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("server binary starts");
        let stdout = BufReader::new(child.stdout.take().expect("stdout piped"));
        Launched { child, stdout }
    }

    /// The first line on stdout, parsed (blocks until the server prints it
    /// or exits).
    fn ready(&mut self) -> (String, Value) {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("read stdout");
        assert!(
            line.ends_with('\n'),
            "no ready line; stdout ended: {line:?}"
        );
        let value = serde_json::from_str(&line).expect("the ready line is JSON");
        (line, value)
    }

    /// Closes the server's stdin and waits for its exit.
    fn close_stdin_and_wait(&mut self, within: Duration) -> ExitStatus {
        drop(self.child.stdin.take());
        wait_exit(&mut self.child, within)
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_exit(child: &mut Child, within: Duration) -> ExitStatus {
    exit_within(child, within).unwrap_or_else(|| panic!("server still running after {within:?}"))
}

fn port(v: &Value, key: &str) -> u16 {
    let p = v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"));
    u16::try_from(p).expect("a port number")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("file written");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}: {text}", path.display()))
}

#[test]
fn four_servers_on_port_zero_print_their_real_ports_and_stop_with_stdin() {
    let dir = Scratch::new("four");
    let ready_files: Vec<_> = (0..4)
        .map(|i| dir.0.join(format!("ready{i}.json")))
        .collect();
    // All four start before any is read: they race for ports.
    let mut servers: Vec<Launched> = ready_files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let f = f.to_str().expect("utf-8 path");
            let seed = (i + 1).to_string();
            if i == 0 {
                Launched::start(&["--ready-file", f, "--seed", &seed, "--web-port", "0"])
            } else {
                Launched::start(&["--ready-file", f, "--seed", &seed])
            }
        })
        .collect();
    let mut ports = Vec::new();
    for (i, server) in servers.iter_mut().enumerate() {
        let (line, ready) = server.ready();
        assert_eq!(ready["event"], "ready", "{line}");
        assert_eq!(
            ready["pid"].as_u64(),
            Some(u64::from(server.child.id())),
            "{line}"
        );
        assert_eq!(ready["seed"].as_u64(), Some(i as u64 + 1), "{line}");
        assert_eq!(ready["bind"], "127.0.0.1", "{line}");
        // The ready file holds the same line, complete.
        assert_eq!(read_json(&ready_files[i]), ready);
        let mut own = vec![port(&ready, "agent_port"), port(&ready, "monitor_port")];
        if i == 0 {
            own.push(port(&ready, "web_port"));
        } else {
            assert!(ready["web_port"].is_null(), "{line}");
        }
        for p in &own {
            assert_ne!(*p, 0, "{line}");
            // Listening when announced: a connection is accepted at once.
            TcpStream::connect(("127.0.0.1", *p))
                .unwrap_or_else(|e| panic!("port {p} of server {i} ({line}): {e}"));
        }
        ports.extend(own);
    }
    let mut distinct = ports.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), ports.len(), "a port clash: {ports:?}");

    // Closing stdin stops each one cleanly.
    for server in &mut servers {
        let status = server.close_stdin_and_wait(Duration::from_secs(10));
        assert!(status.success(), "{status}");
    }
    for p in ports {
        assert!(
            TcpStream::connect(("127.0.0.1", p)).is_err(),
            "port {p} still open after the stop"
        );
    }
}

#[test]
fn the_results_file_holds_teams_score_seed_and_log_after_killsim() {
    let dir = Scratch::new("results");
    let log = dir.0.join("match.log");
    let results = dir.0.join("results.json");
    let mut server = Launched::start(&[
        "--seed",
        "11",
        "--log",
        log.to_str().expect("utf-8 path"),
        "--results",
        results.to_str().expect("utf-8 path"),
    ]);
    let (_, ready) = server.ready();
    let agent_port = port(&ready, "agent_port");
    let monitor = format!("127.0.0.1:{}", port(&ready, "monitor_port"));

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut agent = rt.block_on(async {
        let mut agent = TestAgent::connect(([127, 0, 0, 1], agent_port).into()).await;
        agent.join("Alpha", 3, 0).await;
        agent
    });
    let ctl = |args: &[&str]| {
        let out = Command::new(BIN)
            .args(["ctl", "--monitor", &monitor])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("ctl runs");
        assert!(
            out.status.success(),
            "ctl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    ctl(&["score", "2", "1"]);
    assert!(!results.exists(), "results written before the end");
    ctl(&["killsim"]);
    let status = wait_exit(&mut server.child, Duration::from_secs(10));
    assert!(status.success(), "{status}");
    rt.block_on(async { assert!(agent.closed_within(Duration::from_secs(5)).await) });

    let r = read_json(&results);
    assert_eq!(r["event"], "results", "{r}");
    assert_eq!(r["team_left"], "Alpha", "{r}");
    assert_eq!(r["team_right"], "", "{r}");
    assert_eq!(r["score_left"].as_u64(), Some(2), "{r}");
    assert_eq!(r["score_right"].as_u64(), Some(1), "{r}");
    assert_eq!(r["fouls_left"].as_u64(), Some(0), "{r}");
    assert_eq!(r["seed"].as_u64(), Some(11), "{r}");
    assert_eq!(r["half"].as_u64(), Some(1), "{r}");
    assert_eq!(r["play_mode"], "BeforeKickOff", "{r}");
    assert!(r["cycles"].as_u64().is_some_and(|c| c > 0), "{r}");
    assert!(r["server_time"].as_f64().is_some_and(|t| t > 0.0), "{r}");
    assert_eq!(r["log"].as_str(), log.to_str(), "{r}");
    // The log it names is complete and carries the same seed.
    let first = std::fs::read_to_string(&log).expect("log written");
    assert!(first
        .lines()
        .next()
        .is_some_and(|l| l.contains("(seed 11)")));
    // The text summary still follows on stdout.
    let rest: Vec<String> = (&mut server.stdout).lines().map_while(Result::ok).collect();
    assert!(rest.iter().any(|l| l == "score: 2 1"), "{rest:?}");
}
