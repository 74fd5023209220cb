//! Trainer commands (docs/protocol.md#monitor-commands) as values: what a monitor
//! asks the simulation to do. The monitor port (`monitor::command`) decodes them from a
//! monitor's frame bytes, the web monitor builds them from its page's
//! messages, and the simulation resolves teams and numbers to robots and
//! carries them out. Nothing here reads bytes or touches the world.

use nalgebra::Vector3;

use crate::playmode::{PlayMode, Side};

/// A robot named by team and uniform number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RobotRef {
    /// Team side (`Left` / `Right`).
    pub team: Side,
    /// Uniform number.
    pub unum: u8,
}

/// What `(select ...)` selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// `(select)`: the robot after the selected one, wrapping around.
    Next,
    /// `(select (unum -1))`: clear the selection.
    Clear,
    /// `(select (unum N) (team T))`: exactly that robot.
    Robot(RobotRef),
}

/// Commands that are accepted and deliberately do nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgnoredCommand {
    /// `(init)`, sent by old monitors on connect.
    Init,
    /// `(getAck)`, a legacy acknowledgement request.
    GetAck,
    /// `(agent (team T) (unum N) (temperature C))`: a reference bug sets
    /// the battery; we ignore it.
    Temperature,
}

/// One decoded monitor command.
#[derive(Debug, Clone, PartialEq)]
pub enum MonitorCommand {
    /// `(kickOff Left|Right|None)`; `None` = automatic team choice.
    KickOff(Option<Side>),
    /// `(playMode NAME)`.
    PlayMode(PlayMode),
    /// `(dropBall)`.
    DropBall,
    /// `(ball (pos x y z) (vel x y z))`, either part optional (at least
    /// one present). `pos` keeps the velocity and wakes the ball; `vel`
    /// sets the linear velocity and zeroes the angular one.
    Ball {
        /// New ball centre, field frame.
        pos: Option<Vector3<f32>>,
        /// New linear velocity, m/s.
        vel: Option<Vector3<f32>>,
    },
    /// `(agent (team T) (unum N) (pos x y z))`: move the robot rigidly so
    /// its torso is at `pos`, velocities zeroed, no safe-spot search.
    AgentPos {
        /// The robot.
        robot: RobotRef,
        /// Torso position, field frame.
        pos: Vector3<f32>,
    },
    /// `(agent (team T) (unum N) (move x y z yaw))`: like `AgentPos`, and
    /// set the torso upright with absolute yaw `yaw_deg` about +z.
    AgentMove {
        /// The robot.
        robot: RobotRef,
        /// Torso position, field frame.
        pos: Vector3<f32>,
        /// Absolute yaw in degrees (−90 faces +x).
        yaw_deg: f32,
    },
    /// `(agent (team T) (unum N) (battery B))`.
    AgentBattery {
        /// The robot.
        robot: RobotRef,
        /// New battery value.
        battery: f32,
    },
    /// `(agent ...)` without team or unum: push every selected robot away.
    AgentPush,
    /// `(select ...)`.
    Select(Selection),
    /// `(kill)` (selected robot) or `(kill (unum N) (team T))`.
    Kill(Option<RobotRef>),
    /// `(repos)` (selected robot) or `(repos (unum N) (team T))`.
    Repos(Option<RobotRef>),
    /// `(time T)` with 0 ≤ T ≤ the referee's `MAX_GAME_TIME`: set the
    /// game time.
    Time(f32),
    /// `(score (left A) (right B))`.
    Score(u32, u32),
    /// `(reqfullstate)`: the next message to this monitor is a full state.
    /// Handled by the monitor server, never forwarded.
    ReqFullState,
    /// `(killsim)`: shut the server down.
    KillSim,
    /// `(auth SECRET)`: unlocks trainer commands when a trainer secret is
    /// configured. Handled by the monitor server, never forwarded.
    Auth(String),
    /// A known command that is accepted and has no effect.
    Ignored(IgnoredCommand),
}

impl MonitorCommand {
    /// Whether the command changes the world, the game or the server (and
    /// is therefore refused on a read-only port or without the secret).
    pub fn changes_state(&self) -> bool {
        !matches!(
            self,
            MonitorCommand::ReqFullState | MonitorCommand::Auth(_) | MonitorCommand::Ignored(_)
        )
    }
}

/// A command from one monitor connection, for the simulation to carry out
/// at the start of its next monitor step.
#[derive(Debug, Clone, PartialEq)]
pub struct MonitorRequest {
    /// Connection id (1, 2, ... in accept order), as in the log lines.
    pub monitor: u64,
    /// The decoded command.
    pub command: MonitorCommand,
}
