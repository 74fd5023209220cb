//! Server configuration: one [`Config`] whose fields document their
//! defaults (the stock rcssserver3d 0.7.1 values), loaded from RON.
//!
//! The embedded default is `conf/server.ron`; `--config FILE` replaces it
//! and command-line flags override single values. Missing keys take their
//! defaults; an unknown key is an error, reported as `path:line:col: ...`.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;

use crate::monitor::MonitorConfig;
use crate::perception::vision::{FieldGeometry, VisionConfig};
use crate::rules::teams::TeamsConfig;
use crate::rules::RulesConfig;
use crate::sim::latency::LatencyConfig;
use crate::sim::world::PhysicsConfig;

/// The default configuration file, embedded in the binary.
pub const DEFAULT_CONFIG_RON: &str = include_str!("../conf/server.ron");

/// A configuration file that could not be used.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// File path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid RON for [`Config`] (syntax, type, unknown key).
    #[error("{path}:{line}:{col}: {message}")]
    Syntax {
        /// File path.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What is wrong.
        message: String,
    },
    /// A value is out of its allowed range.
    #[error("{path}: {message}")]
    Invalid {
        /// File path.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// Everything the server can be told. Defaults are the stock 0.7.1 values
/// unless a field says otherwise.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Address both ports listen on. Default `0.0.0.0` (all IPv4).
    pub bind: IpAddr,
    /// Agent port. Default 3100.
    pub agent_port: u16,
    /// Monitor (and trainer) port. Default 3200.
    pub monitor_port: u16,
    /// agentSyncMode: wait for every agent's `(syn)` before each cycle.
    /// Default false.
    pub sync_mode: bool,
    /// Pace cycles by the wall clock (one per `step` seconds). Default
    /// true. Independent of `sync_mode`; `--sync` on the command line turns
    /// it off unless `--real-time` is given too.
    pub real_time: bool,
    /// Simulation step in seconds. Default 0.02 (50 Hz). The clocks
    /// advance by the f32 value of this each cycle.
    pub step: f32,
    /// Sync mode only: proceed without an agent that has not answered
    /// within this many milliseconds (logged). Default `None` = wait
    /// forever, as the reference does.
    pub sync_timeout_ms: Option<u64>,
    /// Sync mode only: a new agent does not hold up the cycle, whether it
    /// answers or not, until it first answers with `(syn)` or this many
    /// frames after it joined its team (the reference's grace period, so
    /// clients can build their robot and join; the reference counts from
    /// the connection). With `sync_wait_for_agents` set, each
    /// of these frames waits for some message (not necessarily `(syn)`)
    /// instead, which keeps scripted starts reproducible. Default 5.
    pub sync_grace_frames: u32,
    /// Sync mode only: do not run the first cycle until this many agents
    /// have sent `scene`, so a scripted match starts in the same cycle
    /// every time however fast its agents connect; also makes new agents
    /// answer every grace frame (see `sync_grace_frames`). Default 0 (off).
    pub sync_wait_for_agents: usize,
    /// Seed of the server's single RNG (vision noise, beam noise, referee).
    /// Default 0 = draw a random seed at start (printed and logged).
    pub seed: u64,
    /// Largest accepted inbound frame from an agent, bytes; bigger frames
    /// close the connection. Default 16 KiB: real agents send under 2 kB a
    /// cycle (FCPCodebase about 500 bytes: 24 joints, `say`, `syn`), and
    /// the limit bounds what one frame can cost the server (see also
    /// [`crate::sexp::MAX_NODES`]).
    pub max_agent_frame: usize,
    /// Maximum simultaneous agent connections; more are refused. Default 64.
    pub max_agents: usize,
    /// An agent connection that keeps the server waiting this many seconds
    /// is closed (with a log line), so silent or half-open connections
    /// cannot hold `max_agents` slots: one that has not joined a team
    /// this long after it could (see [`crate::net::handshake`]), or that
    /// has left a frame unfinished this long. 0 = never. Default 5.
    pub agent_idle_timeout_secs: f32,
    /// Frames queued for one agent before further frames are dropped
    /// (whole frames, never partial). Default 64.
    pub agent_queue: usize,
    /// Inbound bytes per second one agent connection may send on average
    /// (bursts up to one second's worth, at least one largest frame); a
    /// client over it is disconnected with a log line. 0 = no limit.
    /// Default 16 MiB/s (a real agent sends < 100 kB/s in real time).
    pub max_agent_bytes_per_sec: u64,
    /// Directory of robot model files. Default `models` (relative to the
    /// working directory, falling back to the source tree's `models/`).
    pub models_dir: PathBuf,
    /// The physics world (rapier3d): sub-steps, solver, ball, field scene.
    pub physics: PhysicsConfig,
    /// The camera: view cone, noise, position cheats, interval.
    pub vision: VisionConfig,
    /// The referee: every soccer-rules.md §11 parameter under the
    /// reference's names, including the field dimensions.
    pub rules: RulesConfig,
    /// Team admission: team-name length, freeing an empty side.
    pub teams: TeamsConfig,
    /// Monitors and the match log.
    pub monitor: MonitorConfig,
    /// Real-time scheduling of the simulation thread (`SCHED_FIFO`, CPU
    /// latency request). Default: neither; `--low-latency` asks for both.
    pub latency: LatencyConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: IpAddr::from([0, 0, 0, 0]),
            agent_port: 3100,
            monitor_port: 3200,
            sync_mode: false,
            real_time: true,
            step: 0.02,
            sync_timeout_ms: None,
            sync_grace_frames: 5,
            sync_wait_for_agents: 0,
            seed: 0,
            max_agent_frame: 16 << 10,
            max_agents: 64,
            agent_idle_timeout_secs: 5.0,
            agent_queue: 64,
            max_agent_bytes_per_sec: 16 << 20,
            models_dir: PathBuf::from("models"),
            physics: PhysicsConfig::default(),
            vision: VisionConfig::default(),
            rules: RulesConfig::default(),
            teams: TeamsConfig::default(),
            monitor: MonitorConfig::default(),
            latency: LatencyConfig::default(),
        }
    }
}

impl Config {
    /// Parses RON text; `path` names the source in errors. RON's
    /// `implicit_some` is on: an optional field may be written as its plain
    /// value (`sync_timeout_ms: 2000`) or as `Some(2000)`; `None` turns it off.
    pub fn from_ron(text: &str, path: &str) -> Result<Config, ConfigError> {
        let options = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        let cfg: Config = options.from_str(text).map_err(|e| ConfigError::Syntax {
            path: path.to_owned(),
            line: e.position.line,
            col: e.position.col,
            message: e.code.to_string(),
        })?;
        cfg.validate(path)?;
        Ok(cfg)
    }

    /// Reads and parses a RON file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: shown.clone(),
            source,
        })?;
        Config::from_ron(&text, &shown)
    }

    /// The embedded defaults (`conf/server.ron`).
    pub fn embedded() -> Result<Config, ConfigError> {
        Config::from_ron(DEFAULT_CONFIG_RON, "conf/server.ron (embedded)")
    }

    /// Checks value ranges.
    pub fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let bad = |message: String| {
            Err(ConfigError::Invalid {
                path: path.to_owned(),
                message,
            })
        };
        if !(self.step > 0.0 && self.step <= 1.0) {
            return bad(format!("step must be in (0, 1] seconds, got {}", self.step));
        }
        if self.max_agent_frame < 64 {
            return bad(format!(
                "max_agent_frame must be >= 64, got {}",
                self.max_agent_frame
            ));
        }
        if !(self.agent_idle_timeout_secs >= 0.0 && self.agent_idle_timeout_secs.is_finite()) {
            return bad(format!(
                "agent_idle_timeout_secs must be >= 0, got {}",
                self.agent_idle_timeout_secs
            ));
        }
        if self.agent_queue == 0 {
            return bad("agent_queue must be >= 1".into());
        }
        if let Err(e) = self.rules.validate() {
            return bad(format!("rules: {e}"));
        }
        if let Err(e) = self.latency.validate() {
            return bad(format!("latency: {e}"));
        }
        Ok(())
    }

    /// The agent idle timeout, `None` when disabled.
    pub fn agent_idle_timeout(&self) -> Option<std::time::Duration> {
        (self.agent_idle_timeout_secs > 0.0)
            .then(|| std::time::Duration::from_secs_f32(self.agent_idle_timeout_secs))
    }

    /// Field dimensions for vision, taken from the referee's parameters so
    /// the field is described once.
    pub fn field_geometry(&self) -> FieldGeometry {
        let r = &self.rules;
        FieldGeometry {
            field_length: r.field_length,
            field_width: r.field_width,
            goal_width: r.goal_width,
            goal_height: r.goal_height,
            penalty_length: r.penalty_length,
            penalty_width: r.penalty_width,
            centre_circle_radius: r.free_kick_distance,
        }
    }

    /// The monitor configuration with its field values taken from the
    /// referee's parameters, so monitors show the field the rules use.
    pub fn monitor_config(&self) -> MonitorConfig {
        let r = &self.rules;
        let mut m = self.monitor.clone();
        let f = &mut m.field;
        f.field_length = r.field_length;
        f.field_width = r.field_width;
        f.field_height = r.field_height;
        f.goal_width = r.goal_width;
        f.goal_depth = r.goal_depth;
        f.goal_height = r.goal_height;
        f.border_size = r.border_size;
        f.free_kick_distance = r.free_kick_distance;
        f.wait_before_kick_off = r.wait_before_kick_off;
        f.agent_radius = r.agent_radius;
        f.ball_radius = r.ball_radius;
        f.ball_mass = r.ball_mass;
        f.rule_goal_pause_time = r.goal_pause_time;
        f.rule_kick_in_pause_time = r.kick_in_pause_time;
        f.rule_half_time = r.half_time;
        m
    }

    /// The models directory, resolved: as configured if it exists, else
    /// the crate's own `models/` (so `cargo run` works from anywhere).
    pub fn resolved_models_dir(&self) -> PathBuf {
        if self.models_dir.is_dir() || self.models_dir.is_absolute() {
            self.models_dir.clone()
        } else {
            Path::new(env!("CARGO_MANIFEST_DIR")).join(&self.models_dir)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_defaults_equal_code_defaults() {
        let file = Config::embedded().expect("embedded config parses");
        let code = Config::default();
        assert_eq!(format!("{file:?}"), format!("{code:?}"));
    }

    #[test]
    fn unknown_key_is_an_error_with_line() {
        let err = Config::from_ron("(\n  agent_port: 3101,\n  agnet_port: 1,\n)", "x.ron")
            .expect_err("unknown key must fail");
        let text = err.to_string();
        assert!(text.starts_with("x.ron:3:"), "{text}");
        assert!(text.contains("agnet_port"), "{text}");
    }

    #[test]
    fn partial_file_keeps_defaults_and_ranges_checked() {
        let cfg = Config::from_ron("(sync_mode: true, seed: 7)", "y.ron").expect("parses");
        assert!(cfg.sync_mode);
        assert_eq!(cfg.seed, 7);
        assert_eq!(cfg.agent_port, 3100);
        let err = Config::from_ron("(step: 0.0)", "z.ron").expect_err("bad step");
        assert!(err.to_string().starts_with("z.ron: step"), "{err}");
        let err = Config::from_ron("(latency: (sim_fifo_priority: 0))", "l.ron")
            .expect_err("priority out of range");
        assert!(err.to_string().starts_with("l.ron: latency"), "{err}");
        let cfg = Config::from_ron("(latency: (sim_fifo_priority: 20))", "l.ron").expect("parses");
        assert_eq!(cfg.latency.sim_fifo_priority, Some(20));
        assert!(!cfg.latency.keep_cpus_awake);
        let err = Config::from_ron("(agent_port: \"x\")", "w.ron").expect_err("bad type");
        assert!(err.to_string().starts_with("w.ron:1:"), "{err}");
    }

    #[test]
    fn optional_fields_take_plain_values_or_some() {
        let plain = Config::from_ron(
            "(sync_timeout_ms: 2000, monitor: (trainer_secret: \"s3cret\"))",
            "p.ron",
        )
        .expect("plain values parse");
        assert_eq!(plain.sync_timeout_ms, Some(2000));
        assert_eq!(plain.monitor.trainer_secret.as_deref(), Some("s3cret"));
        let wrapped =
            Config::from_ron("(sync_timeout_ms: Some(2000))", "s.ron").expect("Some parses");
        assert_eq!(wrapped.sync_timeout_ms, Some(2000));
        let none = Config::from_ron("(sync_timeout_ms: None)", "n.ron").expect("None parses");
        assert_eq!(none.sync_timeout_ms, None);
    }
}
