//! What hostile clients can do to the server's logs, against the server
//! binary: agents joining and leaving in a loop neither make the match log
//! grow much faster than an honest match's nor flood stderr; a killed
//! server's gzip log reads up to its last complete line; and no text a
//! client sends can start a line or put a control character in stderr.

mod util;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rcss3d::net::client::frame;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use util::honest::Honest;
use util::process::{DirWatch, ServerProcess};
use util::{Scratch, TestAgent};

/// The test that measures rates runs alone (`write`), so they are not
/// shared with another's server; the others share the machine (`read`).
static RATES_ALONE: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// The server binary writing `log`, its stderr (the `info` log) in a
/// file; in real time (as in a match) unless `extra` says `--sync`.
struct Server {
    process: ServerProcess,
    log: PathBuf,
    stderr: PathBuf,
    dir: Scratch,
}

impl Server {
    fn spawn(tag: &str, log_name: &str, extra: &[&str]) -> Server {
        let dir = Scratch::new(&format!("logsafety-{tag}"));
        let log = dir.0.join(log_name);
        let stderr = dir.0.join("stderr.txt");
        let err = std::fs::File::create(&stderr).expect("stderr file");
        let process = ServerProcess::start(|c| {
            c.args(["--seed", "3", "--log"])
                .arg(&log)
                .args(extra)
                .env("RUST_LOG", "info")
                .env("NO_COLOR", "1")
                .stderr(err);
        });
        Server {
            process,
            log,
            stderr,
            dir,
        }
    }

    fn log_bytes(&self) -> u64 {
        std::fs::metadata(&self.log).map(|m| m.len()).unwrap_or(0)
    }

    fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&std::fs::read(&self.stderr).unwrap_or_default()).into_owned()
    }
}

/// What a churning client does in each round.
#[derive(Clone, Copy, Debug)]
enum Churn {
    /// A robot, an `init` for a third team (refused), then it stays for
    /// `linger` before leaving.
    ThirdTeam { linger: Duration },
    /// A robot that joins the second team for real and leaves at once.
    JoinAndLeave,
    /// A robot and nothing else; it leaves at its first frame.
    RobotOnly,
}

/// Runs one churning client in a loop until `until`; returns its rounds.
async fn churn(addr: std::net::SocketAddr, what: Churn, until: Instant) -> usize {
    let mut rounds = 0;
    while Instant::now() < until {
        let mut a = TestAgent::connect(addr).await;
        rounds += 1;
        a.send("(scene rsg/agent/nao/nao_hetero.rsg 0)").await;
        if a.try_recv(Duration::from_secs(2)).await.is_none() {
            continue;
        }
        match what {
            Churn::RobotOnly => {}
            Churn::ThirdTeam { linger } => {
                a.send("(init (unum 0)(teamname Intruders))").await;
                let end = Instant::now() + linger;
                while Instant::now() < end {
                    if a.try_recv(end - Instant::now()).await.is_none() {
                        break;
                    }
                }
            }
            Churn::JoinAndLeave => {
                a.send("(init (unum 0)(teamname Second))").await;
                // Until the frame that names its number: it is in the team.
                for _ in 0..10 {
                    match a.try_recv(Duration::from_secs(2)).await {
                        Some(f) if f.contains("(GS (unum ") => break,
                        Some(_) => {}
                        None => break,
                    }
                }
            }
        }
    }
    rounds
}

/// Log bytes written per second while `honest` plays `frames` frames (50
/// a second), the honest match going on.
async fn log_rate(server: &Server, honest: &Honest, frames: usize) -> f64 {
    let (b0, t0) = (server.log_bytes(), Instant::now());
    honest.played(frames).await;
    (server.log_bytes() - b0) as f64 / t0.elapsed().as_secs_f64()
}

/// How long the churn lasts: as long as in the measurement the limits
/// were set for, since the thinning lets a burst of each kind of line
/// through first.
const CHURN: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_and_leave_churn_neither_floods_the_match_log_nor_stderr() {
    let _serial = RATES_ALONE.write().await;
    let server = Server::spawn("churn", "match.log", &[]);
    let addr = server.process.agent_addr();
    // Two honest agents, one per team: a third team's `init` is refused.
    let honest = Honest::start(addr, "Honest").await;
    let second = Honest::start(addr, "Second").await;
    // Past the joins' full states (a second of match), three whole
    // periodic cycles of full states (3 s each): the honest match's own
    // rate.
    honest.played(50).await;
    let honest_rate = log_rate(&server, &honest, 9 * 50).await;
    let stderr_before = server.stderr_text().lines().count();
    // 40 clients: 24 try a third team (half leave after the refusal, half
    // stay a second), 8 join the second team and leave, 8 only get a
    // robot and leave.
    let until = Instant::now() + CHURN;
    let t0 = Instant::now();
    let b0 = server.log_bytes();
    let mut tasks = Vec::new();
    for i in 0..40 {
        let what = match i % 5 {
            0 | 1 => Churn::ThirdTeam {
                linger: Duration::ZERO,
            },
            2 => Churn::ThirdTeam {
                linger: Duration::from_secs(1),
            },
            3 => Churn::JoinAndLeave,
            _ => Churn::RobotOnly,
        };
        tasks.push(tokio::spawn(churn(addr, what, until)));
    }
    let mut rounds = 0;
    for t in tasks {
        rounds += t.await.expect("churning client");
    }
    let secs = t0.elapsed().as_secs_f64();
    let churn_rate = (server.log_bytes() - b0) as f64 / secs;
    let stderr_after = server.stderr_text().lines().count();
    let stderr_rate = (stderr_after - stderr_before) as f64 / secs;
    let frames = honest.finish().await.frames + second.finish().await.frames;
    let text = std::fs::read_to_string(&server.log).expect("log");
    let full_states = text.matches("(RSG 0 1)").count();
    let lines = text.lines().count();
    println!(
        "churn: {rounds} client rounds in {secs:.1} s; match log {honest_rate:.0} B/s honest, \
         {churn_rate:.0} B/s under churn ({:.2}x); {lines} lines, {full_states} full states; \
         stderr {stderr_rate:.1} lines/s under churn; honest agents {frames} frames",
        churn_rate / honest_rate
    );
    let stderr = server.stderr_text();
    // Lines of the churn by message, most first.
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for line in stderr
        .lines()
        .skip(stderr_before)
        .take(stderr_after - stderr_before)
    {
        let message = line.split(": ").nth(2).unwrap_or(line);
        let message = message.split(" conn=").next().unwrap_or(message);
        let message = message.split(" reason=").next().unwrap_or(message);
        *kinds.entry(message.chars().take(60).collect()).or_default() += 1;
    }
    let mut kinds: Vec<_> = kinds.into_iter().collect();
    kinds.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    for (kind, n) in kinds {
        println!("  {n:4} {kind}");
    }
    assert!(rounds > 200, "only {rounds} churn rounds");
    assert!(
        churn_rate <= 3.0 * honest_rate,
        "the match log grew {churn_rate:.0} B/s under churn, {honest_rate:.0} B/s honest"
    );
    assert!(
        stderr_rate <= 10.0,
        "{stderr_rate:.1} stderr lines/s under churn:\n{}",
        stderr.lines().rev().take(40).collect::<Vec<_>>().join("\n")
    );
    // Still a valid log for RoboViz.
    rcss3d::monitor::client::check_log(&text).unwrap_or_else(|e| panic!("log invalid: {e}"));
}

/// Lines of `text` up to its last complete one.
fn complete_lines(text: &[u8]) -> Vec<String> {
    let end = text.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    String::from_utf8_lossy(&text[..end])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// What `gzip -dc` makes of `path`, if gzip is installed; what flate2's
/// multi-member decoder reads otherwise (up to where the data ends).
fn gunzip(path: &Path) -> (Vec<u8>, &'static str) {
    if let Ok(out) = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(path)
        .output()
    {
        return (out.stdout, "gzip -dc");
    }
    let mut text = Vec::new();
    let mut d = flate2::read::MultiGzDecoder::new(std::fs::File::open(path).expect("log"));
    let mut buf = [0u8; 65536];
    loop {
        match d.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => text.extend_from_slice(&buf[..n]),
        }
    }
    (text, "MultiGzDecoder")
}

/// What a reader that stops at the end of the first gzip member (flate2's
/// `GzDecoder`, like RoboViz's commons-compress default) decompresses of
/// `path`, up to where the data ends or breaks off.
fn first_member(path: &Path) -> Vec<u8> {
    let mut text = Vec::new();
    let mut d = flate2::read::GzDecoder::new(std::fs::File::open(path).expect("log"));
    let mut buf = [0u8; 65536];
    loop {
        match d.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => text.extend_from_slice(&buf[..n]),
        }
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gzip_log_is_one_member_a_first_member_reader_reads_whole() {
    let _serial = RATES_ALONE.read().await;
    // In sync mode: the log's gzip properties do not depend on the pace,
    // and the agents' answers run the match faster than real time.
    let mut server = Server::spawn("gzone", "match.log.gz", &["--sync"]);
    let left = Honest::start(server.process.agent_addr(), "Left").await;
    let right = Honest::start(server.process.agent_addr(), "Right").await;
    // Several seconds of match: several flushes.
    assert!(
        DirWatch::of_file(&server.log)
            .until_async(Duration::from_secs(60), || server.log_bytes() >= 20_000)
            .await,
        "the log stays small"
    );
    let _ = left.finish().await;
    let _ = right.finish().await;
    assert!(
        server
            .process
            .terminate(Duration::from_secs(20))
            .is_some_and(|s| s.success()),
        "the server ends on SIGTERM"
    );
    let raw = std::fs::read(&server.log).expect("log");
    // A first-member reader reads to the end of the file and finds every
    // line, the trailer included: nothing follows the one member.
    let mut d = flate2::read::GzDecoder::new(&raw[..]);
    let mut text = String::new();
    d.read_to_string(&mut text)
        .expect("one complete gzip member");
    let mut reader = rcss3d::monitor::log::LogReader::open(&server.log).expect("open");
    let all = reader.read_text().expect("reads");
    assert_eq!(text, all, "the first member holds the whole log");
    assert_eq!(reader.gzip_members(), 1);
    let check =
        rcss3d::monitor::client::check_log(&text).unwrap_or_else(|e| panic!("log invalid: {e}"));
    assert!(check.lines >= 20, "{} lines", check.lines);
    let out = std::process::Command::new(util::process::BIN)
        .arg("check-log")
        .arg(&server.log)
        .output()
        .expect("check-log runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("gzip members: 1\n"), "{stdout}");
    assert!(!stdout.contains("problem"), "{stdout}");
    println!(
        "gzip log of {} bytes, {} lines: one member, read whole by a first-member reader",
        raw.len(),
        check.lines
    );
    drop(server.dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_servers_gzip_log_reads_up_to_its_last_complete_line() {
    let _serial = RATES_ALONE.read().await;
    // In sync mode, as above: faster than real time.
    let mut server = Server::spawn("gzkill", "match.log.gz", &["--sync"]);
    let honest = Honest::start(server.process.agent_addr(), "Gz").await;
    // Past the first flushes: wait until the file holds a few seconds of
    // match (a flush comes at least every second of it).
    assert!(
        DirWatch::of_file(&server.log)
            .until_async(Duration::from_secs(30), || server.log_bytes() >= 8_000)
            .await,
        "the log stays empty"
    );
    server.process.child.kill().expect("SIGKILL");
    let _ = server.process.child.wait();
    let _ = honest.finish().await;

    // The shared reader: every complete line, and how the file ended.
    let mut reader = rcss3d::monitor::log::LogReader::open(&server.log).expect("open");
    let text = reader
        .read_text()
        .expect("the log reads to its last complete line");
    assert!(reader.is_gzip());
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    assert!(lines.len() >= 5, "{} lines", lines.len());
    rcss3d::monitor::client::check_log(&text).unwrap_or_else(|e| panic!("log invalid: {e}"));

    // `check-log` accepts it.
    let out = std::process::Command::new(util::process::BIN)
        .arg("check-log")
        .arg(&server.log)
        .output()
        .expect("check-log runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "check-log failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("valid gzip match log: {} lines", lines.len())),
        "{stdout}"
    );

    // The log player: one frame per line.
    let cfg = rcss3d::config::Config::default();
    let shapes =
        rcss3d::web::shapes::RobotShapes::load(&cfg.resolved_models_dir()).expect("models");
    let field = rcss3d::web::shapes::FieldView::from_config(&cfg);
    let replay =
        rcss3d::web::replay::load(&server.log, &shapes, field).expect("the log player reads it");
    assert_eq!(replay.frames.len(), lines.len());
    assert_eq!(replay.skipped, 0);

    // gzip itself reads the same lines.
    let (raw, how) = gunzip(&server.log);
    assert_eq!(complete_lines(&raw), lines, "{how} reads other lines");
    // So does a reader that stops at the end of the first gzip member
    // (RoboViz's): the file is one member, flushed as it goes.
    let first = first_member(&server.log);
    assert_eq!(complete_lines(&first), lines, "a first-member reader");
    println!(
        "killed server's gzip log: {} bytes, {} complete lines, read alike by LogReader, \
         check-log, the log player and {how} (tail: {:?})",
        server.log_bytes(),
        lines.len(),
        reader.tail()
    );
    drop(server.dir);
}

/// Waits until the server's stderr holds `needle` (at most 20 s), failing
/// the test with the stderr otherwise.
async fn stderr_shows(server: &Server, needle: &str) {
    if !DirWatch::of_file(&server.stderr)
        .until_async(Duration::from_secs(20), || {
            server.stderr_text().contains(needle)
        })
        .await
    {
        panic!("no `{needle}` in stderr:\n{}", server.stderr_text());
    }
}

/// A line break, an ANSI colour, a terminal title (OSC ... BEL), a
/// backspace, a DEL, a C1 control and a Unicode line separator, then a
/// forged line. (No NUL: a message ends at one, as in the reference.)
fn forged(tag: &str) -> String {
    format!("x\nERROR forged {tag}\r\n\u{1b}[31mred\u{1b}]0;title\u{7}\u{8}\u{7f}\u{85}\u{2028}ERROR forged {tag} again")
}

/// `s` as a quoted S-expression atom.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_text_cannot_forge_log_lines_or_send_control_characters() {
    let _serial = RATES_ALONE.read().await;
    let mut server = Server::spawn("inject", "match.log", &[]);
    let addr = server.process.agent_addr();
    // Two teams, so an agent with a strange team name is refused for its
    // name, not taken as a new team.
    let left = Honest::start(addr, "Left").await;
    let right = Honest::start(addr, "Right").await;

    // A scene path: refused, quoted in the warning.
    let mut a = TestAgent::connect(addr).await;
    a.send(&format!("(scene {})", quoted(&forged("scene"))))
        .await;
    stderr_shows(&server, "scene refused").await;

    // An effector name, a team name and a say message from an agent with
    // a robot and no team.
    let mut b = TestAgent::connect(addr).await;
    b.create(0).await;
    b.send(&format!("({} 1)", quoted(&forged("effector"))))
        .await;
    b.send(&format!(
        "(init (unum 0)(teamname {}))",
        quoted(&forged("team"))
    ))
    .await;
    b.send(&format!("(say {})", quoted(&forged("say")))).await;
    stderr_shows(&server, "init failed").await;

    // A monitor command name and arguments. Monitor atoms end at
    // whitespace (no quoted atoms there), so a line break cannot get into
    // one; every other control character can.
    let mut m = TcpStream::connect(("127.0.0.1", server.process.monitor_port))
        .await
        .expect("monitor");
    let controls = "\u{1b}[31mred\u{1b}]0;title\u{7}\u{8}\u{7f}\u{85}\u{2028}";
    for cmd in [
        format!("(x{controls}monitorcommand 1)"),
        format!("(kickOff x{controls}monitorargument)"),
        format!("(playMode x\nERROR forged play mode {controls}playmode)"),
    ] {
        m.write_all(&frame(cmd.as_bytes())).await.expect("send");
    }
    stderr_shows(&server, "playMode").await;

    drop((a, b, m));
    let _ = left.finish().await;
    let _ = right.finish().await;
    let _ = server.process.terminate(Duration::from_secs(10));
    let stderr = std::fs::read(&server.stderr).expect("stderr");
    let text = String::from_utf8_lossy(&stderr);
    // Every kind of text was logged, escaped, on its own line.
    for tag in ["scene", "effector", "team"] {
        assert!(
            text.contains(&format!("x\\nERROR forged {tag}\\r\\n\\u{{1b}}[31mred")),
            "{tag} not logged escaped:\n{text}"
        );
    }
    for tag in ["monitorcommand", "monitorargument"] {
        assert!(
            text.contains(&format!(
                "x\\u{{1b}}[31mred\\u{{1b}}]0;title\\u{{7}}\\u{{8}}\\u{{7f}}\\u{{85}}\\u{{2028}}{tag}"
            )),
            "{tag} not logged escaped:\n{text}"
        );
    }
    for line in text.lines() {
        assert!(
            !line.trim_start().starts_with("ERROR forged"),
            "forged line in stderr: {line:?}"
        );
        assert!(
            !line.contains("forged") || line.contains("WARN") || line.contains("INFO"),
            "a line quoting client text without a level: {line:?}"
        );
    }
    let controls: Vec<char> = text
        .chars()
        .filter(|c| (c.is_control() && *c != '\n') || matches!(c, '\u{2028}' | '\u{2029}'))
        .collect();
    assert!(
        controls.is_empty(),
        "control characters in stderr: {controls:?}"
    );
    // The match log holds no client text either: one message per line.
    let log = std::fs::read_to_string(&server.log).expect("log");
    assert!(!log.contains("forged"));
    rcss3d::monitor::client::check_log(&log).unwrap_or_else(|e| panic!("log invalid: {e}"));
}
