//! Drag on robot parts and on the ball as the reference applies it: every part gets
//! −drag·v and −drag·ω (N, N·m) as an external force and torque before
//! each step, from the velocities the last step ended with
//! (docs/physics.md#drag). On a robot's whole-body rotation the 23
//! parts' angular drag adds up to 0.23 N·m per rad/s, several per cent of
//! a walking robot's yaw rate per step.
//!
//! Rapier's own body damping does not act on the links of a multibody
//! (it damps only free bodies), so for articulated robots the drag is
//! applied here as forces, from each link's velocity in the articulation
//! (its body Jacobian times the generalized velocities: rapier copies
//! these into the link bodies only when the next step starts).
//!
//! The ball's drag (−0.01·v, −5e-5·ω) is applied the same way: as rapier
//! body damping it would act after the
//! step's solve, so the ground's friction could not make up the spin it
//! takes off within the step. A rolling ball then keeps sliding by 5 % of
//! its speed instead of the reference's 0.5 %, and slows at 1.02 instead of
//! 1.06 per second; in flight its position would lag the drag by a step.

use rapier3d::math::Vector;

use super::step_forces::PartForce;
use super::{JointRef, World};

impl World {
    /// Adds every articulated robot part's drag to its external force and
    /// torque for the coming step (`step_forces`).
    pub(super) fn add_part_drag(&mut self) {
        let (lin, ang) = (self.cfg.drag.part_linear, self.cfg.drag.part_angular);
        if lin == 0.0 && ang == 0.0 {
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

impl World {
    /// Adds the ball's drag to its external force and torque for the
    /// coming step (`step_forces`), from the velocities the last step
    /// ended with.
    pub(super) fn add_ball_drag(&mut self) {
        let (lin, ang) = (self.cfg.drag.ball_linear, self.cfg.drag.ball_angular);
        if lin == 0.0 && ang == 0.0 {
            return;
        }
        let Some(ball) = self.bodies.get(self.ball_body) else {
            return;
        };
        let drag = PartForce {
            body: self.ball_body,
            force: -lin * ball.linvel(),
            torque: -ang * ball.angvel(),
        };
        self.step_forces.pending.push(drag);
        self.add_step_forces();
    }
}
