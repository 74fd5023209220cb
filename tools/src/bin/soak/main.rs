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
//! (`--log`, default a temporary file) passes the same check as
//! `rcss3d check-log` (complete lines, a full state first, every line
//! valid for RoboViz, every delta fitting its full state). The last lines of the output are `RESULT key value`
//! pairs for scripts (tests/soak.rs reads them). The exit code is 0 when
//! every check passes, 1 otherwise.
//!
//! Everything binds and connects to 127.0.0.1 only.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use clap::Parser;
use rcss3d::monitor::control::LogSummary;
use rcss3d::net::client::AgentClient;
use rcss3d::procfs::{self, cpu_secs};

mod chaos_client;
mod honest;
mod monitors;
mod server;
mod wire;

use chaos_client::{chaos, ChaosStats, CHAOS_KINDS};
use honest::{honest_agent, AgentStats};
use monitors::{monitor, MonitorStats};
use server::{median, Server};

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

    print_header(&cli, &log);
    let (mut server, agent_addr, monitor_addr) = Server::start(&cli, &log).await?;
    wait_for_ports(&mut server, monitor_addr).await?;
    let start = Instant::now();
    let measure_from = start + warmup;
    let until = start + run;
    let measure_gate = Arc::new(Mutex::new(Some(measure_from)));

    let Clients {
        mon_a,
        mon_b,
        mon_tasks,
        agents,
        chaos_stats,
        chaos_task,
    } = spawn_clients(
        &cli,
        (agent_addr, monitor_addr),
        Times {
            start,
            measure_from,
            until,
            stall: (start + warmup.max(run / 3), stall_len),
        },
        measure_gate,
    )
    .await;

    // RSS every second after warm-up; progress every 10 s.
    tokio::time::sleep_until(measure_from.into()).await;
    let pid = server.pid();
    let cpu_start = cpu_secs(pid);
    let load_start = load_avg();
    println!("warm-up done after {:.0} s", warmup.as_secs_f64());
    let watched = Watched {
        start,
        agents: &agents,
        monitors: [&mon_a, &mon_b],
        chaos: &chaos_stats,
    };
    let (rss, crashed) = sample(&mut server, until, &watched).await;
    let m = measure(&rss, measure_from, cpu_start, pid);
    let _ = tokio::time::timeout(Duration::from_secs(15), chaos_task).await;
    for t in mon_tasks {
        let _ = tokio::time::timeout(Duration::from_secs(5), t).await;
    }
    let (clean_exit, stop_secs, how) = server.stop().await;
    let panics = server.panics();

    let report = Report::new(
        m,
        (clean_exit, stop_secs, how, panics, crashed),
        load_start,
        // Cycle rate from the first agent's clock, in 1 s windows after
        // warm-up.
        cycle_windows(&agents, warmup),
        agent_figures(&agents, run),
        &log,
    );
    let seen = Seen {
        server: &server,
        monitors: [&mon_a, &mon_b],
        chaos: &chaos_stats,
        stall_len,
    };
    print_report(&report, &seen);
    let ok = report.ok();
    print_results(&report, &seen);
    if ok && temp_log {
        let _ = std::fs::remove_file(&log);
    }
    if ok {
        Ok(())
    } else {
        std::process::exit(1)
    }
}

/// The machine's 1-minute load average, `?` when unknown.
fn load_avg() -> String {
    procfs::load_avg().unwrap_or_else(|| "?".into())
}

/// What the progress lines show.
struct Watched<'a> {
    start: Instant,
    agents: &'a [Arc<AgentStats>],
    monitors: [&'a MonitorStats; 2],
    chaos: &'a ChaosStats,
}

/// The server's RSS every second until `until`, with a progress line
/// every 10 s; why the run stopped early, if it did (the server exited,
/// or its memory ran away and it was killed).
async fn sample(
    server: &mut Server,
    until: Instant,
    watched: &Watched<'_>,
) -> (Vec<u64>, Option<String>) {
    let pid = server.pid();
    let mut rss: Vec<u64> = Vec::new();
    let mut crashed: Option<String> = None;
    while Instant::now() < until {
        tokio::time::sleep(
            Duration::from_secs(1).min(until.saturating_duration_since(Instant::now())),
        )
        .await;
        if let Some(how) = server.exited() {
            crashed = Some(how);
            break;
        }
        let now_rss = procfs::status_kib(pid, "VmRSS").unwrap_or(0);
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
                watched.start.elapsed().as_secs_f64(),
                now_rss,
                watched
                    .agents
                    .first()
                    .map(|a| a.frames.load(Ordering::Relaxed))
                    .unwrap_or(0),
                watched.monitors[0].frames.load(Ordering::Relaxed),
                watched.monitors[1].frames.load(Ordering::Relaxed),
                watched
                    .chaos
                    .done
                    .iter()
                    .map(|d| d.load(Ordering::Relaxed))
                    .sum::<u64>()
            );
        }
    }
    (rss, crashed)
}

/// Cycles simulated after warm-up, by the first agent's clock, and how
/// many 1 s windows held 50 Hz (48 steps or more).
struct CycleWindows {
    cycles: f64,
    windows: u64,
    held: u64,
}

fn cycle_windows(agents: &[Arc<AgentStats>], warmup: Duration) -> CycleWindows {
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
    CycleWindows {
        cycles,
        windows,
        held,
    }
}

/// The soak run's figures.
struct Report {
    panics: u64,
    crashed: Option<String>,
    clean_exit: bool,
    stop_secs: f64,
    how: String,
    cycles: f64,
    measured: f64,
    rate: f64,
    held: u64,
    windows: u64,
    cores: usize,
    load_start: String,
    load_end: String,
    cpu_share: f64,
    late: u64,
    skipped: u64,
    agent_frames: u64,
    max_gap_ms: f64,
    early: Vec<String>,
    /// Seconds of RSS samples in each median.
    w: usize,
    rss_start: u64,
    rss_end: u64,
    growth: f64,
    rss_max: u64,
    log_check: Result<LogSummary, rcss3d::monitor::control::ControlError>,
    log_bytes: u64,
    agents: usize,
}

impl Report {
    /// Whether the run passed.
    fn ok(&self) -> bool {
        self.panics == 0
            && self.crashed.is_none()
            && self.clean_exit
            && self.growth < 10.0
            && self.max_gap_ms < 1000.0
            && self.early.is_empty()
            && self.log_check.is_ok()
    }
}

/// The server and the clients the report describes.
struct Seen<'a> {
    server: &'a Server,
    monitors: [&'a MonitorStats; 2],
    chaos: &'a ChaosStats,
    stall_len: Duration,
}

/// The report for a reader.
fn print_report(r: &Report, seen: &Seen<'_>) {
    let Report {
        panics,
        crashed,
        clean_exit,
        stop_secs,
        how,
        cycles,
        measured,
        rate,
        held,
        windows,
        cores,
        load_start,
        load_end,
        cpu_share,
        late,
        skipped,
        agent_frames,
        max_gap_ms,
        early,
        w,
        rss_start,
        rss_end,
        growth,
        rss_max,
        log_check,
        log_bytes,
        agents: n_agents,
    } = r;
    println!();
    println!("== soak report ==");
    println!(
        "server: stopped in {stop_secs:.2} s ({how}); crashed during run: {}",
        crashed.as_deref().unwrap_or("no")
    );
    println!("panics: {panics}");
    if let Server::Child { stderr, .. } = seen.server {
        println!(
            "server log: {} lines, {} warnings",
            stderr.lines.load(Ordering::Relaxed),
            stderr.warnings.load(Ordering::Relaxed)
        );
        if *panics > 0 || crashed.is_some() || !clean_exit {
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
        n_agents
    );
    println!("frames an honest agent missed (clock jumped > 1 step): {skipped}");
    println!("honest agents: {agent_frames} frames; longest gap {max_gap_ms:.0} ms; disconnected early: {}", early.len());
    for d in early {
        println!("  {d}");
    }
    println!(
        "RSS (median of the first / last {w} s after warm-up): {rss_start} KiB -> {rss_end} KiB ({growth:+.1} %), max {rss_max} KiB"
    );
    println!(
        "monitor 1: {} frames, {} full states, {} unbalanced, longest gap {:.0} ms, {} kick-offs, ended: {}",
        seen.monitors[0].frames.load(Ordering::Relaxed),
        seen.monitors[0].full_states.load(Ordering::Relaxed),
        seen.monitors[0].unbalanced.load(Ordering::Relaxed),
        seen.monitors[0].max_gap_us.load(Ordering::Relaxed) as f64 / 1000.0,
        seen.monitors[0].kickoffs.load(Ordering::Relaxed),
        seen.monitors[0].ended.lock().ok().and_then(|e| e.clone()).unwrap_or_default()
    );
    println!(
        "monitor 2 (stopped reading {:.0} s): {} frames, {} after the stall, {} unbalanced, ended: {}",
        seen.stall_len.as_secs_f64(),
        seen.monitors[1].frames.load(Ordering::Relaxed),
        seen.monitors[1].frames_after_stall.load(Ordering::Relaxed),
        seen.monitors[1].unbalanced.load(Ordering::Relaxed),
        seen.monitors[1].ended.lock().ok().and_then(|e| e.clone()).unwrap_or_default()
    );
    let kinds: Vec<String> = CHAOS_KINDS
        .iter()
        .zip(seen.chaos.done.iter())
        .map(|(k, d)| format!("{k} {}", d.load(Ordering::Relaxed)))
        .collect();
    println!(
        "chaos: {}; closed by server {}; connect failures {}",
        kinds.join(", "),
        seen.chaos.closed_by_server.load(Ordering::Relaxed),
        seen.chaos.connect_failed.load(Ordering::Relaxed)
    );
    match log_check {
        Ok(summary) => println!("log ({log_bytes} bytes): {summary}"),
        Err(e) => println!("log ({log_bytes} bytes): INVALID: {e}"),
    }
}

/// The machine-readable summary (tests/soak.rs).
fn print_results(r: &Report, seen: &Seen<'_>) {
    let Report {
        panics,
        crashed,
        clean_exit,
        stop_secs,
        cycles,
        rate,
        held,
        windows,
        load_end,
        cpu_share,
        late,
        skipped,
        max_gap_ms,
        early,
        rss_start,
        rss_end,
        growth,
        log_check,
        ..
    } = r;
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
        seen.monitors[0].frames.load(Ordering::Relaxed)
    );
    println!(
        "RESULT stalled_monitor_frames_after {}",
        seen.monitors[1].frames_after_stall.load(Ordering::Relaxed)
    );
    println!("RESULT log_valid {}", log_check.is_ok());
    println!(
        "RESULT log_lines {}",
        log_check.as_ref().map_or(0, |s| s.check.lines)
    );
    println!("RESULT ok {}", r.ok());
}

/// Waits until the server's monitor port takes connections.
async fn wait_for_ports(server: &mut Server, monitor_addr: std::net::SocketAddr) -> Result<()> {
    let t_wait = Instant::now();
    loop {
        if AgentClient::connect(monitor_addr).await.is_ok() {
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
    Ok(())
}

/// The first line: what is run.
fn print_header(cli: &Cli, log: &std::path::Path) {
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
}

/// What the honest agents saw.
struct AgentFigures {
    late: u64,
    skipped: u64,
    max_gap_ms: f64,
    agent_frames: u64,
    /// Honest agents whose connection ended before the server was stopped.
    early: Vec<String>,
    agents: usize,
}

fn agent_figures(agents: &[Arc<AgentStats>], run: Duration) -> AgentFigures {
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
    let early: Vec<String> = agents
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let (t, why) = a.ended.lock().ok()?.clone()?;
            (t < run.as_secs_f64()).then(|| format!("agent {} at {t:.1} s: {why}", i + 1))
        })
        .collect();
    AgentFigures {
        late,
        skipped,
        max_gap_ms,
        agent_frames,
        early,
        agents: agents.len(),
    }
}

/// When the run starts, starts measuring and ends, and when and how long
/// the second monitor stops reading.
struct Times {
    start: Instant,
    measure_from: Instant,
    until: Instant,
    stall: (Instant, Duration),
}

/// The clients of the run and their figures.
struct Clients {
    mon_a: Arc<MonitorStats>,
    mon_b: Arc<MonitorStats>,
    mon_tasks: Vec<tokio::task::JoinHandle<()>>,
    agents: Vec<Arc<AgentStats>>,
    chaos_stats: Arc<ChaosStats>,
    chaos_task: tokio::task::JoinHandle<()>,
}

/// Two monitors first, so they see the whole match; then the honest
/// agents one by one; then the chaos clients.
async fn spawn_clients(
    cli: &Cli,
    (agent_addr, monitor_addr): (std::net::SocketAddr, std::net::SocketAddr),
    times: Times,
    measure_gate: Arc<Mutex<Option<Instant>>>,
) -> Clients {
    // Monitors first, so they see the whole match.
    let mon_a = Arc::new(MonitorStats::default());
    let mon_b = Arc::new(MonitorStats::default());
    let mon_tasks = vec![
        tokio::spawn(monitor(
            monitor_addr,
            mon_a.clone(),
            true,
            None,
            times.measure_from,
            times.until,
            times.start,
        )),
        tokio::spawn(monitor(
            monitor_addr,
            mon_b.clone(),
            false,
            Some(times.stall),
            times.measure_from,
            times.until,
            times.start,
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
            times.start,
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
            times.until,
            chaos_stats.clone(),
        ))
    } else {
        tokio::spawn(async {})
    };

    Clients {
        mon_a,
        mon_b,
        mon_tasks,
        agents,
        chaos_stats,
        chaos_task,
    }
}

/// Figures taken as the measured part ends, before the server stops.
struct Measured {
    /// Seconds of RSS samples in each median.
    w: usize,
    rss_start: u64,
    rss_end: u64,
    rss_max: u64,
    growth: f64,
    measured: f64,
    cpu_share: f64,
    load_end: String,
    cores: usize,
}

fn measure(rss: &[u64], measure_from: Instant, cpu_start: Option<f64>, pid: u32) -> Measured {
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
    let growth = if rss_start > 0 {
        (rss_end as f64 - rss_start as f64) / rss_start as f64 * 100.0
    } else {
        f64::NAN
    };
    Measured {
        w,
        rss_start,
        rss_end,
        rss_max,
        growth,
        measured,
        cpu_share,
        load_end,
        cores,
    }
}

impl Report {
    /// The report from its parts: what was measured, how the server
    /// stopped (clean exit, seconds, how, panics, why it stopped early),
    /// the load at warm-up, the cycles, the honest agents and the log.
    fn new(
        m: Measured,
        (clean_exit, stop_secs, how, panics, crashed): (bool, f64, String, u64, Option<String>),
        load_start: String,
        cw: CycleWindows,
        af: AgentFigures,
        log: &std::path::Path,
    ) -> Report {
        let rate = if m.measured > 0.0 {
            cw.cycles / m.measured
        } else {
            0.0
        };
        Report {
            panics,
            crashed,
            clean_exit,
            stop_secs,
            how,
            cycles: cw.cycles,
            measured: m.measured,
            rate,
            held: cw.held,
            windows: cw.windows,
            cores: m.cores,
            load_start,
            load_end: m.load_end,
            cpu_share: m.cpu_share,
            late: af.late,
            skipped: af.skipped,
            agent_frames: af.agent_frames,
            max_gap_ms: af.max_gap_ms,
            agents: af.agents,
            early: af.early,
            w: m.w,
            rss_start: m.rss_start,
            rss_end: m.rss_end,
            growth: m.growth,
            rss_max: m.rss_max,
            log_check: LogSummary::of_file(log),
            log_bytes: std::fs::metadata(log).map_or(0, |x| x.len()),
        }
    }
}
