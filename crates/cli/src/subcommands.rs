//! The subcommands that are small clients and chores rather than the
//! server: `ctl` and `watch` on a running server's monitor port,
//! `check-log` on a match log, `replay` of a log in the web monitor.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

use crate::config::Config;
use crate::rules::{PlayMode, Side};
use crate::{init_tracing, log_sources, runtime, shutdown_signal, sources};
use rcss3d_clients::trainer::{
    send_control, watch, Control, ControlOptions, ControlOutcome, LogSummary,
};

/// The options of `ctl` go before or after its command
/// (`ctl kickoff Left --monitor HOST:PORT`).
#[derive(Args, Debug)]
pub(crate) struct CtlArgs {
    /// The server's monitor port.
    #[arg(
        long,
        global = true,
        value_name = "HOST:PORT",
        default_value = "127.0.0.1:3200"
    )]
    monitor: String,
    /// Trainer secret of a guarded monitor port (sent as `(auth SECRET)`).
    #[arg(long, global = true, value_name = "SECRET")]
    secret: Option<String>,
    /// Seconds to wait for the effect.
    #[arg(long, global = true, value_name = "SECS", default_value_t = 5.0)]
    timeout: f64,
    /// Send and return without waiting for the effect.
    #[arg(long, global = true)]
    no_wait: bool,
    #[command(subcommand)]
    command: CtlCommand,
}

#[derive(Subcommand, Debug)]
pub(crate) enum CtlCommand {
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
pub(crate) struct KickoffSide(Option<Side>);

pub(crate) fn parse_kickoff_side(s: &str) -> Result<KickoffSide, String> {
    match s.to_ascii_lowercase().as_str() {
        "left" | "l" => Ok(KickoffSide(Some(Side::Left))),
        "right" | "r" => Ok(KickoffSide(Some(Side::Right))),
        "none" => Ok(KickoffSide(None)),
        _ => Err("expected Left, Right or None".to_owned()),
    }
}

pub(crate) fn parse_play_mode(s: &str) -> Result<PlayMode, String> {
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
pub(crate) struct WatchArgs {
    /// The server's monitor port.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:3200")]
    monitor: String,
    /// Also print a line every this many seconds of game time (0: only on
    /// changes).
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    every: f32,
}

/// `rcss3d replay`: play a match log in the web monitor.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct ReplayCli {
    /// The match log (plain text, or gzip whatever its name).
    file: PathBuf,
    /// Port of the page.
    #[arg(long, default_value_t = 8080)]
    web_port: u16,
    /// Address to listen on (default: the configuration's `bind`).
    #[arg(long, value_name = "ADDR")]
    bind: Option<std::net::IpAddr>,
}

pub(crate) fn run_replay(config: Option<&std::path::Path>, cli: &ReplayCli) -> Result<ExitCode> {
    let args = &crate::web::ReplayArgs {
        file: cli.file.clone(),
        web_port: cli.web_port,
        bind: cli.bind,
    };
    // The file first: a missing log is the error to report, whatever the
    // port.
    std::fs::File::open(&args.file).with_context(|| args.file.display().to_string())?;
    let loaded = Config::from_sources(&sources(config, false))?;
    init_tracing();
    log_sources(&loaded, &[]);
    runtime()?.block_on(crate::web::replay(args, &loaded.config, shutdown_signal()))?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn ctl(args: &CtlArgs) -> Result<ExitCode> {
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
        ControlOutcome::Confirmed(status) => say(status),
        ControlOutcome::Sent => say(format_args!("sent {}", control.command_text())),
        ControlOutcome::ServerStopped => say("server stopped"),
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes one line to stdout. A reader that has gone (`rcss3d check-log
/// FILE | head -1`) is not an error: the line is dropped quietly.
pub(crate) fn say(line: impl std::fmt::Display) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// Whether an error is a closed standard output (the reader has gone).
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}

pub(crate) fn run_watch(args: &WatchArgs) -> Result<ExitCode> {
    let followed = runtime()?.block_on(async {
        let mut out = std::io::stdout();
        watch(args.monitor.as_str(), args.every, &mut out).await
    });
    match followed.map_err(anyhow::Error::from) {
        // `rcss3d watch | head`: the reader has all it wanted.
        Err(e) if is_broken_pipe(&e) => Ok(ExitCode::SUCCESS),
        other => other.map(|_| ExitCode::SUCCESS),
    }
}

pub(crate) fn check_log_file(file: &std::path::Path) -> Result<ExitCode> {
    let summary = LogSummary::of_file(file)?;
    say(format_args!("{}: {summary}", file.display()));
    // A log RoboViz cannot replay whole fails the check.
    Ok(if summary.roboviz_problem().is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
