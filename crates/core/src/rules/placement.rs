//! Referee repositioning (docs/protocol.md#referee-moves): clearing a team from a circle or
//! a rectangle, repelling kick takers, and the safe-spot search. All moves of
//! one cycle go through a [`Cycle`], which keeps a working copy of the robots
//! (so a robot moved once is seen at its new place by later checks), the
//! spots already used, and the decisions to hand back.

use nalgebra::{Vector2, Vector3};
use rand::seq::SliceRandom;
use rand::Rng;

use super::config::RulesConfig;
use super::facts::{Decision, RobotFacts, RobotId};
use super::geometry::sphere_meets_box;
use crate::playmode::Side;

/// Index of a side in per-team arrays.
pub(crate) fn team_index(side: Side) -> usize {
    match side {
        Side::Left => 0,
        Side::Right => 1,
    }
}

/// Uniform draw in [a, b]; `a` when the interval is empty.
pub(crate) fn uniform(rng: &mut impl Rng, a: f32, b: f32) -> f32 {
    if a.is_finite() && b.is_finite() && b > a {
        rng.gen_range(a..=b)
    } else {
        a
    }
}

/// The moves of one referee cycle.
#[derive(Debug)]
pub(crate) struct Cycle {
    /// Working copy of the robots, updated by every move.
    pub robots: Vec<RobotFacts>,
    /// Spots used by safe moves in this cycle.
    used_spots: Vec<Vector2<f32>>,
    /// Players moved into their own area in this cycle, per team.
    moved_into_area: [u32; 2],
    /// Players inside their own area at the start of the cycle (without
    /// fouled players), per team.
    pub inside_count: [u32; 2],
    /// Robots moved by the referee in a way that resets "moved recently".
    pub moved: Vec<RobotId>,
    /// Decisions so far.
    pub decisions: Vec<Decision>,
}

impl Cycle {
    /// Starts a cycle; `fouled` tells which robots have an enforceable foul.
    pub fn new(
        cfg: &RulesConfig,
        robots: &[RobotFacts],
        fouled: impl Fn(RobotId) -> bool,
    ) -> Cycle {
        let mut inside_count = [0; 2];
        for r in robots {
            if !fouled(r.id) && cfg.penalty_area(r.side).contains(&r.torso) {
                inside_count[team_index(r.side)] += 1;
            }
        }
        Cycle {
            robots: robots.to_vec(),
            used_spots: Vec::new(),
            moved_into_area: [0; 2],
            inside_count,
            moved: Vec::new(),
            decisions: Vec::new(),
        }
    }

    /// The working copy of robot `id`.
    pub fn robot(&self, id: RobotId) -> Option<&RobotFacts> {
        self.robots.iter().find(|r| r.id == id)
    }

    /// Ids of `side`'s robots in random order.
    pub fn shuffled_team(&self, side: Side, rng: &mut impl Rng) -> Vec<RobotId> {
        let mut ids: Vec<RobotId> = self
            .robots
            .iter()
            .filter(|r| r.side == side)
            .map(|r| r.id)
            .collect();
        ids.shuffle(rng);
        ids
    }

    /// Moves the robot rigidly without any search: updates the working copy
    /// and appends the decision.
    pub fn move_raw(&mut self, id: RobotId, pos: Vector3<f32>, heading_deg: Option<f32>) {
        if let Some(r) = self.robots.iter_mut().find(|r| r.id == id) {
            let delta = pos - r.torso;
            r.torso = pos;
            r.bbox_min += delta;
            r.bbox_max += delta;
            r.velocity = Vector3::zeros();
        }
        // A later move of the same robot replaces an earlier one.
        self.decisions
            .retain(|d| !matches!(d, Decision::MoveRobot { id: m, .. } if *m == id));
        self.decisions.push(Decision::MoveRobot {
            id,
            pos,
            heading_deg,
        });
    }

    /// A referee move through the safe-spot search. `counts_as_move`
    /// is false only for the kick-taker repel, which in the reference does
    /// not reset the "moved recently" timer.
    pub fn move_safely(
        &mut self,
        cfg: &RulesConfig,
        id: RobotId,
        target: Vector3<f32>,
        counts_as_move: bool,
    ) {
        let Some(p) = self.robot(id).copied() else {
            return;
        };
        let spot = self.safe_spot(cfg, &p, target);
        let area = cfg.penalty_area(p.side);
        if area.contains(&spot) && !area.contains(&p.torso) {
            self.moved_into_area[team_index(p.side)] += 1;
        }
        self.used_spots.push(spot.xy());
        if counts_as_move {
            self.moved.push(id);
        }
        self.move_raw(id, spot, None);
    }

    /// First step of the safe-spot search: keep a target out of the own area
    /// when the team has no room left there.
    fn area_adjusted(
        &self,
        cfg: &RulesConfig,
        p: &RobotFacts,
        full: bool,
        mut c: Vector3<f32>,
    ) -> Vector3<f32> {
        if !full {
            return c;
        }
        let r = cfg.agent_radius;
        let area = cfg.penalty_area(p.side);
        if !area.grown(r).contains(&c) {
            return c;
        }
        let up_field = (c.x - p.torso.x) * p.side.sign() > 0.0;
        if up_field {
            c.x = match p.side {
                Side::Left => area.max_x + r,
                Side::Right => area.min_x - r,
            };
        } else {
            let s = if c.y > p.torso.y {
                1.0
            } else if c.y < p.torso.y || c.y >= 0.0 {
                -1.0
            } else {
                1.0
            };
            c.y = if s > 0.0 {
                area.max_y + r
            } else {
                area.min_y - r
            };
        }
        c
    }

    /// Whether `c` is free for robot `id`: no other robot's box within
    /// `AgentRadius`, no spot used this cycle within 2 × `AgentRadius`.
    fn is_safe(&self, cfg: &RulesConfig, id: RobotId, c: &Vector3<f32>) -> bool {
        let r = cfg.agent_radius;
        let clear_of_robots = self
            .robots
            .iter()
            .filter(|o| o.id != id)
            .all(|o| !sphere_meets_box(c, r, &o.bbox_min, &o.bbox_max));
        clear_of_robots
            && self
                .used_spots
                .iter()
                .all(|s| (s - c.xy()).norm() >= 2.0 * r)
    }

    /// The safe-spot search: best-first over a grid of `AgentRadius` steps
    /// around the target, nearest to the target first. (The reference orders
    /// candidates by distance to the player; what matters is that the spot
    /// found overlaps nothing and makes no new illegal-defence foul, and this
    /// order keeps cleared players where the rule wanted them.)
    fn safe_spot(&self, cfg: &RulesConfig, p: &RobotFacts, target: Vector3<f32>) -> Vector3<f32> {
        let attempts = cfg.max_num_safe_reposition_attempts;
        if attempts == 0 {
            return target;
        }
        let r = cfg.agent_radius;
        let ti = team_index(p.side);
        let full = !cfg.penalty_area(p.side).contains(&p.torso)
            && self.inside_count[ti] + self.moved_into_area[ti] >= cfg.max_players_inside_own_area;
        let start = self.area_adjusted(cfg, p, full, target);
        let mut seen = vec![start.xy()];
        let mut open = vec![start];
        for _ in 0..attempts {
            let Some(best) = open
                .iter()
                .enumerate()
                .min_by(|(_, a), (_, b)| {
                    let da = (a.xy() - target.xy()).norm_squared();
                    let db = (b.xy() - target.xy()).norm_squared();
                    da.total_cmp(&db)
                })
                .map(|(i, _)| i)
            else {
                break;
            };
            let c = open.remove(best);
            if self.is_safe(cfg, p.id, &c) {
                return c;
            }
            for (dx, dy) in [(r, 0.0), (-r, 0.0), (0.0, r), (0.0, -r)] {
                let n = Vector3::new(c.x + dx, c.y + dy, c.z);
                if dx != 0.0 && n.x.abs() > cfg.half_length() {
                    continue;
                }
                let n = self.area_adjusted(cfg, p, full, n);
                if seen.iter().any(|s| (s - n.xy()).norm() < r / 2.0) {
                    continue;
                }
                seen.push(n.xy());
                open.push(n);
            }
        }
        tracing::error!(
            robot = p.id,
            x = target.x,
            y = target.y,
            "no safe spot found; using the requested spot"
        );
        target
    }

    /// Clears `side`'s players from the sphere (`pos`, `radius`),
    /// pushing each at least `min` (up to `min` + 2) away, then safe-spot search.
    pub fn clear_circle(
        &mut self,
        cfg: &RulesConfig,
        side: Side,
        pos: Vector3<f32>,
        radius: f32,
        min: f32,
        rng: &mut impl Rng,
    ) {
        for id in self.shuffled_team(side, rng) {
            let Some(p) = self.robot(id).copied() else {
                continue;
            };
            if sphere_meets_box(&pos, radius, &p.bbox_min, &p.bbox_max) {
                self.push_from(cfg, &p, pos, min, rng);
            }
        }
    }

    /// The circle clearance's move for one robot: `U(min, min + 2)` away from `pos`
    /// towards its own goal (or sideways near the own goal line), then the
    /// safe-spot search.
    pub fn push_from(
        &mut self,
        cfg: &RulesConfig,
        p: &RobotFacts,
        pos: Vector3<f32>,
        min: f32,
        rng: &mut impl Rng,
    ) {
        let d = uniform(rng, min, min + 2.0);
        let mut t = p.torso;
        let x = pos.x - p.side.sign() * d;
        if x.abs() > cfg.half_length() {
            t.y = if pos.y < 0.0 { pos.y + d } else { pos.y - d };
        } else {
            t.x = x;
        }
        self.move_safely(cfg, p.id, t, true);
    }

    /// Clears `side`'s players whose footprint meets `rect`, to
    /// `U(min, 2 min)` beyond its edge on their own side. Players for which
    /// `exempt` holds stay.
    #[allow(clippy::too_many_arguments)]
    pub fn clear_rect(
        &mut self,
        cfg: &RulesConfig,
        side: Side,
        rect: &super::geometry::Rect,
        min: f32,
        rng: &mut impl Rng,
        exempt: impl Fn(&RobotFacts) -> bool,
    ) {
        for id in self.shuffled_team(side, rng) {
            let Some(p) = self.robot(id).copied() else {
                continue;
            };
            if !rect.meets_box(&p.bbox_min, &p.bbox_max) || exempt(&p) {
                continue;
            }
            let d = uniform(rng, min, 2.0 * min);
            let mut t = p.torso;
            t.x = match side {
                Side::Left => rect.min_x - d,
                Side::Right => rect.max_x + d,
            };
            self.move_safely(cfg, id, t, true);
        }
    }

    /// Pushes `side`'s players within `KickRepelDist` of `spot` out to
    /// exactly that distance, then safe-spot search.
    pub fn repel_kick_takers(&mut self, cfg: &RulesConfig, side: Side, spot: &Vector3<f32>) {
        let ids: Vec<RobotId> = self
            .robots
            .iter()
            .filter(|r| r.side == side)
            .map(|r| r.id)
            .collect();
        for id in ids {
            let Some(p) = self.robot(id).copied() else {
                continue;
            };
            let off = p.torso.xy() - spot.xy();
            let d = off.norm();
            if d >= cfg.kick_repel_dist {
                continue;
            }
            // Straight on the spot: step back towards the own goal.
            let dir = if d > 1e-6 {
                off / d
            } else {
                Vector2::new(-side.sign(), 0.0)
            };
            let xy = spot.xy() + dir * cfg.kick_repel_dist;
            self.move_safely(cfg, id, Vector3::new(xy.x, xy.y, p.torso.z), false);
        }
    }
}
