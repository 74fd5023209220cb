//! The copy of the match that monitors and the log show.

use super::{ConnId, Simulation};
use crate::rules::Side;
use crate::sim::snapshot::{FoulRecord, GameSnapshot, PartPose, RobotSnapshot, WorldSnapshot};

impl Simulation {
    /// A copy of everything monitors and the log show.
    pub fn snapshot(&self) -> WorldSnapshot {
        let mut robots: Vec<(u8, u8, ConnId, RobotSnapshot)> = Vec::new();
        for (conn, a) in &self.agents {
            let (Some(robot), Some(model)) = (a.robot, a.model.as_ref()) else {
                continue;
            };
            if a.closing {
                continue;
            }
            let parts = model
                .parts
                .iter()
                .enumerate()
                .map(|(i, p)| PartPose {
                    name: p.name.clone(),
                    pose: self.world.part_pose(robot, i),
                })
                .collect();
            let order = match a.side {
                Some(Side::Left) => 0,
                Some(Side::Right) => 1,
                None => 2,
            };
            robots.push((
                order,
                a.unum,
                *conn,
                RobotSnapshot {
                    id: *conn as u32,
                    side: a.side,
                    team: a.team.clone(),
                    unum: a.unum,
                    robot_type: model.robot_type,
                    parts,
                    selected: self.selected == Some(*conn),
                },
            ));
        }
        robots.sort_by_key(|(o, u, c, _)| (*o, *u, *c));
        let (sl, sr) = self.referee.scores();
        WorldSnapshot {
            cycle: self.cycle,
            server_time: self.server_time,
            game: GameSnapshot {
                game_time: self.referee.game_time(),
                play_mode: self.referee.play_mode(),
                half: self.referee.half(),
                score_left: sl,
                score_right: sr,
                team_left: self.teams.name(Side::Left).cloned(),
                team_right: self.teams.name(Side::Right).cloned(),
                fouls: self
                    .referee
                    .fouls()
                    .iter()
                    .map(|f| FoulRecord {
                        kind: f.kind,
                        side: f.side,
                        unum: f.unum,
                    })
                    .collect(),
            },
            ball: self.world.ball_pose(),
            ball_velocity: self.world.ball_velocity(),
            robots: robots.into_iter().map(|(_, _, _, r)| r).collect(),
            structure_version: self.structure_version,
        }
    }
}
