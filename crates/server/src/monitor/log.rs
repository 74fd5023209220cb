//! The match log (docs/protocol.md#match-log): one monitor message per line, written by
//! its own consumer state so every delta is relative to the previous
//! *line*. The first line is a full state carrying `(seed N)`; a full state
//! follows at least every
//! [`log_full_state_secs`](super::MonitorConfig::log_full_state_secs), and
//! after a change of the robots shown, at most one per
//! [`SCENE_CHANGE_FULL_STATE_GAP`]. The log shows the robots in a team
//! ([`ConsumerState::teams_only`]): agents that connect, fail to join and
//! leave, over and over, leave it unchanged, and agents joining and leaving
//! a team cost at most one full state a second.
//!
//! A plain log's lines are each written with one `write` call and
//! flushed at once, so a crash leaves complete lines. A gzip log is one
//! gzip member (one deflate stream), so readers that stop at the end of
//! the first member (RoboViz, many libraries' defaults) read all of it.
//! The stream gets a sync flush at least every [`GZIP_FLUSH_SECS`] of
//! simulated time (and whenever the simulation has given the log nothing
//! new for that long of wall time): everything before a flush is
//! decodable from the bytes in the file, so a crash leaves a file that
//! `gzip -dc` and [`LogReader`] read up to the last flush, and the lines
//! lost are at most a second of the match.
//! [`LogWriter::spawn`] runs the writer on its own thread, so file I/O
//! never happens on the simulation task. [`LogReader`] reads a log back,
//! plain or gzip, up to its last complete line.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

mod read;

pub use read::{LogReader, LogTail, MAX_LINE};

use flate2::write::GzEncoder;
use flate2::{Compression, GzBuilder};
use thiserror::Error;

use super::config::{FieldParams, MonitorConfig};
use super::frame::{ConsumerState, FrameBuilder, FrameKind};
use crate::rules::Side;
use crate::sim::snapshot::WorldSnapshot;

/// A failure of the match log.
#[derive(Debug, Error)]
pub enum LogError {
    /// The log file could not be created.
    #[error("cannot create match log {path}: {source}")]
    Create {
        /// The path tried.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// Writing or flushing a line failed.
    #[error("cannot write match log {path}: {source}")]
    Write {
        /// The log's path (`<memory>` for in-memory sinks).
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The log thread could not be started.
    #[error("cannot start the match log thread: {0}")]
    Thread(io::Error),
    /// The log thread panicked or ended before `finish`.
    #[error("the match log thread ended unexpectedly")]
    ThreadGone,
}

/// What a finished log holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogStats {
    /// Lines written.
    pub lines: u64,
    /// Of which full states.
    pub full_states: u64,
    /// Uncompressed bytes written (newlines included).
    pub bytes: u64,
}

/// Seconds of simulated time after a full state before a change of the
/// robots shown brings the next one. Until then the lines are deltas that
/// fit the last full state's scene: robots that left are hidden, robots
/// that joined appear with the next full state.
pub const SCENE_CHANGE_FULL_STATE_GAP: f32 = 1.0;

/// Seconds of simulated time between two sync flushes of a gzip log at
/// most: the lines a crash can lose.
pub const GZIP_FLUSH_SECS: f32 = 1.0;

/// Wall time without a new frame after which a gzip log's pending lines
/// are flushed anyway (the simulation waits for agents, or is stopped).
const GZIP_IDLE_FLUSH: Duration = Duration::from_secs(1);

enum Sink {
    Plain(BufWriter<File>),
    Gzip(GzipStream),
    Memory(Box<dyn Write + Send>),
}

/// A gzip log being written: one member, sync-flushed at least once a
/// [`GZIP_FLUSH_SECS`].
struct GzipStream {
    encoder: GzEncoder<File>,
    /// Server time of the last flush.
    flushed_at: f32,
    /// Whether lines were written since the last flush.
    pending: bool,
}

impl GzipStream {
    fn new(file: File) -> GzipStream {
        GzipStream {
            // No name and mtime 0 in the header: identical logs for
            // identical matches.
            encoder: GzBuilder::new()
                .mtime(0)
                .write(file, Compression::default()),
            flushed_at: 0.0,
            pending: false,
        }
    }

    fn write_line(&mut self, line: &[u8], server_time: f32) -> io::Result<()> {
        if !self.pending {
            self.flushed_at = server_time;
        }
        self.encoder.write_all(line)?;
        self.pending = true;
        if server_time - self.flushed_at >= GZIP_FLUSH_SECS - 1e-3 {
            self.flush()?;
        }
        Ok(())
    }

    /// A sync flush: the deflate stream is byte-aligned and every line
    /// written so far is in the file, decodable without what follows.
    fn flush(&mut self) -> io::Result<()> {
        if self.pending {
            self.encoder.flush()?;
            self.pending = false;
        }
        Ok(())
    }

    /// Ends the member (the deflate stream and the gzip trailer).
    fn finish(&mut self) -> io::Result<()> {
        self.encoder.try_finish()?;
        self.encoder.get_mut().flush()
    }
}

/// Writes the match log, one frame per line. Use it directly from a
/// thread that may block, or through [`LogWriter::spawn`].
pub struct LogWriter {
    sink: Option<Sink>,
    path: PathBuf,
    builder: FrameBuilder,
    state: ConsumerState,
    seed: u64,
    full_every: f32,
    last_full_time: Option<f32>,
    last_cycle: Option<u64>,
    line: String,
    stats: LogStats,
}

impl LogWriter {
    /// Creates (truncates) the log at `path`. With `cfg.log_compress` or a
    /// path ending in `.gz`, the file is gzip (one member, flushed
    /// at least every [`GZIP_FLUSH_SECS`]) and its name ends in `.gz` (appended when
    /// missing). `field` is announced in the first line's environment
    /// predicates, `seed` goes into the first line.
    pub fn create(
        path: &Path,
        cfg: &MonitorConfig,
        field: &FieldParams,
        seed: u64,
    ) -> Result<LogWriter, LogError> {
        let (path, gzip) = log_path(path, cfg.log_compress);
        let file = File::create(&path).map_err(|source| LogError::Create {
            path: path.clone(),
            source,
        })?;
        let sink = if gzip {
            Sink::Gzip(GzipStream::new(file))
        } else {
            Sink::Plain(BufWriter::with_capacity(256 * 1024, file))
        };
        Ok(Self::with_sink(sink, path, cfg, field, seed))
    }

    /// A log written to any writer (tests, pipes). Each line is written
    /// with one `write_all` and followed by a `flush`.
    pub fn to_writer(
        out: Box<dyn Write + Send>,
        cfg: &MonitorConfig,
        field: &FieldParams,
        seed: u64,
    ) -> LogWriter {
        Self::with_sink(
            Sink::Memory(out),
            PathBuf::from("<memory>"),
            cfg,
            field,
            seed,
        )
    }

    fn with_sink(
        sink: Sink,
        path: PathBuf,
        cfg: &MonitorConfig,
        field: &FieldParams,
        seed: u64,
    ) -> LogWriter {
        LogWriter {
            sink: Some(sink),
            path,
            builder: FrameBuilder::new(field),
            state: ConsumerState::teams_only(),
            seed,
            full_every: cfg.log_full_state_secs,
            last_full_time: None,
            last_cycle: None,
            line: String::with_capacity(256 * 1024),
            stats: LogStats::default(),
        }
    }

    /// The file actually written (with `.gz` appended if it was needed).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one line for `snap`: a full state when it is the first line,
    /// when more than `log_full_state_secs` of simulated time passed since
    /// the last full state, or when the robots shown changed and
    /// [`SCENE_CHANGE_FULL_STATE_GAP`] has passed since it; a delta
    /// otherwise (one that fits the last full state's scene). Cadence is
    /// the caller's business (see [`LogHandle::frame`]).
    pub fn write_frame(&mut self, snap: &WorldSnapshot) -> Result<FrameKind, LogError> {
        let since_full = self.last_full_time.map(|t| snap.server_time - t);
        let due = since_full.is_none_or(|s| s > self.full_every);
        let may_follow_change = since_full.is_none_or(|s| s >= SCENE_CHANGE_FULL_STATE_GAP - 1e-3);
        let full = due || (may_follow_change && self.state.needs_full_state(snap));
        self.write_line(snap, full)
    }

    fn write_line(&mut self, snap: &WorldSnapshot, full: bool) -> Result<FrameKind, LogError> {
        self.line.clear();
        let kind = if full {
            let seed = if self.stats.lines == 0 {
                format!("(seed {})", self.seed)
            } else {
                String::new()
            };
            self.builder
                .write_full(&mut self.state, snap, &seed, &mut self.line);
            self.last_full_time = Some(snap.server_time);
            self.stats.full_states += 1;
            FrameKind::Full
        } else {
            self.builder
                .write_delta_keeping_scene(&mut self.state, snap, &mut self.line);
            FrameKind::Delta
        };
        self.line.push('\n');
        self.last_cycle = Some(snap.cycle);
        let path = &self.path;
        let Some(sink) = self.sink.as_mut() else {
            return Ok(kind);
        };
        match sink {
            Sink::Gzip(g) => g.write_line(self.line.as_bytes(), snap.server_time),
            Sink::Plain(w) => w.write_all(self.line.as_bytes()).and_then(|()| w.flush()),
            Sink::Memory(w) => w.write_all(self.line.as_bytes()).and_then(|()| w.flush()),
        }
        .map_err(|source| LogError::Write {
            path: path.clone(),
            source,
        })?;
        self.stats.lines += 1;
        self.stats.bytes += self.line.len() as u64;
        Ok(kind)
    }

    /// Writes what is buffered to the file: a gzip log gets a sync flush
    /// (its stream goes on with the next line).
    pub fn flush(&mut self) -> Result<(), LogError> {
        let result = match self.sink.as_mut() {
            Some(Sink::Gzip(g)) => g.flush(),
            Some(Sink::Plain(w)) => w.flush(),
            Some(Sink::Memory(w)) => w.flush(),
            None => Ok(()),
        };
        result.map_err(|source| LogError::Write {
            path: self.path.clone(),
            source,
        })
    }

    /// Ends the log: a final full state of `last` (when given), then the
    /// end of the gzip stream if compressed, and a flush. Returns what was
    /// written.
    pub fn finish(mut self, last: Option<&WorldSnapshot>) -> Result<LogStats, LogError> {
        if let Some(snap) = last {
            self.write_line(snap, true)?;
        }
        self.close()
    }

    fn close(&mut self) -> Result<LogStats, LogError> {
        let path = self.path.clone();
        let err = |source| LogError::Write {
            path: path.clone(),
            source,
        };
        match self.sink.take() {
            Some(Sink::Gzip(mut g)) => g.finish().map_err(err)?,
            Some(Sink::Plain(mut w)) => w.flush().map_err(err)?,
            Some(Sink::Memory(mut w)) => w.flush().map_err(err)?,
            None => {}
        }
        Ok(self.stats)
    }

    /// Runs a log writer for `path` on its own thread and returns the
    /// handle that feeds it. File errors after the start are logged once
    /// and returned by [`LogHandle::finish`].
    pub fn spawn(
        path: &Path,
        cfg: &MonitorConfig,
        field: &FieldParams,
        seed: u64,
    ) -> Result<LogHandle, LogError> {
        let writer = LogWriter::create(path, cfg, field, seed)?;
        tracing::info!(path = %writer.path().display(), seed, "writing match log");
        Self::spawn_writer(writer, cfg)
    }

    /// Like [`spawn`](Self::spawn) for an already created writer.
    pub fn spawn_writer(mut writer: LogWriter, cfg: &MonitorConfig) -> Result<LogHandle, LogError> {
        let (tx, rx) = mpsc::channel::<LogMessage>();
        let thread = std::thread::Builder::new()
            .name("match-log".into())
            .spawn(move || {
                let mut failed: Option<LogError> = None;
                let mut final_snapshot = None;
                loop {
                    let msg = match rx.recv_timeout(GZIP_IDLE_FLUSH) {
                        Ok(msg) => msg,
                        Err(RecvTimeoutError::Timeout) => {
                            if failed.is_none() {
                                if let Err(e) = writer.flush() {
                                    tracing::error!(cause = %e, "match log stopped");
                                    failed = Some(e);
                                }
                            }
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => break,
                    };
                    match msg {
                        LogMessage::Frame(snap) => {
                            if failed.is_none() {
                                if let Err(e) = writer.write_frame(&snap) {
                                    tracing::error!(cause = %e, "match log stopped");
                                    failed = Some(e);
                                }
                            }
                        }
                        LogMessage::Finish(last) => {
                            final_snapshot = last;
                            break;
                        }
                    }
                }
                if let Some(e) = failed {
                    let _ = writer.close();
                    return Err(e);
                }
                writer.finish(final_snapshot.as_deref())
            })
            .map_err(LogError::Thread)?;
        Ok(LogHandle {
            tx,
            thread: Some(thread),
            log_step: u64::from(cfg.log_step.max(1)),
            last_slot: None,
            last_seen: None,
        })
    }
}

impl Drop for LogWriter {
    fn drop(&mut self) {
        // Completes the gzip stream even when `finish` was not called.
        let _ = self.close();
    }
}

/// The path a match log named `path` is written to (`.gz` added when
/// `compress` is set and the name lacks it), and whether it is gzip.
pub fn log_path(path: &Path, compress: bool) -> (PathBuf, bool) {
    let is_gz = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    if is_gz {
        return (path.to_path_buf(), true);
    }
    if compress {
        let mut name = path.as_os_str().to_owned();
        name.push(".gz");
        return (PathBuf::from(name), true);
    }
    (path.to_path_buf(), false)
}

enum LogMessage {
    Frame(Arc<WorldSnapshot>),
    Finish(Option<Arc<WorldSnapshot>>),
}

/// Feeds a log thread (see [`LogWriter::spawn`]). Never blocks: frames are
/// queued (the log must be complete, so nothing is dropped).
pub struct LogHandle {
    tx: mpsc::Sender<LogMessage>,
    thread: Option<JoinHandle<Result<LogStats, LogError>>>,
    log_step: u64,
    last_slot: Option<u64>,
    last_seen: Option<Arc<WorldSnapshot>>,
}

impl LogHandle {
    /// Offers a snapshot; call it with every snapshot the simulation
    /// publishes (every cycle or every monitor step). The first one is
    /// logged, then the first of every later window of `log_step` cycles,
    /// so with snapshots every cycle from cycle 0 the lines fall on
    /// t = 0, 0.2, 0.4, ... Returns whether this snapshot was queued.
    pub fn frame(&mut self, snap: Arc<WorldSnapshot>) -> bool {
        let slot = snap.cycle / self.log_step;
        let take = self.last_slot != Some(slot);
        if take {
            self.last_slot = Some(slot);
            self.last_seen = None;
            if self.tx.send(LogMessage::Frame(snap)).is_err() {
                return false;
            }
        } else {
            self.last_seen = Some(snap);
        }
        take
    }

    /// Ends the log and waits for the thread: writes a final full state of
    /// `last` (or, when `None`, of the newest snapshot offered to
    /// [`frame`](Self::frame)), completes the file and returns its figures.
    pub fn finish(mut self, last: Option<Arc<WorldSnapshot>>) -> Result<LogStats, LogError> {
        let last = last.or_else(|| self.last_seen.take());
        let _ = self.tx.send(LogMessage::Finish(last));
        match self.thread.take() {
            Some(t) => t.join().map_err(|_| LogError::ThreadGone)?,
            None => Err(LogError::ThreadGone),
        }
    }
}

/// The end-of-match results, for stdout and a tournament script's file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MatchSummary {
    /// Left team name (empty if no team joined).
    pub team_left: String,
    /// Right team name (empty if no team joined).
    pub team_right: String,
    /// Goals of the left team.
    pub score_left: u32,
    /// Goals of the right team.
    pub score_right: u32,
    /// Fouls recorded against the left team.
    pub fouls_left: usize,
    /// Fouls recorded against the right team.
    pub fouls_right: usize,
    /// Game time at the end, seconds.
    pub game_time: f32,
    /// Simulated server time at the end, seconds.
    pub server_time: f32,
    /// Cycles simulated.
    pub cycles: u64,
    /// Seed of the match, to replay it with `--seed`.
    pub seed: u64,
}

impl MatchSummary {
    /// The summary of the match shown by `snap` (normally the last one).
    pub fn from_snapshot(snap: &WorldSnapshot, seed: u64) -> MatchSummary {
        let g = &snap.game;
        let fouls = |side| g.fouls.iter().filter(|f| f.side == side).count();
        MatchSummary {
            team_left: g.team_left.as_deref().unwrap_or("").to_owned(),
            team_right: g.team_right.as_deref().unwrap_or("").to_owned(),
            score_left: g.score_left,
            score_right: g.score_right,
            fouls_left: fouls(Side::Left),
            fouls_right: fouls(Side::Right),
            game_time: g.game_time,
            server_time: snap.server_time,
            cycles: snap.cycle,
            seed,
        }
    }

    /// `key: value` lines, easy for people and for `grep`/`awk`:
    ///
    /// ```text
    /// teams: Alpha Beta
    /// score: 2 1
    /// fouls: 0 3
    /// game_time: 600.00
    /// server_time: 612.40
    /// cycles: 30620
    /// seed: 42
    /// ```
    pub fn to_text(&self) -> String {
        let name = |n: &str| {
            if n.is_empty() {
                "-".to_owned()
            } else {
                n.to_owned()
            }
        };
        format!(
            "teams: {} {}\nscore: {} {}\nfouls: {} {}\ngame_time: {:.2}\nserver_time: {:.2}\ncycles: {}\nseed: {}\n",
            name(&self.team_left),
            name(&self.team_right),
            self.score_left,
            self.score_right,
            self.fouls_left,
            self.fouls_right,
            self.game_time,
            self.server_time,
            self.cycles,
            self.seed,
        )
    }

    /// Writes [`to_text`](Self::to_text) to `path`.
    pub fn write_file(&self, path: &Path) -> io::Result<()> {
        std::fs::write(path, self.to_text())
    }
}
