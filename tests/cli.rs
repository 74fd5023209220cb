//! The `rcss3d` command line as a user meets it: the server binary with
//! its flags, and the `ctl`, `watch` and `check-log` subcommands against a
//! real running server (separate processes, loopback TCP).

mod util;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rcss3d::monitor::client::MonitorClient;
use rcss3d::rules::PlayMode;
use util::process::{free_port, ServerProcess, BIN};
use util::Scratch;

/// The server binary in real-time mode, its stderr written to a file.
struct Server {
    process: ServerProcess,
    monitor: String,
    stderr: PathBuf,
}

impl Server {
    fn start(dir: &Path, extra: &[&str]) -> Server {
        let stderr = dir.join("server.stderr");
        let file = std::fs::File::create(&stderr).expect("stderr file");
        let process = ServerProcess::start(|c| {
            c.args(["--seed", "5"])
                .args(extra)
                .stdout(Stdio::null())
                .stderr(file);
        });
        Server {
            monitor: process.monitor_addr(),
            process,
            stderr,
        }
    }

    /// The server with `ron` as its configuration file.
    fn with_config(dir: &Path, ron: &str) -> Server {
        let conf = dir.join("server.ron");
        std::fs::write(&conf, ron).expect("write");
        Server::start(dir, &["--config", conf.to_str().expect("utf-8 path")])
    }
}

fn rcss3d(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("rcss3d runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `rcss3d ctl` against `server`; asserts success, returns stdout.
fn ctl(server: &Server, args: &[&str]) -> String {
    let mut all = vec!["ctl", "--monitor", &server.monitor];
    all.extend_from_slice(args);
    let out = rcss3d(&all);
    assert!(
        out.status.success(),
        "rcss3d {all:?}: {}\nstdout: {}\nstderr: {}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Runs `rcss3d ctl` against `server`; asserts failure, returns stderr.
fn ctl_fails(server: &Server, args: &[&str]) -> String {
    let mut all = vec!["ctl", "--monitor", &server.monitor];
    all.extend_from_slice(args);
    let out = rcss3d(&all);
    assert!(
        !out.status.success(),
        "rcss3d {all:?} succeeded: {}",
        text(&out.stdout)
    );
    text(&out.stderr)
}

/// The play mode a fresh monitor connection sees in its first message.
fn play_mode_seen_by_a_new_monitor(addr: &str) -> Option<PlayMode> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut m = MonitorClient::connect(addr)
            .await
            .expect("monitor connects");
        tokio::time::timeout(Duration::from_secs(5), m.next_message())
            .await
            .expect("a message within 5 s")
            .expect("valid message")
            .expect("connection open");
        m.scene().game.play_mode()
    })
}

#[test]
fn ctl_drives_a_match_watch_follows_it_and_check_log_reads_its_log() {
    let dir = Scratch::new("match");
    let log = dir.0.join("match.log.gz");
    let mut server = Server::start(&dir.0, &["--log", log.to_str().expect("utf-8 path")]);
    let watch_out = dir.0.join("watch.out");
    let mut watch = Command::new(BIN)
        .args(["watch", "--monitor", &server.monitor, "--every", "0"])
        .stdout(std::fs::File::create(&watch_out).expect("watch file"))
        .stderr(Stdio::piped())
        .spawn()
        .expect("watch starts");
    // watch prints the state it finds first: it is following the match.
    let start = Instant::now();
    while std::fs::read_to_string(&watch_out).map_or(true, |t| !t.contains('\n')) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "watch printed nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    let out = ctl(&server, &["kickoff", "Left"]);
    assert!(out.contains("KickOff_Left"), "{out}");
    assert_eq!(
        play_mode_seen_by_a_new_monitor(&server.monitor),
        Some(PlayMode::KickOffLeft)
    );
    let out = ctl(&server, &["playmode", "PlayOn"]);
    assert!(out.contains("PlayOn"), "{out}");
    let out = ctl(&server, &["score", "2", "1"]);
    assert!(out.contains("2:1"), "{out}");
    let out = ctl(&server, &["playmode", "corner_kick_right"]);
    assert!(out.contains("corner_kick_right"), "{out}");
    let out = ctl(&server, &["dropball"]);
    assert!(out.contains("PlayOn"), "{out}");
    let out = ctl(&server, &["send", "(ball (pos 1 2 0.042))"]);
    assert!(out.contains("sent (ball"), "{out}");
    let out = ctl(&server, &["killsim"]);
    assert!(out.contains("server stopped"), "{out}");
    assert!(server.process.wait_exit(Duration::from_secs(10)).success());

    // watch ends by itself when the server closes, having printed every
    // change in order.
    let start = Instant::now();
    let status = loop {
        if let Some(s) = watch.try_wait().expect("wait") {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "watch still running"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    if let Some(mut e) = watch.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    assert!(status.success(), "watch: {status} {err}");
    let lines = std::fs::read_to_string(&watch_out).expect("watch output");
    let expected = [
        "BeforeKickOff",
        "KickOff_Left",
        "PlayOn",
        "2:1",
        "corner_kick_right",
        "PlayOn",
    ];
    let mut rest = lines.lines();
    for want in expected {
        assert!(
            rest.by_ref().any(|l| l.contains(want)),
            "watch output lacks {want:?} in order:\n{lines}"
        );
    }

    // The log the server completed on killsim.
    let out = rcss3d(&["check-log", log.to_str().expect("utf-8 path")]);
    let summary = text(&out.stdout);
    assert!(out.status.success(), "{summary}{}", text(&out.stderr));
    assert!(summary.contains("valid gzip match log"), "{summary}");
    assert!(summary.contains("seed 5"), "{summary}");
    assert!(
        summary.contains("PlayOn") && summary.contains("2:1"),
        "{summary}"
    );

    // The same log as plain text with line 2 damaged: check-log names it.
    let mut plain = String::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(&log).expect("log"))
        .read_to_string(&mut plain)
        .expect("gzip");
    let mut lines: Vec<&str> = plain.lines().collect();
    assert!(lines.len() >= 2, "{} lines", lines.len());
    lines[1] = "((time 1)(playmode";
    let broken = dir.0.join("broken.log");
    std::fs::write(&broken, lines.join("\n") + "\n").expect("write");
    let out = rcss3d(&["check-log", broken.to_str().expect("utf-8 path")]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("broken.log") && err.contains("line 2"),
        "{err}"
    );

    // Server logs went to a file: no colour codes.
    let logs = std::fs::read_to_string(&server.stderr).expect("server stderr");
    assert!(logs.contains("rcss3d listening"), "{logs}");
    assert!(!logs.contains('\u{1b}'), "colour codes in a file:\n{logs}");
}

#[test]
fn ctl_says_so_when_a_command_has_no_effect() {
    let dir = Scratch::new("readonly");
    let server = Server::with_config(&dir.0, "(monitor: (read_only: true))");
    let err = ctl_fails(&server, &["--timeout", "1", "kickoff", "Left"]);
    assert!(err.contains("did not show its effect"), "{err}");
    assert!(err.contains("BeforeKickOff"), "{err}");
    // A command the monitor protocol does not know is refused before
    // anything is sent.
    let err = ctl_fails(&server, &["send", "(kikOff Left)"]);
    assert!(err.contains("not a valid monitor command"), "{err}");
    assert_eq!(
        play_mode_seen_by_a_new_monitor(&server.monitor),
        Some(PlayMode::BeforeKickOff)
    );
}

/// A monitor port guarded by a trainer secret (written plainly in the
/// configuration, without `Some(...)`): `ctl` needs `--secret`.
#[test]
fn ctl_authenticates_with_the_trainer_secret() {
    let dir = Scratch::new("secret");
    let server = Server::with_config(&dir.0, "(monitor: (trainer_secret: \"s3cret\"))");
    // Refused without the secret.
    ctl_fails(&server, &["--timeout", "1", "playmode", "PlayOn"]);
    let out = ctl(&server, &["--secret", "s3cret", "playmode", "PlayOn"]);
    assert!(out.contains("PlayOn"), "{out}");
    assert_eq!(
        play_mode_seen_by_a_new_monitor(&server.monitor),
        Some(PlayMode::PlayOn)
    );
}

#[test]
fn ctl_and_watch_report_a_missing_server_in_one_line() {
    let port = free_port().to_string();
    let addr = format!("127.0.0.1:{port}");
    for args in [
        vec!["ctl", "--monitor", &addr, "dropball"],
        vec!["watch", "--monitor", &addr],
    ] {
        let out = rcss3d(&args);
        assert!(!out.status.success(), "{args:?}");
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("rcss3d: error: cannot connect to the monitor port"),
            "{err}"
        );
    }
}

#[test]
fn a_configuration_error_is_one_line_without_a_backtrace() {
    let dir = Scratch::new("conf");
    let conf = dir.0.join("bad.ron");
    std::fs::write(&conf, "(\n  agent_port: 3101,\n  agnet_port: 1,\n)\n").expect("write");
    for backtrace in ["0", "1", "full"] {
        let out = Command::new(BIN)
            .args(["--config", conf.to_str().expect("utf-8 path")])
            .env("RUST_BACKTRACE", backtrace)
            .output()
            .expect("rcss3d runs");
        assert!(!out.status.success());
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "RUST_BACKTRACE={backtrace}: {err}");
        assert!(err.starts_with("rcss3d: error: "), "{err}");
        assert!(err.contains("bad.ron:3:"), "{err}");
        assert!(err.contains("agnet_port"), "{err}");
    }
    let missing = dir.0.join("missing.ron");
    let out = rcss3d(&["--config", missing.to_str().expect("utf-8 path")]);
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(
        err.matches("No such file").count(),
        1,
        "cause printed once: {err}"
    );
}

#[test]
fn help_shows_the_defaults() {
    let out = rcss3d(&["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for want in [
        "--agent-port <PORT>",
        "[default: 3100]",
        "[default: 3200]",
        "[default: 0.0.0.0]",
        "[default: off]",
        "ctl",
        "watch",
        "check-log",
    ] {
        assert!(help.contains(want), "--help lacks {want:?}:\n{help}");
    }
    let out = rcss3d(&["ctl", "--help"]);
    let help = text(&out.stdout);
    assert!(help.contains("[default: 127.0.0.1:3200]"), "{help}");
    for sub in [
        "kickoff", "playmode", "dropball", "score", "time", "killsim", "send",
    ] {
        assert!(help.contains(sub), "ctl --help lacks {sub}:\n{help}");
    }
}

#[test]
fn server_flags_and_subcommands_do_not_mix() {
    let out = rcss3d(&["--sync", "watch"]);
    assert!(!out.status.success());
    let out = rcss3d(&["ctl", "playmode", "NoSuchMode"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("PlayOn"), "lists the modes");
}

/// A sync-mode server without agents runs no cycles; `ctl killsim` still
/// stops it, and its log is complete.
#[test]
fn killsim_stops_an_idle_sync_mode_server() {
    let dir = Scratch::new("sync");
    let log = dir.0.join("idle.log");
    let mut server = Server::start(
        &dir.0,
        &["--sync", "--log", log.to_str().expect("utf-8 path")],
    );
    let out = ctl(&server, &["killsim"]);
    assert!(out.contains("server stopped"), "{out}");
    assert!(server.process.wait_exit(Duration::from_secs(10)).success());
    let out = rcss3d(&["check-log", log.to_str().expect("utf-8 path")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// `--low-latency` asks for real-time scheduling: the server says what it
/// was granted or what was refused, and runs its cycles either way.
#[test]
fn low_latency_is_granted_or_logged_and_the_server_runs() {
    let dir = Scratch::new("low-latency");
    let mut server = Server::start(&dir.0, &["--low-latency"]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let messages = rt.block_on(async {
        let mut m = MonitorClient::connect(server.monitor.as_str())
            .await
            .expect("monitor connects");
        let mut n = 0;
        while n < 10 {
            tokio::time::timeout(Duration::from_secs(5), m.next_message())
                .await
                .expect("a message within 5 s")
                .expect("valid message")
                .expect("connection open");
            n += 1;
        }
        n
    });
    assert_eq!(messages, 10);
    let out = ctl(&server, &["killsim"]);
    assert!(out.contains("server stopped"), "{out}");
    assert!(server.process.wait_exit(Duration::from_secs(10)).success());
    let log = std::fs::read_to_string(&server.stderr).expect("stderr file");
    let granted = log.contains("simulation thread latency settings");
    let refused = log.contains("low-latency setting not applied");
    assert!(
        granted || refused,
        "no word on the latency settings:\n{log}"
    );
    if !refused {
        assert!(
            log.contains("fifo_priority=Some(10)") && log.contains("keep_cpus_awake=true"),
            "granted without refusals means both settings:\n{log}"
        );
    }
}
