//! The `rcss3d` command line as a user meets it: the server binary with
//! its flags, and the `ctl`, `watch` and `check-log` subcommands against a
//! real running server (separate processes, loopback TCP); the binaries
//! installed alone, away from the source tree, under their three names
//! (`rcss3d`, `rcssserver3d`, `simspark`), with the user's settings files.

mod util;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use rcss3d::monitor::client::MonitorClient;
use rcss3d::rules::PlayMode;
use util::process::{exit_within, free_port, read_ready, read_text, DirWatch, ServerProcess, BIN};
use util::{Scratch, TestAgent};

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
            c.args(["--seed", "5"]).args(extra).stderr(file);
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
    assert!(
        DirWatch::of_file(&watch_out).until(Duration::from_secs(10), || {
            read_text(&watch_out).contains('\n')
        }),
        "watch printed nothing"
    );

    // The options may follow the command.
    let out = rcss3d(&["ctl", "kickoff", "Left", "--monitor", &server.monitor]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = text(&out.stdout);
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
    let status = exit_within(&mut watch, Duration::from_secs(10)).expect("watch still running");
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
    assert_eq!(lines.lines().last(), Some("server stopped"), "{lines}");
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
    // Thinned lines say how many were left out only when some were.
    assert!(logs.contains("monitor connected"), "{logs}");
    assert!(!logs.contains("skipped=0"), "{logs}");
    assert!(!logs.contains('\u{1b}'), "colour codes in a file:\n{logs}");
}

/// Runs `rcss3d ctl` against `server`, asserts it fails within a second
/// (its timeout is left at 5 s), and returns its stderr.
fn ctl_fails_at_once(server: &Server, args: &[&str]) -> String {
    let start = Instant::now();
    let err = ctl_fails(server, args);
    let took = start.elapsed();
    assert!(took < Duration::from_secs(1), "took {took:?}: {err}");
    err
}

#[test]
fn ctl_prints_the_reason_of_a_read_only_port_at_once() {
    let dir = Scratch::new("readonly");
    let server = Server::with_config(&dir.0, "(monitor: (read_only: true))");
    let err = ctl_fails_at_once(&server, &["kickoff", "Left"]);
    assert_eq!(
        err.trim_end(),
        "rcss3d: error: the server refused `(kickOff Left)`: the monitor port is read-only"
    );
    let err = ctl_fails_at_once(&server, &["send", "(ball (pos 1 2 0.042))"]);
    assert_eq!(
        err.trim_end(),
        "rcss3d: error: the server refused `(ball (pos 1 2 0.042))`: the monitor port is \
         read-only"
    );
    let err = ctl_fails_at_once(&server, &["killsim"]);
    assert!(err.contains("the monitor port is read-only"), "{err}");
    // A command the monitor protocol does not know is refused before
    // anything is sent.
    let err = ctl_fails(&server, &["send", "(kikOff Left)"]);
    assert!(err.contains("not a valid monitor command"), "{err}");
    assert_eq!(
        play_mode_seen_by_a_new_monitor(&server.monitor),
        Some(PlayMode::BeforeKickOff)
    );
}

/// An effect that does not show on a port that takes the command (a
/// sync-mode server without agents does not step): `ctl` says it was not
/// refused, what it saw last, and why nothing came.
#[test]
fn ctl_says_so_when_a_command_has_no_effect() {
    let dir = Scratch::new("noeffect");
    let server = Server::start(&dir.0, &["--sync"]);
    let err = ctl_fails(&server, &["--timeout", "1", "playmode", "PlayOn"]);
    assert!(
        err.contains("`(playMode PlayOn)` sent and not refused"),
        "{err}"
    );
    assert!(err.contains("did not show its effect"), "{err}");
    assert!(err.contains("BeforeKickOff"), "{err}");
    assert!(err.contains("waits for its agents"), "{err}");
}

/// A monitor port guarded by a trainer secret (written plainly in the
/// configuration, without `Some(...)`): `ctl` needs `--secret`, and a
/// missing or wrong one is reported at once with the server's reason.
#[test]
fn ctl_authenticates_with_the_trainer_secret() {
    let dir = Scratch::new("secret");
    let server = Server::with_config(&dir.0, "(monitor: (trainer_secret: \"s3cret\"))");
    let err = ctl_fails_at_once(&server, &["playmode", "PlayOn"]);
    assert_eq!(
        err.trim_end(),
        "rcss3d: error: the server refused `(playMode PlayOn)`: the monitor port needs the \
         trainer secret"
    );
    let err = ctl_fails_at_once(&server, &["--secret", "wrong", "playmode", "PlayOn"]);
    assert_eq!(
        err.trim_end(),
        "rcss3d: error: the server refused `(playMode PlayOn)`: wrong trainer secret"
    );
    let err = ctl_fails_at_once(&server, &["--secret", "wrong", "send", "(dropBall)"]);
    assert!(err.contains("wrong trainer secret"), "{err}");
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

/// An unknown key is named with the closest known one, or with the
/// section it belongs to; a value outside an enum's names likewise.
#[test]
fn an_unknown_key_suggests_the_closest_name_or_its_section() {
    let dir = Scratch::new("suggest");
    let cases = [
        (
            "(\n  sync_mod: true,\n)\n",
            "1.ron:2:11: unknown key `sync_mod` in the top level; did you mean `sync_mode`?",
        ),
        (
            "(rules: (RuleHalfTim: 60.0))\n",
            "2.ron:1:21: unknown key `RuleHalfTim` in `rules`; did you mean `RuleHalfTime`?",
        ),
        (
            "(log: \"match.log\")\n",
            "3.ron:1:5: unknown key `log` in the top level; it is a key of `monitor`: \
             `monitor: (log: ...)`",
        ),
        (
            "(frobnicate: 1)\n",
            "4.ron:1:12: unknown key `frobnicate` in the top level; conf/server.ron lists \
             every key with its default",
        ),
    ];
    for (i, (ron, want)) in cases.iter().enumerate() {
        let conf = dir.0.join(format!("{}.ron", i + 1));
        std::fs::write(&conf, ron).expect("write");
        let out = rcss3d(&[
            "--no-user-config",
            "--config",
            conf.to_str().expect("utf-8"),
        ]);
        assert!(!out.status.success());
        let err = text(&out.stderr);
        let line = err.trim_end();
        assert!(
            line.starts_with("rcss3d: error: ") && line.ends_with(want),
            "want …{want}\n got {line}"
        );
    }
}

/// Inputs are checked before any port is bound, and the error names the
/// setting: with every port in question busy, the input is what is
/// reported.
#[test]
fn start_up_errors_name_the_setting_before_any_port() {
    let dir = Scratch::new("startup");
    let busy = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = busy.local_addr().expect("addr").port().to_string();
    let missing = dir.0.join("nonexistent");
    let missing_text = missing.to_str().expect("utf-8 path");
    let cases: [(Vec<&str>, String); 4] = [
        (
            vec!["--no-user-config", "--bind", "127.0.0.1", "--agent-port", &port, "--models-dir", missing_text],
            format!("rcss3d: error: --models-dir {missing_text}: No such file or directory (os error 2)"),
        ),
        (
            vec!["--no-user-config", "--agent-port", "3999", "--monitor-port", "3999"],
            "rcss3d: error: --agent-port and --monitor-port are both 3999: each port needs its \
             own number"
                .to_owned(),
        ),
        (
            vec!["--no-user-config", "--agent-port", "3999", "--web-port", "3999"],
            "rcss3d: error: --agent-port and --web-port are both 3999: each port needs its own \
             number"
                .to_owned(),
        ),
        (
            vec!["replay", missing_text, "--bind", "127.0.0.1", "--web-port", &port],
            format!("rcss3d: error: {missing_text}: No such file or directory (os error 2)"),
        ),
    ];
    for (args, want) in cases {
        let out = rcss3d(&args);
        assert!(!out.status.success(), "{args:?}");
        let err = text(&out.stderr);
        assert_eq!(err.trim_end(), want, "{args:?}");
    }
    // A models directory named in a file is named by its key.
    let conf = dir.0.join("models.ron");
    std::fs::write(&conf, format!("(models_dir: {missing_text:?})")).expect("write");
    let out = rcss3d(&[
        "--no-user-config",
        "--config",
        conf.to_str().expect("utf-8 path"),
    ]);
    let err = text(&out.stderr);
    assert!(err.starts_with("rcss3d: error: models_dir "), "{err}");
}

#[test]
fn a_match_log_that_cannot_be_created_is_one_error_naming_the_file_and_its_cause() {
    let dir = Scratch::new("nolog");
    let log = dir.0.join("no such folder").join("match.log");
    let out = rcss3d(&[
        "--no-user-config",
        "--sync",
        "--agent-port",
        "0",
        "--monitor-port",
        "0",
        "--log",
        log.to_str().expect("utf-8 path"),
    ]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("rcss3d: error: "))
        .unwrap_or_else(|| panic!("no error line: {err}"));
    assert!(line.contains("match log"), "{line}");
    assert!(line.contains("no such folder/match.log"), "{line}");
    assert_eq!(
        line.matches("No such file").count(),
        1,
        "cause printed once: {line}"
    );
}

/// `--seed 0`, the old way to ask for a random seed, is refused before
/// any port is bound rather than taken as the seed 0.
#[test]
fn seed_zero_is_refused_saying_how_to_get_a_random_one() {
    let out = rcss3d(&["--seed", "0", "--no-user-config"]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("--seed") && err.contains("leave --seed out"),
        "{err}"
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

/// Spawns `cmd`. A binary this test process has just copied can be
/// refused with "Text file busy" for a moment: a child that another test
/// thread forked while the copy's file was open for writing holds that
/// file until its own exec. The retry waits for that exec, not for the
/// server.
fn spawn_copied(cmd: &mut Command) -> std::process::Child {
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other.expect("server binary starts"),
        }
    }
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

    // Into a pipe whose reader has gone (`check-log FILE | head -0`):
    // quiet, and the check's own status.
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = Command::new(BIN)
        .args(["check-log", log.to_str().expect("utf-8 path")])
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("check-log runs");
    assert!(
        out.status.success(),
        "{}: {}",
        out.status,
        text(&out.stderr)
    );
    assert_eq!(text(&out.stderr), "");
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

/// The server program under its three names, as built.
const NAMES: [(&str, &str); 3] = [
    ("rcss3d", env!("CARGO_BIN_EXE_rcss3d")),
    ("rcssserver3d", env!("CARGO_BIN_EXE_rcssserver3d")),
    ("simspark", env!("CARGO_BIN_EXE_simspark")),
];

/// `root/bin/name`: a copy of the binary of that name alone in `root/bin`,
/// as `cargo install --path . --root root` puts it there (without building
/// it again: the test build has built it).
fn install_copy(root: &Path, name: &str) -> PathBuf {
    let (_, built) = NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .expect("a binary name");
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let to = bin.join(name);
    std::fs::copy(built, &to).expect("copy the binary");
    to
}

fn new_dir(path: PathBuf) -> PathBuf {
    std::fs::create_dir_all(&path).expect("create dir");
    path
}

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(f)
}

/// A server binary started as a user would: from the working directory
/// `cwd`, with `HOME` = `home` and no other configuration in the
/// environment, on free loopback ports given as
/// `--agent-port A --server-port M` (the reference's flags). Killed when
/// dropped.
struct Started {
    child: Child,
    agent_port: u16,
    stderr: PathBuf,
}

impl Started {
    fn start(
        bin: &Path,
        cwd: &Path,
        home: &Path,
        env: &[(&str, &Path)],
        extra: &[&str],
    ) -> Started {
        let agent_port = free_port();
        let monitor_port = free_port();
        let stderr = home.with_extension("stderr");
        let mut cmd = Command::new(bin);
        cmd.current_dir(cwd)
            .env("HOME", home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove(rcss3d::config::CONFIG_ENV)
            .env_remove("RUST_LOG")
            .args(["--agent-port", &agent_port.to_string()])
            .args(["--server-port", &monitor_port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("stderr file"));
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut started = Started {
            child: spawn_copied(&mut cmd),
            agent_port,
            stderr,
        };
        // Both ports listen once it prints its ready line.
        let (ready, _stdout) = read_ready(&mut started.child, None);
        if ready.is_none() {
            let _ = started.child.kill();
            let status = started.child.wait().expect("wait");
            panic!("server did not come up ({status}):\n{}", started.logs());
        }
        assert_eq!(
            ready.as_ref().and_then(|r| r["monitor_port"].as_u64()),
            Some(u64::from(monitor_port)),
            "{ready:?}"
        );
        started
    }

    fn agent_addr(&self) -> std::net::SocketAddr {
        ([127, 0, 0, 1], self.agent_port).into()
    }

    fn logs(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The first frame with joint perceptors (`HJ`) after `(scene ...)`.
async fn first_frame_with_joints(agent: &mut TestAgent) -> String {
    for _ in 0..50 {
        let frame = agent.recv().await;
        if frame.contains("(HJ ") {
            return frame;
        }
    }
    panic!("no frame with joint perceptors in 50 frames");
}

/// The binary needs nothing of the source tree: it names no path in it,
/// and copied alone into an empty directory and started from another one,
/// it builds the field and every robot type from its built-in files.
#[test]
fn a_binary_copied_alone_elsewhere_builds_every_robot_type() {
    // A path into the source tree's data compiled in would be found there
    // as long as the tree exists, and fail once it is gone. (Its bare
    // directory may appear: the debug information's compilation dir.)
    let bytes = std::fs::read(BIN).expect("read the binary");
    for data in ["models", "scenes", "conf"] {
        let path = format!("{}/{data}", env!("CARGO_MANIFEST_DIR"));
        assert!(
            memchr::memmem::find(&bytes, path.as_bytes()).is_none(),
            "the binary names {path}"
        );
    }
    let dir = Scratch::new("alone");
    let bin = install_copy(&new_dir(dir.0.join("root")), "rcss3d");
    let work = new_dir(dir.0.join("work"));
    let home = new_dir(dir.0.join("home"));
    let server = Started::start(&bin, &work, &home, &[], &["--seed", "5"]);
    block_on(async {
        for robot_type in 0..=4u8 {
            let mut agent = TestAgent::connect(server.agent_addr()).await;
            agent
                .send(&format!(
                    "(scene rsg/agent/nao/nao_hetero.rsg {robot_type})"
                ))
                .await;
            let frame = first_frame_with_joints(&mut agent).await;
            let toes = frame.contains("(n llj7)") && frame.contains("(n rlj7)");
            assert_eq!(toes, robot_type == 4, "type {robot_type}: {frame}");
            assert!(frame.contains("(n hj1)"), "type {robot_type}: {frame}");
        }
    });
    let logs = server.logs();
    assert!(
        logs.contains("configuration: the embedded defaults (no user files)"),
        "{logs}"
    );
    assert_eq!(
        std::fs::read_dir(&work).expect("work dir").count(),
        0,
        "the server wrote into its working directory"
    );
}

/// `rcssserver3d` and `simspark` list the reference's flags.
#[test]
fn the_reference_names_list_the_reference_flags() {
    for (name, bin) in &NAMES[1..] {
        let out = Command::new(bin)
            .arg("--help")
            .output()
            .expect("binary runs");
        assert!(out.status.success(), "{name} --help: {}", out.status);
        let help = text(&out.stdout);
        assert!(help.contains(&format!("Usage: {name}")), "{help}");
        for flag in [
            "--help",
            "--agent-port <PORT>",
            "--server-port",
            "--script-path <PATH>",
            "--init-script-prefix <PATH>",
            "--rvdraw-host <HOST>",
        ] {
            assert!(help.contains(flag), "{name} --help lacks {flag}:\n{help}");
        }
    }
    // Under its own name an unknown flag is an error, as it always was.
    let out = rcss3d(&["--no-such-flag"]);
    assert!(!out.status.success());
}

/// Installed as `rcssserver3d` and started with the reference's flags by a
/// user whose `~/.simspark/spark.rb` turns the sync mode on: the server
/// waits for the agent's `(syn)` (the observable difference to real-time
/// mode: frames stop after the grace period and the next one comes with
/// the `(syn)`); the per-user file and `$RCSS3D_CONFIG` switch on the
/// position perceptors; the flags without meaning here are named in one
/// log line.
#[test]
fn rcssserver3d_takes_spark_rb_the_user_files_and_the_reference_flags() {
    let dir = Scratch::new("reference");
    let bin = install_copy(&new_dir(dir.0.join("root")), "rcssserver3d");
    let work = new_dir(dir.0.join("work"));
    let home = new_dir(dir.0.join("home"));
    std::fs::create_dir_all(home.join(".simspark")).expect("dir");
    std::fs::write(
        home.join(".simspark/spark.rb"),
        "# (AgentControl) constants\n$agentStep = 0.02\n$agentSyncMode = true\n\
         def sparkSetupServer\n  $agentSyncMode = false\nend\n",
    )
    .expect("write spark.rb");
    std::fs::create_dir_all(home.join(".config/rcss3d")).expect("dir");
    std::fs::write(
        home.join(".config/rcss3d/server.ron"),
        "(vision: (sense_ball_pos: true))",
    )
    .expect("write the user file");
    let env_file = dir.0.join("env.ron");
    std::fs::write(&env_file, "(vision: (sense_my_pos: true, interval: 1))").expect("write");
    let server = Started::start(
        &bin,
        &work,
        &home,
        &[(rcss3d::config::CONFIG_ENV, &env_file)],
        &[
            "--script-path",
            "rcssserver3d.rb",
            "--init-script-prefix",
            "/usr/local/share/simspark",
            "--rvdraw-host",
            "localhost",
            "--no-such-flag",
            "word",
        ],
    );
    let (frames, after_syn) = block_on(async {
        let mut agent = TestAgent::connect(server.agent_addr()).await;
        agent.send("(scene rsg/agent/nao/nao_hetero.rsg 0)").await;
        let mut frames = vec![agent.recv().await];
        agent.send("(init (unum 1)(teamname Alpha))").await;
        // Never a (syn): after its grace period the agent holds the
        // server up. In real-time mode 50 frames a second would come.
        while let Some(f) = agent.try_recv(Duration::from_secs(1)).await {
            frames.push(f);
            assert!(frames.len() < 30, "frames keep coming without (syn)");
        }
        agent.send("(syn)").await;
        let after_syn = agent.try_recv(Duration::from_secs(5)).await;
        (frames, after_syn)
    });
    let logs = server.logs();
    assert!(after_syn.is_some(), "no frame after (syn):\n{logs}");
    let seen = frames
        .iter()
        .rev()
        .find(|f| f.contains("(See "))
        .expect("a See");
    assert!(seen.contains("(ballpos "), "{seen}");
    assert!(seen.contains("(mypos "), "{seen}");
    for line in [
        "configuration read from ~/.simspark/spark.rb: $agentSyncMode = true -> sync_mode = true",
        "configuration read from ~/.config/rcss3d/server.ron: vision.sense_ball_pos = true",
        "($RCSS3D_CONFIG): vision.sense_my_pos = true, vision.interval = 1",
        "arguments without effect in rcss3d, ignored: --script-path rcssserver3d.rb \
         --init-script-prefix /usr/local/share/simspark --rvdraw-host localhost --no-such-flag \
         word",
        "sync=true",
        "rcssserver3d listening",
    ] {
        assert!(logs.contains(line), "the log lacks {line:?}:\n{logs}");
    }
}

/// The embedded model and scene lists are the files of `models/` and
/// `scenes/`, text for text.
#[test]
fn the_built_in_files_are_those_of_the_repository() {
    use rcss3d::sim::assets::{MODEL_FILES, SCENE_FILES};
    use rcss3d::sim::scene::SceneLibrary;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (dir, list) in [("models", MODEL_FILES), ("scenes", SCENE_FILES)] {
        let on_disk = SceneLibrary::read_dir(&root.join(dir)).expect("read the directory");
        let built_in: Vec<(String, String)> = list
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        let names = |v: &[(String, String)]| v.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(&built_in),
            names(&on_disk),
            "crates/core/src/sim/assets.rs lists other files than {dir}/"
        );
        assert!(built_in == on_disk, "{dir}/: a built-in text differs");
    }
}

/// `cargo install --path .` installs the program under its three names:
/// the package's binary targets.
#[test]
fn the_package_installs_three_names() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--offline",
            "--format-version",
            "1",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let package = meta["packages"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "rcss3d"))
        .expect("the rcss3d package");
    let mut bins: Vec<&str> = package["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .filter(|t| {
            t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "bin"))
        })
        .filter_map(|t| t["name"].as_str())
        .collect();
    bins.sort_unstable();
    assert_eq!(bins, ["rcss3d", "rcssserver3d", "simspark"]);
}

/// `cargo install --path . --root DIR` installs the three names, and the
/// installed `rcssserver3d` runs from an empty directory. It builds the
/// binaries once more (the dependencies come from this build's target
/// directory; the first time, features differ and about 3 minutes of CPU
/// go into rebuilding some), so it runs under CI (`CI` set) or with
/// `RCSS3D_TEST_INSTALL=1`, and otherwise says that it did not run.
#[test]
fn cargo_install_puts_the_three_names_in_root_bin() {
    let wanted =
        |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    if !(wanted("CI") || wanted("RCSS3D_TEST_INSTALL")) {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED cargo_install_puts_the_three_names_in_root_bin: did not run \
             (set RCSS3D_TEST_INSTALL=1, or CI, to run the install)"
        );
        return;
    }
    let dir = Scratch::new("install");
    let target = Path::new(BIN)
        .parent()
        .and_then(Path::parent)
        .expect("the target directory");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["install", "--path", env!("CARGO_MANIFEST_DIR")])
        .arg("--root")
        .arg(&dir.0)
        .args(["--debug", "--offline", "--locked", "--quiet"])
        .arg("--target-dir")
        .arg(target)
        .stdin(Stdio::null())
        .output()
        .expect("cargo install runs");
    assert!(
        out.status.success(),
        "cargo install: {}\n{}",
        out.status,
        text(&out.stderr)
    );
    let mut installed: Vec<String> = std::fs::read_dir(dir.0.join("bin"))
        .expect("root/bin")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    installed.sort();
    assert_eq!(installed, ["rcss3d", "rcssserver3d", "simspark"]);
    let work = new_dir(dir.0.join("work"));
    let out = Command::new(dir.0.join("bin/rcssserver3d"))
        .arg("--help")
        .current_dir(&work)
        .output()
        .expect("the installed binary runs");
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("--server-port"));
}

/// The log player names the log's frame period in seconds, rounded to the
/// millisecond (a float's full digits are noise to a reader).
#[test]
fn replay_logs_the_frame_period_rounded() {
    let dir = Scratch::new("replay-period");
    let log = dir.0.join("match.log");
    let log_text = log.to_str().expect("utf-8 path");
    let mut server = ServerProcess::start(|c| {
        c.args(["--log", log_text]).stderr(Stdio::null());
    });
    // The real-time server writes a frame each 0.2 s of game time: wait
    // for a few of them.
    assert!(
        DirWatch::of_file(&log).until(Duration::from_secs(20), || {
            read_text(&log).lines().count() >= 4
        }),
        "no log frames"
    );
    server.terminate(Duration::from_secs(5));
    let mut player = Command::new(BIN)
        .args(["replay", log_text, "--bind", "127.0.0.1", "--web-port", "0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("replay starts");
    let mut stderr = player.stderr.take().expect("stderr");
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while !seen.contains("match log read") {
        let n = stderr.read(&mut buf).expect("read stderr");
        assert!(n > 0, "replay ended without reading the log: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let _ = player.kill();
    let _ = player.wait();
    let line = seen
        .lines()
        .find(|l| l.contains("match log read"))
        .expect("the line");
    assert!(line.contains("period_secs=0.200"), "{line}");
}
