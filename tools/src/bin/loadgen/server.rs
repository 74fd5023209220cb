//! The spawned server: build it if needed, start it on free ports,
//! collect its stage-timing lines, stop it.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use crate::agent::PHASE_MEASURE;
use crate::Cli;

/// One parsed `*_us=` trace line: whether it fell in the measuring window,
/// and its fields.
pub(crate) type StageRow = (bool, Vec<(String, u64)>);

pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) agent_port: u16,
    pub(crate) stages: Option<std::thread::JoinHandle<Vec<StageRow>>>,
}

pub(crate) fn free_port() -> Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(l.local_addr()?.port())
}

pub(crate) fn server_binary(cli: &Cli) -> Result<PathBuf> {
    if let Some(p) = &cli.server_bin {
        return Ok(p.clone());
    }
    let exe = std::env::current_exe().context("locating this program")?;
    let dir = exe
        .parent()
        .ok_or_else(|| anyhow!("no directory for {}", exe.display()))?;
    let bin = dir.join("rcss3d");
    // Through `cargo run`, make sure the server binary is current: cargo
    // only built this one (the server is the workspace's `rcss3d` package).
    if let Ok(cargo) = std::env::var("CARGO") {
        let release = dir.file_name().is_some_and(|n| n == "release");
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--quiet", "-p", "rcss3d", "--bin", "rcss3d"]);
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

pub(crate) fn spawn_server(cli: &Cli, bin: &Path, run_flag: Arc<AtomicU8>) -> Result<Server> {
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
        cmd.env("RUST_LOG", "warn,rcss3d_server::app::driver=trace");
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
                if !line.contains("cycle timing") {
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

pub(crate) fn strip_ansi(s: &str) -> String {
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

pub(crate) fn stop_server(server: &mut Server) {
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
