//! The accelerometer `ACC` (docs/protocol.md#acc): the torso's proper
//! acceleration in the torso frame (gravity included, so a robot at rest
//! reads about +9.81 along its up axis), lagging one step like the
//! reference's. The reference evaluates it as a step starts, so it is
//! expressed in the torso frame of that moment: in the recorded gaits its
//! reading equals the second difference of the torso's positions turned
//! into the torso frame the step started from to 0.02 m/s² RMS (the
//! traces' rounding), against 0.1–0.6 m/s² in the frame the step ended in.

use nalgebra::{UnitQuaternion, Vector3};

use crate::perception::format::push_vec;

/// Gravity used by the accelerometer (m/s^2, field z).
pub const GRAVITY: f32 = 9.81;

/// One robot's accelerometer: the torso velocities of the last two steps
/// and the acceleration it reports.
#[derive(Debug, Clone, Copy)]
pub struct Accelerometer {
    /// Torso velocities after the last two steps (newest first).
    torso_vel: [Vector3<f32>; 2],
    /// Torso rotation after the last step: the frame of the next reading.
    torso_rot: UnitQuaternion<f32>,
    /// Proper acceleration reported (torso frame).
    acc: Vector3<f32>,
}

impl Default for Accelerometer {
    fn default() -> Self {
        Accelerometer {
            torso_vel: [Vector3::zeros(); 2],
            torso_rot: UnitQuaternion::identity(),
            acc: Vector3::new(0.0, 0.0, GRAVITY),
        }
    }
}

impl Accelerometer {
    /// Takes the state after one step of `dt` seconds: the torso's
    /// rotation and its linear velocity in the field frame. The reported
    /// value is the velocity change over the step before this one,
    /// in the torso frame this step started from.
    pub fn update(
        &mut self,
        torso_rotation: &UnitQuaternion<f32>,
        torso_velocity: Vector3<f32>,
        dt: f32,
    ) {
        let [v1, v2] = self.torso_vel;
        let world_acc = (v1 - v2) / dt + Vector3::new(0.0, 0.0, GRAVITY);
        self.acc = self.torso_rot.inverse() * world_acc;
        self.torso_vel = [torso_velocity, v1];
        self.torso_rot = *torso_rotation;
    }

    /// Forgets the velocity history (the robot was rebuilt or teleported
    /// without its velocities).
    pub fn forget_history(&mut self) {
        self.torso_vel = [Vector3::zeros(); 2];
    }

    /// The acceleration reported (torso frame, m/s^2).
    pub fn reading(&self) -> Vector3<f32> {
        self.acc
    }

    /// Appends `(ACC (n torso) (a x y z))`.
    pub fn write(&self, out: &mut String) {
        out.push_str("(ACC (n torso) (a ");
        push_vec(out, self.acc);
        out.push_str("))");
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::{UnitQuaternion, Vector3};

    use super::Accelerometer;

    #[test]
    fn at_rest_reads_gravity_and_lags_one_step() {
        let mut acc = Accelerometer::default();
        let mut s = String::new();
        acc.write(&mut s);
        assert_eq!(s, "(ACC (n torso) (a 0.00 0.00 9.81))");
        let upright = UnitQuaternion::identity();
        // The torso starts moving at 0.2 m/s: seen one step later.
        acc.update(&upright, Vector3::new(0.2, 0.0, 0.0), 0.02);
        assert_eq!(acc.reading(), Vector3::new(0.0, 0.0, 9.81));
        acc.update(&upright, Vector3::new(0.2, 0.0, 0.0), 0.02);
        assert!((acc.reading().x - 10.0).abs() < 1e-4, "{}", acc.reading());
        acc.update(&upright, Vector3::new(0.2, 0.0, 0.0), 0.02);
        assert!(acc.reading().x.abs() < 1e-6);
    }

    #[test]
    fn reports_in_the_torso_frame_the_step_started_from() {
        let mut acc = Accelerometer::default();
        // Torso lying on its side: gravity shows on its y axis.
        let on_side = UnitQuaternion::from_euler_angles(std::f32::consts::FRAC_PI_2, 0.0, 0.0);
        acc.update(&on_side, Vector3::zeros(), 0.02);
        // The step that laid it down started upright.
        let r = acc.reading();
        assert!((r.z - 9.81).abs() < 1e-4 && r.y.abs() < 1e-4, "{r}");
        acc.update(&on_side, Vector3::zeros(), 0.02);
        let r = acc.reading();
        assert!((r.y - 9.81).abs() < 1e-4 && r.z.abs() < 1e-4, "{r}");
    }
}
