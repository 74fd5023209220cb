//! The `say` effector: this read phase's messages delivered to the
//! listeners in range, within their hearing capacity (the `hear`
//! perceptor writes them in the next frame).

use crate::perception::hear;
use crate::sim::cycle::{ConnId, Simulation};

impl Simulation {
    /// Delivers this read phase's `say` messages, in connection order.
    pub(in crate::sim::cycle) fn broadcast_says(&mut self) {
        let says = std::mem::take(&mut self.says);
        for (speaker, msg) in says {
            let Some(sp) = self.agents.get(&speaker) else {
                continue;
            };
            let (Some(side), Some(team), Some(robot)) = (sp.side, sp.team.clone(), sp.robot) else {
                continue;
            };
            let from = self
                .world
                .part_pose(robot, self.torso_of(speaker))
                .translation
                .vector;
            for (conn, listener) in self.agents.iter_mut() {
                if *conn == speaker {
                    // A second say in one cycle replaces the self copy.
                    listener.heard.own_copy = Some(msg.clone());
                    continue;
                }
                let (Some(lside), Some(lrobot), Some(lmodel)) =
                    (listener.side, listener.robot, listener.model.as_ref())
                else {
                    continue;
                };
                if listener.closing {
                    continue;
                }
                let to = self
                    .world
                    .part_pose(lrobot, lmodel.torso)
                    .translation
                    .vector;
                if !hear::in_hearing_range(to, from) {
                    continue;
                }
                let own = lside == side;
                let slot = if own {
                    &mut listener.heard.team
                } else {
                    &mut listener.heard.opponent
                };
                if slot.is_none() && listener.budget.try_accept(own) {
                    let dir = hear::hear_direction(to, from, lside);
                    *slot = Some((team.clone(), dir, msg.clone()));
                }
            }
        }
    }

    /// The torso part index of an agent's robot model.
    fn torso_of(&self, conn: ConnId) -> usize {
        self.agents
            .get(&conn)
            .and_then(|a| a.model.as_ref())
            .map(|m| m.torso)
            .unwrap_or(0)
    }
}
