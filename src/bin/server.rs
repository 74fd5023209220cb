//! `rcss3d`: the server binary. Without a subcommand it runs the server:
//! command line -> Config, tracing setup, bind both ports, run until
//! Ctrl-C/SIGTERM, `(killsim)` or the end of the match. The subcommands are
//! small monitor-port clients for everyday chores (`ctl`, `watch`), a
//! match-log checker (`check-log`) and the web monitor's log player
//! (`replay`).

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

use rcss3d::config::Config;
use rcss3d::monitor::control::{
    send_control, watch, Control, ControlOptions, ControlOutcome, LogSummary,
};
use rcss3d::rules::{PlayMode, Side};

/// A SimSpark-compatible RoboCup 3D soccer simulator (rcssserver3d 0.7.1
/// protocol). Without a subcommand it runs the server with the embedded
/// defaults (conf/server.ron), changed by --config and the flags below.
#[derive(Parser, Debug)]
#[command(version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    server: ServerArgs,
}

/// The embedded defaults, for the help text.
fn defaults() -> &'static Config {
    static DEFAULTS: OnceLock<Config> = OnceLock::new();
    DEFAULTS.get_or_init(|| Config::embedded().unwrap_or_default())
}

/// `help` text ending in the embedded default of a setting; a `--config`
/// file's value replaces that default, a flag overrides both.
fn with_default(help: &str, default: impl std::fmt::Display) -> String {
    format!("{help} [default: {default}]")
}

#[derive(Args, Debug)]
struct ServerArgs {
    /// RON configuration file (replaces the embedded conf/server.ron;
    /// missing keys keep their defaults; flags override it).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[arg(long, value_name = "PORT", help = with_default("Agent port", defaults().agent_port))]
    agent_port: Option<u16>,
    #[arg(
        long,
        alias = "server-port",
        value_name = "PORT",
        help = with_default(
            "Monitor and trainer port (--server-port is the reference's name for it)",
            defaults().monitor_port,
        )
    )]
    monitor_port: Option<u16>,
    #[arg(
        long,
        help = with_default(
            "agentSyncMode: wait for every agent's (syn) before each cycle. Turns the \
             real-time timer off unless --real-time is given too",
            if defaults().sync_mode { "on" } else { "off" },
        )
    )]
    sync: bool,
    #[arg(
        long,
        help = with_default(
            "Keep the real-time timer on (with --sync: wait for agents and never run \
             faster than real time)",
            if defaults().real_time { "on; off with --sync" } else { "off" },
        )
    )]
    real_time: bool,
    #[arg(
        long,
        value_name = "N",
        help = with_default(
            "Seed of the server RNG (0 = random, printed at start)",
            defaults().seed,
        )
    )]
    seed: Option<u64>,
    #[arg(
        long,
        value_name = "PATH",
        help = with_default(
            "Write the match log to this file (gzip if it ends in .gz; RoboViz replays it)",
            defaults()
                .monitor
                .log
                .as_ref()
                .map_or_else(|| "no log".to_owned(), |p| p.display().to_string()),
        )
    )]
    log: Option<PathBuf>,
    #[arg(
        long,
        value_name = "ADDR",
        help = with_default("Address both ports listen on", defaults().bind)
    )]
    bind: Option<std::net::IpAddr>,
    /// Serve the 3D web monitor (page + live stream) on this port [default:
    /// off].
    #[arg(long, value_name = "PORT")]
    web_port: Option<u16>,
    /// Real-time scheduling for the simulation thread: SCHED_FIFO (priority
    /// 10 unless configured) and idle CPUs kept polling
    /// (/dev/cpu_dma_latency = 0). Needs root or CAP_SYS_NICE; what is
    /// refused is logged and skipped [default: off; config key `latency`].
    #[arg(long)]
    low_latency: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Play a match log in the web monitor (open the printed URL).
    Replay {
        /// RON configuration file (models directory, field, bind address).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        #[command(flatten)]
        args: rcss3d::web::ReplayArgs,
    },
    /// Send a trainer command to a running server's monitor port and wait
    /// until the game state shows its effect.
    Ctl(CtlArgs),
    /// Follow a running match: one line (time, half, play mode, teams,
    /// score) per change and every few seconds of game time, until the
    /// server stops.
    Watch(WatchArgs),
    /// Check a match log (plain or gzip) line by line as RoboViz would read
    /// it and summarise it; exits 1 naming the first bad line.
    CheckLog {
        /// The log file.
        file: PathBuf,
    },
}

#[derive(Args, Debug)]
struct CtlArgs {
    /// The server's monitor port.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:3200")]
    monitor: String,
    /// Trainer secret of a guarded monitor port (sent as `(auth SECRET)`).
    #[arg(long, value_name = "SECRET")]
    secret: Option<String>,
    /// Seconds to wait for the effect.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    timeout: f64,
    /// Send and return without waiting for the effect.
    #[arg(long)]
    no_wait: bool,
    #[command(subcommand)]
    command: CtlCommand,
}

#[derive(Subcommand, Debug)]
enum CtlCommand {
    /// Kick off: `(kickOff SIDE)`.
    Kickoff {
        /// Left, Right, or None (the referee chooses).
        #[arg(value_parser = parse_kickoff_side)]
        side: KickoffSide,
    },
    /// Set the play mode: `(playMode MODE)`.
    Playmode {
        /// A play mode name as agents see it: BeforeKickOff, KickOff_Left,
        /// PlayOn, Goal_Left, corner_kick_right, ...
        #[arg(value_parser = parse_play_mode)]
        mode: PlayMode,
    },
    /// Drop the ball where it is and play on: `(dropBall)`.
    Dropball,
    /// Set the score: `(score (left L) (right R))`.
    Score {
        /// Goals of the left team.
        left: u32,
        /// Goals of the right team.
        right: u32,
    },
    /// Set the game time: `(time SECS)`.
    Time {
        /// Game time in seconds.
        secs: f32,
    },
    /// Stop the server (the log is completed): `(killsim)`.
    Killsim,
    /// Send any monitor command, e.g. '(ball (pos 0 0 0.042) (vel 3 0 0))'.
    /// Its effect is not waited for.
    Send {
        /// One or more monitor commands.
        command: String,
    },
}

#[derive(Debug, Clone, Copy)]
struct KickoffSide(Option<Side>);

fn parse_kickoff_side(s: &str) -> Result<KickoffSide, String> {
    match s.to_ascii_lowercase().as_str() {
        "left" | "l" => Ok(KickoffSide(Some(Side::Left))),
        "right" | "r" => Ok(KickoffSide(Some(Side::Right))),
        "none" => Ok(KickoffSide(None)),
        _ => Err("expected Left, Right or None".to_owned()),
    }
}

fn parse_play_mode(s: &str) -> Result<PlayMode, String> {
    PlayMode::from_name(s)
        .or_else(|| {
            PlayMode::ALL
                .iter()
                .copied()
                .find(|m| m.name().eq_ignore_ascii_case(s))
        })
        .ok_or_else(|| {
            let names: Vec<&str> = PlayMode::ALL.iter().map(|m| m.name()).collect();
            format!("expected one of {}", names.join(", "))
        })
}

#[derive(Args, Debug)]
struct WatchArgs {
    /// The server's monitor port.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:3200")]
    monitor: String,
    /// Also print a line every this many seconds of game time (0: only on
    /// changes).
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    every: f32,
}

/// Rapier allocates and frees its solver's work matrices every step; this
/// allocator serves those from per-thread pages.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => run_server(&cli.server),
        Some(Command::Ctl(args)) => ctl(&args),
        Some(Command::Watch(args)) => run_watch(&args),
        Some(Command::CheckLog { file }) => check_log_file(&file),
        Some(Command::Replay { config, args }) => run_replay(config.as_deref(), &args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            // Once, as one line, whatever RUST_BACKTRACE says.
            eprintln!("rcss3d: error: {}", one_line(&err));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes joined by ": ", leaving out a cause whose text
/// the message already contains (typed errors often print their source).
fn one_line(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let part = cause.to_string();
        if !text.contains(&part) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&part);
        }
    }
    text
}

/// The network side runs on one thread: the simulation has its own, and
/// framing, parsing and writes are light. A second worker thread only
/// added wake-ups between the two (2-3 % more server CPU per cycle in the
/// load generator's A/B, 1 and 22 agents).
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Logs go to stderr, coloured only when it is a terminal (and `NO_COLOR`
/// is not set); `RUST_LOG` filters them (default `info`).
fn init_tracing() {
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .init();
}

fn config_from(args: &ServerArgs) -> Result<Config> {
    let mut cfg = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::embedded()?,
    };
    if let Some(p) = args.agent_port {
        cfg.agent_port = p;
    }
    if let Some(p) = args.monitor_port {
        cfg.monitor_port = p;
    }
    if args.sync {
        cfg.sync_mode = true;
        cfg.real_time = args.real_time;
    } else if args.real_time {
        cfg.real_time = true;
    }
    if let Some(s) = args.seed {
        cfg.seed = s;
    }
    if let Some(l) = &args.log {
        cfg.monitor.log = Some(l.clone());
    }
    if let Some(b) = args.bind {
        cfg.bind = b;
    }
    if args.low_latency {
        cfg.latency = cfg.latency.low_latency();
    }
    Ok(cfg)
}

fn run_server(args: &ServerArgs) -> Result<ExitCode> {
    let cfg = Arc::new(config_from(args)?);
    init_tracing();
    runtime()?.block_on(async {
        let mut extensions = Vec::new();
        if let Some(port) = args.web_port {
            extensions.push(rcss3d::web::live(SocketAddr::new(cfg.bind, port), &cfg).await?);
        }
        let agent_addr = SocketAddr::new(cfg.bind, cfg.agent_port);
        let monitor_addr = SocketAddr::new(cfg.bind, cfg.monitor_port);
        let agents = TcpListener::bind(agent_addr)
            .await
            .with_context(|| format!("cannot listen for agents on {agent_addr}"))?;
        let monitors = TcpListener::bind(monitor_addr)
            .await
            .with_context(|| format!("cannot listen for monitors on {monitor_addr}"))?;
        tracing::info!(%agent_addr, %monitor_addr, sync = cfg.sync_mode, real_time = cfg.real_time, "rcss3d listening");
        let summary =
            rcss3d::app::run_with(cfg, agents, monitors, extensions, shutdown_signal())
                .await?;
        tracing::info!(
            cycles = summary.cycles,
            seed = summary.seed,
            "server stopped"
        );
        Ok(ExitCode::SUCCESS)
    })
}

fn run_replay(
    config: Option<&std::path::Path>,
    args: &rcss3d::web::ReplayArgs,
) -> Result<ExitCode> {
    let cfg = match config {
        Some(path) => Config::load(path)?,
        None => Config::embedded()?,
    };
    init_tracing();
    runtime()?.block_on(rcss3d::web::replay(args, &cfg, shutdown_signal()))?;
    Ok(ExitCode::SUCCESS)
}

fn ctl(args: &CtlArgs) -> Result<ExitCode> {
    let control = match &args.command {
        CtlCommand::Kickoff { side } => Control::KickOff(side.0),
        CtlCommand::Playmode { mode } => Control::PlayMode(*mode),
        CtlCommand::Dropball => Control::DropBall,
        CtlCommand::Score { left, right } => Control::Score(*left, *right),
        CtlCommand::Time { secs } => Control::Time(*secs),
        CtlCommand::Killsim => Control::KillSim,
        CtlCommand::Send { command } => Control::Raw(command.clone()),
    };
    let wait = (!args.no_wait)
        .then(|| Duration::try_from_secs_f64(args.timeout))
        .transpose()
        .context("--timeout must be a number of seconds")?;
    let options = ControlOptions {
        secret: args.secret.clone(),
        wait,
    };
    let outcome = runtime()?.block_on(send_control(&args.monitor, &control, &options))?;
    match outcome {
        ControlOutcome::Confirmed(status) => println!("{status}"),
        ControlOutcome::Sent => println!("sent {}", control.command_text()),
        ControlOutcome::ServerStopped => println!("server stopped"),
    }
    Ok(ExitCode::SUCCESS)
}

fn run_watch(args: &WatchArgs) -> Result<ExitCode> {
    runtime()?.block_on(async {
        let mut out = std::io::stdout();
        watch(args.monitor.as_str(), args.every, &mut out).await
    })?;
    Ok(ExitCode::SUCCESS)
}

fn check_log_file(file: &std::path::Path) -> Result<ExitCode> {
    let summary = LogSummary::of_file(file)?;
    println!("{}: {summary}", file.display());
    Ok(ExitCode::SUCCESS)
}

/// Completes on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
