//! Crafted match logs against `rcss3d check-log` and `rcss3d replay`, as
//! separate processes: a gzip log of several members is named as one
//! RoboViz cannot replay whole; an endless line, a line of too many nodes,
//! a file of newlines and numbers beyond `f32` are refused with one line
//! naming the line; a long valid log is read as a stream; and the peak
//! memory of each run (an upper bound from `ru_maxrss` of the reaped
//! child, or `VmHWM` of the serving player) stays within 512 MB.

mod util;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use flate2::write::GzEncoder;
use flate2::Compression;
use rcss3d::rules::PlayMode;
use util::process::{read_text, DirWatch, BIN};
use util::Scratch;

/// The peak memory a tool may reach on any file.
const TOOL_PEAK_KB: u64 = 512 * 1024;

/// A minimal full state RoboViz accepts: the predicates it needs and a
/// ball.
fn full_state(time: f32) -> String {
    let modes: Vec<&str> = PlayMode::ALL.iter().map(|m| m.name()).collect();
    format!(
        "((FieldLength 30)(FieldWidth 20)(FieldHeight 40)(GoalWidth 2.1)(GoalDepth 0.6)\
         (GoalHeight 0.8)(BorderSize 0)(FreeKickDistance 2)(WaitBeforeKickOff 2)\
         (AgentRadius 0.4)(BallRadius 0.042)(BallMass 0.026)(RuleGoalPauseTime 3)\
         (RuleKickInPauseTime 1)(RuleHalfTime 300)(play_modes {})(time {time})(half 1)\
         (score_left 0)(score_right 0)(play_mode 0))(RSG 0 1)((nd TRF (SLT 1 0 0 0 0 1 0 0 0 0 \
         1 0 0 0 0.042 1)(nd StaticMesh (setVisible 1)(load models/soccerball.obj)\
         (sSc 0.042 0.042 0.042))))",
        modes.join(" ")
    )
}

/// A delta moving the ball to `x`.
fn delta(time: f32, x: &str) -> String {
    format!(
        "((time {time}))(RDS 0 1)((nd (SLT 1 0 0 0 0 1 0 0 0 0 1 0 {x} 0 0.042 1)(nd StaticMesh)))"
    )
}

/// A run of a tool: how it ended, what it printed, its peak memory.
struct Run {
    success: bool,
    stdout: String,
    stderr: String,
    peak_kb: u64,
}

/// Runs `rcss3d ARGS` to its end and reads its peak resident memory from
/// the kernel's accounting of the reaped child (`wait4`'s `ru_maxrss`).
/// That figure is an upper bound: the kernel also counts the memory of
/// this test process at the spawn (the child starts as a copy of it), so
/// a tool within it is within the limit.
fn run_measured(args: &[&std::ffi::OsStr], dir: &Path) -> Run {
    let out = dir.join("tool.stdout");
    let err = dir.join("tool.stderr");
    // Reaped by `wait4` below, which std does not know of.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("stdout file"))
        .stderr(std::fs::File::create(&err).expect("stderr file"))
        .spawn()
        .expect("rcss3d runs");
    let pid = i32::try_from(child.id()).expect("pid");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 reaps our own child and writes the two out values.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    Run {
        success: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        stdout: String::from_utf8_lossy(&std::fs::read(&out).unwrap_or_default()).into_owned(),
        stderr: String::from_utf8_lossy(&std::fs::read(&err).unwrap_or_default()).into_owned(),
        peak_kb: u64::try_from(usage.ru_maxrss).unwrap_or(0),
    }
}

fn check_log(path: &Path, dir: &Path) -> Run {
    run_measured(&["check-log".as_ref(), path.as_os_str()], dir)
}

/// `rcss3d replay` on a log it refuses: it ends with an error.
fn replay_refused(path: &Path, dir: &Path) -> Run {
    let run = run_measured(
        &[
            "replay".as_ref(),
            path.as_os_str(),
            "--web-port".as_ref(),
            "0".as_ref(),
            "--bind".as_ref(),
            "127.0.0.1".as_ref(),
        ],
        dir,
    );
    assert!(!run.success, "replay accepted it: {}", run.stderr);
    run
}

fn gzip(chunks: impl IntoIterator<Item = Vec<u8>>, path: &Path) {
    let file = std::fs::File::create(path).expect("create");
    let mut gz = GzEncoder::new(std::io::BufWriter::new(file), Compression::fast());
    for c in chunks {
        gz.write_all(&c).expect("write");
    }
    gz.finish().expect("finish").flush().expect("flush");
}

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::write(path, text).expect("write");
    path.to_owned()
}

#[test]
fn check_log_names_a_gzip_log_of_several_members_as_one_roboviz_reads_only_the_start_of() {
    let dir = Scratch::new("members");
    let lines = [full_state(0.0), delta(0.2, "1"), delta(0.4, "2")];
    let one = dir.0.join("one.log.gz");
    gzip(lines.iter().map(|l| format!("{l}\n").into_bytes()), &one);
    let run = check_log(&one, &dir.0);
    assert!(run.success, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("valid gzip match log: 3 lines"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("gzip members: 1\n"), "{}", run.stdout);

    // Each line its own member, as the server once wrote them.
    let mut bytes = Vec::new();
    for l in &lines {
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        gz.write_all(format!("{l}\n").as_bytes()).expect("write");
        bytes.extend(gz.finish().expect("finish"));
    }
    let three = dir.0.join("three.log.gz");
    std::fs::write(&three, bytes).expect("write");
    let run = check_log(&three, &dir.0);
    assert!(
        !run.success,
        "check-log passes a 3-member log: {}",
        run.stdout
    );
    assert!(run.stdout.contains("gzip members: 3\n"), "{}", run.stdout);
    assert!(
        run.stdout.contains("problem for RoboViz: 3 gzip members"),
        "{}",
        run.stdout
    );
}

#[test]
fn numbers_beyond_f32_are_invalid() {
    let dir = Scratch::new("f32");
    for x in ["1e39", "1e308", "-3.5e38"] {
        let log = write(
            &dir.0.join("big.log"),
            &format!("{}\n{}\n", full_state(0.0), delta(0.2, x)),
        );
        let run = check_log(&log, &dir.0);
        assert!(!run.success, "{x} accepted: {}", run.stdout);
        assert!(
            run.stderr.contains("line 2") && run.stderr.contains("finite"),
            "{x}: {}",
            run.stderr
        );
    }
    // The largest f32 is still a number.
    let log = write(
        &dir.0.join("max.log"),
        &format!("{}\n{}\n", full_state(0.0), delta(0.2, "3.4e38")),
    );
    let run = check_log(&log, &dir.0);
    assert!(run.success, "{}", run.stderr);
}

#[test]
fn a_50_mb_line_is_refused_by_check_log_and_replay_with_its_number_in_bounded_memory() {
    let dir = Scratch::new("longline");
    let log = dir.0.join("long.log");
    let mut text = format!("{}\n((time 0.2))(RDS 0 1)(", full_state(0.0)).into_bytes();
    text.extend("(nd)".repeat(50 << 18).into_bytes());
    text.extend(b")\n");
    std::fs::write(&log, &text).expect("write");
    drop(text);
    let run = check_log(&log, &dir.0);
    assert!(!run.success, "{}", run.stdout);
    let err = run.stderr.trim_end();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("long.log") && err.contains("line 2") && err.contains("longer than"),
        "{err}"
    );
    assert!(
        run.peak_kb <= TOOL_PEAK_KB,
        "check-log peak {} kB",
        run.peak_kb
    );
    let replay = replay_refused(&log, &dir.0);
    assert!(
        replay.stderr.contains("long.log") && replay.stderr.contains("line 2"),
        "{}",
        replay.stderr
    );
    assert!(
        replay.peak_kb <= TOOL_PEAK_KB,
        "replay peak {} kB",
        replay.peak_kb
    );
    println!(
        "50 MB line: check-log peak {} kB, replay peak {} kB: {err}",
        run.peak_kb, replay.peak_kb
    );

    // Under the byte limit, over the node limit: 750,000 `(nd)`.
    let mut text = format!("{}\n((time 0.2))(RDS 0 1)(", full_state(0.0)).into_bytes();
    text.extend("(nd)".repeat(750_000).into_bytes());
    text.extend(b")\n");
    std::fs::write(&log, &text).expect("write");
    let run = check_log(&log, &dir.0);
    assert!(!run.success, "{}", run.stdout);
    assert!(
        run.stderr.contains("line 2") && run.stderr.contains("more than 200000 elements"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_gzip_of_newlines_is_refused_at_its_first_line() {
    let dir = Scratch::new("newlines");
    let log = dir.0.join("newlines.log.gz");
    // 1 GiB of newlines, about 1 MB compressed.
    gzip((0..1024).map(|_| vec![b'\n'; 1 << 20]), &log);
    let t0 = Instant::now();
    let run = check_log(&log, &dir.0);
    assert!(!run.success, "{}", run.stdout);
    assert!(run.stderr.contains("line 1: blank line"), "{}", run.stderr);
    assert!(
        run.peak_kb <= TOOL_PEAK_KB,
        "check-log peak {} kB",
        run.peak_kb
    );
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    println!("1 GiB of newlines: check-log peak {} kB", run.peak_kb);
}

/// The player's peak memory once it has read `log` and serves it, and
/// what it logged.
fn replay_serving_peak(log: &Path, dir: &Path) -> (u64, String) {
    let err = dir.join("replay.stderr");
    let mut child = Command::new(BIN)
        .args(["replay".as_ref(), log.as_os_str()])
        .args(["--web-port", "0", "--bind", "127.0.0.1"])
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).expect("stderr file"))
        .spawn()
        .expect("replay runs");
    let serving = DirWatch::of_file(&err).until(Duration::from_secs(300), || {
        read_text(&err).contains("web log player") || child.try_wait().expect("wait").is_some()
    });
    let text = read_text(&err);
    if let Some(status) = child.try_wait().expect("wait") {
        panic!("replay ended ({status}): {text}");
    }
    assert!(serving, "replay never serves: {text}");
    let peak = rcss3d::procfs::status_kib(child.id(), "VmHWM").expect("VmHWM");
    let _ = child.kill();
    let _ = child.wait();
    (peak, text)
}

#[test]
fn a_long_valid_log_streams_through_check_log_and_the_player_holds_a_bounded_part() {
    let dir = Scratch::new("long");
    let log = dir.0.join("long.log.gz");
    // 1 GiB of valid deltas in an optimised build; an unoptimised one
    // takes minutes for it, so an eighth there (the memory a stream needs
    // does not depend on the length).
    let total: usize = if cfg!(debug_assertions) {
        128 << 20
    } else {
        1 << 30
    };
    let mut block = String::new();
    while block.len() < 1 << 20 {
        block.push_str(&delta(0.2, "1.5"));
        block.push('\n');
    }
    let first = format!("{}\n", full_state(0.0)).into_bytes();
    let blocks = total / block.len();
    gzip(
        std::iter::once(first).chain((0..blocks).map(|_| block.clone().into_bytes())),
        &log,
    );
    let run = check_log(&log, &dir.0);
    assert!(run.success, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("gzip members: 1\n"), "{}", run.stdout);
    assert!(
        run.peak_kb <= TOOL_PEAK_KB,
        "check-log peak {} kB",
        run.peak_kb
    );
    let (peak, logged) = replay_serving_peak(&log, &dir.0);
    assert!(peak <= TOOL_PEAK_KB, "replay peak {peak} kB");
    if !cfg!(debug_assertions) {
        assert!(logged.contains("longer than the player holds"), "{logged}");
    }
    println!(
        "{} MiB of deltas: check-log peak {} kB, replay peak {peak} kB",
        total >> 20,
        run.peak_kb
    );
}
