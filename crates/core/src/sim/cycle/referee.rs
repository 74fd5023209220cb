//! The referee's view of the world (robot facts, ball touches, robot
//! contacts) and its decisions applied to the world.

use std::collections::BTreeMap;

use nalgebra::Vector3;

use super::{torso_position, Simulation};
use crate::rules::facts::{Decision, RobotContact, RobotFacts, WorldFacts};
use crate::rules::Side;
use crate::sim::world::RobotHandle;

impl Simulation {
    /// What the referee needs to know about every robot with a team.
    pub(in crate::sim::cycle) fn robot_facts(&self) -> Vec<RobotFacts> {
        let mut robots = Vec::new();
        for (conn, a) in &self.agents {
            let (Some(side), Some(robot), Some(model)) = (a.side, a.robot, a.model.as_ref()) else {
                continue;
            };
            let torso = self.world.part_pose(robot, model.torso);
            let (mut lo, mut hi) = (Vector3::repeat(f32::MAX), Vector3::repeat(f32::MIN));
            for p in 0..model.parts.len() {
                let t = self.world.part_pose(robot, p).translation.vector;
                lo = lo.inf(&t);
                hi = hi.sup(&t);
            }
            robots.push(RobotFacts {
                id: *conn as u32,
                side,
                unum: a.unum,
                torso: torso.translation.vector,
                torso_up: torso.rotation * Vector3::z(),
                velocity: self.world.torso_linvel(robot),
                bbox_min: lo,
                bbox_max: hi,
            });
        }
        robots
    }

    /// One referee step on this cycle's facts; its decisions applied.
    pub(in crate::sim::cycle) fn run_referee(&mut self) {
        let robots = self.robot_facts();
        let by_handle: BTreeMap<RobotHandle, u32> = self
            .agents
            .iter()
            .filter(|(_, a)| a.side.is_some())
            .filter_map(|(c, a)| a.robot.map(|r| (r, *c as u32)))
            .collect();
        let touches: Vec<u32> = self
            .world
            .ball_touches()
            .iter()
            .filter_map(|h| by_handle.get(h).copied())
            .collect();
        let contacts: Vec<RobotContact> = self
            .world
            .robot_contacts()
            .iter()
            .filter_map(|(a, b)| {
                let (ia, ib) = (*by_handle.get(a)?, *by_handle.get(b)?);
                let pa = torso_position(&self.world, *a);
                let pb = torso_position(&self.world, *b);
                Some(RobotContact {
                    a: ia,
                    b: ib,
                    point: (pa + pb) / 2.0,
                })
            })
            .collect();
        let facts = WorldFacts {
            ball: self.world.ball_position(),
            ball_velocity: self.world.ball_velocity(),
            ball_touches: &touches,
            robots: &robots,
            robot_contacts: &contacts,
            self_collisions: &[],
            connected_agents: self.agent_count(),
            dt: self.cfg.step,
        };
        let decisions = self.referee.step(&facts, &mut self.rng);
        self.apply_decisions(decisions);
    }

    /// Carries out the referee's decisions (ball and robot moves, side
    /// swap, quit).
    pub(in crate::sim::cycle) fn apply_decisions(&mut self, decisions: Vec<Decision>) {
        for d in decisions {
            match d {
                Decision::MoveBall { pos, vel } => {
                    self.world.set_ball_position(pos);
                    self.world.set_ball_velocity(vel);
                }
                Decision::MoveRobot {
                    id,
                    pos,
                    heading_deg,
                } => {
                    if let Some(robot) = self.agents.get(&u64::from(id)).and_then(|a| a.robot) {
                        match heading_deg {
                            Some(h) => self.world.place_robot(robot, pos, h),
                            None => self.world.shift_robot(robot, pos),
                        }
                    }
                }
                Decision::SwapSides => {
                    for a in self.agents.values_mut() {
                        a.side = a.side.map(Side::opponent);
                    }
                    self.teams.swap_sides();
                    self.structure_version += 1;
                }
                Decision::Quit => self.report.quit = true,
            }
        }
    }
}
