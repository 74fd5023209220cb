//! The `init` effector: joining a team and walking to the sideline slot.

use nalgebra::Vector3;

use crate::limited;
use crate::untrusted::logged;

use crate::log_limit::LogLimit;
use crate::rules::PlayMode;
use crate::sim::cycle::agent::Announcement;
use crate::sim::cycle::{placement_height, AgentStatus, ConnId, Simulation};

impl Simulation {
    /// Lets every robot that sent `init` join its team, in connection
    /// order, and moves it to its sideline slot.
    pub(in crate::sim::cycle) fn execute_inits(&mut self) {
        let conns: Vec<ConnId> = self
            .agents
            .iter()
            .filter(|(_, a)| a.pending_init.is_some())
            .map(|(c, _)| *c)
            .collect();
        for conn in conns {
            let Some(agent) = self.agents.get_mut(&conn) else {
                continue;
            };
            let (Some(init), Some(robot), Some(model)) =
                (agent.pending_init.take(), agent.robot, agent.model.clone())
            else {
                continue;
            };
            let before_kick_off = self.referee.play_mode() == PlayMode::BeforeKickOff;
            match self.teams.join(
                init.team.as_deref(),
                init.unum,
                model.robot_type,
                before_kick_off,
            ) {
                Ok((side, unum, team)) => {
                    agent.side = Some(side);
                    agent.unum = unum;
                    agent.team = Some(team);
                    agent.identity = Announcement::Pending;
                    self.report.status.push((
                        conn,
                        AgentStatus::Joined {
                            team: agent.team.as_deref().unwrap_or("").to_owned(),
                            unum,
                        },
                    ));
                    let (x, y, heading) = self.teams.next_sideline_slot(
                        side,
                        self.cfg.rules.field_length,
                        self.cfg.rules.field_width,
                        self.cfg.rules.agent_radius,
                    );
                    let z = placement_height(&self.cfg, &model);
                    self.world
                        .place_robot(robot, Vector3::new(x, y, z), heading);
                    self.structure_version += 1;
                    let now = f64::from(self.server_time);
                    limited!(
                        self.client_log
                            .admit_at("agent joined", now, LogLimit::for_team_changes),
                        info!(conn, team = %agent.label(), side = side.agent_name(), "agent joined")
                    );
                }
                Err(e) => {
                    // Deviation: the robot stays on its own waiting spot
                    // instead of being dropped from 10 m onto the centre
                    // spot, where failed robots would pile up.
                    let now = f64::from(self.server_time);
                    limited!(
                        self.client_log
                            .admit_at("init failed", now, LogLimit::for_clients),
                        warn!(conn, peer = %agent.peer, cause = %logged(&e), "init failed; the robot has no team")
                    );
                }
            }
        }
    }
}
