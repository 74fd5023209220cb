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
//! timing lines are collected for the same window (median, mean, p99 and
//! the worst cycle per stage; in real time `late_us` is how long after its
//! due time a cycle's send phase started). A paced run also lists the game
//! times of the first late frames, to find them in the server's trace.
//!
//! `--agents` takes a list (`1,2,6,11,22`) and `--runs` repeats each size
//! with a fresh server: the summary table then shows medians.
//!
//! Named teams (`--team-a`, `--team-b`) make it two stand-in teams for a
//! match, not a measurement: team A's first agent joins before the others
//! connect, so team A is the left side; the robots keep their legs still
//! and stand in their formation (load agents: they do not walk or kick);
//! no figures are printed unless `--bench` is given; and the server
//! closing the connections (`killsim`, `AutomaticQuit`) ends the program
//! with status 0.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Result};
use clap::Parser;

mod agent;
mod report;
mod run;
mod sample;
mod server;

use report::{compare, median, mode_name, opt, paced, variant_b};
use run::{one_run, RunResult};

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
    /// Frames measured (after all agents are on the field and the warm-up)
    /// [default: 3000; with named teams: until the server ends the match].
    #[arg(long)]
    cycles: Option<u64>,
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
    /// Name of team A, the left side. Naming a team plays a match: see
    /// the program's description [default: LoadA, measuring].
    #[arg(long, value_name = "NAME")]
    team_a: Option<String>,
    /// Name of team B, the right side [default: LoadB, measuring].
    #[arg(long, value_name = "NAME")]
    team_b: Option<String>,
    /// With named teams, print the measurement all the same.
    #[arg(long)]
    bench: bool,
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

impl Cli {
    /// Team A's name.
    fn team_a(&self) -> &str {
        self.team_a.as_deref().unwrap_or("LoadA")
    }

    /// Team B's name.
    fn team_b(&self) -> &str {
        self.team_b.as_deref().unwrap_or("LoadB")
    }

    /// Whether the agents are stand-in teams for a match (a team named)
    /// rather than a measurement.
    fn plays(&self) -> bool {
        self.team_a.is_some() || self.team_b.is_some()
    }

    /// Frames to run after the warm-up, unless `--seconds` says otherwise.
    fn frames(&self) -> u64 {
        match self.cycles {
            Some(n) => n.max(1),
            None if self.plays() => u64::MAX,
            None => 3000,
        }
    }

    /// Whether the measurement is printed.
    fn reports(&self) -> bool {
        self.bench || !self.plays()
    }
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
    if !cli.sync && !cli.realtime && cli.reports() {
        eprintln!("note: neither --sync nor --realtime given; assuming a real-time server");
    }
    if !cli.reports() {
        let n = cli.agents.first().copied().unwrap_or(0);
        let ended = one_run(&cli, n, 0)?;
        println!(
            "loadgen: {} (left) and {} (right), {n} agents: {}",
            cli.team_a(),
            cli.team_b(),
            if ended.server_closed {
                "the server ended the match"
            } else {
                "stopped after --seconds / --cycles"
            }
        );
        return Ok(());
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
                None => format!("{} frames", cli.frames()),
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
