//! `rcss3d`: the server binary. Command line -> Config, tracing setup, bind
//! both ports, run until Ctrl-C/SIGTERM, `(killsim)` or the end of the match.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Parser;
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

use rcss3d::config::Config;

/// A SimSpark-compatible RoboCup 3D soccer simulator (rcssserver3d 0.7.1
/// protocol). Without flags it runs the embedded defaults: agents on 3100,
/// monitors on 3200, real-time mode.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    /// RON configuration file (replaces the embedded conf/server.ron;
    /// missing keys keep their defaults).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Agent port.
    #[arg(long)]
    agent_port: Option<u16>,
    /// Monitor port (`--server-port` is the reference's name for it).
    #[arg(long, alias = "server-port")]
    monitor_port: Option<u16>,
    /// agentSyncMode: wait for every agent's (syn). Turns the real-time
    /// timer off unless --real-time is given too.
    #[arg(long)]
    sync: bool,
    /// Keep the real-time timer on (with --sync: wait for agents and never
    /// run faster than real time).
    #[arg(long)]
    real_time: bool,
    /// Seed of the server RNG (0 = random, printed at start).
    #[arg(long)]
    seed: Option<u64>,
    /// Write the match log to this file (RoboViz replays it).
    #[arg(long, value_name = "PATH")]
    log: Option<PathBuf>,
    /// Address to listen on (both ports).
    #[arg(long, value_name = "ADDR")]
    bind: Option<std::net::IpAddr>,
    /// Serve the 3D web monitor (page + live stream) on this port.
    #[arg(long, value_name = "PORT")]
    web_port: Option<u16>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Play a match log in the web monitor (open the printed URL).
    Replay(rcss3d::web::ReplayArgs),
}

fn config_from(cli: &Cli) -> Result<Config> {
    let mut cfg = match &cli.config {
        Some(path) => Config::load(path)?,
        None => Config::embedded()?,
    };
    if let Some(p) = cli.agent_port {
        cfg.agent_port = p;
    }
    if let Some(p) = cli.monitor_port {
        cfg.monitor_port = p;
    }
    if cli.sync {
        cfg.sync_mode = true;
        cfg.real_time = cli.real_time;
    } else if cli.real_time {
        cfg.real_time = true;
    }
    if let Some(s) = cli.seed {
        cfg.seed = s;
    }
    if let Some(l) = &cli.log {
        cfg.monitor.log = Some(l.clone());
    }
    if let Some(b) = cli.bind {
        cfg.bind = b;
    }
    Ok(cfg)
}

#[tokio::main]
async fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    let cli = Cli::parse();
    let cfg = Arc::new(config_from(&cli)?);
    if let Some(Command::Replay(args)) = &cli.command {
        return Ok(rcss3d::web::replay(args, &cfg, shutdown_signal()).await?);
    }
    let mut extensions = Vec::new();
    if let Some(port) = cli.web_port {
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
        rcss3d::net::server::run_with(cfg, agents, monitors, extensions, shutdown_signal()).await?;
    tracing::info!(
        cycles = summary.cycles,
        seed = summary.seed,
        "server stopped"
    );
    Ok(())
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
