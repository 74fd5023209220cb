//! Guards against solver failures: speeds capped before every step, and
//! robots or a ball flung off the field put back.

use nalgebra::Vector3;

use super::{JointRef, RobotHandle, World};

/// Distance from the field centre beyond which a body is taken to have run
/// away (the field is 30 x 20 m).
const RUNAWAY_DISTANCE: f32 = 60.0;

impl World {
    /// Puts back any robot (or the ball) that the solver flung off the
    /// field or into non-finite coordinates: the robot is placed upright at
    /// its last sane torso position with zero velocity, the ball at the
    /// centre spot. Logged, since it means the contact solver failed.
    pub(super) fn recover_runaways(&mut self) {
        let insane = |t: &Vector3<f32>| {
            !t.iter().all(|x| x.is_finite())
                || t.x.abs() > RUNAWAY_DISTANCE
                || t.y.abs() > RUNAWAY_DISTANCE
                || t.z.abs() > RUNAWAY_DISTANCE
        };
        let mut bad = Vec::new();
        for (h, r) in &self.robots {
            let broken = r.bodies.iter().any(|b| {
                self.bodies
                    .get(*b)
                    .is_some_and(|rb| insane(rb.translation()))
            });
            if broken {
                bad.push((*h, r.last_sane));
            }
        }
        for (h, p) in bad {
            tracing::warn!(robot = ?h, pos = ?p, "robot flung away by the solver; rebuilt");
            self.rebuild_robot(h, p);
        }
        let torso_positions: Vec<(RobotHandle, Vector3<f32>)> = self
            .robots
            .iter()
            .filter_map(|(h, r)| {
                let t = *self.bodies.get(r.bodies[r.model.torso])?.translation();
                (!insane(&t)).then_some((*h, t))
            })
            .collect();
        for (h, t) in torso_positions {
            if let Some(r) = self.robots.get_mut(&h) {
                r.last_sane = t;
            }
        }
        if insane(&self.ball_position()) {
            tracing::warn!("ball flung away by the solver; put back on the centre spot");
            let r = self
                .colliders
                .get(self.ball_collider)
                .and_then(|c| c.shape().as_ball().map(|b| b.radius))
                .unwrap_or(0.042);
            self.set_ball_position(Vector3::new(0.0, 0.0, r));
            self.set_ball_velocity(Vector3::zeros());
        }
    }

    /// Caps every speed before a solver step. Nothing on a soccer field
    /// moves faster than a few m/s; a body the solver flings away (robots
    /// started inside each other, say) would otherwise run off to
    /// thousands of kilometres within a few steps and make the broad phase
    /// allocate without end. The caps are far above any legitimate motion
    /// (a kicked ball reaches ~10 m/s, joints 8.8 rad/s).
    pub(super) fn limit_velocities(&mut self) {
        const MAX_LINEAR: f32 = 40.0;
        const MAX_ANGULAR: f32 = 100.0;
        for r in self.robots.values() {
            if let Some(JointRef::Multibody(mh)) = r.joints.first() {
                if let Some((mb, _)) = self.multibody_joints.get_mut(*mh) {
                    for v in mb.generalized_velocity_mut().iter_mut() {
                        if !v.is_finite() {
                            *v = 0.0;
                        } else {
                            *v = v.clamp(-MAX_ANGULAR, MAX_ANGULAR);
                        }
                    }
                }
            }
        }
        for (_, b) in self.bodies.iter_mut() {
            if !b.is_dynamic() {
                continue;
            }
            let v = *b.linvel();
            let w = *b.angvel();
            let fix = |x: nalgebra::Vector3<f32>, max: f32| {
                if !x.iter().all(|c| c.is_finite()) {
                    Some(nalgebra::Vector3::zeros())
                } else if x.norm() > max {
                    Some(x * (max / x.norm()))
                } else {
                    None
                }
            };
            if let Some(v) = fix(v, MAX_LINEAR) {
                b.set_linvel(v, false);
            }
            if let Some(w) = fix(w, MAX_ANGULAR) {
                b.set_angvel(w, false);
            }
        }
    }
}
