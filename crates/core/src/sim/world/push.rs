//! External pushes on robot parts: a constant force that scripted
//! experiments and tests apply to a part (a trainer's hand, a wind), on top
//! of gravity, contacts and the motors.

use nalgebra::Vector3;

use super::convert::to_vec;
use super::{RobotHandle, World};

impl World {
    /// Applies `force` (N, field frame, at the part's centre of mass) to
    /// part `part` of robot `h` in every coming step until it is set again;
    /// a zero force ends the push. Moving a robot (`place_robot`,
    /// `shift_robot`) also ends it. Unknown robots or parts and non-finite
    /// forces are ignored.
    pub fn set_part_force(&mut self, h: RobotHandle, part: usize, force: Vector3<f32>) {
        if !force.iter().all(|x| x.is_finite()) {
            return;
        }
        let Some(body) = self.robot(h).and_then(|r| r.bodies.get(part).copied()) else {
            return;
        };
        if let Some(rb) = self.bodies.get_mut(body) {
            rb.reset_forces(true);
            rb.add_force(to_vec(&force), true);
        }
    }
}
