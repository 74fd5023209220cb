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

use rapier3d::math::Vector;

use super::step_forces::PartForce;
use super::{JointRef, World};

impl World {
    /// Adds every articulated robot part's drag to its external force and
    /// torque for the coming step (`step_forces`).
    pub(super) fn add_part_drag(&mut self) {
        let (lin, ang) = (self.cfg.part_linear_drag, self.cfg.part_angular_drag);
        if !self.cfg.part_drag_as_forces || (lin == 0.0 && ang == 0.0) {
            return;
        }
        let mut drag = std::mem::take(&mut self.step_forces.pending);
        // Gathered first (the articulation is read), then applied (the
        // bodies are written).
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
                let v = Vector::new(row(0), row(1), row(2));
                let w = Vector::new(row(3), row(4), row(5));
                drag.push(PartForce {
                    body,
                    force: -lin * v,
                    torque: -ang * w,
                });
            }
        }
        self.step_forces.pending = drag;
        self.add_step_forces();
    }
}
