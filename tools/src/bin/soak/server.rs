//! The server under test: the binary as a child process, or in-process;
//! its output, memory and CPU.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tokio::io::AsyncBufReadExt;
use tokio::io::BufReader;

use crate::Cli;

pub(crate) enum Server {
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
pub(crate) struct OutputStats {
    pub(crate) lines: AtomicU64,
    pub(crate) panics: AtomicU64,
    pub(crate) warnings: AtomicU64,
    pub(crate) tail: Mutex<Vec<String>>,
    pub(crate) panic_lines: Mutex<Vec<String>>,
}

/// Panics anywhere in this process (in-process mode), counted by a hook.
pub(crate) static PANICS: AtomicU64 = AtomicU64::new(0);

pub(crate) fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

impl Server {
    pub(crate) async fn start(cli: &Cli, log: &Path) -> Result<(Server, SocketAddr, SocketAddr)> {
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
                cfg.seed = Some(cli.seed);
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
    pub(crate) async fn stacks(&self) -> Option<String> {
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
    pub(crate) async fn kill(&mut self) {
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

    pub(crate) fn pid(&self) -> u32 {
        match self {
            Server::Child { pid, .. } => *pid,
            Server::InProcess { .. } => std::process::id(),
        }
    }

    pub(crate) fn panics(&self) -> u64 {
        match self {
            Server::Child { stderr, .. } => stderr.panics.load(Ordering::Relaxed),
            Server::InProcess { .. } => PANICS.load(Ordering::Relaxed),
        }
    }

    /// Whether the server has ended by itself (a crash, for this run).
    pub(crate) fn exited(&mut self) -> Option<String> {
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
    pub(crate) async fn stop(&mut self) -> (bool, f64, String) {
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

pub(crate) async fn drain_output(pipe: impl tokio::io::AsyncRead + Unpin, stats: Arc<OutputStats>) {
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

/// The middle value of `xs` (0 for none).
pub(crate) fn median(xs: &[u64]) -> u64 {
    let mut v = xs.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}
