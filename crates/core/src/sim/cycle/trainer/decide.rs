//! Trainer commands as decisions: the command and what the world shows
//! in (the robots by team and number, the selection), what to do out,
//! with robots resolved to connections and values checked. No world, no
//! referee: the simulation carries the decisions out (`super`).

use nalgebra::Vector3;

use crate::command::trainer::{MonitorCommand, RobotRef, Selection};
use crate::rules::{PlayMode, Side};
use crate::sim::cycle::ConnId;

/// A robot as the trainer commands see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrainerRobot {
    /// Its agent's connection.
    pub conn: ConnId,
    /// Its team, `None` before `init`.
    pub side: Option<Side>,
    /// Its uniform number.
    pub unum: u8,
}

/// What the trainer commands need to know, in connection order.
#[derive(Debug, Clone, Copy)]
pub struct TrainerFacts<'a> {
    /// Every robot in the world whose agent is not leaving.
    pub robots: &'a [TrainerRobot],
    /// The selected robot.
    pub selected: Option<ConnId>,
}

impl TrainerFacts<'_> {
    /// The robot of team and number `r`.
    fn find(&self, r: RobotRef) -> Option<ConnId> {
        self.robots
            .iter()
            .find(|x| x.side == Some(r.team) && x.unum == r.unum)
            .map(|x| x.conn)
    }

    /// The robot `r` names, or the selected one.
    fn named_or_selected(&self, r: Option<RobotRef>) -> Option<ConnId> {
        match r {
            Some(r) => self.find(r),
            None => self.selected,
        }
    }

    /// The robot after the selected one, wrapping around.
    fn next(&self) -> Option<ConnId> {
        let robots = self.robots;
        match self
            .selected
            .and_then(|s| robots.iter().position(|x| x.conn == s))
        {
            Some(i) => robots.get((i + 1) % robots.len().max(1)).map(|x| x.conn),
            None => robots.first().map(|x| x.conn),
        }
    }
}

/// What a trainer command does, for the simulation to carry out.
#[derive(Debug, Clone, PartialEq)]
pub enum TrainerDecision {
    /// The referee's kick-off (`None`: its choice of team).
    KickOff(Option<Side>),
    /// The referee's play mode set.
    PlayMode(PlayMode),
    /// The referee's drop ball where the ball is.
    DropBall,
    /// The ball moved (clamped into the trainer's area) and/or its
    /// velocity set; both finite.
    Ball {
        /// New centre.
        pos: Option<Vector3<f32>>,
        /// New linear velocity.
        vel: Option<Vector3<f32>>,
    },
    /// A robot moved as a rigid whole, its torso to `pos` (finite).
    ShiftRobot {
        /// The robot's connection.
        conn: ConnId,
        /// Torso position asked for.
        pos: Vector3<f32>,
    },
    /// A robot placed upright with a heading (both finite).
    PlaceRobot {
        /// The robot's connection.
        conn: ConnId,
        /// Torso position asked for.
        pos: Vector3<f32>,
        /// Absolute yaw, degrees.
        yaw_deg: f32,
    },
    /// A robot cleared away as the referee clears offenders.
    PushAway(ConnId),
    /// A robot removed and its connection closed.
    Kill(ConnId),
    /// A robot moved beside the field, as the referee takes robots out.
    Repos(ConnId),
    /// The selection changed.
    Select(Option<ConnId>),
    /// The game time set (finite, not negative).
    Time(f32),
    /// The score set.
    Score(u32, u32),
    /// The server stops after this read phase.
    Quit,
}

/// What `cmd` does given `facts`; `None` when nothing (an unknown robot,
/// a non-finite value, a command for the monitor server alone).
pub fn decide(cmd: MonitorCommand, facts: &TrainerFacts) -> Option<TrainerDecision> {
    let finite = |v: &Vector3<f32>| v.iter().all(|x| x.is_finite());
    Some(match cmd {
        MonitorCommand::KickOff(side) => TrainerDecision::KickOff(side),
        MonitorCommand::PlayMode(m) => TrainerDecision::PlayMode(m),
        MonitorCommand::DropBall => TrainerDecision::DropBall,
        MonitorCommand::Ball { pos, vel } => TrainerDecision::Ball {
            pos: pos.filter(finite),
            vel: vel.filter(finite),
        },
        MonitorCommand::AgentPos { robot, pos } => {
            let conn = facts.find(robot)?;
            if !finite(&pos) {
                return None;
            }
            TrainerDecision::ShiftRobot { conn, pos }
        }
        MonitorCommand::AgentMove {
            robot,
            pos,
            yaw_deg,
        } => {
            let conn = facts.find(robot)?;
            if !finite(&pos) || !yaw_deg.is_finite() {
                return None;
            }
            TrainerDecision::PlaceRobot { conn, pos, yaw_deg }
        }
        MonitorCommand::AgentPush => TrainerDecision::PushAway(facts.selected?),
        MonitorCommand::Select(sel) => TrainerDecision::Select(match sel {
            Selection::Clear => None,
            Selection::Robot(r) => facts.find(r),
            Selection::Next => facts.next(),
        }),
        MonitorCommand::Kill(r) => TrainerDecision::Kill(facts.named_or_selected(r)?),
        MonitorCommand::Repos(r) => TrainerDecision::Repos(facts.named_or_selected(r)?),
        MonitorCommand::Time(t) if t.is_finite() && t >= 0.0 => TrainerDecision::Time(t),
        MonitorCommand::Time(_) => return None,
        MonitorCommand::Score(l, r) => TrainerDecision::Score(l, r),
        MonitorCommand::KillSim => TrainerDecision::Quit,
        MonitorCommand::AgentBattery { .. }
        | MonitorCommand::Ignored(_)
        | MonitorCommand::ReqFullState
        | MonitorCommand::Auth(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROBOTS: [TrainerRobot; 3] = [
        TrainerRobot {
            conn: 1,
            side: Some(Side::Left),
            unum: 1,
        },
        TrainerRobot {
            conn: 2,
            side: None,
            unum: 0,
        },
        TrainerRobot {
            conn: 4,
            side: Some(Side::Right),
            unum: 7,
        },
    ];

    fn facts(selected: Option<ConnId>) -> TrainerFacts<'static> {
        TrainerFacts {
            robots: &ROBOTS,
            selected,
        }
    }

    #[test]
    fn robots_are_resolved_by_team_and_number() {
        let robot = RobotRef {
            team: Side::Right,
            unum: 7,
        };
        let pos = Vector3::new(1.0, 2.0, 0.3);
        assert_eq!(
            decide(MonitorCommand::AgentPos { robot, pos }, &facts(None)),
            Some(TrainerDecision::ShiftRobot { conn: 4, pos })
        );
        let missing = RobotRef {
            team: Side::Left,
            unum: 7,
        };
        assert_eq!(
            decide(MonitorCommand::Kill(Some(missing)), &facts(Some(1))),
            None
        );
        assert_eq!(
            decide(MonitorCommand::Kill(None), &facts(Some(1))),
            Some(TrainerDecision::Kill(1))
        );
    }

    #[test]
    fn non_finite_values_decide_nothing() {
        let robot = RobotRef {
            team: Side::Left,
            unum: 1,
        };
        let nan = Vector3::new(f32::NAN, 0.0, 0.0);
        assert_eq!(
            decide(MonitorCommand::AgentPos { robot, pos: nan }, &facts(None)),
            None
        );
        assert_eq!(decide(MonitorCommand::Time(-1.0), &facts(None)), None);
        assert_eq!(
            decide(
                MonitorCommand::Ball {
                    pos: Some(nan),
                    vel: Some(Vector3::x())
                },
                &facts(None)
            ),
            Some(TrainerDecision::Ball {
                pos: None,
                vel: Some(Vector3::x())
            })
        );
    }

    #[test]
    fn select_next_wraps_around_in_connection_order() {
        let next = |sel| decide(MonitorCommand::Select(Selection::Next), &facts(sel));
        assert_eq!(next(None), Some(TrainerDecision::Select(Some(1))));
        assert_eq!(next(Some(2)), Some(TrainerDecision::Select(Some(4))));
        assert_eq!(next(Some(4)), Some(TrainerDecision::Select(Some(1))));
    }
}
