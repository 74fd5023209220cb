//! The command line of the server binaries `rcss3d`, `rcssserver3d` and
//! `simspark` (one program under three names; each binary's `main` calls
//! [`run`]). Without a subcommand it runs the server: configuration
//! sources and flags -> Config, tracing setup, bind both ports, run until
//! Ctrl-C/SIGTERM, `(killsim)` or the end of the match. The subcommands are
//! small monitor-port clients for everyday chores (`ctl`, `watch`), a
//! match-log checker (`check-log`) and the web monitor's log player
//! (`replay`).
//!
//! Under the reference's names (`rcssserver3d`, `simspark`) the command
//! line is read as the reference reads its own: an argument it does not
//! know is skipped (and named in one log line) instead of being an error.

#![warn(missing_docs)]

use std::ffi::OsString;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use rcss3d_server::{app, config, monitor, rules, untrusted, web};
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

use crate::config::{Config, ConfigSources, LoadedConfig, UserFiles};

mod ready;
mod subcommands;

pub use ready::{Ready, ReportError, Results};
use subcommands::{check_log_file, ctl, run_replay, run_watch, CtlArgs, ReplayCli, WatchArgs};

/// The name a server binary runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    /// `rcss3d`: this project's name; unknown arguments are errors.
    Rcss3d,
    /// `rcssserver3d`: the reference's server name.
    Rcssserver3d,
    /// `simspark`: the reference's engine name, also used to start it.
    Simspark,
}

impl Program {
    /// The binary's name.
    pub fn name(self) -> &'static str {
        match self {
            Program::Rcss3d => "rcss3d",
            Program::Rcssserver3d => "rcssserver3d",
            Program::Simspark => "simspark",
        }
    }

    /// The program a binary was started as: the name in `argv[0]` when it
    /// is one of the three (a link named `rcssserver3d` to `rcss3d`
    /// behaves as `rcssserver3d`), else the binary's own.
    fn invoked(built: Program) -> Program {
        let arg0 = std::env::args_os().next().map(PathBuf::from);
        let stem = arg0
            .as_deref()
            .and_then(|p| p.file_stem())
            .and_then(|s| s.to_str());
        match stem {
            Some("rcss3d") => Program::Rcss3d,
            Some("rcssserver3d") => Program::Rcssserver3d,
            Some("simspark") => Program::Simspark,
            _ => built,
        }
    }

    /// Whether the command line is read as the reference reads it.
    fn reference(self) -> bool {
        self != Program::Rcss3d
    }
}

/// A SimSpark-compatible RoboCup 3D soccer simulator (rcssserver3d 0.7.1
/// protocol). Without a subcommand it runs the server.
///
/// Settings, each changing only what it names: the embedded defaults
/// (conf/server.ron) < ~/.simspark/spark.rb ($agentSyncMode, $monitorStep,
/// $monitorLoggerStep, $agentPort, $serverPort) < $XDG_CONFIG_HOME/rcss3d/server.ron
/// (or ~/.config/rcss3d/server.ron) < the file named by $RCSS3D_CONFIG <
/// --config FILE < the flags below. The server logs the files it read.
#[derive(Parser, Debug)]
#[command(version, args_conflicts_with_subcommands = true)]
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

/// `--seed N`. A run without a seed draws one (leave the flag out); `0`,
/// the older spelling of that, is refused rather than taken as a seed.
fn parse_seed(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("0 no longer draws a random seed: leave --seed out for that".to_owned()),
        Ok(seed) => Ok(seed),
        Err(e) => Err(e.to_string()),
    }
}

/// `help` text ending in the embedded default of a setting; a `--config`
/// file's value replaces that default, a flag overrides both.
fn with_default(help: &str, default: impl std::fmt::Display) -> String {
    format!("{help} [default: {default}]")
}

#[derive(Args, Debug)]
struct ServerArgs {
    /// RON configuration file, laid over the defaults and the user's files
    /// (missing keys keep their values; flags override it).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Read none of ~/.simspark/spark.rb, the per-user configuration file
    /// and $RCSS3D_CONFIG: only the embedded defaults, --config and flags.
    #[arg(long)]
    no_user_config: bool,
    /// A directory of your own robot model files, laid over the built-in
    /// ones [default: the built-in models; config key `models_dir`].
    #[arg(long, value_name = "DIR")]
    models_dir: Option<PathBuf>,
    #[arg(long, value_name = "PORT", help = with_default("Agent port", defaults().agent_port))]
    agent_port: Option<u16>,
    #[arg(
        long,
        visible_alias = "server-port",
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
        value_parser = parse_seed,
        help = with_default(
            "Seed of the server RNG, at least 1",
            defaults()
                .seed
                .map_or_else(|| "random, printed at start".to_owned(), |s| s.to_string()),
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
    /// rcssserver3d's Ruby script (rcssserver3d.rb). Accepted and ignored:
    /// rcss3d has no scripts; its settings are the configuration files.
    #[arg(long, value_name = "PATH", help_heading = REFERENCE_HEADING)]
    script_path: Option<PathBuf>,
    /// rcssserver3d's path prefix of its init scripts (spark.rb, ...).
    /// Accepted and ignored: ~/.simspark/spark.rb is read all the same.
    #[arg(long, value_name = "PATH", help_heading = REFERENCE_HEADING)]
    init_script_prefix: Option<PathBuf>,
    /// rcssserver3d's RoboViz drawing host. Accepted and ignored: rcss3d
    /// draws nothing in RoboViz.
    #[arg(long, value_name = "HOST", help_heading = REFERENCE_HEADING)]
    rvdraw_host: Option<String>,
    #[command(flatten)]
    launch: LaunchArgs,
}

/// For programs that start the server (README, "Many matches").
#[derive(Args, Debug)]
#[command(next_help_heading = "For programs that start the server")]
struct LaunchArgs {
    /// Also write the ready line (printed on stdout once every port
    /// listens: the ports bound, pid, seed; JSON) to this file, atomically.
    #[arg(long, value_name = "PATH")]
    ready_file: Option<PathBuf>,
    /// Write the results (teams, score, fouls, play mode, game time, seed,
    /// log path; JSON) to this file when the server stops.
    #[arg(long, value_name = "PATH")]
    results: Option<PathBuf>,
    /// Stop (as on SIGTERM) when stdin reaches its end: a launcher keeps a
    /// pipe open and the server stops when the launcher exits or dies.
    #[arg(long)]
    stop_with_stdin: bool,
}

/// The help section of the reference's flags that have no effect here.
const REFERENCE_HEADING: &str = "rcssserver3d flags accepted without effect";

impl ServerArgs {
    /// The reference's flags given that change nothing here, as typed.
    fn without_effect(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(p) = &self.script_path {
            out.push(format!("--script-path {}", p.display()));
        }
        if let Some(p) = &self.init_script_prefix {
            out.push(format!("--init-script-prefix {}", p.display()));
        }
        if let Some(h) = &self.rvdraw_host {
            out.push(format!("--rvdraw-host {h}"));
        }
        out
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Play a match log in the web monitor (open the printed URL).
    Replay {
        /// RON configuration file (models directory, field, bind address).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        #[command(flatten)]
        args: ReplayCli,
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

/// Runs the command line of `built` (the binary's own name; a link under
/// another of the three names behaves as that one) and returns the exit
/// code. Errors are printed as one line.
pub fn run(built: Program) -> ExitCode {
    let program = Program::invoked(built);
    let mut command = Cli::command().name(program.name()).bin_name(program.name());
    let (args, skipped) = if program.reference() {
        reference_args(&mut command, std::env::args_os().collect())
    } else {
        (std::env::args_os().collect(), Vec::new())
    };
    let cli = match command
        .try_get_matches_from(args)
        .and_then(|mut m| Cli::from_arg_matches_mut(&mut m))
    {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        None => run_server(program, &cli.server, &skipped),
        Some(Command::Ctl(args)) => ctl(&args),
        Some(Command::Watch(args)) => run_watch(&args),
        Some(Command::CheckLog { file }) => check_log_file(&file),
        Some(Command::Replay { config, args }) => run_replay(config.as_deref(), &args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            // Once, as one line, whatever RUST_BACKTRACE says.
            eprintln!("{}: error: {}", program.name(), one_line(&err));
            ExitCode::FAILURE
        }
    }
}

/// The reference's reading of a command line: its own options are taken
/// and any other argument is skipped. Returns the arguments for the parser
/// and the skipped ones. A command line that starts with a subcommand is
/// left as it is.
fn reference_args(
    command: &mut clap::Command,
    args: Vec<OsString>,
) -> (Vec<OsString>, Vec<String>) {
    command.build();
    let mut iter = args.into_iter();
    let mut kept: Vec<OsString> = iter.next().into_iter().collect();
    let rest: Vec<OsString> = iter.collect();
    let starts_with_subcommand = rest
        .first()
        .and_then(|a| a.to_str())
        .is_some_and(|a| command.find_subcommand(a).is_some());
    if starts_with_subcommand {
        kept.extend(rest);
        return (kept, Vec::new());
    }
    let mut skipped = Vec::new();
    let mut rest = rest.into_iter();
    while let Some(arg) = rest.next() {
        let text = arg.to_string_lossy().into_owned();
        let known = if let Some(long) = text.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            command.get_arguments().find(|a| {
                a.get_long() == Some(name)
                    || a.get_all_aliases()
                        .is_some_and(|aliases| aliases.contains(&name))
            })
        } else if let Some(short) = text.strip_prefix('-').filter(|s| s.chars().count() == 1) {
            let c = short.chars().next();
            command.get_arguments().find(|a| a.get_short() == c)
        } else {
            None
        };
        match known {
            Some(a) => {
                let takes_value = a.get_action().takes_values();
                kept.push(arg);
                if takes_value && !text.contains('=') {
                    kept.extend(rest.next());
                }
            }
            None => skipped.push(text),
        }
    }
    (kept, skipped)
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

/// The configuration sources a command line names: the user's files
/// unless `--no-user-config`, and `--config`.
fn sources(config: Option<&std::path::Path>, no_user_config: bool) -> ConfigSources {
    ConfigSources {
        user: (!no_user_config).then(UserFiles::from_env),
        file: config.map(|p| p.to_path_buf()),
    }
}

fn config_from(args: &ServerArgs) -> Result<LoadedConfig> {
    let mut loaded = Config::from_sources(&sources(args.config.as_deref(), args.no_user_config))?;
    let cfg = &mut loaded.config;
    if let Some(dir) = &args.models_dir {
        cfg.models_dir = Some(dir.clone());
    }
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
        cfg.seed = Some(s);
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
    Ok(loaded)
}

/// Logs the files the configuration was read from and what each set, and
/// the arguments that have no effect here.
fn log_sources(loaded: &LoadedConfig, ignored: &[String]) {
    if loaded.sources.is_empty() {
        tracing::info!("configuration: the embedded defaults (no user files)");
    }
    for source in &loaded.sources {
        tracing::info!("configuration read from {source}");
        for refused in &source.refused {
            tracing::warn!("{}: not used: {refused}", source.origin);
        }
        for unused in &source.unused {
            tracing::debug!("{}: skipped {unused}", source.origin);
        }
    }
    if !ignored.is_empty() {
        let shown: Vec<String> = ignored
            .iter()
            .map(|a| crate::untrusted::quote(a, 120))
            .collect();
        tracing::info!(
            "arguments without effect in rcss3d, ignored: {}",
            shown.join(" ")
        );
    }
}

/// Checks what the server would otherwise find out only after binding its
/// ports, and names the setting at fault: the models directory exists,
/// and the ports are distinct.
fn check_before_binding(args: &ServerArgs, cfg: &Config) -> Result<()> {
    if let Some(dir) = &cfg.models_dir {
        let setting = if args.models_dir.is_some() {
            "--models-dir"
        } else {
            "models_dir"
        };
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => anyhow::bail!("{setting} {}: not a directory", dir.display()),
            Err(err) => anyhow::bail!("{setting} {}: {err}", dir.display()),
        }
    }
    let named = |flag: bool, flag_name: &'static str, key: &'static str| {
        if flag {
            flag_name
        } else {
            key
        }
    };
    let agent = named(args.agent_port.is_some(), "--agent-port", "agent_port");
    let monitor = named(
        args.monitor_port.is_some(),
        "--monitor-port",
        "monitor_port",
    );
    let mut ports = vec![(agent, cfg.agent_port), (monitor, cfg.monitor_port)];
    if let Some(web) = args.web_port {
        ports.push(("--web-port", web));
    }
    for (i, (a, port)) in ports.iter().enumerate() {
        // Port 0 asks the system for a free port: never a clash.
        if let Some((b, _)) = ports[i + 1..]
            .iter()
            .find(|(_, p)| *p == *port && *port != 0)
        {
            anyhow::bail!("{a} and {b} are both {port}: each port needs its own number");
        }
    }
    Ok(())
}

fn run_server(program: Program, args: &ServerArgs, skipped: &[String]) -> Result<ExitCode> {
    let loaded = config_from(args)?;
    check_before_binding(args, &loaded.config)?;
    init_tracing();
    let mut ignored = args.without_effect();
    ignored.extend(skipped.iter().cloned());
    log_sources(&loaded, &ignored);
    let mut cfg = loaded.config;
    // Drawn here so that the ready line can name it.
    let seed = *cfg.seed.get_or_insert_with(crate::config::random_seed);
    let cfg = Arc::new(cfg);
    runtime()?.block_on(async {
        let mut extensions = Vec::new();
        let mut web_addr = None;
        if let Some(port) = args.web_port {
            let addr = SocketAddr::new(cfg.bind, port);
            let listener = TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot serve the web monitor on {addr}"))?;
            web_addr = listener.local_addr().ok();
            extensions.push(crate::web::live_on(
                listener,
                &cfg,
                crate::web::WebConfig::default(),
            )?);
        }
        let agent_addr = SocketAddr::new(cfg.bind, cfg.agent_port);
        let monitor_addr = SocketAddr::new(cfg.bind, cfg.monitor_port);
        let agents = TcpListener::bind(agent_addr)
            .await
            .with_context(|| format!("cannot listen for agents on {agent_addr}"))?;
        let monitors = TcpListener::bind(monitor_addr)
            .await
            .with_context(|| format!("cannot listen for monitors on {monitor_addr}"))?;
        // The addresses bound: with port 0 the system chose the port.
        let agent_addr = agents.local_addr().unwrap_or(agent_addr);
        let monitor_addr = monitors.local_addr().unwrap_or(monitor_addr);
        tracing::info!(
            %agent_addr,
            %monitor_addr,
            sync = cfg.sync_mode,
            real_time = cfg.real_time,
            "{} listening",
            program.name()
        );
        Ready::new(agent_addr, monitor_addr, web_addr, seed)
            .announce(args.launch.ready_file.as_deref())?;
        let stop_with_stdin = args.launch.stop_with_stdin;
        let shutdown = async move {
            if stop_with_stdin {
                tokio::select! {
                    _ = shutdown_signal() => {}
                    _ = ready::stdin_closed() => {}
                }
            } else {
                shutdown_signal().await;
            }
        };
        let summary =
            crate::app::run_with(cfg.clone(), agents, monitors, extensions, shutdown).await?;
        // The results summary a tournament script reads from stdout (a
        // closed stdout is not an error: the launcher may be gone).
        {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", summary.results.to_text()).and_then(|()| out.flush());
        }
        if let Some(path) = &args.launch.results {
            let log = cfg
                .monitor
                .log
                .as_deref()
                .map(|p| crate::monitor::log::log_path(p, cfg.monitor.log_compress).0);
            Results::new(&summary, log).write(path)?;
        }
        tracing::info!(
            cycles = summary.cycles,
            seed = summary.seed,
            "server stopped"
        );
        Ok(ExitCode::SUCCESS)
    })
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
