//! A read-only picture of the world after a cycle, handed to monitors and
//! the match log (and usable by tools and tests). Building one copies
//! poses out of the physics sets, so consumers never touch rapier.

use std::sync::Arc;

use nalgebra::{Isometry3, Vector3};

use crate::rules::{PlayMode, Side};

/// The world after one simulation cycle.
#[derive(Debug, Clone)]
pub struct WorldSnapshot {
    /// Number of cycles simulated so far.
    pub cycle: u64,
    /// Server (simulation) time after this cycle, f32 accumulator.
    pub server_time: f32,
    /// Game state as the referee sees it.
    pub game: GameSnapshot,
    /// Ball pose in the field frame.
    pub ball: Isometry3<f32>,
    /// Ball linear velocity in the field frame (m/s).
    pub ball_velocity: Vector3<f32>,
    /// Every robot on the field, ordered by (left team, right team, no
    /// team), then uniform number, then robot id.
    pub robots: Vec<RobotSnapshot>,
    /// Increases whenever a robot joins or leaves the scene. Monitors and
    /// the match log decide on full states from the robots they show, not
    /// from this count.
    pub structure_version: u64,
}

/// The referee's state as monitors and the log report it.
#[derive(Debug, Clone, PartialEq)]
pub struct GameSnapshot {
    /// Game time (`GS t`), f32 accumulator.
    pub game_time: f32,
    /// Current play mode.
    pub play_mode: PlayMode,
    /// Half: 1 or 2.
    pub half: u8,
    /// Goals of the team playing left.
    pub score_left: u32,
    /// Goals of the team playing right.
    pub score_right: u32,
    /// Name of the left team, once known.
    pub team_left: Option<Arc<str>>,
    /// Name of the right team, once known.
    pub team_right: Option<Arc<str>>,
    /// Every foul recorded so far, oldest first (index = position + 1).
    pub fouls: Vec<FoulRecord>,
}

/// One foul record as reported to monitors: `(foul IDX TYPE TEAM UNUM)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FoulRecord {
    /// Foul type number (docs/protocol.md#player-fouls), < 11.
    pub kind: u8,
    /// Team of the offender.
    pub side: Side,
    /// Uniform number of the offender.
    pub unum: u8,
}

/// One robot's pose and identity.
#[derive(Debug, Clone)]
pub struct RobotSnapshot {
    /// Stable id of the robot for the lifetime of its connection.
    pub id: u32,
    /// Team side, once `init` succeeded.
    pub side: Option<Side>,
    /// Team name, once `init` succeeded.
    pub team: Option<Arc<str>>,
    /// Uniform number (0 before `init`).
    pub unum: u8,
    /// Heterogeneous robot type 0-4.
    pub robot_type: u8,
    /// Every body part in model order, with its world pose.
    pub parts: Vec<PartPose>,
    /// Selected by a monitor's `(select ...)` (RoboViz shows a marker).
    pub selected: bool,
}

/// One body part's world pose.
#[derive(Debug, Clone)]
pub struct PartPose {
    /// Part name as in the model file (`torso`, `head`, `lfoot`, ...).
    pub name: Arc<str>,
    /// Pose of the part's centre in the field frame.
    pub pose: Isometry3<f32>,
}

impl RobotSnapshot {
    /// The pose of the named part, if the robot has one.
    pub fn part(&self, name: &str) -> Option<&Isometry3<f32>> {
        self.parts
            .iter()
            .find(|p| &*p.name == name)
            .map(|p| &p.pose)
    }
}
