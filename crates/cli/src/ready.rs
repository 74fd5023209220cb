//! What a program that starts the server reads from it, without parsing
//! logs: the ready line (one JSON object on stdout, and optionally in a
//! file, once every port listens: the ports really bound, so port 0 works,
//! the pid and the seed), the results file (JSON, written when the server
//! stops) and the stop when the starting program's end of stdin closes.
//!
//! The ready line, one line on stdout:
//!
//! ```text
//! {"event":"ready","agent_port":41235,"monitor_port":38811,"web_port":null,"bind":"127.0.0.1","pid":5120,"seed":7}
//! ```
//!
//! The results file:
//!
//! ```text
//! {"event":"results","team_left":"Alpha","team_right":"Beta","score_left":2,"score_right":1,
//!  "fouls_left":0,"fouls_right":3,"play_mode":"GameOver","half":2,"game_time":600.0,
//!  "server_time":612.4,"cycles":30620,"seed":7,"log":"/tmp/match.log.gz"}
//! ```
//! (one line in the file).

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::app::RunSummary;
use crate::monitor::MatchSummary;

/// Why a ready or results file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Creating, writing or renaming the file failed.
    #[error("cannot write {path}")]
    Write {
        /// The file meant.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The object could not be turned into JSON (not expected).
    #[error("cannot encode JSON")]
    Json(#[from] serde_json::Error),
}

/// The ready announcement: every port listens.
#[derive(Debug, Clone, Serialize)]
pub struct Ready {
    /// Always `"ready"`.
    pub event: &'static str,
    /// The agent port bound.
    pub agent_port: u16,
    /// The monitor (trainer) port bound.
    pub monitor_port: u16,
    /// The web monitor's port, when `--web-port` was given.
    pub web_port: Option<u16>,
    /// The address the ports listen on.
    pub bind: IpAddr,
    /// The server's process id.
    pub pid: u32,
    /// The seed of the run (drawn at start when the configuration names
    /// none).
    pub seed: u64,
}

impl Ready {
    /// The announcement for the bound addresses.
    pub fn new(
        agents: SocketAddr,
        monitors: SocketAddr,
        web: Option<SocketAddr>,
        seed: u64,
    ) -> Ready {
        Ready {
            event: "ready",
            agent_port: agents.port(),
            monitor_port: monitors.port(),
            web_port: web.map(|a| a.port()),
            bind: agents.ip(),
            pid: std::process::id(),
            seed,
        }
    }

    /// Writes `file` if given, then prints the line on stdout (flushed at
    /// once: stdout is a pipe when a program reads it). A stdout nobody
    /// reads is not an error.
    pub fn announce(&self, file: Option<&Path>) -> Result<(), ReportError> {
        let line = serde_json::to_string(self)?;
        // The file first: a reader of stdout may look at it next.
        if let Some(path) = file {
            write_atomic(path, &line)?;
        }
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}").and_then(|()| out.flush());
        Ok(())
    }
}

/// The results of a run, as the results file holds them: the match
/// summary's fields, then where the match ended and the log's path.
#[derive(Debug, Clone, Serialize)]
pub struct Results {
    /// Always `"results"`.
    pub event: &'static str,
    /// Teams, score, fouls, game and server time, cycles and seed.
    #[serde(flatten)]
    pub summary: MatchSummary,
    /// The play mode at the end (`GameOver` after a full match).
    pub play_mode: &'static str,
    /// The half at the end, 1 or 2.
    pub half: u8,
    /// The match log written, if any (the name the file got).
    pub log: Option<PathBuf>,
}

impl Results {
    /// The results of `summary`; `log` is the match log's path as written.
    pub fn new(summary: &RunSummary, log: Option<PathBuf>) -> Results {
        Results {
            event: "results",
            summary: summary.results.clone(),
            play_mode: summary.last.game.play_mode.name(),
            half: summary.last.game.half,
            log,
        }
    }

    /// Writes the results as one JSON line to `path`, atomically.
    pub fn write(&self, path: &Path) -> Result<(), ReportError> {
        write_atomic(path, &serde_json::to_string(self)?)
    }
}

/// Writes `line` and a newline to a temporary file beside `path` and
/// renames it over `path`, so a reader never sees a partial file.
fn write_atomic(path: &Path, line: &str) -> Result<(), ReportError> {
    let err = |source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(line.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(err(e));
    }
    Ok(())
}

/// Completes when stdin reaches its end (the program that started the
/// server closed its end of the pipe, or died). A plain thread reads it:
/// a blocking read cannot be cancelled, and a detached thread does not
/// hold up the exit. What is read is discarded.
pub async fn stdin_closed() {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let spawned = std::thread::Builder::new()
        .name("stdin-watch".into())
        .spawn(move || {
            let mut buf = [0u8; 256];
            let mut stdin = std::io::stdin();
            loop {
                match std::io::Read::read(&mut stdin, &mut buf) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = tx.send(());
        });
    match spawned {
        Ok(_) => {
            let _ = rx.await;
            tracing::info!("stdin closed: stopping");
        }
        Err(e) => {
            tracing::warn!(cause = %e, "cannot watch stdin; the server will not stop with it");
            std::future::pending::<()>().await;
        }
    }
}
