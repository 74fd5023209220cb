//! The trainer's robot selection (`select`), and finding a robot by team
//! and number for the other trainer commands.

use crate::command::trainer::{RobotRef, Selection};
use crate::sim::cycle::{ConnId, Simulation};

impl Simulation {
    pub(super) fn find_robot(&self, r: RobotRef) -> Option<ConnId> {
        self.agents
            .iter()
            .find(|(_, a)| {
                a.side == Some(r.team) && a.unum == r.unum && a.robot.is_some() && !a.closing
            })
            .map(|(c, _)| *c)
    }

    pub(super) fn select(&mut self, sel: Selection) {
        self.selected = match sel {
            Selection::Clear => None,
            Selection::Robot(r) => self.find_robot(r),
            Selection::Next => {
                let robots: Vec<ConnId> = self
                    .agents
                    .iter()
                    .filter(|(_, a)| a.robot.is_some() && !a.closing)
                    .map(|(c, _)| *c)
                    .collect();
                match self
                    .selected
                    .and_then(|s| robots.iter().position(|c| *c == s))
                {
                    Some(i) => robots.get((i + 1) % robots.len().max(1)).copied(),
                    None => robots.first().copied(),
                }
            }
        };
    }
}
