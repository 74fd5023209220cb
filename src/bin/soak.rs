//! `soak`: a bounded, loopback-only endurance run of the server with
//! misbehaving clients.
//!
//! It starts a server (the `rcss3d` binary given by `--server-bin`, or
//! in-process through `rcss3d::app::run` on its own runtime), then
//! for `--minutes` (default 30):
//!
//! * 22 honest agents (11 per team) play in real-time mode: `scene`,
//!   `init`, `beam`, then joint commands every cycle;
//! * a chaos client keeps connecting and disconnecting agents, sends
//!   malformed frames, huge length prefixes, half frames, floods of `say`,
//!   an agent that never reads, and near-limit frames;
//! * two monitors watch; the first kicks off and asks for full states, the
//!   second stops reading for a minute (a third of the run when shorter)
//!   and then reads again.
//!
//! At the end it stops the server (SIGTERM for the binary) and reports
//! cycles held at 50 Hz, late cycles, RSS at start (after warm-up) and end,
//! panics, the honest agents' longest frame gap, and whether the match log
//! (`--log`, default a temporary file) is complete: every line has
//! balanced parentheses, the first line is a full state, the file ends
//! with a whole line. The last lines of the output are `RESULT key value`
//! pairs for scripts (tests/soak.rs reads them). The exit code is 0 when
//! every check passes, 1 otherwise.
//!
//! Everything binds and connects to 127.0.0.1 only.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

const NAO: &str = "rsg/agent/nao/nao_hetero.rsg";
/// One simulation step (50 Hz).
const STEP: f64 = 0.02;
/// An honest agent frame arriving more than this after the previous one
/// counts as a late cycle (1.5 steps).
const LATE_AFTER: Duration = Duration::from_millis(30);

/// Endurance run of the server with misbehaving clients (loopback only).
#[derive(Parser, Debug)]
#[command(about)]
struct Cli {
    /// Length of the run in minutes (fractions allowed).
    #[arg(long, default_value_t = 30.0)]
    minutes: f64,
    /// Run this server binary (e.g. target/release/rcss3d) instead of the
    /// server in-process.
    #[arg(long, value_name = "PATH")]
    server_bin: Option<PathBuf>,
    /// Match log path (default: a fresh file in the temporary directory,
    /// removed after a passing run).
    #[arg(long, value_name = "PATH")]
    log: Option<PathBuf>,
    /// Honest agents (at most 22: 11 per team).
    #[arg(long, default_value_t = 22)]
    agents: usize,
    /// Seed of the chaos client and of the server.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Concurrent chaos connections (0: no chaos client, for a baseline).
    #[arg(long, default_value_t = 6)]
    chaos: usize,
}

// ---------------------------------------------------------------------------
// The server under test

enum Server {
    Child {
        child: tokio::process::Child,
        pid: u32,
        stderr: Arc<OutputStats>,
    },
    InProcess {
        stop: Option<tokio::sync::oneshot::Sender<()>>,
        thread: Option<std::thread::JoinHandle<Result<u64, String>>>,
    },
}

#[derive(Default)]
struct OutputStats {
    lines: AtomicU64,
    panics: AtomicU64,
    warnings: AtomicU64,
    tail: Mutex<Vec<String>>,
    panic_lines: Mutex<Vec<String>>,
}

/// Panics anywhere in this process (in-process mode), counted by a hook.
static PANICS: AtomicU64 = AtomicU64::new(0);

fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

impl Server {
    async fn start(cli: &Cli, log: &Path) -> Result<(Server, SocketAddr, SocketAddr)> {
        match &cli.server_bin {
            Some(bin) => {
                let (ap, mp) = (free_port()?, free_port()?);
                let mut child = tokio::process::Command::new(bin)
                    .args(["--bind", "127.0.0.1", "--agent-port", &ap.to_string()])
                    .args([
                        "--monitor-port",
                        &mp.to_string(),
                        "--seed",
                        &cli.seed.to_string(),
                    ])
                    .arg("--log")
                    .arg(log)
                    .env("NO_COLOR", "1")
                    .env(
                        "RUST_LOG",
                        std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()),
                    )
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true)
                    .spawn()
                    .with_context(|| format!("cannot start {}", bin.display()))?;
                let pid = child.id().context("server pid")?;
                let stderr = Arc::new(OutputStats::default());
                // Logs and panics go to stderr, the results to stdout: read both.
                let out = child.stdout.take().context("server stdout")?;
                let err = child.stderr.take().context("server stderr")?;
                tokio::spawn(drain_output(out, stderr.clone()));
                tokio::spawn(drain_output(err, stderr.clone()));
                let agents: SocketAddr = ([127, 0, 0, 1], ap).into();
                let monitors: SocketAddr = ([127, 0, 0, 1], mp).into();
                Ok((Server::Child { child, pid, stderr }, agents, monitors))
            }
            None => {
                let prev = std::panic::take_hook();
                std::panic::set_hook(Box::new(move |info| {
                    PANICS.fetch_add(1, Ordering::Relaxed);
                    prev(info);
                }));
                let mut cfg = rcss3d::config::Config::embedded().context("embedded config")?;
                cfg.bind = [127, 0, 0, 1].into();
                cfg.sync_mode = false;
                cfg.real_time = true;
                cfg.seed = cli.seed;
                cfg.monitor.log = Some(log.to_path_buf());
                let agents = std::net::TcpListener::bind("127.0.0.1:0")?;
                let monitors = std::net::TcpListener::bind("127.0.0.1:0")?;
                let (a, m) = (agents.local_addr()?, monitors.local_addr()?);
                agents.set_nonblocking(true)?;
                monitors.set_nonblocking(true)?;
                let (tx, rx) = tokio::sync::oneshot::channel::<()>();
                // The server gets its own runtime and threads, as in the
                // real binary, so the clients do not share its workers.
                let thread =
                    std::thread::Builder::new()
                        .name("server".into())
                        .spawn(move || {
                            let rt = tokio::runtime::Builder::new_multi_thread()
                                .enable_all()
                                .build()
                                .map_err(|e| e.to_string())?;
                            rt.block_on(async move {
                                let agents = tokio::net::TcpListener::from_std(agents)
                                    .map_err(|e| e.to_string())?;
                                let monitors = tokio::net::TcpListener::from_std(monitors)
                                    .map_err(|e| e.to_string())?;
                                let shutdown = async move {
                                    let _ = rx.await;
                                };
                                rcss3d::app::run(Arc::new(cfg), agents, monitors, shutdown)
                                    .await
                                    .map(|s| s.cycles)
                                    .map_err(|e| e.to_string())
                            })
                        })?;
                Ok((
                    Server::InProcess {
                        stop: Some(tx),
                        thread: Some(thread),
                    },
                    a,
                    m,
                ))
            }
        }
    }

    /// Every thread's stack of the server process, through gdb when it is
    /// installed (binary mode only; the in-process server shares our pid).
    async fn stacks(&self) -> Option<String> {
        let Server::Child { pid, .. } = self else {
            return None;
        };
        let exe = format!("/proc/{pid}/exe");
        let out = tokio::time::timeout(
            Duration::from_secs(60),
            tokio::process::Command::new("gdb")
                .args([
                    "-batch",
                    "-p",
                    &pid.to_string(),
                    "-ex",
                    "thread apply all bt 20",
                    &exe,
                ])
                .stdin(Stdio::null())
                .output(),
        )
        .await
        .ok()?
        .ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        Some(
            text.lines()
                .filter(|l| l.starts_with('#') || l.starts_with("Thread"))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }

    /// Ends the server at once (runaway). In-process, that means this
    /// whole process.
    async fn kill(&mut self) {
        match self {
            Server::Child { child, .. } => {
                let _ = child.kill().await;
            }
            Server::InProcess { .. } => {
                println!("RESULT ok false");
                std::process::exit(2);
            }
        }
    }

    fn pid(&self) -> u32 {
        match self {
            Server::Child { pid, .. } => *pid,
            Server::InProcess { .. } => std::process::id(),
        }
    }

    fn panics(&self) -> u64 {
        match self {
            Server::Child { stderr, .. } => stderr.panics.load(Ordering::Relaxed),
            Server::InProcess { .. } => PANICS.load(Ordering::Relaxed),
        }
    }

    /// Whether the server has ended by itself (a crash, for this run).
    fn exited(&mut self) -> Option<String> {
        match self {
            Server::Child { child, .. } => match child.try_wait() {
                Ok(Some(status)) => Some(status.to_string()),
                _ => None,
            },
            Server::InProcess { thread, .. } => match thread {
                Some(t) if t.is_finished() => Some("server thread ended".into()),
                _ => None,
            },
        }
    }

    /// SIGTERM (or the shutdown future) and wait up to 10 s. Returns
    /// (clean exit, seconds it took, how it ended).
    async fn stop(&mut self) -> (bool, f64, String) {
        let t0 = Instant::now();
        match self {
            Server::Child { child, pid, .. } => {
                let _ = tokio::process::Command::new("kill")
                    .args(["-TERM", &pid.to_string()])
                    .status()
                    .await;
                match tokio::time::timeout(Duration::from_secs(10), child.wait()).await {
                    Ok(Ok(status)) => (
                        status.success(),
                        t0.elapsed().as_secs_f64(),
                        status.to_string(),
                    ),
                    Ok(Err(e)) => (
                        false,
                        t0.elapsed().as_secs_f64(),
                        format!("wait failed: {e}"),
                    ),
                    Err(_) => {
                        let _ = child.kill().await;
                        (
                            false,
                            t0.elapsed().as_secs_f64(),
                            "hung after SIGTERM; killed".into(),
                        )
                    }
                }
            }
            Server::InProcess { stop, thread } => {
                if let Some(tx) = stop.take() {
                    let _ = tx.send(());
                }
                let deadline = Instant::now() + Duration::from_secs(10);
                while thread.as_ref().is_some_and(|t| !t.is_finished()) && Instant::now() < deadline
                {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                match thread.take() {
                    Some(t) if t.is_finished() => match t.join() {
                        Ok(Ok(cycles)) => (
                            true,
                            t0.elapsed().as_secs_f64(),
                            format!("stopped after {cycles} cycles"),
                        ),
                        Ok(Err(e)) => (
                            false,
                            t0.elapsed().as_secs_f64(),
                            format!("server error: {e}"),
                        ),
                        Err(_) => (
                            false,
                            t0.elapsed().as_secs_f64(),
                            "server thread panicked".into(),
                        ),
                    },
                    Some(_) => (
                        false,
                        t0.elapsed().as_secs_f64(),
                        "hung after shutdown".into(),
                    ),
                    None => (false, 0.0, "already stopped".into()),
                }
            }
        }
    }
}

async fn drain_output(pipe: impl tokio::io::AsyncRead + Unpin, stats: Arc<OutputStats>) {
    let mut lines = BufReader::new(pipe).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        stats.lines.fetch_add(1, Ordering::Relaxed);
        if line.contains("panicked at") || line.contains("stack overflow") {
            stats.panics.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut p) = stats.panic_lines.lock() {
                p.push(line.clone());
            }
        }
        if line.contains(" WARN ") {
            stats.warnings.fetch_add(1, Ordering::Relaxed);
        }
        if let Ok(mut t) = stats.tail.lock() {
            if t.len() >= 20 {
                t.remove(0);
            }
            t.push(line);
        }
    }
}

/// Resident set size of a process, KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU seconds (user + system) a process has used so far.
fn cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may contain spaces).
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    // USER_HZ is 100 on every Linux this runs on.
    Some((utime + stime) / 100.0)
}

/// The 1-minute load average of the machine.
fn load_avg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn median(xs: &[u64]) -> u64 {
    let mut v = xs.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

// ---------------------------------------------------------------------------
// Wire helpers

fn frame(payload: &[u8]) -> Vec<u8> {
    let mut b = (payload.len() as u32).to_be_bytes().to_vec();
    b.extend_from_slice(payload);
    b
}

async fn send(s: &mut TcpStream, msg: &str) -> std::io::Result<()> {
    s.write_all(&frame(msg.as_bytes())).await
}

async fn recv(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).await?;
    let mut buf = vec![0u8; u32::from_be_bytes(len) as usize];
    s.read_exact(&mut buf).await?;
    Ok(buf)
}

async fn connect(addr: SocketAddr) -> std::io::Result<TcpStream> {
    let s = TcpStream::connect(addr).await?;
    s.set_nodelay(true)?;
    Ok(s)
}

/// `(time (now X))` of an agent frame.
fn agent_now(frame: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(frame).ok()?;
    let i = text.find("(now ")? + 5;
    let end = i + text[i..].find(')')?;
    text[i..end].parse().ok()
}

/// Parentheses balance: never negative, zero at the end.
fn balanced(text: &[u8]) -> bool {
    let mut depth: i64 = 0;
    for &b in text {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

// ---------------------------------------------------------------------------
// Honest agents

#[derive(Default)]
struct AgentStats {
    frames: AtomicU64,
    max_gap_us: AtomicU64,
    late: AtomicU64,
    /// Frames whose clock moved by more than one step (a frame this agent
    /// did not get).
    skipped: AtomicU64,
    connected: AtomicBool,
    /// When (seconds into the run) and why the connection ended.
    ended: Mutex<Option<(f64, String)>>,
    /// (seconds since the run started, server time) of every frame; kept
    /// for the first agent only, to measure the cycle rate.
    clock: Mutex<Vec<(f64, f64)>>,
}

async fn honest_agent(
    addr: SocketAddr,
    team: &'static str,
    unum: usize,
    stats: Arc<AgentStats>,
    run_start: Instant,
    measure_from: Arc<Mutex<Option<Instant>>>,
    keep_clock: bool,
) {
    let result: std::io::Result<()> = async {
        let mut s = connect(addr).await?;
        send(&mut s, &format!("(scene {NAO} {})", unum % 5)).await?;
        stats.connected.store(true, Ordering::Relaxed);
        let mut last: Option<Instant> = None;
        let mut last_now: Option<f64> = None;
        let mut n: u64 = 0;
        loop {
            let f = recv(&mut s).await?;
            let t = Instant::now();
            n += 1;
            let measuring = measure_from
                .lock()
                .ok()
                .and_then(|m| *m)
                .is_some_and(|m| t >= m);
            if let (Some(prev), true) = (last, measuring) {
                let gap = t - prev;
                stats
                    .max_gap_us
                    .fetch_max(gap.as_micros() as u64, Ordering::Relaxed);
                if gap > LATE_AFTER {
                    stats.late.fetch_add(1, Ordering::Relaxed);
                }
            }
            last = Some(t);
            stats.frames.fetch_add(1, Ordering::Relaxed);
            if let Some(now) = agent_now(&f) {
                if let (Some(p), true) = (last_now, measuring) {
                    if now - p > 1.5 * STEP {
                        stats.skipped.fetch_add(1, Ordering::Relaxed);
                    }
                }
                last_now = Some(now);
                if keep_clock {
                    if let Ok(mut c) = stats.clock.lock() {
                        c.push(((t - run_start).as_secs_f64(), now));
                    }
                }
            }
            let reply = match n {
                1 => format!("(init (unum {unum})(teamname {team}))(syn)"),
                3 => {
                    let x = if team == "SoakLeft" { -1.0 } else { 1.0 } * (1.0 + unum as f64);
                    format!("(beam {x:.1} {:.1} 0)(syn)", (unum as f64 - 6.0) * 1.2)
                }
                _ => {
                    // Slow head and arm swings: real motor traffic every cycle.
                    let phase = (n as f64 * 0.05 + unum as f64).sin();
                    format!(
                        "(he1 {:.2})(he2 {:.2})(lae1 {:.2})(rae1 {:.2})(syn)",
                        phase,
                        -phase * 0.5,
                        phase * 0.8,
                        -phase * 0.8
                    )
                }
            };
            send(&mut s, &reply).await?;
        }
    }
    .await;
    let why = match result {
        Ok(()) => "ended".to_string(),
        Err(e) => e.to_string(),
    };
    if let Ok(mut e) = stats.ended.lock() {
        *e = Some((run_start.elapsed().as_secs_f64(), why));
    }
}

// ---------------------------------------------------------------------------
// Chaos

const CHAOS_KINDS: [&str; 9] = [
    "connect_drop",
    "scene_drop",
    "malformed",
    "huge_prefix",
    "half_frame",
    "say_flood",
    "non_reader",
    "big_frame",
    "garbage_stream",
];

#[derive(Default)]
struct ChaosStats {
    done: [AtomicU64; 9],
    /// Connections the server closed on us (huge prefix, limits).
    closed_by_server: AtomicU64,
    /// Connections that could not even be made.
    connect_failed: AtomicU64,
}

const MALFORMED: [&[u8]; 14] = [
    b"(he1 1.0))(he2 (((",
    b"((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((syn",
    b")",
    b"(\"unterminated",
    b"(scene rsg/agent/nao/nao_hetero.rsg 9)",
    b"(scene /etc/passwd)",
    b"(init (unum 99)(teamname ../../x))",
    b"(beam nan inf -inf)",
    b"(he1 nan)(lle7 1e400)(rle3 -inf)",
    b"(say)(say (a b))(say \"\")",
    b"\x00\x00\x00\xff(syn)",
    b"\xff\xfe\xfd(syn\xc3\x28)",
    b"(frobnicate 1)(pass)(syn syn syn)",
    b"; comment only",
];

async fn chaos_action(
    kind: usize,
    addr: SocketAddr,
    rng: &mut ChaCha8Rng,
    stats: &ChaosStats,
) -> std::io::Result<()> {
    let mut s = match connect(addr).await {
        Ok(s) => s,
        Err(e) => {
            stats.connect_failed.fetch_add(1, Ordering::Relaxed);
            return Err(e);
        }
    };
    match CHAOS_KINDS[kind] {
        "connect_drop" => {}
        "scene_drop" => {
            send(&mut s, &format!("(scene {NAO} {})", rng.gen_range(0..5))).await?;
            for _ in 0..rng.gen_range(0..4) {
                let _ = tokio::time::timeout(Duration::from_secs(1), recv(&mut s)).await;
            }
        }
        "malformed" => {
            for _ in 0..rng.gen_range(1..20) {
                let m = MALFORMED[rng.gen_range(0..MALFORMED.len())];
                s.write_all(&frame(m)).await?;
            }
            let junk: Vec<u8> = (0..rng.gen_range(1..200)).map(|_| rng.gen()).collect();
            s.write_all(&frame(&junk)).await?;
            let _ = tokio::time::timeout(Duration::from_millis(300), recv(&mut s)).await;
        }
        "huge_prefix" => {
            let len: u32 = rng.gen_range(0x0100_0000..=u32::MAX);
            s.write_all(&len.to_be_bytes()).await?;
            s.write_all(b"(say ").await?;
            // The server must close this connection, promptly.
            let mut buf = [0u8; 4096];
            let deadline = Instant::now() + Duration::from_secs(3);
            loop {
                match tokio::time::timeout_at(deadline.into(), s.read(&mut buf)).await {
                    Ok(Ok(0)) | Ok(Err(_)) => {
                        stats.closed_by_server.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                    Ok(Ok(_)) => continue,
                    Err(_) => break,
                }
            }
        }
        "half_frame" => {
            send(&mut s, "(syn)").await?;
            s.write_all(&1000u32.to_be_bytes()).await?;
            s.write_all(b"(he1 1.0)(he2").await?;
            tokio::time::sleep(Duration::from_millis(rng.gen_range(100..2000))).await;
        }
        "say_flood" => {
            send(&mut s, &format!("(scene {NAO} 0)")).await?;
            let n = rng.gen_range(200..2000);
            let mut burst = Vec::new();
            for i in 0..n {
                burst.extend_from_slice(&frame(format!("(say flood{i})(syn)").as_bytes()));
                if burst.len() > 16 * 1024 {
                    s.write_all(&burst).await?;
                    burst.clear();
                }
            }
            s.write_all(&burst).await?;
        }
        "non_reader" => {
            send(&mut s, &format!("(scene {NAO} 1)")).await?;
            tokio::time::sleep(Duration::from_millis(rng.gen_range(1000..6000))).await;
        }
        "big_frame" => {
            // Just under the default 16 KiB limit: one long say.
            let n = rng.gen_range(1_000..16_000);
            let mut m = b"(say ".to_vec();
            m.extend(std::iter::repeat_n(b'a', n));
            m.push(b')');
            s.write_all(&frame(&m)).await?;
            let _ = tokio::time::timeout(Duration::from_millis(300), recv(&mut s)).await;
        }
        "garbage_stream" => {
            let junk: Vec<u8> = (0..rng.gen_range(1..4096)).map(|_| rng.gen()).collect();
            s.write_all(&junk).await?;
            let _ = tokio::time::timeout(Duration::from_millis(300), recv(&mut s)).await;
        }
        _ => {}
    }
    stats.done[kind].fetch_add(1, Ordering::Relaxed);
    Ok(())
}

async fn chaos(
    addr: SocketAddr,
    seed: u64,
    concurrency: usize,
    until: Instant,
    stats: Arc<ChaosStats>,
) {
    let sem = Arc::new(Semaphore::new(concurrency.max(1)));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut i = 0usize;
    while Instant::now() < until {
        let Ok(permit) = sem.clone().acquire_owned().await else {
            break;
        };
        let kind = i % CHAOS_KINDS.len();
        i += 1;
        let mut task_rng = ChaCha8Rng::seed_from_u64(rng.gen());
        let stats = stats.clone();
        tokio::spawn(async move {
            let _ = chaos_action(kind, addr, &mut task_rng, &stats).await;
            drop(permit);
        });
        tokio::time::sleep(Duration::from_millis(rng.gen_range(5..60))).await;
    }
    // Let the last actions finish.
    let _ = sem.acquire_many(concurrency.max(1) as u32).await;
}

// ---------------------------------------------------------------------------
// Monitors

#[derive(Default)]
struct MonitorStats {
    frames: AtomicU64,
    unbalanced: AtomicU64,
    max_gap_us: AtomicU64,
    full_states: AtomicU64,
    kickoffs: AtomicU64,
    frames_after_stall: AtomicU64,
    ended: Mutex<Option<String>>,
}

/// `(play_mode N)` of a monitor frame.
fn play_mode(frame: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(frame).ok()?;
    let i = text.find("(play_mode ")? + 11;
    let end = i + text[i..].find(')')?;
    text[i..end].parse().ok()
}

/// A monitor. The driver (`kick == true`) kicks off when the game waits
/// in BeforeKickOff and asks for a full state every 30 s. With a stall
/// window it stops reading during it.
async fn monitor(
    addr: SocketAddr,
    stats: Arc<MonitorStats>,
    kick: bool,
    stall: Option<(Instant, Duration)>,
    measure_from: Instant,
    until: Instant,
    run_start: Instant,
) {
    let result: std::io::Result<()> = async {
        let mut s = connect(addr).await?;
        let mut last: Option<Instant> = None;
        let mut waiting_since: Option<Instant> = None;
        let mut last_full_req = Instant::now();
        let mut stalled = false;
        loop {
            if Instant::now() >= until {
                return Ok(());
            }
            if let Some((at, len)) = stall {
                let now = Instant::now();
                if now >= at && now < at + len {
                    // Stop reading; the server must not stall or grow.
                    tokio::time::sleep_until((at + len).into()).await;
                    stalled = true;
                    last = None;
                    continue;
                }
            }
            let f = match tokio::time::timeout_at(until.into(), recv(&mut s)).await {
                Ok(r) => r?,
                Err(_) => return Ok(()),
            };
            let t = Instant::now();
            stats.frames.fetch_add(1, Ordering::Relaxed);
            if stalled {
                stats.frames_after_stall.fetch_add(1, Ordering::Relaxed);
            }
            if !balanced(&f) {
                stats.unbalanced.fetch_add(1, Ordering::Relaxed);
            }
            if f.windows(9).any(|w| w == b"(RSG 0 1)") {
                stats.full_states.fetch_add(1, Ordering::Relaxed);
            }
            if let (Some(p), true) = (last, t >= measure_from) {
                stats
                    .max_gap_us
                    .fetch_max((t - p).as_micros() as u64, Ordering::Relaxed);
            }
            last = Some(t);
            if kick && t >= measure_from {
                // BeforeKickOff (0) or GameOver after a half: kick off again.
                match play_mode(&f) {
                    Some(0) => {
                        let since = *waiting_since.get_or_insert(t);
                        if t - since > Duration::from_secs(2) {
                            send(&mut s, "(kickOff Left)").await?;
                            stats.kickoffs.fetch_add(1, Ordering::Relaxed);
                            waiting_since = None;
                        }
                    }
                    Some(_) => waiting_since = None,
                    None => {}
                }
                if t - last_full_req > Duration::from_secs(30) {
                    send(&mut s, "(reqfullstate)").await?;
                    last_full_req = t;
                }
            }
        }
    }
    .await;
    let why = match result {
        Ok(()) => "run over".to_string(),
        Err(e) => format!("{:.1} s: {e}", run_start.elapsed().as_secs_f64()),
    };
    if let Ok(mut e) = stats.ended.lock() {
        *e = Some(why);
    }
}

// ---------------------------------------------------------------------------
// The match log

struct LogCheck {
    lines: usize,
    full_states: usize,
    first_is_full: bool,
    unbalanced: usize,
    blank: usize,
    ends_with_newline: bool,
    bytes: u64,
}

impl LogCheck {
    fn valid(&self) -> bool {
        self.lines > 0
            && self.first_is_full
            && self.unbalanced == 0
            && self.blank == 0
            && self.ends_with_newline
    }
}

fn check_log(path: &Path) -> Result<LogCheck> {
    let data = std::fs::read(path).with_context(|| format!("read {}", path.display()))?;
    let ends_with_newline = data.last() == Some(&b'\n');
    let body = data.strip_suffix(b"\n").unwrap_or(&data);
    let mut c = LogCheck {
        lines: 0,
        full_states: 0,
        first_is_full: false,
        unbalanced: 0,
        blank: 0,
        ends_with_newline,
        bytes: data.len() as u64,
    };
    if data.is_empty() {
        return Ok(c);
    }
    for (i, line) in body.split(|&b| b == b'\n').enumerate() {
        c.lines += 1;
        if line.is_empty() {
            c.blank += 1;
            continue;
        }
        if !balanced(line) {
            c.unbalanced += 1;
        }
        let full = line.windows(9).any(|w| w == b"(RSG 0 1)")
            && line.windows(12).any(|w| w == b"(FieldLength");
        if full {
            c.full_states += 1;
        }
        if i == 0 {
            c.first_is_full = full;
        }
    }
    Ok(c)
}

// ---------------------------------------------------------------------------
// The run

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    if cli.agents > 22 {
        bail!("at most 22 honest agents (11 per team)");
    }
    if cli.minutes.is_nan() || cli.minutes <= 0.0 {
        bail!("--minutes must be positive");
    }
    let run = Duration::from_secs_f64(cli.minutes * 60.0);
    let (log, temp_log) = match &cli.log {
        Some(p) => (p.clone(), false),
        None => (
            std::env::temp_dir().join(format!("rcss3d-soak-{}.log", std::process::id())),
            true,
        ),
    };
    // Warm-up: connecting 22 robots, first allocations. Figures start after.
    let warmup = Duration::from_secs_f64((run.as_secs_f64() * 0.1).clamp(10.0, 60.0));
    // The second monitor stops reading for a minute (a third of a short run).
    let stall_len = Duration::from_secs(60).min(run / 3);

    println!(
        "soak: {:.1} min, {} honest agents, chaos x{}, server {}, log {}",
        cli.minutes,
        cli.agents,
        cli.chaos,
        cli.server_bin
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "in-process".into()),
        log.display()
    );
    let (mut server, agent_addr, monitor_addr) = Server::start(&cli, &log).await?;
    // Wait for the ports.
    let t_wait = Instant::now();
    loop {
        if connect(monitor_addr).await.is_ok() {
            break;
        }
        if let Some(how) = server.exited() {
            bail!("server exited during start-up: {how}");
        }
        if t_wait.elapsed() > Duration::from_secs(60) {
            bail!("server did not listen within 60 s");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let start = Instant::now();
    let measure_from = start + warmup;
    let until = start + run;
    let measure_gate = Arc::new(Mutex::new(Some(measure_from)));

    // Monitors first, so they see the whole match.
    let mon_a = Arc::new(MonitorStats::default());
    let mon_b = Arc::new(MonitorStats::default());
    let stall_at = start + warmup.max(run / 3);
    let mon_tasks = vec![
        tokio::spawn(monitor(
            monitor_addr,
            mon_a.clone(),
            true,
            None,
            measure_from,
            until,
            start,
        )),
        tokio::spawn(monitor(
            monitor_addr,
            mon_b.clone(),
            false,
            Some((stall_at, stall_len)),
            measure_from,
            until,
            start,
        )),
    ];

    let agents: Vec<Arc<AgentStats>> = (0..cli.agents)
        .map(|_| Arc::new(AgentStats::default()))
        .collect();
    for (i, st) in agents.iter().enumerate() {
        let team = if i % 2 == 0 { "SoakLeft" } else { "SoakRight" };
        let unum = i / 2 + 1;
        tokio::spawn(honest_agent(
            agent_addr,
            team,
            unum,
            st.clone(),
            start,
            measure_gate.clone(),
            i == 0,
        ));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let chaos_stats = Arc::new(ChaosStats::default());
    let chaos_task = if cli.chaos > 0 {
        tokio::spawn(chaos(
            agent_addr,
            cli.seed,
            cli.chaos,
            until,
            chaos_stats.clone(),
        ))
    } else {
        tokio::spawn(async {})
    };

    // RSS every second after warm-up; progress every 10 s.
    tokio::time::sleep_until(measure_from.into()).await;
    let pid = server.pid();
    let mut rss: Vec<u64> = Vec::new();
    let mut crashed: Option<String> = None;
    let cpu_start = cpu_secs(pid);
    let load_start = load_avg();
    println!("warm-up done after {:.0} s", warmup.as_secs_f64());
    while Instant::now() < until {
        tokio::time::sleep(
            Duration::from_secs(1).min(until.saturating_duration_since(Instant::now())),
        )
        .await;
        if let Some(how) = server.exited() {
            crashed = Some(how);
            break;
        }
        let now_rss = rss_kib(pid).unwrap_or(0);
        rss.push(now_rss);
        // A runaway (seen once: the physics broad phase allocating without
        // end) must not take the shared machine down: stop at 2 GiB or
        // 50 times the first sample, with the server's stacks for the report.
        let first = rss.first().copied().unwrap_or(now_rss);
        if now_rss > (2u64 << 20).max(first.saturating_mul(50)) {
            println!(
                "RUNAWAY: server RSS {now_rss} KiB (first sample {first} KiB); stopping the run"
            );
            if let Some(stacks) = server.stacks().await {
                println!("server stacks at the runaway:\n{stacks}");
            }
            crashed = Some(format!("runaway memory: RSS {now_rss} KiB"));
            server.kill().await;
            break;
        }
        if rss.len().is_multiple_of(10) {
            println!(
                "  t={:>5.0} s  RSS {:>7} KiB  agent1 frames {:>7}  monitors {}/{}  chaos {}",
                start.elapsed().as_secs_f64(),
                now_rss,
                agents
                    .first()
                    .map(|a| a.frames.load(Ordering::Relaxed))
                    .unwrap_or(0),
                mon_a.frames.load(Ordering::Relaxed),
                mon_b.frames.load(Ordering::Relaxed),
                chaos_stats
                    .done
                    .iter()
                    .map(|d| d.load(Ordering::Relaxed))
                    .sum::<u64>()
            );
        }
    }
    // Start and end RSS: medians of the first and last tenth of the
    // samples (at least 10 s each), so one chaos client's transient frame
    // buffer does not decide the result.
    let w = (rss.len() / 10).max(10).min(rss.len());
    let rss_start = median(&rss[..w]);
    let rss_end = median(&rss[rss.len() - w..]);
    let rss_max = rss.iter().copied().max().unwrap_or(0);
    let measured = (Instant::now() - measure_from).as_secs_f64();
    // Server CPU use over the measured part: a server below 50 Hz using
    // well under one core was starved by the machine, not slow itself.
    let cpu_share = match (cpu_start, cpu_secs(pid)) {
        (Some(a), Some(b)) if measured > 0.0 => (b - a) / measured * 100.0,
        _ => f64::NAN,
    };
    let load_end = load_avg();
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let _ = tokio::time::timeout(Duration::from_secs(15), chaos_task).await;
    for t in mon_tasks {
        let _ = tokio::time::timeout(Duration::from_secs(5), t).await;
    }
    let (clean_exit, stop_secs, how) = server.stop().await;
    let panics = server.panics();

    // Cycle rate from the first agent's clock, in 1 s windows after warm-up.
    let clock = agents
        .first()
        .and_then(|a| a.clock.lock().ok().map(|c| c.clone()))
        .unwrap_or_default();
    let from = warmup.as_secs_f64();
    let pts: Vec<(f64, f64)> = clock.into_iter().filter(|(t, _)| *t >= from).collect();
    let (mut windows, mut held) = (0u64, 0u64);
    let mut cycles = 0.0;
    if let (Some(first), Some(last)) = (pts.first(), pts.last()) {
        cycles = (last.1 - first.1) / STEP;
        let mut w0 = first.0;
        while w0 + 1.0 <= last.0 {
            // Frames that arrived in [w0, w0 + 1 s): their clocks span a
            // little under a second, 49 steps at 50 Hz.
            let j = pts.partition_point(|p| p.0 < w0);
            let k = pts.partition_point(|p| p.0 < w0 + 1.0).saturating_sub(1);
            let n = if k > j {
                ((pts[k].1 - pts[j].1) / STEP).round()
            } else {
                0.0
            };
            windows += 1;
            if n >= 48.0 {
                held += 1;
            }
            w0 += 1.0;
        }
    }
    let rate = if measured > 0.0 {
        cycles / measured
    } else {
        0.0
    };
    let late: u64 = agents.iter().map(|a| a.late.load(Ordering::Relaxed)).sum();
    let skipped: u64 = agents
        .iter()
        .map(|a| a.skipped.load(Ordering::Relaxed))
        .sum();
    let max_gap_ms = agents
        .iter()
        .map(|a| a.max_gap_us.load(Ordering::Relaxed))
        .max()
        .unwrap_or(0) as f64
        / 1000.0;
    let agent_frames: u64 = agents
        .iter()
        .map(|a| a.frames.load(Ordering::Relaxed))
        .sum();
    // Honest agents whose connection ended before the server was stopped.
    let early: Vec<String> = agents
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let (t, why) = a.ended.lock().ok()?.clone()?;
            (t < run.as_secs_f64()).then(|| format!("agent {} at {t:.1} s: {why}", i + 1))
        })
        .collect();
    let growth = if rss_start > 0 {
        (rss_end as f64 - rss_start as f64) / rss_start as f64 * 100.0
    } else {
        f64::NAN
    };
    let log_check = check_log(&log)?;

    println!();
    println!("== soak report ==");
    println!(
        "server: stopped in {stop_secs:.2} s ({how}); crashed during run: {}",
        crashed.as_deref().unwrap_or("no")
    );
    println!("panics: {panics}");
    if let Server::Child { stderr, .. } = &server {
        println!(
            "server log: {} lines, {} warnings",
            stderr.lines.load(Ordering::Relaxed),
            stderr.warnings.load(Ordering::Relaxed)
        );
        if panics > 0 || crashed.is_some() || !clean_exit {
            for l in stderr
                .panic_lines
                .lock()
                .map(|p| p.clone())
                .unwrap_or_default()
            {
                println!("  panic: {l}");
            }
            for l in stderr.tail.lock().map(|t| t.clone()).unwrap_or_default() {
                println!("  | {l}");
            }
        }
    }
    println!(
        "cycles: {:.0} in {:.0} s measured ({:.2} Hz); 1 s windows at >= 48 cycles: {held}/{windows}",
        cycles, measured, rate
    );
    println!(
        "machine: {cores} cores, load average {load_start} at warm-up, {load_end} at end; \
         server CPU {cpu_share:.0} % of one core"
    );
    println!(
        "late cycles (honest agent frame > 30 ms after the previous): {late} over {} agents",
        agents.len()
    );
    println!("frames an honest agent missed (clock jumped > 1 step): {skipped}");
    println!("honest agents: {agent_frames} frames; longest gap {max_gap_ms:.0} ms; disconnected early: {}", early.len());
    for d in &early {
        println!("  {d}");
    }
    println!(
        "RSS (median of the first / last {w} s after warm-up): {rss_start} KiB -> {rss_end} KiB ({growth:+.1} %), max {rss_max} KiB"
    );
    println!(
        "monitor 1: {} frames, {} full states, {} unbalanced, longest gap {:.0} ms, {} kick-offs, ended: {}",
        mon_a.frames.load(Ordering::Relaxed),
        mon_a.full_states.load(Ordering::Relaxed),
        mon_a.unbalanced.load(Ordering::Relaxed),
        mon_a.max_gap_us.load(Ordering::Relaxed) as f64 / 1000.0,
        mon_a.kickoffs.load(Ordering::Relaxed),
        mon_a.ended.lock().ok().and_then(|e| e.clone()).unwrap_or_default()
    );
    println!(
        "monitor 2 (stopped reading {:.0} s): {} frames, {} after the stall, {} unbalanced, ended: {}",
        stall_len.as_secs_f64(),
        mon_b.frames.load(Ordering::Relaxed),
        mon_b.frames_after_stall.load(Ordering::Relaxed),
        mon_b.unbalanced.load(Ordering::Relaxed),
        mon_b.ended.lock().ok().and_then(|e| e.clone()).unwrap_or_default()
    );
    let kinds: Vec<String> = CHAOS_KINDS
        .iter()
        .zip(chaos_stats.done.iter())
        .map(|(k, d)| format!("{k} {}", d.load(Ordering::Relaxed)))
        .collect();
    println!(
        "chaos: {}; closed by server {}; connect failures {}",
        kinds.join(", "),
        chaos_stats.closed_by_server.load(Ordering::Relaxed),
        chaos_stats.connect_failed.load(Ordering::Relaxed)
    );
    println!(
        "log: {} lines ({} full states, {} bytes); first line full state: {}; unbalanced lines: {}; blank: {}; ends with a whole line: {} => {}",
        log_check.lines,
        log_check.full_states,
        log_check.bytes,
        log_check.first_is_full,
        log_check.unbalanced,
        log_check.blank,
        log_check.ends_with_newline,
        if log_check.valid() { "VALID" } else { "INVALID" }
    );

    let ok = panics == 0
        && crashed.is_none()
        && clean_exit
        && growth < 10.0
        && max_gap_ms < 1000.0
        && early.is_empty()
        && log_check.valid();
    // Machine-readable summary (tests/soak.rs).
    println!("RESULT panics {panics}");
    println!("RESULT crashed {}", crashed.is_some());
    println!("RESULT clean_exit {clean_exit}");
    println!("RESULT stop_secs {stop_secs:.3}");
    println!("RESULT cycles {cycles:.0}");
    println!("RESULT cycle_rate_hz {rate:.3}");
    println!("RESULT windows_held {held}");
    println!("RESULT windows {windows}");
    println!("RESULT late_cycles {late}");
    println!("RESULT server_cpu_pct {cpu_share:.1}");
    println!("RESULT load_avg_end {load_end}");
    println!("RESULT missed_frames {skipped}");
    println!("RESULT max_gap_ms {max_gap_ms:.1}");
    println!("RESULT agents_disconnected_early {}", early.len());
    println!("RESULT rss_start_kib {rss_start}");
    println!("RESULT rss_end_kib {rss_end}");
    println!("RESULT rss_growth_pct {growth:.2}");
    println!(
        "RESULT monitor_frames {}",
        mon_a.frames.load(Ordering::Relaxed)
    );
    println!(
        "RESULT stalled_monitor_frames_after {}",
        mon_b.frames_after_stall.load(Ordering::Relaxed)
    );
    println!("RESULT log_valid {}", log_check.valid());
    println!("RESULT log_lines {}", log_check.lines);
    println!("RESULT ok {ok}");
    if ok && temp_log {
        let _ = std::fs::remove_file(&log);
    }
    if ok {
        Ok(())
    } else {
        std::process::exit(1)
    }
}
