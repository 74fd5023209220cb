//! Field geometry the rules need: penalty areas, goal boxes, the set-piece
//! spots and the "outside" position of fouled players. Pure functions of the
//! configuration.

use nalgebra::{Vector2, Vector3};

use super::config::RulesConfig;
use crate::playmode::Side;

/// An axis-aligned rectangle in the xy plane (edges included).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    /// Lower x.
    pub min_x: f32,
    /// Upper x.
    pub max_x: f32,
    /// Lower y.
    pub min_y: f32,
    /// Upper y.
    pub max_y: f32,
}

impl Rect {
    /// Whether the point's xy lies inside (edges included).
    pub fn contains(&self, p: &Vector3<f32>) -> bool {
        p.x >= self.min_x && p.x <= self.max_x && p.y >= self.min_y && p.y <= self.max_y
    }

    /// Whether the point's xy lies strictly inside.
    pub fn contains_strictly(&self, p: &Vector3<f32>) -> bool {
        p.x > self.min_x && p.x < self.max_x && p.y > self.min_y && p.y < self.max_y
    }

    /// Whether the xy footprint of the box `[min, max]` meets this rectangle.
    pub fn meets_box(&self, min: &Vector3<f32>, max: &Vector3<f32>) -> bool {
        min.x <= self.max_x && max.x >= self.min_x && min.y <= self.max_y && max.y >= self.min_y
    }

    /// This rectangle grown by `d` on every side.
    pub fn grown(&self, d: f32) -> Rect {
        Rect {
            min_x: self.min_x - d,
            max_x: self.max_x + d,
            min_y: self.min_y - d,
            max_y: self.max_y + d,
        }
    }
}

/// Whether the sphere (`centre`, `radius`) meets the box `[min, max]`.
pub fn sphere_meets_box(
    centre: &Vector3<f32>,
    radius: f32,
    min: &Vector3<f32>,
    max: &Vector3<f32>,
) -> bool {
    let mut d2 = 0.0;
    for i in 0..3 {
        let c = clamp(centre[i], min[i], max[i]);
        d2 += (centre[i] - c) * (centre[i] - c);
    }
    d2 <= radius * radius
}

/// `v` limited to `[lo, hi]`, never panicking (NaN input stays NaN).
pub fn clamp(v: f32, lo: f32, hi: f32) -> f32 {
    if v < lo {
        lo
    } else if v > hi {
        hi
    } else {
        v
    }
}

/// xy distance between two points.
pub fn dist_xy(a: &Vector3<f32>, b: &Vector3<f32>) -> f32 {
    (a.xy() - b.xy()).norm()
}

/// Absolute angle in degrees (0-180) between two xy vectors; 0 when either is zero.
pub fn angle_deg(a: &Vector2<f32>, b: &Vector2<f32>) -> f32 {
    let (na, nb) = (a.norm(), b.norm());
    if na <= f32::EPSILON || nb <= f32::EPSILON {
        return 0.0;
    }
    (a.dot(b) / (na * nb)).clamp(-1.0, 1.0).acos().to_degrees()
}

impl RulesConfig {
    /// The penalty area in front of `side`'s own goal.
    pub fn penalty_area(&self, side: Side) -> Rect {
        let hl = self.half_length();
        let hw = self.penalty_half_width();
        match side {
            Side::Left => Rect {
                min_x: -hl,
                max_x: -hl + self.penalty_length,
                min_y: -hw,
                max_y: hw,
            },
            Side::Right => Rect {
                min_x: hl - self.penalty_length,
                max_x: hl,
                min_y: -hw,
                max_y: hw,
            },
        }
    }

    /// The half of the field that `side` defends, oversized by 10 m at the
    /// sides and at the far end (used by the half clearances of BeforeKickOff
    /// and kick-off).
    pub fn half_box(&self, side: Side) -> Rect {
        let hl = self.half_length() + 10.0;
        let hw = self.half_width() + 10.0;
        match side {
            Side::Left => Rect {
                min_x: -hl,
                max_x: 0.0,
                min_y: -hw,
                max_y: hw,
            },
            Side::Right => Rect {
                min_x: 0.0,
                max_x: hl,
                min_y: -hw,
                max_y: hw,
            },
        }
    }

    /// Centre of `side`'s own goal on its goal line.
    pub fn own_goal_centre(&self, side: Side) -> Vector3<f32> {
        Vector3::new(-side.sign() * self.half_length(), 0.0, 0.0)
    }

    /// If `p` lies in a penalty area, the front corner of that area on the
    /// same y side (free-kick and drop-ball spots); otherwise `p`.
    pub fn out_of_penalty_areas(&self, p: Vector3<f32>) -> Vector3<f32> {
        for side in [Side::Left, Side::Right] {
            let area = self.penalty_area(side);
            if area.contains(&p) {
                let x = match side {
                    Side::Left => area.max_x,
                    Side::Right => area.min_x,
                };
                let y = if p.y >= 0.0 { area.max_y } else { area.min_y };
                return Vector3::new(x, y, p.z);
            }
        }
        p
    }

    /// Goal-kick spot for `side` (the defending team taking the kick).
    pub fn goal_kick_spot(&self, side: Side) -> Vector3<f32> {
        Vector3::new(
            -side.sign() * (self.half_length() - self.goal_kick_dist),
            0.0,
            self.ball_radius,
        )
    }

    /// Corner-kick spot for the attacking team `side`, on the y side of `ball_y`.
    pub fn corner_spot(&self, side: Side, ball_y: f32) -> Vector3<f32> {
        let y = (self.field_width + self.goal_width) / 4.0 - self.ball_radius;
        let sy = if ball_y < 0.0 { -1.0 } else { 1.0 };
        Vector3::new(
            side.sign() * (self.half_length() - self.ball_radius),
            sy * y,
            self.ball_radius,
        )
    }

    /// The "outside" position (docs/protocol.md#referee-moves) for player
    /// (`side`, `unum`): on the touchline opposite the ball, at height `z`.
    pub fn outside_position(&self, side: Side, unum: u8, ball_y: f32, z: f32) -> Vector3<f32> {
        let x = -side.sign() * 0.6 * (7.0 - f32::from(unum));
        let s = if ball_y < 0.0 { 1.0 } else { -1.0 };
        Vector3::new(x, (self.half_width() + 0.5) * s, z)
    }

    /// Whether the ball is on the field (docs/protocol.md#ball-out-of-play):
    /// not wholly over a line.
    pub fn ball_on_field(&self, ball: &Vector3<f32>) -> bool {
        let m = self.ball_radius + 0.001;
        ball.x.abs() < self.half_length() + m && ball.y.abs() < self.half_width() + m
    }

    /// The goal (named by the side that defends it) whose trigger box the
    /// ball's sphere overlaps (docs/protocol.md#goals).
    pub fn goal_box_hit(&self, ball: &Vector3<f32>) -> Option<Side> {
        let r = self.ball_radius;
        let hl = self.half_length();
        let hw = self.goal_width / 2.0 - r;
        for side in [Side::Left, Side::Right] {
            let s = -side.sign();
            let (x0, x1) = (s * (hl + r), s * (hl + self.goal_depth - r));
            let min = Vector3::new(x0.min(x1), -hw, 0.0);
            let max = Vector3::new(x0.max(x1), hw, self.goal_height);
            if sphere_meets_box(ball, r, &min, &max) {
                return Some(side);
            }
        }
        None
    }

    /// The analytic fallback of the goal check: the ball is wholly over a goal
    /// line, was inside it within the last second, and its path, traced back to
    /// the line, crossed between the posts and below the bar. Symmetric for
    /// both goals (a reference quirk fixed, docs/protocol.md#reference-quirks).
    pub fn goal_traced(&self, ball: &Vector3<f32>, vel: &Vector3<f32>) -> Option<Side> {
        let g = self.half_length() + self.ball_radius;
        if ball.x.abs() < g || (ball.x - vel.x).abs() > g || vel.x.abs() <= f32::EPSILON {
            return None;
        }
        let plane = g.copysign(ball.x);
        // Parameter of the crossing along the velocity; negative = in the past.
        let t = (plane - ball.x) / vel.x;
        let y = ball.y + t * vel.y;
        let z = ball.z + t * vel.z;
        if y.abs() < self.goal_width / 2.0 && z < self.goal_height {
            Some(if ball.x < 0.0 {
                Side::Left
            } else {
                Side::Right
            })
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn penalty_areas_and_front_corners() {
        let c = RulesConfig::default();
        let left = c.penalty_area(Side::Left);
        assert!((left.max_x - -13.2).abs() < 1e-5);
        assert!((left.max_y - 3.0).abs() < 1e-5);
        let p = c.out_of_penalty_areas(Vector3::new(14.0, -1.0, 0.042));
        assert!((p.x - 13.2).abs() < 1e-5 && (p.y + 3.0).abs() < 1e-5);
        let q = Vector3::new(0.0, 5.0, 0.0);
        assert_eq!(c.out_of_penalty_areas(q), q);
    }

    #[test]
    fn goal_boxes_and_trace_are_symmetric() {
        let c = RulesConfig::default();
        assert_eq!(
            c.goal_box_hit(&Vector3::new(-15.05, 0.3, 0.1)),
            Some(Side::Left)
        );
        assert_eq!(
            c.goal_box_hit(&Vector3::new(15.05, 0.3, 0.1)),
            Some(Side::Right)
        );
        assert_eq!(c.goal_box_hit(&Vector3::new(14.9, 0.3, 0.1)), None);
        assert_eq!(c.goal_box_hit(&Vector3::new(15.2, 2.0, 0.1)), None);
        // Tunnelled: now far behind the line, came in between the posts.
        let v = Vector3::new(3.0, 0.5, 0.0);
        assert_eq!(
            c.goal_traced(&Vector3::new(16.0, 0.2, 0.1), &v),
            Some(Side::Right)
        );
        let v = Vector3::new(-3.0, 0.5, 0.0);
        assert_eq!(
            c.goal_traced(&Vector3::new(-16.0, 0.2, 0.1), &v),
            Some(Side::Left)
        );
        // Came in wide of the posts.
        let v = Vector3::new(-3.0, -4.0, 0.0);
        assert_eq!(c.goal_traced(&Vector3::new(-16.0, 0.2, 0.1), &v), None);
    }

    #[test]
    fn spots() {
        let c = RulesConfig::default();
        assert!((c.goal_kick_spot(Side::Right).x - 14.0).abs() < 1e-5);
        let k = c.corner_spot(Side::Left, -3.0);
        assert!((k.x - 14.958).abs() < 1e-4 && (k.y + 5.483).abs() < 1e-3);
        let o = c.outside_position(Side::Left, 1, 2.0, 0.4);
        assert!((o.x + 3.6).abs() < 1e-5 && (o.y + 10.5).abs() < 1e-5);
        let o = c.outside_position(Side::Right, 11, -2.0, 0.4);
        assert!((o.x + 2.4).abs() < 1e-5 && (o.y - 10.5).abs() < 1e-5);
    }
}
