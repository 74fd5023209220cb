//! What the referee is told about the world each cycle ([`WorldFacts`]) and
//! what it asks the simulation to do ([`Decision`]).
//!
//! Everything is in the field frame (docs/protocol.md#field-frame): origin at the field
//! centre, +x towards the right team's goal, +z up. Headings are degrees
//! about +z with 0 = facing +x.

use nalgebra::Vector3;

use crate::playmode::Side;

/// A robot's stable id for the lifetime of its connection.
pub type RobotId = u32;

/// The world as the physics step left it, gathered once per cycle.
#[derive(Debug, Clone, Copy)]
pub struct WorldFacts<'a> {
    /// Ball centre.
    pub ball: Vector3<f32>,
    /// Ball linear velocity (m/s).
    pub ball_velocity: Vector3<f32>,
    /// Robots that touched the ball in this cycle, any body part. When
    /// several did, the **last** entry counts as the last toucher.
    pub ball_touches: &'a [RobotId],
    /// Every robot that has a team, in a stable order (for example by id).
    pub robots: &'a [RobotFacts],
    /// Robot-robot contacts of this cycle (any body parts), one entry per
    /// touching pair. Used for touch groups and charging
    /// (docs/protocol.md#player-fouls).
    pub robot_contacts: &'a [RobotContact],
    /// Robots with two of their own body parts intersecting this cycle. Only
    /// read when `SelfCollisionFoul` is on; may be empty otherwise.
    pub self_collisions: &'a [RobotId],
    /// Number of connected agents, with or without a team (for "no agent
    /// connected" and "more than 2 agents connected").
    pub connected_agents: usize,
    /// Length of the cycle just simulated (s); 0.02 on the reference.
    pub dt: f32,
}

/// One robot, as the rules need it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RobotFacts {
    /// Stable robot id.
    pub id: RobotId,
    /// Team side.
    pub side: Side,
    /// Uniform number, 1 = goalie.
    pub unum: u8,
    /// Torso centre (the "player position" of the rules).
    pub torso: Vector3<f32>,
    /// The torso's local z axis in the field frame. The 0.7.1 rules judge
    /// posture by torso height only, so this is informational.
    pub torso_up: Vector3<f32>,
    /// Torso linear velocity (m/s).
    pub velocity: Vector3<f32>,
    /// Lower corner of the axis-aligned box around every body part.
    pub bbox_min: Vector3<f32>,
    /// Upper corner of the axis-aligned box around every body part.
    pub bbox_max: Vector3<f32>,
}

/// Two robots in contact, with a contact point (field frame). When the
/// physics reports several points for the pair, any one of them (or their
/// mean) will do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RobotContact {
    /// One robot.
    pub a: RobotId,
    /// The other robot.
    pub b: RobotId,
    /// A contact point between them.
    pub point: Vector3<f32>,
}

/// Something the simulation must do to the world after the referee cycle.
/// Decisions are to be applied in order; a later move of the same robot
/// replaces an earlier one.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Put the ball at `pos` with linear velocity `vel` and zero angular velocity.
    MoveBall {
        /// New ball centre.
        pos: Vector3<f32>,
        /// New linear velocity (zero except where stated).
        vel: Vector3<f32>,
    },
    /// Move every body of the robot rigidly so that the torso centre is at
    /// `pos`, and zero all linear and angular velocities. With a heading,
    /// also set the torso upright facing that heading (degrees, 0 = +x);
    /// without one, keep the orientation. Also used every cycle for the
    /// hold-in-the-air of a fouled robot (docs/protocol.md#player-fouls).
    MoveRobot {
        /// Robot to move.
        id: RobotId,
        /// Torso centre target.
        pos: Vector3<f32>,
        /// Heading to set, if any.
        heading_deg: Option<f32>,
    },
    /// Half time with `ChangeSidesInSecondHalf`: swap the two teams' sides
    /// (names, team index of every agent, robot materials). The referee has
    /// already swapped the scores; the next facts must carry the new sides.
    SwapSides,
    /// `AutomaticQuit`: GameOver has lasted 10 s; shut the server down.
    Quit,
}
