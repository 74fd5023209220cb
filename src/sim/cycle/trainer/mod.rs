//! Monitor (trainer) commands, applied in the read phase. One file per
//! group: `game` (kick-off, play mode, time, score, `killsim`), `ball`
//! (ball position and velocity, drop ball), `robot` (move, reposition,
//! push, kill), `select` (the selected robot) and `bounds` (where the
//! trainer may put bodies).

use tracing::debug;

use super::Simulation;
use crate::command::trainer::MonitorCommand;

mod ball;
mod bounds;
mod game;
mod robot;
mod select;

impl Simulation {
    /// A command from a monitor/trainer connection (read phase).
    pub fn monitor_command(&mut self, cmd: MonitorCommand) {
        debug!(?cmd, "monitor command");
        match cmd {
            MonitorCommand::KickOff(side) => self.trainer_kick_off(side),
            MonitorCommand::PlayMode(m) => self.trainer_play_mode(m),
            MonitorCommand::DropBall => self.trainer_drop_ball(),
            MonitorCommand::Ball { pos, vel } => self.trainer_ball(pos, vel),
            MonitorCommand::AgentPos { robot, pos } => self.trainer_agent_pos(robot, pos),
            MonitorCommand::AgentMove {
                robot,
                pos,
                yaw_deg,
            } => self.trainer_agent_move(robot, pos, yaw_deg),
            MonitorCommand::AgentBattery { .. } | MonitorCommand::Ignored(_) => {}
            MonitorCommand::AgentPush => self.trainer_agent_push(),
            MonitorCommand::Select(sel) => self.select(sel),
            MonitorCommand::Kill(r) => self.trainer_kill(r),
            MonitorCommand::Repos(r) => self.trainer_repos(r),
            MonitorCommand::Time(t) => self.trainer_time(t),
            MonitorCommand::Score(l, r) => self.trainer_score(l, r),
            MonitorCommand::KillSim => self.trainer_kill_sim(),
            MonitorCommand::ReqFullState | MonitorCommand::Auth(_) => {}
        }
    }

    /// Whether a monitor asked to stop (checked by the driver after the
    /// read phase).
    pub fn quit_requested(&self) -> bool {
        self.report.quit
    }
}
