//! `loadgen`: a load generator for the server.
//!
//! It runs N scripted agents over real TCP, each on its own OS thread with
//! blocking sockets (an agent sleeps in `read` between frames, so 22 of them
//! cost little CPU). Every agent connects at once, creates its robot with
//! `(scene rsg/agent/nao/nao_hetero.rsg T)` (the legal FCP type mix
//! 0,1,1,1,2,3,3,3,4,4,4 by uniform number), joins team A or B alternately
//! (11 v 11 with 22 agents), beams to a 4-4-2 formation in its own half once
//! the server has confirmed its team, and then answers every frame with
//! joint speeds for a gentle periodic motion (all 22 or 24 joints, as FCP
//! sends them) followed by `(syn)`. The messages are pre-encoded, so the
//! agents do no formatting while they are measured.
//!
//! Agent 0 is the clock: once every agent is on the field and `--warmup`
//! more frames have passed it opens the measuring window, closes it after
//! `--cycles` frames, and samples the server process from `/proc` at both
//! ends (CPU per thread, peak and current RSS). With `--spawn-server` the
//! release server binary is built if needed, started on free ports, and
//! stopped at the end by its pid; with `--stages` its trace-level per-stage
//! timing lines are collected for the same window.
//!
//! `--agents` takes a list (`1,2,6,11,22`) and `--runs` repeats each size
//! with a fresh server: the summary table then shows medians.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;

/// Robot type by uniform number 1..11 (FCPCodebase's legal mix: at most 7 of
/// one type, at most 9 of any two, at least 3 types).
const ROBOT_TYPES: [u8; 11] = [0, 1, 1, 1, 2, 3, 3, 3, 4, 4, 4];

/// Beam positions by uniform number (team frame: own half is x < 0, facing
/// the opponent goal): goalkeeper, four defenders, four midfielders, two
/// forwards, at least 3 m apart.
const FORMATION: [(f32, f32); 11] = [
    (-14.0, 0.0),
    (-11.0, -6.0),
    (-11.0, -2.0),
    (-11.0, 2.0),
    (-11.0, 6.0),
    (-7.0, -6.0),
    (-7.0, -2.0),
    (-7.0, 2.0),
    (-7.0, 6.0),
    (-3.0, -2.5),
    (-3.0, 2.5),
];

/// Hinge effectors in FCP's order; types 0-3 have the first 22.
const JOINTS: [&str; 24] = [
    "he1", "he2", "lle1", "rle1", "lle2", "rle2", "lle3", "rle3", "lle4", "rle4", "lle5", "rle5",
    "lle6", "rle6", "lae1", "rae1", "lae2", "rae2", "lae3", "rae3", "lae4", "rae4", "lle7", "rle7",
];

const SCENE: &str = "rsg/agent/nao/nao_hetero.rsg";

/// A frame larger than this is treated as a protocol error (the spec caps
/// frames at 8 KiB for FCP; this is only a sanity bound).
const MAX_FRAME: usize = 1 << 20;

/// Seconds per simulation cycle of the stock server.
const STEP: f64 = 0.02;

/// A frame gap above this many cycles counts as a late cycle (real time).
const LATE_FACTOR: f64 = 1.5;

#[derive(Parser, Debug, Clone)]
#[command(
    about = "Load generator: N scripted agents over TCP; prints cycles/s, server CPU per cycle, peak RSS"
)]
struct Cli {
    /// Number of agents (1..22), or a comma-separated list for a scaling
    /// table, e.g. 1,2,6,11,22 (a list needs --spawn-server).
    #[arg(long, default_value = "22", value_delimiter = ',')]
    agents: Vec<usize>,
    /// Frames measured (after all agents are on the field and the warm-up).
    #[arg(long, default_value_t = 3000)]
    cycles: u64,
    /// Measure for this many seconds of wall time instead of --cycles
    /// frames (for long real-time runs).
    #[arg(long)]
    seconds: Option<f64>,
    /// Frames skipped after the last agent is on the field before measuring.
    #[arg(long, default_value_t = 50)]
    warmup: u64,
    /// The server runs in agentSyncMode (passed to a spawned server).
    #[arg(long)]
    sync: bool,
    /// The server paces cycles by the wall clock (passed to a spawned
    /// server; the default without --sync). Late frames are counted.
    #[arg(long)]
    realtime: bool,
    /// Server host.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Agent port of an already running server (ignored with --spawn-server).
    #[arg(long, default_value_t = 3100)]
    port: u16,
    /// Pid of an already running local server, to read its CPU time and RSS
    /// from /proc.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Build (if needed) and start the release server binary on free ports,
    /// measure it, and stop it at the end.
    #[arg(long)]
    spawn_server: bool,
    /// Server binary for --spawn-server (default: `rcss3d` next to this
    /// program, built with cargo first when run through `cargo run`).
    #[arg(long)]
    server_bin: Option<PathBuf>,
    /// Where the spawned server's log goes (default: discarded).
    #[arg(long)]
    server_log: Option<PathBuf>,
    /// Extra argument for the spawned server (repeatable).
    #[arg(long = "server-arg", allow_hyphen_values = true)]
    server_args: Vec<String>,
    /// A/B comparison: variant B's server binary. With this or
    /// --b-server-arg, every run of A is followed by a run of B (A B A B
    /// ...), and the summary gives the median of the B/A ratios of the
    /// side-by-side pairs, which drift on a noisy machine cancels out of.
    #[arg(long)]
    b_server_bin: Option<PathBuf>,
    /// A/B comparison: extra argument for variant B's server, after the
    /// --server-arg ones (repeatable), e.g. `--b-server-arg=--config
    /// --b-server-arg=fast.ron`.
    #[arg(long = "b-server-arg", allow_hyphen_values = true)]
    b_server_args: Vec<String>,
    /// Collect the spawned server's trace-level per-stage timing lines
    /// (`cycle timing ... *_us=`) over the measuring window.
    #[arg(long)]
    stages: bool,
    /// Seed for a spawned server.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Runs per agent count, each with a fresh spawned server (medians are
    /// reported).
    #[arg(long, default_value_t = 1)]
    runs: usize,
    /// Team names.
    #[arg(long, default_value = "LoadA")]
    team_a: String,
    #[arg(long, default_value = "LoadB")]
    team_b: String,
    /// Joint speed amplitude, rad/s (head joints use 0.4 of it).
    #[arg(long, default_value_t = 0.5)]
    amplitude: f32,
    /// Period of the joint motion, cycles.
    #[arg(long, default_value_t = 200)]
    period: usize,
    /// Seconds any single read may block before the agent gives up.
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
    /// Seconds to keep retrying the initial connection.
    #[arg(long, default_value_t = 20.0)]
    connect_timeout: f64,
}

// ---------------------------------------------------------------------------
// /proc sampling

/// CPU ticks per second of /proc times.
fn clk_tck() -> f64 {
    static TCK: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TCK.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|t| *t > 0.0)
            .unwrap_or(100.0)
    })
}

/// `(comm, utime + stime in ticks)` from a /proc stat file.
fn read_stat(path: &Path) -> Option<(String, u64)> {
    let text = std::fs::read_to_string(path).ok()?;
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text[open + 1..close].to_owned();
    let fields: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // After the comm: state is field 3, utime field 14, stime field 15.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((comm, utime + stime))
}

fn read_status_kb(pid: u32, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// One look at a process.
#[derive(Clone, Debug, Default)]
struct ProcSample {
    /// Whole-process CPU ticks (includes exited threads).
    ticks: u64,
    /// Per thread: tid -> (name, ticks).
    threads: BTreeMap<u32, (String, u64)>,
    hwm_kb: Option<u64>,
    rss_kb: Option<u64>,
}

fn sample_proc(pid: u32) -> Option<ProcSample> {
    let (_, ticks) = read_stat(Path::new(&format!("/proc/{pid}/stat")))?;
    let mut threads = BTreeMap::new();
    if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for e in dir.flatten() {
            let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if let Some((comm, t)) = read_stat(&e.path().join("stat")) {
                threads.insert(tid, (comm, t));
            }
        }
    }
    Some(ProcSample {
        ticks,
        threads,
        hwm_kb: read_status_kb(pid, "VmHWM:"),
        rss_kb: read_status_kb(pid, "VmRSS:"),
    })
}

fn self_cpu_ticks() -> u64 {
    read_stat(Path::new("/proc/self/stat"))
        .map(|s| s.1)
        .unwrap_or(0)
}

/// What the clock agent records at each end of the window.
#[derive(Clone, Debug)]
struct Mark {
    at: Instant,
    sim_time: Option<f64>,
    server: Option<ProcSample>,
    self_ticks: u64,
}

// ---------------------------------------------------------------------------
// Agents

/// Shared between the agents of one run.
struct Shared {
    n: usize,
    cycles: u64,
    seconds: Option<f64>,
    /// Frames in the window, set by the clock agent when it closes it.
    measured: std::sync::atomic::AtomicU64,
    warmup: u64,
    ready: AtomicUsize,
    /// 0 = starting/warm-up, 1 = measuring, 2 = stop.
    phase: AtomicU8,
    failed: AtomicBool,
    server_pid: Option<u32>,
    start: Mutex<Option<Mark>>,
    end: Mutex<Option<Mark>>,
    first_connect: Mutex<Option<Instant>>,
}

const PHASE_WARMUP: u8 = 0;
const PHASE_MEASURE: u8 = 1;
const PHASE_STOP: u8 = 2;

struct AgentSpec {
    index: usize,
    team: String,
    unum: u8,
    robot_type: u8,
    beam: (f32, f32, f32),
}

#[derive(Debug, Default, Clone)]
struct AgentResult {
    connected_at: Option<Instant>,
    on_field_at: Option<Instant>,
    side: Option<String>,
    frames: u64,
    max_frame_bytes: usize,
    /// Measuring window only.
    window_frames: u64,
    late_gaps: u64,
    max_gap: Duration,
    skipped_cycles: u64,
    error: Option<String>,
}

fn encode(payload: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(payload.len() + 4);
    v.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    v.extend_from_slice(payload.as_bytes());
    v
}

/// The pre-encoded joint messages of one agent, one per phase of the period.
fn joint_messages(robot_type: u8, unum: u8, amplitude: f32, period: usize) -> Vec<Vec<u8>> {
    let joints = if robot_type == 4 { 24 } else { 22 };
    let phase = 0.37 * f32::from(unum);
    let w = std::f32::consts::TAU / period.max(1) as f32;
    (0..period.max(1))
        .map(|k| {
            let mut s = String::with_capacity(512);
            for (i, name) in JOINTS[..joints].iter().enumerate() {
                let amp = if i < 2 { 0.4 * amplitude } else { amplitude };
                let v = amp * (w * k as f32 + phase + 0.5 * i as f32).sin();
                let _ = write!(s, "({name} {v:.4})");
            }
            s.push_str("(syn)");
            encode(&s)
        })
        .collect()
}

struct Wire {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    buf: Vec<u8>,
}

impl Wire {
    fn read_frame(&mut self) -> Result<&[u8]> {
        let mut len = [0u8; 4];
        self.reader
            .read_exact(&mut len)
            .context("reading a frame length")?;
        let n = u32::from_be_bytes(len) as usize;
        if n > MAX_FRAME {
            bail!("implausible frame length {n}");
        }
        self.buf.resize(n, 0);
        self.reader
            .read_exact(&mut self.buf)
            .context("reading a frame")?;
        Ok(&self.buf)
    }

    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.writer.write_all(bytes).context("sending")
    }
}

/// `(time (now X))` at the start of a frame.
fn sim_time(frame: &[u8]) -> Option<f64> {
    let head = &frame[..frame.len().min(48)];
    let key = b"(now ";
    let i = head.windows(key.len()).position(|w| w == key)? + key.len();
    let j = head[i..].iter().position(|&b| b == b')')? + i;
    std::str::from_utf8(&head[i..j]).ok()?.parse().ok()
}

/// The side from a GS that announces the identity, e.g. `(team left)`.
fn announced_side(frame: &[u8]) -> Option<&'static str> {
    let gs = frame.windows(4).position(|w| w == b"(GS ")?;
    let rest = &frame[gs..frame.len().min(gs + 120)];
    if rest.windows(11).any(|w| w == b"(team left)") {
        Some("left")
    } else if rest.windows(12).any(|w| w == b"(team right)") {
        Some("right")
    } else {
        None
    }
}

fn connect(addr: SocketAddr, deadline: Instant, timeout: Duration) -> Result<TcpStream> {
    loop {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
            Ok(s) => {
                s.set_nodelay(true)?;
                s.set_read_timeout(Some(timeout))?;
                return Ok(s);
            }
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(e).with_context(|| format!("cannot connect to {addr}")),
        }
    }
}

fn run_agent(spec: AgentSpec, addr: SocketAddr, cli: &Cli, shared: &Shared) -> AgentResult {
    let mut res = AgentResult::default();
    if let Err(e) = agent_body(&spec, addr, cli, shared, &mut res) {
        res.error = Some(format!("{} {}: {e:#}", spec.team, spec.unum));
        shared.failed.store(true, Ordering::SeqCst);
        shared.phase.store(PHASE_STOP, Ordering::SeqCst);
    }
    res
}

fn agent_body(
    spec: &AgentSpec,
    addr: SocketAddr,
    cli: &Cli,
    shared: &Shared,
    res: &mut AgentResult,
) -> Result<()> {
    let timeout = Duration::from_secs_f64(cli.timeout);
    let deadline = Instant::now() + Duration::from_secs_f64(cli.connect_timeout);
    let stream = connect(addr, deadline, timeout)?;
    let now = Instant::now();
    res.connected_at = Some(now);
    {
        let mut fc = shared.first_connect.lock().unwrap();
        if fc.is_none_or(|t| now < t) {
            *fc = Some(now);
        }
    }
    let mut wire = Wire {
        reader: BufReader::with_capacity(64 * 1024, stream.try_clone()?),
        writer: stream,
        buf: Vec::with_capacity(8192),
    };
    let messages = joint_messages(spec.robot_type, spec.unum, cli.amplitude, cli.period);
    let syn = encode("(syn)");

    // Lifecycle: scene, first frame, init, wait for the team, beam.
    wire.send(&encode(&format!("(scene {SCENE} {})", spec.robot_type)))?;
    wire.read_frame()?;
    res.frames += 1;
    wire.send(&encode(&format!(
        "(init (unum {})(teamname {}))(syn)",
        spec.unum, spec.team
    )))?;
    let mut waited = 0;
    loop {
        let frame = wire.read_frame()?;
        res.frames += 1;
        if let Some(side) = announced_side(frame) {
            res.side = Some(side.to_owned());
            break;
        }
        waited += 1;
        if waited > 250 {
            bail!(
                "no team after init (robot type {} refused?)",
                spec.robot_type
            );
        }
        wire.send(&syn)?;
    }
    let (x, y, rot) = spec.beam;
    wire.send(&encode(&format!("(beam {x:.2} {y:.2} {rot:.1})(syn)")))?;
    wire.read_frame()?;
    res.frames += 1;
    res.on_field_at = Some(Instant::now());
    shared.ready.fetch_add(1, Ordering::SeqCst);

    let clock = spec.index == 0;
    let mut k: usize = 0;
    let mut warm = 0u64;
    let mut window_start: Option<Instant> = None;
    let mut measured = 0u64;
    let mut last_at: Option<Instant> = None;
    let mut last_t: Option<f64> = None;
    let late = Duration::from_secs_f64(STEP * LATE_FACTOR);
    loop {
        wire.send(&messages[k % messages.len()])?;
        k += 1;
        let frame = wire.read_frame()?;
        let at = Instant::now();
        res.frames += 1;
        res.max_frame_bytes = res.max_frame_bytes.max(frame.len());
        let phase = shared.phase.load(Ordering::Acquire);
        if phase == PHASE_STOP {
            break;
        }
        let t = sim_time(frame);
        if phase == PHASE_MEASURE {
            res.window_frames += 1;
            if let Some(prev) = last_at {
                let gap = at - prev;
                if gap > late {
                    res.late_gaps += 1;
                }
                res.max_gap = res.max_gap.max(gap);
            }
            if let (Some(a), Some(b)) = (last_t, t) {
                // Printed times have 2 decimals and drift by 0.01; a
                // difference above 1.75 steps means a whole frame is missing.
                let d = b - a;
                if d > 1.75 * STEP {
                    res.skipped_cycles += ((d / STEP).round() as u64).saturating_sub(1);
                }
            }
            last_at = Some(at);
            last_t = t;
        }
        if clock {
            match phase {
                PHASE_WARMUP if shared.ready.load(Ordering::Acquire) == shared.n => {
                    warm += 1;
                    if warm >= shared.warmup {
                        window_start = Some(at);
                        *shared.start.lock().unwrap() = Some(mark(shared, t));
                        last_at = Some(at);
                        last_t = t;
                        shared.phase.store(PHASE_MEASURE, Ordering::Release);
                    }
                }
                PHASE_MEASURE => {
                    measured += 1;
                    let done = match (shared.seconds, window_start) {
                        (Some(limit), Some(t0)) => (at - t0).as_secs_f64() >= limit,
                        _ => measured >= shared.cycles,
                    };
                    if done {
                        shared.measured.store(measured, Ordering::Release);
                        *shared.end.lock().unwrap() = Some(mark(shared, t));
                        shared.phase.store(PHASE_STOP, Ordering::Release);
                        break;
                    }
                }
                _ => {}
            }
        } else if phase == PHASE_MEASURE && last_at.is_none() {
            last_at = Some(at);
            last_t = t;
        }
    }
    Ok(())
}

fn mark(shared: &Shared, sim_time: Option<f64>) -> Mark {
    Mark {
        at: Instant::now(),
        sim_time,
        server: shared.server_pid.and_then(sample_proc),
        self_ticks: self_cpu_ticks(),
    }
}

// ---------------------------------------------------------------------------
// Spawned server

/// One parsed `*_us=` trace line: whether it fell in the measuring window,
/// and its fields.
type StageRow = (bool, Vec<(String, u64)>);

struct Server {
    child: Child,
    agent_port: u16,
    stages: Option<std::thread::JoinHandle<Vec<StageRow>>>,
}

fn free_port() -> Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(l.local_addr()?.port())
}

fn server_binary(cli: &Cli) -> Result<PathBuf> {
    if let Some(p) = &cli.server_bin {
        return Ok(p.clone());
    }
    let exe = std::env::current_exe().context("locating this program")?;
    let dir = exe
        .parent()
        .ok_or_else(|| anyhow!("no directory for {}", exe.display()))?;
    let bin = dir.join("rcss3d");
    // Through `cargo run`, make sure the server binary is current: cargo
    // only built this one.
    if let Ok(cargo) = std::env::var("CARGO") {
        let release = dir.file_name().is_some_and(|n| n == "release");
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--quiet", "--bin", "rcss3d"]);
        if release {
            cmd.arg("--release");
        }
        if let Ok(manifest) = std::env::var("CARGO_MANIFEST_DIR") {
            cmd.arg("--manifest-path")
                .arg(Path::new(&manifest).join("Cargo.toml"));
        }
        let status = cmd.status().context("running cargo build for the server")?;
        if !status.success() {
            bail!("cargo build --bin rcss3d failed");
        }
    }
    if !bin.exists() {
        bail!(
            "{} not found: build it with `cargo build --release` or pass --server-bin",
            bin.display()
        );
    }
    Ok(bin)
}

fn spawn_server(cli: &Cli, bin: &Path, run_flag: Arc<AtomicU8>) -> Result<Server> {
    let agent_port = free_port()?;
    let mut monitor_port = free_port()?;
    while monitor_port == agent_port {
        monitor_port = free_port()?;
    }
    let mut cmd = Command::new(bin);
    cmd.arg("--agent-port")
        .arg(agent_port.to_string())
        .arg("--monitor-port")
        .arg(monitor_port.to_string())
        .arg("--seed")
        .arg(cli.seed.to_string())
        .arg("--bind")
        .arg("127.0.0.1");
    if cli.sync {
        cmd.arg("--sync");
        if cli.realtime {
            cmd.arg("--real-time");
        }
    }
    cmd.args(&cli.server_args);
    cmd.stdin(Stdio::null());
    // The server logs to stderr (panics too) and prints its results on
    // stdout. Both go to --server-log (or nowhere); with --stages stderr is
    // read here instead and copied to the log file.
    let log_file = match &cli.server_log {
        Some(p) => {
            Some(std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?)
        }
        None => None,
    };
    match &log_file {
        Some(f) => cmd.stdout(f.try_clone()?),
        None => cmd.stdout(Stdio::null()),
    };
    if cli.stages {
        cmd.env("RUST_LOG", "warn,rcss3d::sim::driver=trace");
        cmd.env("NO_COLOR", "1");
        cmd.stderr(Stdio::piped());
    } else {
        if std::env::var_os("RUST_LOG").is_none() {
            cmd.env("RUST_LOG", "warn");
        }
        match &log_file {
            Some(f) => cmd.stderr(f.try_clone()?),
            None => cmd.stderr(Stdio::null()),
        };
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    let stages = if cli.stages {
        let logs = child.stderr.take().expect("piped stderr");
        let mut log = log_file;
        Some(std::thread::spawn(move || {
            let mut rows = Vec::new();
            for line in BufReader::new(logs).lines() {
                let Ok(line) = line else { break };
                if let Some(f) = log.as_mut() {
                    let _ = writeln!(f, "{line}");
                }
                if !line.contains("_us=") {
                    continue;
                }
                let fields: Vec<(String, u64)> = strip_ansi(&line)
                    .split_whitespace()
                    .filter_map(|kv| {
                        let (k, v) = kv.split_once('=')?;
                        if !k.ends_with("_us") {
                            return None;
                        }
                        Some((
                            k.to_owned(),
                            v.trim_matches(|c: char| !c.is_ascii_digit()).parse().ok()?,
                        ))
                    })
                    .collect();
                rows.push((run_flag.load(Ordering::Acquire) == PHASE_MEASURE, fields));
            }
            rows
        }))
    } else {
        None
    };
    Ok(Server {
        child,
        agent_port,
        stages,
    })
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn stop_server(server: &mut Server) {
    let pid = server.child.id();
    // SIGTERM by pid (graceful shutdown), then SIGKILL if it lingers.
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match server.child.try_wait() {
            Ok(Some(_)) => return,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = server.child.kill();
                let _ = server.child.wait();
                return;
            }
        }
    }
}

// ---------------------------------------------------------------------------
// One run

#[derive(Debug, Clone, Default)]
struct RunResult {
    agents: usize,
    cycles: u64,
    wall: f64,
    cps: f64,
    sim_cps: Option<f64>,
    cpu_ms_per_cycle: Option<f64>,
    cpu_pct: Option<f64>,
    threads: Vec<(String, f64)>,
    hwm_kb: Option<u64>,
    rss_start_kb: Option<u64>,
    rss_end_kb: Option<u64>,
    on_field_s: f64,
    connect_spread_s: f64,
    late_gaps: u64,
    agents_late: usize,
    max_gap_ms: f64,
    skipped_cycles: u64,
    loadgen_cpu_pct: f64,
    max_frame_bytes: usize,
    stages: Vec<(String, f64, f64, f64)>,
}

fn one_run(cli: &Cli, agents: usize, run: usize) -> Result<RunResult> {
    if !(1..=22).contains(&agents) {
        bail!("--agents must be 1..22, got {agents}");
    }
    let phase_for_stages = Arc::new(AtomicU8::new(PHASE_WARMUP));
    let mut server = None;
    let (addr, pid) = if cli.spawn_server {
        let bin = server_binary(cli)?;
        let s = spawn_server(cli, &bin, phase_for_stages.clone())?;
        let addr = SocketAddr::from(([127, 0, 0, 1], s.agent_port));
        let pid = s.child.id();
        server = Some(s);
        (addr, Some(pid))
    } else {
        let addr = (cli.host.as_str(), cli.port)
            .to_socket_addrs()
            .with_context(|| format!("resolving {}", cli.host))?
            .next()
            .ok_or_else(|| anyhow!("{} has no address", cli.host))?;
        (addr, cli.server_pid)
    };
    let result = drive(cli, agents, addr, pid, &phase_for_stages);
    let mut stage_rows = Vec::new();
    if let Some(mut s) = server {
        stop_server(&mut s);
        if let Some(h) = s.stages.take() {
            stage_rows = h.join().unwrap_or_default();
        }
    }
    let mut r = result?;
    r.stages = summarise_stages(&stage_rows);
    print_run(cli, &r, run);
    Ok(r)
}

fn drive(
    cli: &Cli,
    n: usize,
    addr: SocketAddr,
    pid: Option<u32>,
    stage_flag: &Arc<AtomicU8>,
) -> Result<RunResult> {
    let shared = Arc::new(Shared {
        n,
        cycles: cli.cycles.max(1),
        seconds: cli.seconds.filter(|s| *s > 0.0),
        measured: std::sync::atomic::AtomicU64::new(0),
        warmup: cli.warmup,
        ready: AtomicUsize::new(0),
        phase: AtomicU8::new(PHASE_WARMUP),
        failed: AtomicBool::new(false),
        server_pid: pid,
        start: Mutex::new(None),
        end: Mutex::new(None),
        first_connect: Mutex::new(None),
    });
    let mut handles = Vec::with_capacity(n);
    for i in 0..n {
        let team_b = i % 2 == 1;
        let unum = (i / 2 + 1) as u8;
        let (bx, by) = FORMATION[usize::from(unum) - 1];
        let spec = AgentSpec {
            index: i,
            team: if team_b {
                cli.team_b.clone()
            } else {
                cli.team_a.clone()
            },
            unum,
            robot_type: ROBOT_TYPES[usize::from(unum) - 1],
            beam: (bx, by, 0.0),
        };
        let shared = shared.clone();
        let cli = cli.clone();
        let h = std::thread::Builder::new()
            .name(format!("agent-{i}"))
            .stack_size(256 * 1024)
            .spawn(move || run_agent(spec, addr, &cli, &shared))
            .context("starting an agent thread")?;
        handles.push(h);
    }
    // Mirror the phase for the stage collector (cheap poll until done).
    let mirror = {
        let shared = shared.clone();
        let flag = stage_flag.clone();
        std::thread::spawn(move || loop {
            let p = shared.phase.load(Ordering::Acquire);
            flag.store(p, Ordering::Release);
            if p == PHASE_STOP {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        })
    };
    let results: Vec<AgentResult> = handles
        .into_iter()
        .map(|h| h.join().unwrap_or_default())
        .collect();
    shared.phase.store(PHASE_STOP, Ordering::SeqCst);
    let _ = mirror.join();
    let errors: Vec<&String> = results.iter().filter_map(|r| r.error.as_ref()).collect();
    if !errors.is_empty() {
        bail!("{} agent(s) failed; first: {}", errors.len(), errors[0]);
    }
    let start = shared
        .start
        .lock()
        .unwrap()
        .clone()
        .ok_or_else(|| anyhow!("no measuring window"))?;
    let end = shared
        .end
        .lock()
        .unwrap()
        .clone()
        .ok_or_else(|| anyhow!("measuring window not closed"))?;
    let wall = (end.at - start.at).as_secs_f64();
    let cycles = shared.measured.load(Ordering::Acquire).max(1);
    let sim_cycles = match (start.sim_time, end.sim_time) {
        (Some(a), Some(b)) => Some(((b - a) / STEP).round()),
        _ => None,
    };
    let tck = clk_tck();
    let (cpu_ms, cpu_pct, threads) = match (&start.server, &end.server) {
        (Some(a), Some(b)) => {
            let secs = (b.ticks.saturating_sub(a.ticks)) as f64 / tck;
            let per = sim_cycles.unwrap_or(cycles as f64).max(1.0);
            let mut groups: BTreeMap<String, u64> = BTreeMap::new();
            for (tid, (name, t)) in &b.threads {
                let before = a.threads.get(tid).map(|x| x.1).unwrap_or(0);
                *groups.entry(name.clone()).or_default() += t.saturating_sub(before);
            }
            let threads = groups
                .into_iter()
                .map(|(name, t)| (name, t as f64 / tck * 1000.0 / per))
                .collect();
            (
                Some(secs * 1000.0 / per),
                Some(secs / wall * 100.0),
                threads,
            )
        }
        _ => (None, None, Vec::new()),
    };
    let first_connect = shared
        .first_connect
        .lock()
        .unwrap()
        .ok_or_else(|| anyhow!("nobody connected"))?;
    let last_on_field = results
        .iter()
        .filter_map(|r| r.on_field_at)
        .max()
        .unwrap_or(first_connect);
    let last_connect = results
        .iter()
        .filter_map(|r| r.connected_at)
        .max()
        .unwrap_or(first_connect);
    let self_secs = (end.self_ticks.saturating_sub(start.self_ticks)) as f64 / tck;
    Ok(RunResult {
        agents: n,
        cycles,
        wall,
        cps: cycles as f64 / wall,
        sim_cps: sim_cycles.map(|c| c / wall),
        cpu_ms_per_cycle: cpu_ms,
        cpu_pct,
        threads,
        hwm_kb: end.server.as_ref().and_then(|s| s.hwm_kb),
        rss_start_kb: start.server.as_ref().and_then(|s| s.rss_kb),
        rss_end_kb: end.server.as_ref().and_then(|s| s.rss_kb),
        on_field_s: (last_on_field - first_connect).as_secs_f64(),
        connect_spread_s: (last_connect - first_connect).as_secs_f64(),
        late_gaps: results.iter().map(|r| r.late_gaps).sum(),
        agents_late: results.iter().filter(|r| r.late_gaps > 0).count(),
        max_gap_ms: results
            .iter()
            .map(|r| r.max_gap)
            .max()
            .unwrap_or_default()
            .as_secs_f64()
            * 1000.0,
        skipped_cycles: results.iter().map(|r| r.skipped_cycles).sum(),
        loadgen_cpu_pct: self_secs / wall * 100.0,
        max_frame_bytes: results.iter().map(|r| r.max_frame_bytes).max().unwrap_or(0),
        stages: Vec::new(),
    })
}

/// (key, median, mean, p99) in microseconds over the measuring window.
fn summarise_stages(rows: &[StageRow]) -> Vec<(String, f64, f64, f64)> {
    let mut by_key: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (in_window, fields) in rows {
        if !in_window {
            continue;
        }
        for (k, v) in fields {
            by_key.entry(k.clone()).or_default().push(*v);
        }
    }
    by_key
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_unstable();
            let mean = v.iter().sum::<u64>() as f64 / v.len().max(1) as f64;
            let med = v[v.len() / 2] as f64;
            let p99 = v[(v.len() * 99 / 100).min(v.len() - 1)] as f64;
            (k, med, mean, p99)
        })
        .collect()
}

fn mode_name(cli: &Cli) -> &'static str {
    match (cli.sync, cli.realtime || !cli.sync) {
        (true, true) => "sync+realtime",
        (true, false) => "sync",
        (false, _) => "realtime",
    }
}

/// Whether the server paces cycles by the wall clock (late cycles count).
fn paced(cli: &Cli) -> bool {
    cli.realtime || !cli.sync
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}"))
        .unwrap_or_else(|| "n/a".into())
}

fn print_run(cli: &Cli, r: &RunResult, run: usize) {
    println!(
        "-- {} agents, {} mode, run {}: {} frames in {:.2} s",
        r.agents,
        mode_name(cli),
        run + 1,
        r.cycles,
        r.wall
    );
    println!(
        "   cycles/s          {:.1} (frames at agent 0; server clock: {} cycles/s)",
        r.cps,
        opt(r.sim_cps, 1)
    );
    println!(
        "   server CPU        {} ms/cycle, {} % of one core",
        opt(r.cpu_ms_per_cycle, 3),
        opt(r.cpu_pct, 1)
    );
    if !r.threads.is_empty() {
        let parts: Vec<String> = r
            .threads
            .iter()
            .filter(|(_, ms)| *ms > 0.0)
            .map(|(n, ms)| format!("{n} {ms:.3}"))
            .collect();
        println!("   by thread         {} (ms/cycle)", parts.join(", "));
    }
    println!(
        "   server memory     peak RSS {} MB, RSS {} -> {} MB over the window",
        opt(r.hwm_kb.map(|k| k as f64 / 1024.0), 1),
        opt(r.rss_start_kb.map(|k| k as f64 / 1024.0), 1),
        opt(r.rss_end_kb.map(|k| k as f64 / 1024.0), 1)
    );
    println!(
        "   on the field      {:.3} s after the first connection (connections spread over {:.3} s)",
        r.on_field_s, r.connect_spread_s
    );
    if paced(cli) {
        println!(
            "   late cycles       {} frame gaps > {:.0} ms in {} agent(s), max gap {:.1} ms, {} skipped server cycles",
            r.late_gaps,
            STEP * LATE_FACTOR * 1000.0,
            r.agents_late,
            r.max_gap_ms,
            r.skipped_cycles
        );
    } else {
        println!(
            "   frame gaps        max {:.1} ms (sync mode without the real-time timer: gaps are not late cycles)",
            r.max_gap_ms
        );
    }
    println!(
        "   loadgen           {:.1} % of one core; largest frame {} bytes",
        r.loadgen_cpu_pct, r.max_frame_bytes
    );
    for (k, med, mean, p99) in &r.stages {
        println!("   stage {k:<12} median {med:.0} us, mean {mean:.0} us, p99 {p99:.0} us");
    }
    println!(
        "RESULT agents={} mode={} cycles={} wall_s={:.3} cps={:.1} cpu_ms_per_cycle={} cpu_pct={} peak_rss_mb={} on_field_s={:.3} late={} max_gap_ms={:.1} skipped={} loadgen_cpu_pct={:.1}",
        r.agents,
        mode_name(cli),
        r.cycles,
        r.wall,
        r.cps,
        opt(r.cpu_ms_per_cycle, 3),
        opt(r.cpu_pct, 1),
        opt(r.hwm_kb.map(|k| k as f64 / 1024.0), 1),
        r.on_field_s,
        if paced(cli) { r.late_gaps.to_string() } else { "-".into() },
        r.max_gap_ms,
        r.skipped_cycles,
        r.loadgen_cpu_pct
    );
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The B variant of an A/B comparison, if one was asked for.
fn variant_b(cli: &Cli) -> Option<Cli> {
    if cli.b_server_bin.is_none() && cli.b_server_args.is_empty() {
        return None;
    }
    let mut b = cli.clone();
    if let Some(bin) = &cli.b_server_bin {
        b.server_bin = Some(bin.clone());
    }
    b.server_args.extend(cli.b_server_args.iter().cloned());
    Some(b)
}

/// Ratio B/A of each side-by-side pair of runs, for one figure.
fn pair_ratios(
    a: &[RunResult],
    b: &[RunResult],
    f: &dyn Fn(&RunResult) -> Option<f64>,
) -> Vec<f64> {
    a.iter()
        .zip(b)
        .filter_map(|(x, y)| Some(f(y)? / f(x)?))
        .collect()
}

/// Runs A and B alternately and prints the comparison table.
fn compare(cli: &Cli, b: &Cli) -> Result<()> {
    let mut rows = Vec::new();
    for &n in &cli.agents {
        let (mut ra, mut rb) = (Vec::new(), Vec::new());
        for run in 0..cli.runs.max(1) {
            println!("== A, run {}", run + 1);
            ra.push(one_run(cli, n, run)?);
            println!("== B, run {}", run + 1);
            rb.push(one_run(b, n, run)?);
        }
        rows.push((n, ra, rb));
    }
    println!();
    println!(
        "A/B ({} mode, {} alternating pair(s) each; B/A = median of the pairs' ratios)",
        mode_name(cli),
        cli.runs.max(1)
    );
    println!("| agents | A cycles/s | B cycles/s | B/A cycles/s | A CPU ms/cycle | B CPU ms/cycle | B/A CPU |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for (n, ra, rb) in &rows {
        let cps = |r: &RunResult| Some(r.cps);
        let cpu = |r: &RunResult| r.cpu_ms_per_cycle;
        let med = |v: &[RunResult], f: &dyn Fn(&RunResult) -> Option<f64>| {
            median(v.iter().filter_map(f).collect())
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            n,
            opt(med(ra, &cps), 0),
            opt(med(rb, &cps), 0),
            opt(median(pair_ratios(ra, rb, &cps)), 3),
            opt(med(ra, &cpu), 3),
            opt(med(rb, &cpu), 3),
            opt(median(pair_ratios(ra, rb, &cpu)), 3),
        );
    }
    Ok(())
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    if (cli.agents.len() > 1 || cli.runs > 1) && !cli.spawn_server {
        bail!("a list of agent counts or --runs > 1 needs --spawn-server (a fresh server per run)");
    }
    let b = variant_b(&cli);
    if b.is_some() && !cli.spawn_server {
        bail!("an A/B comparison (--b-server-bin / --b-server-arg) needs --spawn-server");
    }
    if !cli.sync && !cli.realtime {
        eprintln!("note: neither --sync nor --realtime given; assuming a real-time server");
    }
    let date = Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    println!(
        "loadgen: {} mode, {} cores, {}",
        mode_name(&cli),
        cores,
        date.trim()
    );
    if let Some(b) = &b {
        return compare(&cli, b);
    }
    let mut table: Vec<(usize, Vec<RunResult>)> = Vec::new();
    for &n in &cli.agents {
        let mut runs = Vec::new();
        for run in 0..cli.runs.max(1) {
            runs.push(one_run(&cli, n, run)?);
        }
        table.push((n, runs));
    }
    if table.len() > 1 || cli.runs > 1 {
        println!();
        println!(
            "SUMMARY ({} mode, median of {} run(s) each, {} measured)",
            mode_name(&cli),
            cli.runs.max(1),
            match cli.seconds {
                Some(s) => format!("{s} s"),
                None => format!("{} frames", cli.cycles),
            }
        );
        println!("| agents | cycles/s | server CPU ms/cycle | CPU % of one core | peak RSS MB | on field s | late frames |");
        println!("|---:|---:|---:|---:|---:|---:|---:|");
        for (n, runs) in &table {
            let m =
                |f: &dyn Fn(&RunResult) -> Option<f64>| median(runs.iter().filter_map(f).collect());
            println!(
                "| {} | {} | {} | {} | {} | {} | {} |",
                n,
                opt(m(&|r| Some(r.cps)), 0),
                opt(m(&|r| r.cpu_ms_per_cycle), 3),
                opt(m(&|r| r.cpu_pct), 1),
                opt(m(&|r| r.hwm_kb.map(|k| k as f64 / 1024.0)), 1),
                opt(m(&|r| Some(r.on_field_s)), 3),
                if paced(&cli) {
                    opt(m(&|r| Some(r.late_gaps as f64)), 0)
                } else {
                    "-".into()
                },
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cps: f64, cpu: Option<f64>) -> RunResult {
        RunResult {
            cps,
            cpu_ms_per_cycle: cpu,
            ..RunResult::default()
        }
    }

    #[test]
    fn ab_ratios_pair_runs_side_by_side() {
        // The machine slows down 2x between the pairs; each pair's ratio
        // stays 0.5, which the median of the ratios keeps and a ratio of
        // medians would not.
        let a = [
            run(100.0, Some(10.0)),
            run(50.0, Some(20.0)),
            run(100.0, None),
        ];
        let b = [
            run(200.0, Some(5.0)),
            run(100.0, Some(10.0)),
            run(150.0, Some(9.0)),
        ];
        let cps = pair_ratios(&a, &b, &|r| Some(r.cps));
        assert_eq!(cps, vec![2.0, 2.0, 1.5]);
        assert_eq!(median(cps), Some(2.0));
        // A pair with a missing figure is left out.
        let cpu = pair_ratios(&a, &b, &|r| r.cpu_ms_per_cycle);
        assert_eq!(cpu, vec![0.5, 0.5]);
        assert_eq!(median(cpu), Some(0.5));
    }

    #[test]
    fn variant_b_replaces_the_binary_and_appends_arguments() {
        let plain = Cli::parse_from(["loadgen", "--spawn-server", "--server-arg=--sync"]);
        assert!(variant_b(&plain).is_none());
        let cli = Cli::parse_from([
            "loadgen",
            "--spawn-server",
            "--server-arg=--sync",
            "--b-server-bin",
            "/tmp/other",
            "--b-server-arg=--config",
            "--b-server-arg=b.ron",
        ]);
        let b = variant_b(&cli).expect("a B variant");
        assert_eq!(b.server_bin, Some(PathBuf::from("/tmp/other")));
        assert_eq!(b.server_args, ["--sync", "--config", "b.ron"]);
        assert_eq!(cli.server_args, ["--sync"]);
    }
}
