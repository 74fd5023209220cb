//! A robot the solver blew up, rebuilt.

use nalgebra::Vector3;

use super::{placement_height, ConnId, Simulation};

impl Simulation {
    /// A robot whose bodies left the finite world (a numerical blow-up in
    /// the solver) is rebuilt standing where its torso was last seen sane,
    /// so one bad robot never poisons the rest of the match.
    pub(in crate::sim::cycle) fn rebuild_broken_robots(&mut self) {
        let broken: Vec<ConnId> = self
            .agents
            .iter()
            .filter(|(_, a)| {
                a.robot.is_some_and(|r| {
                    let m = self.world.robot_model(r);
                    (0..m.parts.len()).any(|p| {
                        let t = self.world.part_pose(r, p).translation.vector;
                        !t.iter().all(|x| x.is_finite() && x.abs() < 1.0e3)
                    })
                })
            })
            .map(|(c, _)| *c)
            .collect();
        for conn in broken {
            let Some(a) = self.agents.get_mut(&conn) else {
                continue;
            };
            let (Some(old), Some(model)) = (a.robot, a.model.clone()) else {
                continue;
            };
            let last = a.last_sane.unwrap_or_else(|| Vector3::new(0.0, -12.0, 0.0));
            let z = placement_height(&self.cfg, &model);
            self.world.remove_robot(old);
            let robot = self
                .world
                .add_robot(model, Vector3::new(last.x, last.y, z), 0.0);
            a.robot = Some(robot);
            a.accelerometer.forget_history();
            self.structure_version += 1;
            tracing::error!(
                conn,
                team = a.team.as_deref().unwrap_or("-"),
                unum = a.unum,
                "physics blew up for this robot; rebuilt it standing at its last sane position"
            );
        }
        for a in self.agents.values_mut() {
            if let (Some(r), Some(m)) = (a.robot, a.model.as_ref()) {
                let t = self.world.part_pose(r, m.torso).translation.vector;
                if t.iter().all(|x| x.is_finite()) {
                    a.last_sane = Some(t);
                }
            }
        }
    }
}
