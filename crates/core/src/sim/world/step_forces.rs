//! External forces that hold for one step only: the parts' and the
//! ball's drag (`drag`) and the compensation of rapier's linearised
//! velocity-product forces (`coriolis`). Each is computed from the state
//! the step starts from,
//! added to the parts' external force and torque before the step, and
//! taken off after it, so that what the parts carried before (a trainer's
//! push) stays as it was.

use rapier3d::math::Vector;
use rapier3d::prelude::RigidBodyHandle;

use super::{JointRef, World};

/// A force and torque on one part for the coming step.
#[derive(Clone, Copy, Debug)]
pub(super) struct PartForce {
    pub(super) body: RigidBodyHandle,
    pub(super) force: Vector,
    pub(super) torque: Vector,
}

/// The articulated robots' parts' and the ball's external forces before
/// the step's own were added, and the buffer the step's own are computed into; both kept
/// across steps.
#[derive(Debug, Default)]
pub(super) struct StepForces {
    before: Vec<PartForce>,
    pub(super) pending: Vec<PartForce>,
}

impl StepForces {
    /// Queues a torque about a hinge for the coming step: `torque` (field
    /// frame) on the hinge's child, its opposite on its parent.
    pub(super) fn push_hinge_torque(
        &mut self,
        parent: RigidBodyHandle,
        child: RigidBodyHandle,
        torque: Vector,
    ) {
        self.pending.extend([
            PartForce {
                body: child,
                force: Vector::ZERO,
                torque,
            },
            PartForce {
                body: parent,
                force: Vector::ZERO,
                torque: -torque,
            },
        ]);
    }
}

impl World {
    /// Adds `self.step_forces.pending` to the parts' external forces for
    /// the coming step (and empties it). The first call of a step
    /// remembers the external forces every articulated robot's parts and
    /// the ball had.
    pub(super) fn add_step_forces(&mut self) {
        if self.step_forces.pending.is_empty() {
            return;
        }
        let StepForces { before, pending } = &mut self.step_forces;
        if before.is_empty() {
            let parts = self
                .robots
                .values()
                .filter(|r| matches!(r.joints.first(), Some(JointRef::Multibody(_))))
                .flat_map(|r| r.bodies.iter().copied());
            for body in parts.chain(std::iter::once(self.ball_body)) {
                if let Some(rb) = self.bodies.get(body) {
                    before.push(PartForce {
                        body,
                        force: rb.user_force(),
                        torque: rb.user_torque(),
                    });
                }
            }
        }
        for p in pending.drain(..) {
            if let Some(rb) = self.bodies.get_mut(p.body) {
                rb.add_force(p.force, false);
                rb.add_torque(p.torque, false);
            }
        }
    }

    /// Takes the step's forces off the parts again, leaving their
    /// external forces as they were before the step.
    pub(super) fn remove_step_forces(&mut self) {
        for b in self.step_forces.before.drain(..) {
            if let Some(rb) = self.bodies.get_mut(b.body) {
                rb.reset_forces(false);
                rb.reset_torques(false);
                rb.add_force(b.force, false);
                rb.add_torque(b.torque, false);
            }
        }
    }
}
