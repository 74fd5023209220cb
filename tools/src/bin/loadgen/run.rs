//! One run: start the agents, wait for the window to close, compute the
//! figures.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::net::ToSocketAddrs;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use crate::agent::{run_agent, AgentResult, AgentSpec, Mark, Shared, PHASE_STOP, PHASE_WARMUP};
use crate::report::{print_run, summarise_stages};
use crate::server::{server_binary, spawn_server, stop_server};
use crate::{Cli, FORMATION, ROBOT_TYPES, STEP};

#[derive(Debug, Clone, Default)]
pub(crate) struct RunResult {
    pub(crate) agents: usize,
    pub(crate) cycles: u64,
    pub(crate) wall: f64,
    pub(crate) cps: f64,
    pub(crate) sim_cps: Option<f64>,
    pub(crate) cpu_ms_per_cycle: Option<f64>,
    pub(crate) cpu_pct: Option<f64>,
    pub(crate) threads: Vec<(String, f64)>,
    pub(crate) hwm_kb: Option<u64>,
    pub(crate) rss_start_kb: Option<u64>,
    pub(crate) rss_end_kb: Option<u64>,
    pub(crate) on_field_s: f64,
    pub(crate) connect_spread_s: f64,
    pub(crate) late_gaps: u64,
    pub(crate) agents_late: usize,
    /// Game times of the late frames seen by the first agent that had any.
    pub(crate) late_at: Vec<f64>,
    pub(crate) max_gap_ms: f64,
    pub(crate) skipped_cycles: u64,
    pub(crate) loadgen_cpu_pct: f64,
    pub(crate) max_frame_bytes: usize,
    pub(crate) stages: Vec<(String, f64, f64, f64, f64)>,
    /// The server closed the connections (stand-in teams only).
    pub(crate) server_closed: bool,
}

pub(crate) fn one_run(cli: &Cli, agents: usize, run: usize) -> Result<RunResult> {
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
    if cli.reports() {
        print_run(cli, &r, run);
    }
    Ok(r)
}

pub(crate) fn drive(
    cli: &Cli,
    n: usize,
    addr: SocketAddr,
    pid: Option<u32>,
    stage_flag: &Arc<AtomicU8>,
) -> Result<RunResult> {
    let shared = Arc::new(Shared {
        n,
        cycles: cli.frames(),
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
        first_joined: (Mutex::new(!cli.plays()), std::sync::Condvar::new()),
    });
    let handles = spawn_agents(cli, n, addr, &shared)?;
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
    let server_closed = results.iter().any(|r| r.server_closed);
    if server_closed && !cli.reports() {
        // A match the server ended: nothing measured is wanted.
        return Ok(RunResult {
            agents: n,
            server_closed,
            ..RunResult::default()
        });
    }
    let (start, end) = window(&shared)?;
    let wall = (end.at - start.at).as_secs_f64();
    let cycles = shared.measured.load(Ordering::Acquire).max(1);
    let sim_cycles = match (start.sim_time, end.sim_time) {
        (Some(a), Some(b)) => Some(((b - a) / STEP).round()),
        _ => None,
    };
    let tck = rcss3d::procfs::clock_ticks_per_sec();
    let per = sim_cycles.unwrap_or(cycles as f64).max(1.0);
    let (cpu_ms, cpu_pct, threads) = server_cpu(&start, &end, tck, per, wall);
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
        late_at: results
            .iter()
            .find(|r| !r.late_at.is_empty())
            .map(|r| r.late_at.clone())
            .unwrap_or_default(),
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
        server_closed,
    })
}

/// One thread per agent, each running its lifecycle and measurements.
fn spawn_agents(
    cli: &Cli,
    n: usize,
    addr: SocketAddr,
    shared: &Arc<Shared>,
) -> Result<Vec<std::thread::JoinHandle<AgentResult>>> {
    let mut handles = Vec::with_capacity(n);
    for i in 0..n {
        let team_b = i % 2 == 1;
        let unum = (i / 2 + 1) as u8;
        let (bx, by) = FORMATION[usize::from(unum) - 1];
        let spec = AgentSpec {
            index: i,
            team: if team_b {
                cli.team_b().to_owned()
            } else {
                cli.team_a().to_owned()
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
    Ok(handles)
}

/// The server's CPU between two marks: milliseconds per cycle (`per`
/// cycles), percent of one core over `wall` seconds, and milliseconds per
/// cycle for each group of threads of the same name.
fn server_cpu(
    start: &Mark,
    end: &Mark,
    tck: f64,
    per: f64,
    wall: f64,
) -> (Option<f64>, Option<f64>, Vec<(String, f64)>) {
    match (&start.server, &end.server) {
        (Some(a), Some(b)) => {
            let secs = (b.ticks.saturating_sub(a.ticks)) as f64 / tck;
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
    }
}

/// The marks at the start and the end of the measuring window.
fn window(shared: &Shared) -> Result<(Mark, Mark)> {
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
    Ok((start, end))
}
