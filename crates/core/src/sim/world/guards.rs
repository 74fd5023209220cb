//! Guards against solver failures, the one place that protects the match
//! from them: speeds capped before every sub-step, and before and after it
//! every robot or ball with a non-finite position, flung off the field or
//! disabled by rapier's own non-finite quarantine put back (a robot
//! rebuilt standing on the ground at the point inside the field lines
//! nearest to where its torso was last seen sane), so one bad robot never
//! poisons the rest of the match. Rapier must never step a robot
//! with a quarantined (disabled) link: its multibody solver then indexes
//! past the robot's degrees of freedom and panics.

use nalgebra::Vector3;

use super::convert::{from_vec, to_vec};
use super::{JointRef, RobotHandle, World};

/// Distance from the field centre beyond which a body is taken to have run
/// away (the field is 30 x 20 m).
const RUNAWAY_DISTANCE: f32 = 60.0;

impl World {
    /// Puts back any robot (or the ball) that the solver flung off the
    /// field or into non-finite coordinates, or that rapier disabled for
    /// non-finite state: the robot is rebuilt upright, standing on the
    /// ground with zero velocity, at the point inside the field lines
    /// nearest to its last sane torso position (a sane position can still
    /// be far outside the field, or up in the air); the ball is put on the
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
                    .is_some_and(|rb| !rb.is_enabled() || insane(&from_vec(rb.translation())))
            });
            if broken {
                bad.push((*h, r.last_sane));
            }
        }
        let (half_length, half_width) =
            (self.field.field_length / 2.0, self.field.field_width / 2.0);
        for (h, p) in bad {
            // Height 0: `rebuild_robot` raises it to the standing height.
            let at = Vector3::new(
                p.x.clamp(-half_length, half_length),
                p.y.clamp(-half_width, half_width),
                0.0,
            );
            // The simulation logs it (thinned) with the agent's team and
            // number.
            tracing::debug!(robot = ?h, last_sane = ?p, rebuilt_at = ?at.xy(), "robot flung away by the solver; rebuilt standing inside the field lines");
            self.rebuild_robot(h, at);
            self.recovered.insert(h);
        }
        let torso_positions: Vec<(RobotHandle, Vector3<f32>)> = self
            .robots
            .iter()
            .filter_map(|(h, r)| {
                let t = from_vec(self.bodies.get(r.bodies[r.model.torso])?.translation());
                (!insane(&t)).then_some((*h, t))
            })
            .collect();
        for (h, t) in torso_positions {
            if let Some(r) = self.robots.get_mut(&h) {
                r.last_sane = t;
            }
        }
        let ball_disabled = self
            .bodies
            .get(self.ball_body)
            .is_some_and(|b| !b.is_enabled());
        if ball_disabled || insane(&self.ball_position()) {
            if let Some(b) = self.bodies.get_mut(self.ball_body) {
                b.set_enabled(true);
            }
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

    /// Whether the run-away guard rebuilt this robot during the last step
    /// (its velocities and joint angles were reset).
    pub fn was_recovered(&self, h: RobotHandle) -> bool {
        self.recovered.contains(&h)
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
            let v = from_vec(b.linvel());
            let w = from_vec(b.angvel());
            let fix = |x: Vector3<f32>, max: f32| {
                if !x.iter().all(|c| c.is_finite()) {
                    Some(Vector3::zeros())
                } else if x.norm() > max {
                    Some(x * (max / x.norm()))
                } else {
                    None
                }
            };
            if let Some(v) = fix(v, MAX_LINEAR) {
                b.set_linvel(to_vec(&v), false);
            }
            if let Some(w) = fix(w, MAX_ANGULAR) {
                b.set_angvel(to_vec(&w), false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::Vector3;

    use crate::sim::model::ModelLibrary;
    use crate::sim::world::{PhysicsConfig, World, DEFAULT_CYCLE_DT};

    fn world_with_one_robot() -> (World, super::RobotHandle) {
        let mut w = World::new(&PhysicsConfig::default(), DEFAULT_CYCLE_DT).expect("world");
        let lib = ModelLibrary::built_in().expect("models");
        let m = lib.resolve("rsg/agent/nao/nao.rsg", &[]).expect("model");
        let h = w.add_robot(m, Vector3::new(1.0, 2.0, 0.4), 0.0);
        w.step();
        assert!(!w.was_recovered(h));
        (w, h)
    }

    fn torso(w: &World, h: super::RobotHandle) -> Vector3<f32> {
        w.part_pose(h, w.robot_model(h).torso).translation.vector
    }

    /// Moves one of the robot's bodies, as a solver failure would.
    fn corrupt(w: &mut World, h: super::RobotHandle, to: Vector3<f32>) {
        let body = w.robots[&h].bodies[0];
        if let Some(b) = w.bodies.get_mut(body) {
            b.set_translation(super::to_vec(&to), false);
        }
    }

    #[test]
    fn a_robot_with_a_non_finite_body_is_rebuilt_where_it_stood() {
        let (mut w, h) = world_with_one_robot();
        corrupt(&mut w, h, Vector3::new(f32::NAN, 0.0, 0.0));
        w.step();
        assert!(w.was_recovered(h));
        let t = torso(&w, h);
        assert!(t.iter().all(|x| x.is_finite()), "{t}");
        assert!((t.x - 1.0).abs() < 0.2 && (t.y - 2.0).abs() < 0.2, "{t}");
        w.step();
        assert!(!w.was_recovered(h), "reported for one step only");
    }

    #[test]
    fn a_robot_with_a_disabled_link_is_rebuilt_where_it_stood() {
        // What rapier's quarantine does to a body whose state went
        // non-finite during a step.
        let (mut w, h) = world_with_one_robot();
        let body = w.robots[&h].bodies[3];
        if let Some(b) = w.bodies.get_mut(body) {
            b.set_enabled(false);
        }
        w.step();
        assert!(w.was_recovered(h));
        let t = torso(&w, h);
        assert!((t.x - 1.0).abs() < 0.2 && (t.y - 2.0).abs() < 0.2, "{t}");
        for _ in 0..5 {
            w.step();
        }
        assert!(!w.was_recovered(h));
    }

    #[test]
    fn a_robot_flung_off_the_field_is_rebuilt_where_it_stood() {
        let (mut w, h) = world_with_one_robot();
        corrupt(&mut w, h, Vector3::new(5000.0, 0.0, 0.0));
        w.step();
        assert!(w.was_recovered(h));
        let t = torso(&w, h);
        assert!((t.x - 1.0).abs() < 0.2 && (t.y - 2.0).abs() < 0.2, "{t}");
    }

    #[test]
    fn a_robot_last_sane_far_off_the_field_is_rebuilt_standing_inside_the_lines() {
        // What a robot pushed around under the floor and thrown up looks
        // like to the guard: last seen sane far outside and high up.
        let (mut w, h) = world_with_one_robot();
        w.shift_robot(h, Vector3::new(59.4, 48.7, 30.0));
        w.step();
        assert!(!w.was_recovered(h), "still sane: under 60 m");
        corrupt(&mut w, h, Vector3::new(5000.0, 0.0, 0.0));
        w.step();
        assert!(w.was_recovered(h));
        let t = torso(&w, h);
        assert!((t.x - 15.0).abs() < 0.2 && (t.y - 10.0).abs() < 0.2, "{t}");
        let standing = w.robot_model(h).standing_height();
        assert!((t.z - standing).abs() < 0.05, "standing on the ground: {t}");
        let lowest = w.robot_lowest_point(h).expect("robot");
        assert!(lowest > -0.01, "nothing below the ground: {lowest}");
    }

    #[test]
    fn a_ball_flung_away_goes_back_to_the_centre_spot() {
        let (mut w, _) = world_with_one_robot();
        w.set_ball_position(Vector3::new(0.0, 80.0, 1.0));
        w.step();
        let b = w.ball_position();
        assert!(b.x.abs() < 0.1 && b.y.abs() < 0.1, "{b}");
    }
}
