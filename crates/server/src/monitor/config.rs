//! The `monitor:` section of `conf/server.ron`: monitor cadence, the match
//! log, per-monitor limits and access control; and the field values
//! announced to monitors in the environment predicates ([`FieldParams`],
//! not part of the section: the server builds them from the `rules`
//! section and hands them to the monitor server and the log beside the
//! section).

use std::path::PathBuf;

use serde::Deserialize;

/// Monitor port, match log and field settings (`monitor:` in
/// `conf/server.ron`). Every field documents its default; a missing field
/// takes it, an unknown field is an error.
#[derive(Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MonitorConfig {
    /// Cycles between two monitor messages. Default **2** (0.04 s at 50 Hz,
    /// the reference's `$monitorStep`); 1 sends a message every cycle.
    pub monitor_step: u32,
    /// Match log path. Default **none** (no log, as in the reference). A
    /// path ending in `.gz` implies [`log_compress`](Self::log_compress).
    pub log: Option<PathBuf>,
    /// Cycles between two log lines. Default **10** (0.2 s, the
    /// reference's `$monitorLoggerStep`); 2 (0.04 s) gives smoother replays.
    pub log_step: u32,
    /// A log line is a full state when more than this many seconds of
    /// simulated time have passed since the last full state. Default **3.0**
    /// (docs/protocol.md#log-writer).
    pub log_full_state_secs: f32,
    /// Write the log as a gzip stream (docs/protocol.md#log-compression). `.gz` is
    /// appended to the path when missing, so RoboViz recognises it.
    /// Default **false**.
    pub log_compress: bool,
    /// Where to write the end-of-match results summary, in addition to
    /// stdout. Default **none**.
    pub summary_path: Option<PathBuf>,
    /// Frames that may wait behind the one being written to a monitor's
    /// socket. While they are all pending, that monitor skips snapshots
    /// and then gets the newest one (deltas are built against what it
    /// really received, so nothing is lost but smoothness). Default **1**;
    /// at least 1.
    pub queue_frames: usize,
    /// Close a monitor whose outbound queue has stayed full for this many
    /// wall-clock seconds. Default **`None`** = never: some clients connect
    /// only to send commands and never read (FCPCodebase scripts), and
    /// a queue of a few frames is all such a client costs.
    pub stall_timeout_secs: Option<f32>,
    /// Largest accepted inbound (command) frame in bytes; a larger length
    /// prefix closes that connection. Default **65536**.
    pub max_command_frame: usize,
    /// Most monitors connected at once. When all slots are taken, a new
    /// connection waits (up to [`admission_wait_secs`](Self::admission_wait_secs))
    /// until one frees or one is cut off for not reading (see
    /// [`evict_lag_secs`](Self::evict_lag_secs)); otherwise it is closed
    /// with a log line. Default **64**.
    pub max_monitors: usize,
    /// When all monitor slots are taken and a new connection waits, one
    /// monitor is closed to make room (with a log line): the one that has
    /// left a message unread longest (the newest message aside), if longer
    /// than this many seconds; else the longest-connected one that has not
    /// been seen reading, if connected longer than this. Reading is seen
    /// in the TCP window the peer advertises (Linux; see
    /// [`crate::monitor::backlog`]): a backlog shows once the peer's buffer
    /// fills, and reading once the window has moved on by more than a peer
    /// can buffer (1 MiB). A blocked write counts as unread on every OS.
    /// Monitors seen reading that keep up are never closed for a newcomer.
    /// Default **1.0**; `None` = never close a monitor for a newcomer.
    pub evict_lag_secs: Option<f32>,
    /// How long a new connection waits for a slot while all are taken
    /// by monitors that keep up, before it is closed with a log line. While
    /// that lasts, further connections wait in the listen backlog; once a
    /// wait has run out, connections are closed at once until a slot frees.
    /// Default **3.0**.
    pub admission_wait_secs: f32,
    /// Kernel send buffer of each monitor connection, bytes (`None` = the
    /// system's, which grows to megabytes). Bounds what a monitor that
    /// does not read costs the server, and makes such a monitor's writes
    /// block soon. Default **65536** (several full states of a full match).
    pub send_buffer_bytes: Option<usize>,
    /// Commands one monitor connection may have handled per monitor step
    /// (every `monitor_step` cycles, when a monitor message goes out, and
    /// at least every 40 ms while the simulation does not step); the
    /// server reads no further from that connection until then, so a
    /// flooding trainer slows down itself, not the simulation. A frame
    /// counts as at least one command. Default **32** (a trainer placing
    /// 22 robots and the ball in one go needs 24); `None` = no limit.
    pub commands_per_step: Option<usize>,
    /// Refuse every state-changing command on the monitor port (with a log
    /// line); monitors can still watch and send `(reqfullstate)`. Default
    /// **false** (the reference accepts every command).
    pub read_only: bool,
    /// When set, state-changing commands are accepted only on connections
    /// that first sent `(auth SECRET)` with this value. Default **none**
    /// (RoboViz cannot authenticate, so it becomes read-only when set).
    pub trainer_secret: Option<String>,
    /// Wrong `(auth ...)` secrets one connection may send; the last one
    /// closes it (after its delay, below). Default **3**; `None` = no
    /// limit.
    pub max_auth_failures: Option<u32>,
    /// A connection that sent a wrong secret is not read from for `n`
    /// times this many seconds, `n` being the number of wrong secrets on
    /// the whole server in the last minute (at most 30): guessing slows
    /// down for every connection at once. Default **1.0**; 0 = no delay.
    pub auth_failure_delay_secs: f32,
}

impl Default for MonitorConfig {
    fn default() -> Self {
        MonitorConfig {
            monitor_step: 2,
            log: None,
            log_step: 10,
            log_full_state_secs: 3.0,
            log_compress: false,
            summary_path: None,
            queue_frames: 1,
            stall_timeout_secs: None,
            max_command_frame: 64 * 1024,
            max_monitors: 64,
            evict_lag_secs: Some(1.0),
            admission_wait_secs: 3.0,
            send_buffer_bytes: Some(64 * 1024),
            commands_per_step: Some(32),
            read_only: false,
            trainer_secret: None,
            max_auth_failures: Some(3),
            auth_failure_delay_secs: 1.0,
        }
    }
}

/// The values of the environment predicates (docs/protocol.md#environment-predicates) and
/// the sizes used to build the static scene. Defaults are the stock 0.7.1
/// values (30 × 20 m field). Not read from a configuration file: the
/// server builds them from the `rules` section
/// ([`crate::config::Config::field_params`]) so the field is described
/// once.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldParams {
    /// `FieldLength`, metres. Default **30**.
    pub field_length: f32,
    /// `FieldWidth`, metres. Default **20**.
    pub field_width: f32,
    /// `FieldHeight`, metres. Default **40**.
    pub field_height: f32,
    /// `GoalWidth`, metres. Default **2.1**.
    pub goal_width: f32,
    /// `GoalDepth`, metres. Default **0.6**.
    pub goal_depth: f32,
    /// `GoalHeight`, metres. Default **0.8**.
    pub goal_height: f32,
    /// `BorderSize`, metres. Default **0**.
    pub border_size: f32,
    /// `FreeKickDistance`, metres (RoboViz's centre-circle radius).
    /// Default **2**.
    pub free_kick_distance: f32,
    /// `WaitBeforeKickOff`, seconds. Default **30**.
    pub wait_before_kick_off: f32,
    /// `AgentRadius`, metres. Default **0.4**.
    pub agent_radius: f32,
    /// `BallRadius`, metres. Default **0.042**.
    pub ball_radius: f32,
    /// `BallMass`, kg. Default **0.026**.
    pub ball_mass: f32,
    /// `RuleGoalPauseTime`, seconds. Default **3**.
    pub rule_goal_pause_time: f32,
    /// `RuleKickInPauseTime`, seconds. Default **1**.
    pub rule_kick_in_pause_time: f32,
    /// `RuleHalfTime`, seconds. Default **300**.
    pub rule_half_time: f32,
    /// `GoalieAreaLength` (= the referee's penalty-area length), sent only
    /// when set. Default **none** (RoboViz then draws 1.8 m).
    pub goalie_area_length: Option<f32>,
    /// `GoalieAreaWidth` (= penalty-area width + goal width), sent only
    /// when set. Default **none** (RoboViz then draws 6.0 m).
    pub goalie_area_width: Option<f32>,
}

impl Default for FieldParams {
    fn default() -> Self {
        FieldParams {
            field_length: 30.0,
            field_width: 20.0,
            field_height: 40.0,
            goal_width: 2.1,
            goal_depth: 0.6,
            goal_height: 0.8,
            border_size: 0.0,
            free_kick_distance: 2.0,
            wait_before_kick_off: 30.0,
            agent_radius: 0.4,
            ball_radius: 0.042,
            ball_mass: 0.026,
            rule_goal_pause_time: 3.0,
            rule_kick_in_pause_time: 1.0,
            rule_half_time: 300.0,
            goalie_area_length: None,
            goalie_area_width: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ron_section_takes_defaults_and_rejects_unknown_fields() {
        let cfg: MonitorConfig = ron::from_str("(monitor_step: 1, read_only: true)").unwrap();
        assert_eq!(cfg.monitor_step, 1);
        assert!(cfg.read_only);
        assert_eq!(cfg.log_step, 10);
        let cfg: MonitorConfig = ron::from_str("(log: Some(\"m.log.gz\"))").unwrap();
        assert_eq!(cfg.log.as_deref(), Some(std::path::Path::new("m.log.gz")));
        // The field comes from the rules section, not from here.
        assert!(ron::from_str::<MonitorConfig>("(field: (field_length: 9))").is_err());
        assert!(ron::from_str::<MonitorConfig>("(bogus: 1)").is_err());
    }

    /// The `monitor:` section suggested for conf/server.ron, with every key
    /// at its default, parses to the defaults.
    #[test]
    fn full_section_with_defaults() {
        let text = r#"(
            monitor_step: 2,
            log: None,
            log_step: 10,
            log_full_state_secs: 3.0,
            log_compress: false,
            summary_path: None,
            queue_frames: 1,
            stall_timeout_secs: None,
            max_command_frame: 65536,
            max_monitors: 64,
            evict_lag_secs: Some(1.0),
            admission_wait_secs: 3.0,
            send_buffer_bytes: Some(65536),
            commands_per_step: Some(32),
            read_only: false,
            trainer_secret: None,
            max_auth_failures: Some(3),
            auth_failure_delay_secs: 1.0,
        )"#;
        let cfg: MonitorConfig = ron::from_str(text).unwrap();
        assert_eq!(cfg, MonitorConfig::default());
    }
}
