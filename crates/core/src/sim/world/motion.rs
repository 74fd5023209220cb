//! The torso's motion over the last step, as the gyro and the
//! accelerometer read it.
//!
//! The reference's engine integrates every body's pose with the velocity
//! its step ends with, so the torso velocity its gyro and accelerometer
//! read is exactly the motion the torso made during the step (its gyro
//! equals the torso's change of orientation over each step to 0.1–0.4°/s,
//! the recorded gaits' rounding). Rapier's is not: the velocity its solve
//! moves the bodies with includes the contacts' position correction, and
//! its relaxation pass then takes that correction out of the velocity the
//! step ends with. Read directly, the torso's velocity after a rapier step
//! differs from how the torso moved whenever contacts push it, by 1–5°/s
//! RMS while walking and by over 100°/s when a falling robot lands. So
//! the sensors read the pose change over the step instead: the torso pose
//! is kept when a step starts and differenced when it ends.

use nalgebra::{Isometry3, Vector3};

use super::convert::from_pose;
use super::{RobotHandle, World};

/// A torso's motion over one step.
#[derive(Debug, Clone, Copy)]
pub(super) struct StepMotion {
    /// Linear velocity, field frame (m/s).
    pub(super) linvel: Vector3<f32>,
    /// Angular velocity in the torso frame (rad/s).
    pub(super) angvel_local: Vector3<f32>,
}

impl StepMotion {
    /// The constant velocity that takes a body from `from` to `to` in `dt`
    /// seconds (the rotation about one axis at a constant rate).
    pub(super) fn between(from: &Isometry3<f32>, to: &Isometry3<f32>, dt: f32) -> StepMotion {
        let turn = from.rotation.inverse() * to.rotation;
        StepMotion {
            linvel: (to.translation.vector - from.translation.vector) / dt,
            angvel_local: turn.scaled_axis() / dt,
        }
    }
}

impl World {
    /// Keeps every robot's torso pose as the step starts.
    pub(super) fn begin_step_motion(&mut self) {
        for r in self.robots.values_mut() {
            r.torso_at_step_start = self
                .bodies
                .get(r.bodies[r.model.torso])
                .map(|b| from_pose(b.position()));
        }
    }

    /// Derives every robot's torso motion from its pose change over the
    /// step just taken. A robot the run-away guard rebuilt has no such
    /// motion: it reads its bodies' velocities.
    pub(super) fn end_step_motion(&mut self) {
        let dt = self.cycle_dt;
        for (h, r) in self.robots.iter_mut() {
            let now = self
                .bodies
                .get(r.bodies[r.model.torso])
                .map(|b| from_pose(b.position()));
            r.step_motion = match (r.torso_at_step_start.take(), now) {
                (Some(from), Some(to)) if !self.recovered.contains(h) && dt > 0.0 => {
                    Some(StepMotion::between(&from, &to, dt))
                }
                _ => None,
            };
        }
    }

    /// Forgets a robot's step motion: it was moved by hand, and until its
    /// next step its velocity is the one it was given.
    pub(super) fn forget_step_motion(&mut self, h: RobotHandle) {
        if let Some(r) = self.robots.get_mut(&h) {
            r.step_motion = None;
            r.torso_at_step_start = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

    use super::StepMotion;

    #[test]
    fn a_turn_about_a_body_axis_reads_as_that_axis_in_the_body_frame() {
        // A torso pitched 30° about field x turns 0.02 rad about its own
        // y axis in 0.02 s while moving 1 cm along field x.
        let pitched = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), 0.5);
        let from = Isometry3::from_parts(Translation3::new(1.0, 2.0, 0.3), pitched);
        let turned = pitched * UnitQuaternion::from_axis_angle(&Vector3::y_axis(), 0.02);
        let to = Isometry3::from_parts(Translation3::new(1.01, 2.0, 0.3), turned);
        let m = StepMotion::between(&from, &to, 0.02);
        assert!(
            (m.angvel_local - Vector3::new(0.0, 1.0, 0.0)).norm() < 1e-4,
            "{:?}",
            m.angvel_local
        );
        assert!(
            (m.linvel - Vector3::new(0.5, 0.0, 0.0)).norm() < 1e-3,
            "{:?}",
            m.linvel
        );
    }
}
