//! The hinges' damping as inertia only (`physics.joints.damping_brakes:
//! false`).
//!
//! Rapier's multibody damping is implicit: each hinge gets damping × step
//! added to its diagonal of the mass matrix and a brake of −damping × rate
//! at the rate the step ends with. The diagonal term is what the iterative
//! solver needs to converge on the light link bodies; the brake is not the
//! reference's (its hinges have none). Given back as an explicit torque of
//! +damping × rate at the rate the step starts with, the brake leaves
//! −damping × (change of rate): the hinge then only carries damping × step
//! of extra inertia (an armature), and a joint overpowered by its load
//! yields as freely as the reference's.

use nalgebra::Vector3;

use super::convert::{from_rot, to_vec};
use super::{JointRef, World};

impl World {
    /// Queues, for the coming step, the torque that gives back every
    /// multibody hinge's damping brake at its current rate (equal and
    /// opposite on the hinge's child and parent), unless the damping is
    /// to brake (`joints.damping_brakes`).
    pub(super) fn give_back_hinge_damping(&mut self) {
        if self.cfg.joints.damping_brakes {
            return;
        }
        for r in self.robots.values() {
            for (jd, jr) in r.model.joints.iter().zip(&r.joints) {
                let JointRef::Multibody(mh) = jr else {
                    continue;
                };
                let Some((mb, link)) = self.multibody_joints.get(*mh) else {
                    continue;
                };
                let Some(dof) = mb.link(link).map(|l| l.assembly_id()) else {
                    continue;
                };
                let rate = mb.generalized_velocity().get(dof).copied().unwrap_or(0.0);
                let damping = mb.damping().get(dof).copied().unwrap_or(0.0);
                let (parent, child) = (r.bodies[jd.parent], r.bodies[jd.child]);
                let Some(rot) = self.bodies.get(parent).map(|b| from_rot(b.rotation())) else {
                    continue;
                };
                let torque: Vector3<f32> = rot * jd.axis.into_inner() * (damping * rate);
                if torque == Vector3::zeros() {
                    continue;
                }
                self.step_forces
                    .push_hinge_torque(parent, child, to_vec(&torque));
            }
        }
    }
}
