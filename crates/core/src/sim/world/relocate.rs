//! Referee relocation: a rigid shift of a whole robot.
//!
//! The reference moves a robot for the referee (kick-off clearing, drop
//! ball, foul relocation; docs/protocol.md#referee-moves) and for the trainer's
//! `(agent (pos ...))` by translating every body by the same vector and
//! zeroing the velocities. Orientations are kept: a robot lying on the
//! ground is still lying at its new place and has to get up by itself,
//! which agents' get-up logic and fall statistics rely on.

use nalgebra::{Isometry3, Translation3, Vector3};

use super::convert::{from_pose, to_pose, to_vec};
use super::{RobotHandle, World};

impl World {
    /// Translates every part of robot `h` so that its torso centre ends at
    /// `torso_pos`, keeping every part's orientation and the joint angles,
    /// and zeroes all linear and angular velocities, forces and the
    /// multibody's joint velocities. Unlike [`World::place_robot`] it never
    /// sets the torso upright. A non-finite target is ignored.
    pub fn shift_robot(&mut self, h: RobotHandle, torso_pos: Vector3<f32>) {
        if !torso_pos.iter().all(|x| x.is_finite()) {
            return;
        }
        let Some(r) = self.robots.get(&h) else {
            return;
        };
        let torso_body = r.bodies[r.model.torso];
        let Some(old_torso) = self.bodies.get(torso_body).map(|b| from_pose(b.position())) else {
            return;
        };
        let delta = torso_pos - old_torso.translation.vector;
        for b in &r.bodies {
            if let Some(rb) = self.bodies.get_mut(*b) {
                let old = from_pose(rb.position());
                // The torso gets the exact target: adding a shift to a pose
                // far away (a robot flung off by the solver) loses precision.
                let at = if *b == torso_body {
                    torso_pos
                } else {
                    old.translation.vector + delta
                };
                rb.set_position(
                    to_pose(&Isometry3::from_parts(Translation3::from(at), old.rotation)),
                    true,
                );
                rb.set_linvel(to_vec(&Vector3::zeros()), true);
                rb.set_angvel(to_vec(&Vector3::zeros()), true);
                rb.reset_forces(true);
                rb.reset_torques(true);
            }
        }
        self.settle_after_move(h);
    }
}
