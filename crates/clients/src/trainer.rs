//! Everyday trainer chores over the monitor port, built on
//! [`MonitorClient`]: send a command and wait until the game state shows
//! its effect ([`send_control`]), follow a match as one line per change
//! ([`watch`]), and check a recorded match log, plain or gzip
//! ([`LogSummary`]). The `rcss3d ctl`, `rcss3d watch` and
//! `rcss3d check-log` subcommands are thin wrappers around these.

use std::fmt;
use std::io::{BufRead, Write};
use std::path::Path;
use std::time::Duration;

use thiserror::Error;
use tokio::time::{timeout, Instant};

use crate::monitor::{ClientError, GameView, LogCheck, LogChecker, MonitorClient};
use rcss3d_server::monitor::command::parse_commands;
use rcss3d_server::monitor::log::{LogReader, LogTail};
use rcss3d_server::rules::{PlayMode, Side};

/// A trainer command with the game state that shows it took effect.
#[derive(Debug, Clone, PartialEq)]
pub enum Control {
    /// `(kickOff Left|Right|None)`; `None` lets the referee choose.
    KickOff(Option<Side>),
    /// `(playMode NAME)`.
    PlayMode(PlayMode),
    /// `(dropBall)`: the ball is dropped and play goes on.
    DropBall,
    /// `(score (left A) (right B))`.
    Score(u32, u32),
    /// `(time T)`: set the game clock.
    Time(f32),
    /// `(killsim)`: stop the server (its log is completed).
    KillSim,
    /// Any monitor command text, checked locally; its effect is not
    /// waited for.
    Raw(String),
}

impl Control {
    /// The command as sent on the monitor port.
    pub fn command_text(&self) -> String {
        match self {
            Control::KickOff(side) => {
                format!("(kickOff {})", side.map_or("None", |s| s.monitor_name()))
            }
            Control::PlayMode(m) => format!("(playMode {})", m.name()),
            Control::DropBall => "(dropBall)".to_owned(),
            Control::Score(l, r) => format!("(score (left {l}) (right {r}))"),
            Control::Time(t) => format!("(time {t})"),
            Control::KillSim => "(killsim)".to_owned(),
            Control::Raw(text) => text.clone(),
        }
    }

    /// Whether `game` shows this command's effect; `None` when the effect
    /// is not visible in the game state (or, for `killsim`, is the closed
    /// connection).
    fn done(&self, game: &GameView) -> Option<bool> {
        let mode = game.play_mode();
        Some(match self {
            Control::KickOff(Some(side)) => {
                mode == Some(rcss3d_server::rules::kick_off_mode(*side))
            }
            Control::KickOff(None) => {
                matches!(mode, Some(PlayMode::KickOffLeft | PlayMode::KickOffRight))
            }
            Control::PlayMode(m) => mode == Some(*m),
            Control::DropBall => mode == Some(PlayMode::PlayOn),
            Control::Score(l, r) => game.score_left == *l && game.score_right == *r,
            // The clock may run on after it was set.
            Control::Time(t) => game.time >= *t - 0.001 && game.time < *t + 1.0,
            Control::KillSim | Control::Raw(_) => return None,
        })
    }
}

/// Why a control command, a watch or a log check failed.
#[derive(Debug, Error)]
pub enum ControlError {
    /// Nothing listens at the address, or the connection failed.
    #[error("cannot connect to the monitor port at {addr}: {source}")]
    Connect {
        /// The address as given.
        addr: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The command text is not a valid monitor command.
    #[error("not a valid monitor command: {0}")]
    BadCommand(String),
    /// The monitor connection failed or the server sent an invalid message.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The server closed the connection before the command took effect.
    #[error("the server closed the connection before `{0}` took effect")]
    Closed(String),
    /// The server refused the command and said why.
    #[error("the server refused `{command}`: {reason}")]
    Refused {
        /// The command sent.
        command: String,
        /// The server's reason (`(refused REASON)`).
        reason: String,
    },
    /// The game state did not show the command's effect in time, and the
    /// server did not refuse it.
    #[error(
        "`{command}` sent and not refused, but the game state did not show its effect \
         within {waited:?} (last: {last}){hint}"
    )]
    NotConfirmed {
        /// The command sent.
        command: String,
        /// How long it waited.
        waited: Duration,
        /// The last game state seen.
        last: Box<StatusLine>,
        /// A likely cause, when the messages show one.
        hint: &'static str,
    },
    /// The server sent no message within the wait.
    #[error("no message from the monitor port within {0:?}")]
    Silent(Duration),
    /// A log file could not be read.
    #[error("{path}: {source}")]
    LogRead {
        /// File path.
        path: String,
        /// The I/O or gzip error.
        source: std::io::Error,
    },
    /// A log file is not a valid match log.
    #[error("{path}: {source}")]
    LogInvalid {
        /// File path.
        path: String,
        /// What is wrong, with the line number.
        source: ClientError,
    },
}

/// How [`send_control`] talks to the server.
#[derive(Debug, Clone, Default)]
pub struct ControlOptions {
    /// Sent as `(auth SECRET)` before the command, for a monitor port with
    /// a trainer secret.
    pub secret: Option<String>,
    /// How long to wait for the effect; `None` sends and returns at once.
    pub wait: Option<Duration>,
}

/// What [`send_control`] observed.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlOutcome {
    /// Sent without waiting, or a command whose effect is not visible.
    Sent,
    /// The game state shows the effect.
    Confirmed(StatusLine),
    /// `killsim`: the server closed the connection.
    ServerStopped,
}

/// Connects to the monitor port at `addr`, checks and sends `control`, and
/// (unless `options.wait` is `None`) waits until the game state shows its
/// effect.
pub async fn send_control(
    addr: &str,
    control: &Control,
    options: &ControlOptions,
) -> Result<ControlOutcome, ControlError> {
    let text = control.command_text();
    if let Some(err) = parse_commands(text.as_bytes())
        .into_iter()
        .find_map(Result::err)
    {
        return Err(ControlError::BadCommand(format!("{text}: {err}")));
    }
    let mut monitor = connect(addr).await?;
    let frame = match &options.secret {
        Some(secret) => format!("(auth {secret}){text}"),
        None => text.clone(),
    };
    let Some(wait) = options.wait else {
        monitor.send(&frame).await?;
        return Ok(ControlOutcome::Sent);
    };
    let deadline = Instant::now() + wait;
    // The first message (a full state) shows the server is alive and
    // speaks the monitor protocol.
    next_before(&mut monitor, deadline, wait)
        .await?
        .ok_or_else(|| ControlError::Closed(text.clone()))?;
    let refused_before = monitor.scene().refused.len();
    let received = |monitor: &MonitorClient| {
        let scene = monitor.scene();
        scene.full_states + scene.deltas
    };
    let received_before = received(&monitor);
    monitor.send(&frame).await?;
    // The server answers a refused command at once with its reason.
    let refused = |monitor: &MonitorClient| -> Result<(), ControlError> {
        match monitor.scene().refused.get(refused_before) {
            Some(reason) => Err(ControlError::Refused {
                command: text.clone(),
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    };
    if *control == Control::KillSim {
        loop {
            match timeout_at(deadline, monitor.next_message()).await {
                None => {
                    return Err(not_confirmed(
                        &text,
                        wait,
                        &monitor,
                        received(&monitor) - received_before,
                    ))
                }
                Some(Ok(Some(_))) => refused(&monitor)?,
                Some(Ok(None) | Err(ClientError::Io(_))) => {
                    return Ok(ControlOutcome::ServerStopped)
                }
                Some(Err(e)) => return Err(e.into()),
            }
        }
    }
    // A state that already shows the effect (a drop ball during PlayOn)
    // only counts after a few more messages, so that the command has
    // passed through the simulation before the client closes; a change to
    // the expected state counts at once.
    let Some(already) = control.done(&monitor.scene().game) else {
        // An effect the game state does not show: sent unless the server
        // refuses it within a few messages (or a second, for a server that
        // does not step).
        let deadline = deadline.min(Instant::now() + RAW_REFUSAL_WAIT);
        for _ in 0..MESSAGES_WHEN_ALREADY_DONE {
            match timeout_at(deadline, monitor.next_message()).await {
                None => break,
                Some(msg) => {
                    msg?.ok_or_else(|| ControlError::Closed(text.clone()))?;
                }
            }
            refused(&monitor)?;
        }
        return Ok(ControlOutcome::Sent);
    };
    let mut messages_after = 0;
    loop {
        match timeout_at(deadline, monitor.next_message()).await {
            None => {
                return Err(not_confirmed(
                    &text,
                    wait,
                    &monitor,
                    received(&monitor) - received_before,
                ))
            }
            Some(msg) => {
                msg?.ok_or_else(|| ControlError::Closed(text.clone()))?;
            }
        }
        refused(&monitor)?;
        messages_after += 1;
        if control.done(&monitor.scene().game) == Some(true)
            && (!already || messages_after >= MESSAGES_WHEN_ALREADY_DONE)
        {
            return Ok(ControlOutcome::Confirmed(StatusLine::of(
                &monitor.scene().game,
            )));
        }
    }
}

/// Messages to wait for when the state showed the effect before the
/// command was sent: a command reaches the simulation at its next cycle,
/// and a monitor message goes out every monitor step (two cycles by
/// default), so the third message reflects it.
const MESSAGES_WHEN_ALREADY_DONE: u32 = 3;

/// The longest `ctl send` waits for a refusal: the server answers a
/// refused command in its next message, at most a monitor step away.
const RAW_REFUSAL_WAIT: Duration = Duration::from_secs(1);

/// The command's effect did not show; `messages` counts the messages
/// received after it was sent.
fn not_confirmed(
    command: &str,
    waited: Duration,
    monitor: &MonitorClient,
    messages: u64,
) -> ControlError {
    let game = &monitor.scene().game;
    let hint = if messages == 0 {
        "; the server sent no message after it: a sync-mode server does not step \
         while it waits for its agents"
    } else {
        ""
    };
    ControlError::NotConfirmed {
        command: command.to_owned(),
        waited,
        last: Box::new(StatusLine::of(game)),
        hint,
    }
}

async fn connect(addr: &str) -> Result<MonitorClient, ControlError> {
    MonitorClient::connect(addr).await.map_err(|e| match e {
        ClientError::Io(source) => ControlError::Connect {
            addr: addr.to_owned(),
            source,
        },
        other => other.into(),
    })
}

async fn timeout_at<F: std::future::Future>(deadline: Instant, f: F) -> Option<F::Output> {
    timeout(deadline.saturating_duration_since(Instant::now()), f)
        .await
        .ok()
}

async fn next_before(
    monitor: &mut MonitorClient,
    deadline: Instant,
    wait: Duration,
) -> Result<Option<crate::monitor::Received>, ControlError> {
    match timeout_at(deadline, monitor.next_message()).await {
        None => Err(ControlError::Silent(wait)),
        Some(msg) => Ok(msg?),
    }
}

/// Game time, half, play mode, team names and score, as one line.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusLine {
    /// Game time, s.
    pub time: f32,
    /// Half (1 or 2).
    pub half: u32,
    /// The play mode's name (its number if unknown).
    pub play_mode: String,
    /// Left team name, `-` before one joined.
    pub team_left: String,
    /// Right team name, `-` before one joined.
    pub team_right: String,
    /// Goals of the left team.
    pub score_left: u32,
    /// Goals of the right team.
    pub score_right: u32,
}

impl StatusLine {
    /// The line for a monitor's game state.
    pub fn of(game: &GameView) -> StatusLine {
        let name = |n: &Option<String>| n.clone().unwrap_or_else(|| "-".to_owned());
        StatusLine {
            time: game.time,
            half: game.half,
            play_mode: game.play_mode().map_or_else(
                || format!("mode {}", game.play_mode),
                |m| m.name().to_owned(),
            ),
            team_left: name(&game.team_left),
            team_right: name(&game.team_right),
            score_left: game.score_left,
            score_right: game.score_right,
        }
    }

    /// Everything but the time is equal.
    fn same_state(&self, other: &StatusLine) -> bool {
        StatusLine {
            time: other.time,
            ..self.clone()
        } == *other
    }
}

impl fmt::Display for StatusLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "t={:8.2} half {} {:<22} {} {}:{} {}",
            self.time,
            self.half,
            self.play_mode,
            self.team_left,
            self.score_left,
            self.score_right,
            self.team_right
        )
    }
}

/// Follows the match on the monitor port at `addr` and writes a
/// [`StatusLine`] to `out` for the first message, whenever the half, play
/// mode, a team name or the score changes, and every `every` seconds of
/// game time in between (`0` = only on changes). Returns when the server
/// closes the connection, after a last line `server stopped`.
pub async fn watch(addr: &str, every: f32, out: &mut impl Write) -> Result<(), ControlError> {
    let mut monitor = connect(addr).await?;
    let mut last: Option<StatusLine> = None;
    loop {
        match monitor.next_message().await {
            Ok(Some(_)) => {}
            Ok(None) | Err(ClientError::Io(_)) => {
                // Whether stdout is still open does not matter any more.
                let _ = writeln!(out, "server stopped").and_then(|()| out.flush());
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        }
        let now = StatusLine::of(&monitor.scene().game);
        let print = match &last {
            None => true,
            Some(prev) => {
                !prev.same_state(&now)
                    || (every > 0.0 && (now.time - prev.time).abs() >= every - 0.001)
            }
        };
        if print {
            // A closed stdout (`| head`) ends the watch quietly.
            if writeln!(out, "{now}").and_then(|()| out.flush()).is_err() {
                return Ok(());
            }
            last = Some(now);
        }
    }
}

/// A valid match log, summarised.
#[derive(Debug, Clone)]
pub struct LogSummary {
    /// Whether the file was gzip.
    pub gzip: bool,
    /// Gzip members in the file (0 when plain). RoboViz reads only the
    /// first.
    pub gzip_members: u64,
    /// What the check found, including the last state.
    pub check: LogCheck,
    /// How the file ended: a log whose server was killed can end inside a
    /// line or a gzip member, which is left out.
    pub tail: LogTail,
}

impl LogSummary {
    /// Reads the log at `path`, plain or gzip (recognised by its magic
    /// bytes, not by the file name), as a stream up to its last complete
    /// line (see [`LogReader`]), and checks it as [`check_log`](crate::monitor::check_log) does.
    /// Memory is one line (at most [`MAX_LINE`](rcss3d_server::monitor::log::MAX_LINE) bytes, checked before it
    /// is held whole) and the scene, whatever the length of the file.
    pub fn of_file(path: &Path) -> Result<LogSummary, ControlError> {
        let name = || path.display().to_string();
        let mut reader = LogReader::open(path).map_err(|source| ControlError::LogRead {
            path: name(),
            source,
        })?;
        let mut checker = LogChecker::default();
        let mut line = Vec::with_capacity(64 * 1024);
        loop {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| ControlError::LogRead {
                    path: name(),
                    source: std::io::Error::new(
                        e.kind(),
                        format!("line {}: {e}", checker.lines() + 1),
                    ),
                })?;
            if n == 0 {
                break;
            }
            let text =
                std::str::from_utf8(&line[..n - 1]).map_err(|_| ControlError::LogInvalid {
                    path: name(),
                    source: ClientError::Invalid(format!(
                        "line {}: not UTF-8 text",
                        checker.lines() + 1
                    )),
                })?;
            checker
                .line(text)
                .map_err(|source| ControlError::LogInvalid {
                    path: name(),
                    source,
                })?;
        }
        let check = checker
            .finish()
            .map_err(|source| ControlError::LogInvalid {
                path: name(),
                source,
            })?;
        Ok(LogSummary {
            gzip: reader.is_gzip(),
            gzip_members: reader.gzip_members(),
            check,
            tail: reader.tail().unwrap_or(LogTail::Complete),
        })
    }

    /// What keeps RoboViz from replaying the whole log, if anything: a
    /// gzip file of several members, of which it reads the first only.
    pub fn roboviz_problem(&self) -> Option<String> {
        (self.gzip_members > 1).then(|| {
            format!(
                "{} gzip members: RoboViz replays only the first (recompress the file as one \
                 stream, e.g. `gzip -dc LOG | gzip > ONE.gz`)",
                self.gzip_members
            )
        })
    }
}

impl fmt::Display for LogSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.check;
        let game = &c.last.game;
        writeln!(
            f,
            "valid {} match log: {} lines, {} full states",
            if self.gzip { "gzip" } else { "plain" },
            c.lines,
            c.full_states
        )?;
        if self.gzip {
            writeln!(f, "gzip members: {}", self.gzip_members)?;
        }
        if let Some(problem) = self.roboviz_problem() {
            writeln!(f, "problem for RoboViz: {problem}")?;
        }
        match self.tail {
            LogTail::Complete => {}
            LogTail::PartialLine { bytes } => writeln!(
                f,
                "the file ends inside a line ({bytes} bytes left out; its writer stopped \
                 abruptly): checked up to the last complete line"
            )?,
            LogTail::TruncatedGzip { bytes } => writeln!(
                f,
                "the file ends inside a gzip member ({bytes} decompressed bytes after the last \
                 complete line left out; its writer stopped abruptly): checked up to the last \
                 complete line"
            )?,
        }
        match c.seed {
            Some(seed) => writeln!(f, "seed {seed}")?,
            None => writeln!(f, "no seed recorded")?,
        }
        writeln!(f, "last frame: {}", StatusLine::of(game))?;
        let robots = c.last.robots();
        let left = robots.iter().filter(|r| r.side == Side::Left).count();
        write!(
            f,
            "robots on the field at the end: {} ({left} left, {} right); fouls recorded: {}",
            robots.len(),
            robots.len() - left,
            game.fouls.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(mode: PlayMode, time: f32, score: (u32, u32)) -> GameView {
        GameView {
            time,
            half: 1,
            play_mode: u32::from(mode.index()),
            score_left: score.0,
            score_right: score.1,
            ..GameView::default()
        }
    }

    #[test]
    fn every_command_text_is_a_valid_monitor_command() {
        for c in [
            Control::KickOff(Some(Side::Left)),
            Control::KickOff(Some(Side::Right)),
            Control::KickOff(None),
            Control::PlayMode(PlayMode::CornerKickLeft),
            Control::DropBall,
            Control::Score(2, 1),
            Control::Time(12.5),
            Control::KillSim,
        ] {
            let text = c.command_text();
            let parsed = parse_commands(text.as_bytes());
            assert_eq!(parsed.len(), 1, "{text}");
            assert!(parsed[0].is_ok(), "{text}: {:?}", parsed[0]);
        }
    }

    #[test]
    fn effects_are_read_from_the_game_state() {
        let before = game(PlayMode::BeforeKickOff, 0.0, (0, 0));
        let kick_left = game(PlayMode::KickOffLeft, 0.0, (0, 0));
        assert_eq!(
            Control::KickOff(Some(Side::Left)).done(&before),
            Some(false)
        );
        assert_eq!(
            Control::KickOff(Some(Side::Left)).done(&kick_left),
            Some(true)
        );
        assert_eq!(
            Control::KickOff(Some(Side::Right)).done(&kick_left),
            Some(false)
        );
        assert_eq!(Control::KickOff(None).done(&kick_left), Some(true));
        let play_on = game(PlayMode::PlayOn, 3.0, (2, 1));
        assert_eq!(Control::DropBall.done(&play_on), Some(true));
        assert_eq!(
            Control::PlayMode(PlayMode::PlayOn).done(&before),
            Some(false)
        );
        assert_eq!(Control::Score(2, 1).done(&play_on), Some(true));
        assert_eq!(Control::Score(1, 2).done(&play_on), Some(false));
        assert_eq!(Control::Time(2.5).done(&play_on), Some(true));
        assert_eq!(Control::Time(10.0).done(&play_on), Some(false));
        assert_eq!(Control::KillSim.done(&play_on), None);
        assert_eq!(Control::Raw("(dropBall)".into()).done(&play_on), None);
    }

    #[test]
    fn status_line_names_mode_teams_and_score() {
        let mut g = game(PlayMode::GoalLeft, 61.04, (1, 0));
        g.team_left = Some("Alpha".into());
        let line = StatusLine::of(&g).to_string();
        assert_eq!(line, "t=   61.04 half 1 Goal_Left              Alpha 1:0 -");
        let unknown = GameView {
            play_mode: 99,
            ..GameView::default()
        };
        assert!(StatusLine::of(&unknown).to_string().contains("mode 99"));
    }

    #[test]
    fn unreadable_and_invalid_logs_name_the_file() {
        let dir = std::env::temp_dir().join(format!("rcss3d-control-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let missing = dir.join("missing.log");
        let err = LogSummary::of_file(&missing).expect_err("missing file");
        assert!(
            err.to_string().starts_with(&missing.display().to_string()),
            "{err}"
        );
        let bad = dir.join("bad.log");
        std::fs::write(&bad, "((time 0))\n").expect("write");
        let err = LogSummary::of_file(&bad).expect_err("not a log");
        assert!(err.to_string().contains("line 1"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
