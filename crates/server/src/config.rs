//! Server configuration: one [`Config`] whose fields document their
//! defaults (the stock rcssserver3d 0.7.1 values), loaded from RON.
//!
//! The settings are laid over each other in this order, each source
//! changing only the keys it names ([`Config::from_sources`]):
//!
//! 1. the embedded defaults (`conf/server.ron`);
//! 2. the reference's per-user switches, `~/.simspark/spark.rb`
//!    ([`user::read_spark_rb`]);
//! 3. rcss3d's per-user file, `$XDG_CONFIG_HOME/rcss3d/server.ron` or
//!    `~/.config/rcss3d/server.ron`;
//! 4. the file named by `$RCSS3D_CONFIG`;
//! 5. `--config FILE`;
//! 6. command-line flags (applied by the binary).
//!
//! Missing keys keep the value so far; an unknown key is an error, reported
//! as `path:line:col: ...`. Relative input paths in a file (`models_dir`,
//! `physics.field_scene`) are taken from that file's directory.

mod overlay;
mod ranges;
mod suggest;
pub mod user;

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;

use crate::app::latency::LatencyConfig;
use crate::monitor::{FieldParams, MonitorConfig};
use crate::perception::vision::{FieldGeometry, VisionConfig};
use crate::rules::teams::TeamsConfig;
use crate::rules::RulesConfig;
use crate::sim::assets::ModelSource;
use crate::sim::config::SimConfig;
use crate::sim::world::{FieldSize, PhysicsConfig};
use overlay::Node;
pub use user::{UserFiles, CONFIG_ENV};

/// The default configuration file, embedded in the binary.
pub const DEFAULT_CONFIG_RON: &str = include_str!("../../../conf/server.ron");

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
    /// Sync mode only: an agent that has not answered within this many
    /// milliseconds is left behind (logged): the cycles run without it
    /// until it sends something again, so a silent agent costs the others
    /// one timeout, not one per cycle. Default `None` = wait forever, as
    /// the reference does. `0`, which elsewhere often means "no timeout",
    /// would here mean not waiting at all, so it is refused.
    pub sync_timeout_ms: Option<u64>,
    /// Sync mode only: frames a new robot's agent may leave unanswered
    /// before the cycle waits for it. Default 0: no cycle runs ahead of a
    /// robot whose agent has not answered its newest frame (with any
    /// message before its first `(syn)`, with `(syn)` after), so the cycle
    /// in which each command lands depends only on the agents' messages.
    /// 5 is the reference's grace period (it counts from the connection;
    /// this counts from the robot's first frame), for clients that do not
    /// answer their first frames.
    pub sync_grace_frames: u32,
    /// Sync mode only: do not run the first cycle until this many agents
    /// have sent `scene`, so a scripted match starts in the same cycle
    /// every time however fast its agents connect. Default 0 (off).
    pub sync_wait_for_agents: usize,
    /// Seed of the server's single RNG (vision noise, beam noise, referee).
    /// Default `None` = draw a random seed at start (printed and logged;
    /// never 0, so it can be given back with `--seed`).
    pub seed: Option<u64>,
    /// Largest accepted inbound frame from an agent, bytes; bigger frames
    /// close the connection. Default 16 KiB: real agents send under 2 kB a
    /// cycle (FCPCodebase about 500 bytes: 24 joints, `say`, `syn`), and
    /// the limit bounds what one frame can cost the server (see also
    /// [`crate::sexp::MAX_NODES`]).
    pub max_agent_frame: usize,
    /// Maximum simultaneous agent connections. When all are taken, a new
    /// connection takes the slot of the oldest one that has not asked for
    /// a robot; when every connection has a robot, it is refused. Default
    /// 64.
    pub max_agents: usize,
    /// An agent connection that has not sent its `scene` this many seconds
    /// after it connected (or after its `scene` was refused), or that has
    /// left a frame unfinished this long, is closed (with a log line), so
    /// silent or half-open connections cannot hold `max_agents` slots (see
    /// [`crate::net::handshake`]). A connection whose robot exists is never
    /// closed for being slow. `None` = never. Default 5.
    pub agent_idle_timeout_secs: Option<f32>,
    /// Frames queued for one agent before further frames are dropped
    /// (whole frames, never partial). Default 64.
    pub agent_queue: usize,
    /// Inbound bytes per second one agent connection may send on average
    /// (bursts up to one second's worth, at least one largest frame); a
    /// client over it is disconnected with a log line. `None` = no limit.
    /// Default 16 MiB/s (a real agent sends < 100 kB/s in real time).
    pub max_agent_bytes_per_sec: Option<u64>,
    /// A directory of the user's own robot model files, laid over the
    /// built-in ones (a file there adds a robot variant or replaces the
    /// built-in file of the same path, e.g. `rsg/agent/nao/nao.rsg`).
    /// Default `None`: the built-in models only. In a configuration file a
    /// relative path is taken from the file's directory.
    pub models_dir: Option<PathBuf>,
    /// The physics world (rapier3d): sub-steps, solver, ball, field scene.
    pub physics: PhysicsConfig,
    /// The camera: view cone, noise, position cheats, interval.
    pub vision: VisionConfig,
    /// The referee: every docs/protocol.md#referee-parameters parameter under the
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
            sync_grace_frames: 0,
            sync_wait_for_agents: 0,
            seed: None,
            max_agent_frame: 16 << 10,
            max_agents: 64,
            agent_idle_timeout_secs: Some(5.0),
            agent_queue: 64,
            max_agent_bytes_per_sec: Some(16 << 20),
            models_dir: None,
            physics: PhysicsConfig::default(),
            vision: VisionConfig::default(),
            rules: RulesConfig::default(),
            teams: TeamsConfig::default(),
            monitor: MonitorConfig::default(),
            latency: LatencyConfig::default(),
        }
    }
}

/// Where the configuration is read from besides the embedded defaults.
#[derive(Debug, Clone, Default)]
pub struct ConfigSources {
    /// The user's files (`spark.rb`, the per-user file, `$RCSS3D_CONFIG`);
    /// `None`: none of them is read.
    pub user: Option<UserFiles>,
    /// `--config FILE`.
    pub file: Option<PathBuf>,
}

/// One source the configuration was read from, and what it set.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceReport {
    /// The file, as shown in logs (`~/...` below the home directory).
    pub origin: String,
    /// `key = value` for every key it set (`spark.rb`: `$switch = value ->
    /// key = value`); the trainer secret's value is not shown.
    pub settings: Vec<String>,
    /// What was read and not used, with the reason (warned about).
    pub refused: Vec<String>,
    /// What was read and has no meaning here (logged at debug level).
    pub unused: Vec<String>,
}

/// A configuration and the sources it was built from, in order.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    /// The configuration.
    pub config: Config,
    /// Every file read, in the order applied.
    pub sources: Vec<SourceReport>,
}

impl Config {
    /// Parses RON text; `path` names the source in errors. RON's
    /// `implicit_some` is on: an optional field may be written as its plain
    /// value (`sync_timeout_ms: 2000`) or as `Some(2000)`; `None` turns it off.
    pub fn from_ron(text: &str, path: &str) -> Result<Config, ConfigError> {
        let cfg = Config::parse(text, path)?;
        cfg.validate(path)?;
        Ok(cfg)
    }

    /// Parses RON text without the range checks.
    fn parse(text: &str, path: &str) -> Result<Config, ConfigError> {
        let options = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        options.from_str(text).map_err(|e| ConfigError::Syntax {
            path: path.to_owned(),
            line: e.position.line,
            col: e.position.col,
            message: suggest::message(&e.code),
        })
    }

    /// The embedded defaults with one file laid over them (no user files).
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        Config::from_sources(&ConfigSources {
            user: None,
            file: Some(path.to_path_buf()),
        })
        .map(|l| l.config)
    }

    /// The embedded defaults (`conf/server.ron`).
    pub fn embedded() -> Result<Config, ConfigError> {
        Config::from_ron(DEFAULT_CONFIG_RON, "conf/server.ron (embedded)")
    }

    /// Builds the configuration from the embedded defaults and `sources`
    /// in the order of the module documentation, each changing only the
    /// keys it names. A per-user file that does not exist is skipped; a
    /// file named by `$RCSS3D_CONFIG` or `--config` must exist.
    pub fn from_sources(sources: &ConfigSources) -> Result<LoadedConfig, ConfigError> {
        let embedded = Config::embedded()?;
        let mut merged = Node::parse(DEFAULT_CONFIG_RON).ok_or_else(|| ConfigError::Invalid {
            path: "conf/server.ron (embedded)".into(),
            message: "the top level is not a struct".into(),
        })?;
        let mut reports = Vec::new();
        let mut origins = Vec::new();
        let home = sources.user.as_ref().and_then(|u| u.home.clone());
        let shown = |p: &Path| user::shown_path(p, home.as_deref());
        if let Some(files) = &sources.user {
            if let Some(path) = files.spark_rb() {
                if let Some(text) = read_optional(&path)? {
                    let spark = user::read_spark_rb(&text, embedded.step);
                    let mut unused: Vec<String> = spark
                        .unused
                        .into_iter()
                        .map(|a| format!("{a} (no rcss3d setting)"))
                        .collect();
                    if spark.other_lines > 0 {
                        unused.push(format!(
                            "{} lines of Ruby (only simple top-level `$name = value` \
                             assignments are read)",
                            spark.other_lines
                        ));
                    }
                    merged.overlay(spark.node);
                    origins.push(shown(&path));
                    reports.push(SourceReport {
                        origin: shown(&path),
                        settings: spark.taken,
                        refused: spark.refused,
                        unused,
                    });
                }
            }
            if let Some(path) = files.user_config() {
                if let Some(text) = read_optional(&path)? {
                    let (node, report) = ron_layer(&text, &path, &shown(&path))?;
                    merged.overlay(node);
                    origins.push(report.origin.clone());
                    reports.push(report);
                }
            }
            if let Some(path) = &files.env_config {
                let text = read_required(path)?;
                let origin = format!("{} (${CONFIG_ENV})", shown(path));
                let (node, report) = ron_layer(&text, path, &origin)?;
                merged.overlay(node);
                origins.push(shown(path));
                reports.push(report);
            }
        }
        if let Some(path) = &sources.file {
            let text = read_required(path)?;
            let (node, report) = ron_layer(&text, path, &shown(path))?;
            merged.overlay(node);
            origins.push(shown(path));
            reports.push(report);
        }
        let shown_all = if origins.is_empty() {
            "conf/server.ron (embedded)".to_owned()
        } else {
            origins.join(" + ")
        };
        let config = Config::parse(&merged.render(), &shown_all)?;
        config.validate(&shown_all)?;
        Ok(LoadedConfig {
            config,
            sources: reports,
        })
    }

    /// The agent idle timeout, `None` when disabled.
    pub fn agent_idle_timeout(&self) -> Option<std::time::Duration> {
        self.agent_idle_timeout_secs
            .map(std::time::Duration::from_secs_f32)
    }

    /// Field dimensions for the physics world, taken from the referee's
    /// parameters so the field is described once.
    pub fn field_size(&self) -> FieldSize {
        crate::sim::config::field_size(&self.rules)
    }

    /// Field dimensions for vision, taken from the referee's parameters so
    /// the field is described once.
    pub fn field_geometry(&self) -> FieldGeometry {
        crate::sim::config::field_geometry(&self.rules)
    }

    /// What the simulation reads: the cycle, the sync barrier and the
    /// options of physics, vision, rules, teams and models.
    pub fn sim_config(&self) -> SimConfig {
        SimConfig {
            step: self.step,
            sync_grace_frames: self.sync_grace_frames,
            // 0 and 1 both wait for the first agent.
            sync_wait_for_agents: self.sync_wait_for_agents.max(1),
            physics: self.physics.clone(),
            vision: self.vision.clone(),
            rules: self.rules.clone(),
            teams: self.teams.clone(),
            models: self.resolved_models_dir(),
        }
    }

    /// The field values announced to monitors and written to the match
    /// log, taken from the referee's parameters, so monitors show the
    /// field the rules use.
    pub fn field_params(&self) -> FieldParams {
        let r = &self.rules;
        FieldParams {
            field_length: r.field_length,
            field_width: r.field_width,
            field_height: r.field_height,
            goal_width: r.goal_width,
            goal_depth: r.goal_depth,
            goal_height: r.goal_height,
            border_size: r.border_size,
            free_kick_distance: r.free_kick_distance,
            wait_before_kick_off: r.wait_before_kick_off,
            agent_radius: r.agent_radius,
            ball_radius: r.ball_radius,
            ball_mass: r.ball_mass,
            rule_goal_pause_time: r.goal_pause_time,
            rule_kick_in_pause_time: r.kick_in_pause_time,
            rule_half_time: r.half_time,
            ..FieldParams::default()
        }
    }

    /// The robot model files the server uses: the built-in ones, with
    /// `models_dir`'s laid over them when it is set.
    pub fn resolved_models_dir(&self) -> ModelSource {
        match &self.models_dir {
            None => ModelSource::BuiltIn,
            Some(dir) => ModelSource::BuiltInAnd(dir.clone()),
        }
    }
}

impl std::fmt::Display for SourceReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.settings.is_empty() {
            write!(f, "{}: no settings", self.origin)
        } else {
            write!(f, "{}: {}", self.origin, self.settings.join(", "))
        }
    }
}

/// A seed for a run whose configuration names none. Never 0, which a
/// configuration refuses, so the seed printed at start can be given back
/// with `--seed` or `seed:` to replay the run.
pub fn random_seed() -> u64 {
    rand::random::<u64>().max(1)
}

/// Bytes a configuration file (`server.ron`, `spark.rb`) may hold; ours
/// are a few kilobytes.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// A file's text, `None` if it does not exist. Only a regular file of at
/// most [`MAX_CONFIG_BYTES`] is read.
fn read_optional(path: &Path) -> Result<Option<String>, ConfigError> {
    match crate::input_file::read_regular(path, MAX_CONFIG_BYTES) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Io {
            path: path.display().to_string(),
            source,
        }),
    }
}

fn read_required(path: &Path) -> Result<String, ConfigError> {
    crate::input_file::read_regular(path, MAX_CONFIG_BYTES).map_err(|source| ConfigError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// A RON configuration file as a layer: checked on its own (syntax, types,
/// unknown keys, with its line and column), split into its keys, and its
/// relative input paths made relative to its directory.
fn ron_layer(text: &str, path: &Path, origin: &str) -> Result<(Node, SourceReport), ConfigError> {
    let shown = path.display().to_string();
    let typed = Config::parse(text, &shown)?;
    let mut node = Node::parse(text).ok_or_else(|| ConfigError::Invalid {
        path: shown.clone(),
        message: "the top level must be a struct `( key: value, ... )`".into(),
    })?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let relative = [
        (&["models_dir"][..], typed.models_dir.as_deref()),
        (
            &["physics", "field_scene"][..],
            typed.physics.field_scene.as_deref(),
        ),
    ];
    for (key, value) in relative {
        let Some(p) = value.filter(|p| p.is_relative()) else {
            continue;
        };
        let joined = dir.join(p);
        let text = joined.to_str().ok_or_else(|| ConfigError::Invalid {
            path: shown.clone(),
            message: format!("{}: the path is not UTF-8", key.join(".")),
        })?;
        let quoted = ron::to_string(text).map_err(|e| ConfigError::Invalid {
            path: shown.clone(),
            message: e.to_string(),
        })?;
        node.set(key, quoted);
    }
    let settings = node
        .leaves()
        .into_iter()
        .map(|(key, value)| {
            if key.ends_with("trainer_secret") && value != "None" {
                format!("{key} = (hidden)")
            } else {
                format!("{key} = {value}")
            }
        })
        .collect();
    let report = SourceReport {
        origin: origin.to_owned(),
        settings,
        refused: Vec::new(),
        unused: Vec::new(),
    };
    Ok((node, report))
}

#[cfg(test)]
mod tests;
