//! What the simulation reads of the server's configuration: the cycle
//! length, the sync-mode barrier, and the options of the layers it runs
//! (physics, vision, rules, teams, robot models). The server's `Config`
//! builds one; the simulation never sees sockets, ports or the monitor's
//! options.

use crate::perception::vision::{FieldGeometry, VisionConfig};
use crate::rules::teams::TeamsConfig;
use crate::rules::RulesConfig;
use crate::sim::assets::ModelSource;
use crate::sim::world::{FieldSize, PhysicsConfig};

/// The simulation's settings.
#[derive(Debug, Clone, Default)]
pub struct SimConfig {
    /// Seconds of simulated time per cycle.
    pub step: f32,
    /// Frames an agent may leave unanswered after it joined before the
    /// sync-mode barrier waits for it.
    pub sync_grace_frames: u32,
    /// Agents that must have sent `scene` before the first cycle with
    /// agents runs (sync mode), at least 1.
    pub sync_wait_for_agents: usize,
    /// The physics world (built to step by `step`).
    pub physics: PhysicsConfig,
    /// Vision.
    pub vision: VisionConfig,
    /// The referee.
    pub rules: RulesConfig,
    /// Team names and robot types.
    pub teams: TeamsConfig,
    /// The robot model files.
    pub models: ModelSource,
}

impl SimConfig {
    /// Field dimensions for the physics world, taken from the referee's
    /// parameters so the field is described once.
    pub fn field_size(&self) -> FieldSize {
        field_size(&self.rules)
    }

    /// Field dimensions for vision, taken from the referee's parameters so
    /// the field is described once.
    pub fn field_geometry(&self) -> FieldGeometry {
        field_geometry(&self.rules)
    }
}

/// The physics world's field from the referee's parameters.
pub fn field_size(r: &RulesConfig) -> FieldSize {
    FieldSize {
        field_length: r.field_length,
        field_width: r.field_width,
        goal_width: r.goal_width,
        goal_depth: r.goal_depth,
        goal_height: r.goal_height,
        ball_radius: r.ball_radius,
        ball_mass: r.ball_mass,
    }
}

/// Vision's field from the referee's parameters.
pub fn field_geometry(r: &RulesConfig) -> FieldGeometry {
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
