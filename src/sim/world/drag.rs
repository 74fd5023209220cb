//! Drag on robot parts as the reference applies it: every part gets
//! −drag·v and −drag·ω (N, N·m) as an external force and torque before
//! each step, from the velocities the last step ended with
//! (field-and-physics.md §7). On a robot's whole-body rotation the 23
//! parts' angular drag adds up to 0.23 N·m per rad/s, several per cent of
//! a walking robot's yaw rate per step.
//!
//! Rapier's own body damping does not act on the links of a multibody
//! (it damps only free bodies), so for articulated robots the drag is
//! applied here as forces, from each link's velocity in the articulation
//! (its body Jacobian times the generalized velocities: rapier copies
//! these into the link bodies only when the next step starts). Robots
//! with impulse joints keep rapier's body damping (`robots.rs`). This is
//! a setting (`part_drag_as_forces`), on by default (`config.rs`).

use nalgebra::Vector3;
use rapier3d::prelude::RigidBodyHandle;

use super::convert::{from_vec, to_vec};
use super::{JointRef, World};

/// A part's drag for one step, and the external force and torque the
/// part carried before it, restored after the step.
#[derive(Clone, Copy, Debug)]
pub(super) struct PartDrag {
    body: RigidBodyHandle,
    force: Vector3<f32>,
    torque: Vector3<f32>,
    force_before: Vector3<f32>,
    torque_before: Vector3<f32>,
}

impl World {
    /// Adds every articulated robot part's drag to its external force and
    /// torque for the coming step.
    pub(super) fn add_part_drag(&mut self) {
        let (lin, ang) = (self.cfg.part_linear_drag, self.cfg.part_angular_drag);
        let mut drag = std::mem::take(&mut self.part_drag);
        drag.clear();
        if !self.cfg.part_drag_as_forces || (lin == 0.0 && ang == 0.0) {
            self.part_drag = drag;
            return;
        }
        // Gathered first (the articulation is read), then applied (the
        // bodies are written), in the one buffer kept across steps.
        for r in self.robots.values() {
            if !matches!(r.joints.first(), Some(JointRef::Multibody(_))) {
                continue;
            }
            for &body in &r.bodies {
                let Some(link) = self.multibody_joints.rigid_body_link(body) else {
                    continue;
                };
                let Some(mb) = self.multibody_joints.get_multibody(link.multibody) else {
                    continue;
                };
                let qd = mb.generalized_velocity();
                let j = mb.body_jacobian(link.id);
                if j.ncols() != qd.len() {
                    continue;
                }
                let row = |k: usize| (0..qd.len()).map(|c| j[(k, c)] * qd[c]).sum::<f32>();
                let v = Vector3::new(row(0), row(1), row(2));
                let w = Vector3::new(row(3), row(4), row(5));
                drag.push(PartDrag {
                    body,
                    force: -lin * v,
                    torque: -ang * w,
                    force_before: Vector3::zeros(),
                    torque_before: Vector3::zeros(),
                });
            }
        }
        for d in drag.iter_mut() {
            let Some(rb) = self.bodies.get_mut(d.body) else {
                continue;
            };
            d.force_before = from_vec(rb.user_force());
            d.torque_before = from_vec(rb.user_torque());
            rb.add_force(to_vec(&d.force), false);
            rb.add_torque(to_vec(&d.torque), false);
        }
        self.part_drag = drag;
    }

    /// Takes the drag of the step just taken off the parts again, leaving
    /// their external forces as they were (pushes, stop torques).
    pub(super) fn remove_part_drag(&mut self) {
        for d in &self.part_drag {
            if let Some(rb) = self.bodies.get_mut(d.body) {
                rb.reset_forces(false);
                rb.reset_torques(false);
                rb.add_force(to_vec(&d.force_before), false);
                rb.add_torque(to_vec(&d.torque_before), false);
            }
        }
        self.part_drag.clear();
    }
}
