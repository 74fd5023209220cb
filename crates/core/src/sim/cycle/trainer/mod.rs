//! Monitor (trainer) commands, applied in the read phase. `decide` turns
//! a command and what the world shows into a decision (facts in,
//! decisions out, as the referee's rules); the simulation carries it out
//! here and in `ball` (ball position and velocity, drop ball) and `robot`
//! (move, reposition, push, kill); `bounds` says where the trainer may
//! put bodies.

use tracing::{debug, info};

use super::Simulation;
use crate::command::trainer::MonitorCommand;

mod ball;
mod bounds;
mod decide;
mod robot;

pub use decide::{decide, TrainerDecision, TrainerFacts, TrainerRobot};

impl Simulation {
    /// A command from a monitor/trainer connection (read phase).
    pub fn monitor_command(&mut self, cmd: MonitorCommand) {
        debug!(?cmd, "monitor command");
        let robots = self.trainer_robots();
        let facts = TrainerFacts {
            robots: &robots,
            selected: self.selected,
        };
        if let Some(decision) = decide(cmd, &facts) {
            self.carry_out(decision);
        }
    }

    /// Whether a monitor asked to stop (checked by the driver after the
    /// read phase).
    pub fn quit_requested(&self) -> bool {
        self.report.quit
    }

    /// The robots the trainer can name: those in the world whose agent
    /// is not leaving, in connection order.
    fn trainer_robots(&self) -> Vec<TrainerRobot> {
        self.agents
            .iter()
            .filter(|(_, a)| a.robot.is_some() && !a.closing)
            .map(|(conn, a)| TrainerRobot {
                conn: *conn,
                side: a.side,
                unum: a.unum,
            })
            .collect()
    }

    /// Carries out a trainer decision.
    fn carry_out(&mut self, decision: TrainerDecision) {
        match decision {
            TrainerDecision::KickOff(side) => self.referee.kick_off(side, &mut self.rng),
            TrainerDecision::PlayMode(mode) => self.referee.set_play_mode(mode),
            TrainerDecision::DropBall => self.trainer_drop_ball(),
            TrainerDecision::Ball { pos, vel } => self.trainer_ball(pos, vel),
            TrainerDecision::ShiftRobot { conn, pos } => self.trainer_agent_pos(conn, pos),
            TrainerDecision::PlaceRobot { conn, pos, yaw_deg } => {
                self.trainer_agent_move(conn, pos, yaw_deg)
            }
            TrainerDecision::PushAway(conn) => self.push_away(conn),
            TrainerDecision::Kill(conn) => self.trainer_kill(conn),
            TrainerDecision::Repos(conn) => self.trainer_repos(conn),
            TrainerDecision::Select(conn) => self.selected = conn,
            TrainerDecision::Time(t) => self.referee.set_game_time(t),
            TrainerDecision::Score(left, right) => self.referee.set_score(left, right),
            TrainerDecision::Quit => {
                info!("killsim from a monitor: shutting down");
                self.report.quit = true;
            }
        }
    }
}
