//! The `scene` effector: building an agent's robot.

use nalgebra::Vector3;

use crate::limited;
use crate::perception::vision;
use crate::sim::cycle::{AgentStatus, ConnId, Simulation};
use crate::untrusted::logged;

/// Robots built per cycle at most once the match has started; further
/// `scene` requests wait their turn (a whole team that connects at once is
/// built in a few cycles).
const MAX_NEW_ROBOTS_PER_CYCLE: usize = 2;

impl Simulation {
    /// Builds the requested robots. In connection order, a few a cycle:
    /// building a robot is the costliest thing a client can ask for, and
    /// one that connects, asks for a robot and leaves, over and over, must
    /// not slow the match. The cycle that starts the match (`starting`)
    /// builds every robot asked for, so a scripted start
    /// (`sync_wait_for_agents`) sends all its agents their first frame
    /// together.
    pub(in crate::sim::cycle) fn execute_scenes(&mut self, starting: bool) {
        let most = if starting {
            usize::MAX
        } else {
            MAX_NEW_ROBOTS_PER_CYCLE
        };
        let conns: Vec<ConnId> = self
            .agents
            .iter()
            .filter(|(_, a)| a.pending_scene.is_some())
            .map(|(c, _)| *c)
            .collect();
        let mut built = 0;
        for conn in conns {
            let Some(agent) = self.agents.get_mut(&conn) else {
                continue;
            };
            // A request the cheap checks refuse (unknown file, arguments
            // the file does not declare) costs next to nothing and is
            // answered at once; only real builds count against the budget.
            let checked = match &agent.pending_scene {
                Some(scene) => self.models.check(&scene.path, &scene.args).map(|_| ()),
                None => continue,
            };
            if checked.is_ok() {
                if built >= most {
                    continue;
                }
                built += 1;
            }
            let Some(scene) = agent.pending_scene.take() else {
                continue;
            };
            match checked.and_then(|()| self.models.resolve(&scene.path, &scene.args)) {
                Ok(model) => {
                    // Robots that have not been placed yet wait standing in
                    // a row behind the -y touch line, one spot each, instead
                    // of piling up at the reference's (0, -1, 1.5).
                    let k = self.spawned;
                    self.spawned = self.spawned.wrapping_add(1);
                    let half_l = self.cfg.rules.field_length / 2.0;
                    let x = -half_l + 1.0 + (k % 24) as f32 * (2.0 * half_l - 2.0) / 23.0;
                    let y = -self.cfg.rules.field_width / 2.0 - 1.5 - (k / 24 % 4) as f32;
                    let z = model.standing_height() + 0.005;
                    let robot = self
                        .world
                        .add_robot(model.clone(), Vector3::new(x, y, z), 90.0);
                    agent.calibration = vision::draw_calibration(&self.cfg.vision, &mut agent.rng);
                    agent.robot = Some(robot);
                    agent.model = Some(model);
                    agent.scene_failed = false;
                    self.structure_version += 1;
                    limited!(
                        self.robot_log.admit_at(f64::from(self.server_time)),
                        info!(conn, peer = %agent.peer, scene = %logged(&scene.path), args = ?scene.args, "robot created")
                    );
                }
                Err(e) => {
                    agent.scene_failed = true;
                    self.report.status.push((conn, AgentStatus::SceneRefused));
                    limited!(
                        self.robot_log.admit_at(f64::from(self.server_time)),
                        warn!(conn, peer = %agent.peer, cause = %logged(&e), "scene refused; the agent gets no robot")
                    );
                }
            }
        }
    }
}
