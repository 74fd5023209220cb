//! Contact slip on the ground. The reference's robot-ground contacts have
//! no Coulomb limit: their friction rows are soft velocity constraints
//! (tangential velocity = slip × force, a viscous 200 N·s/m per contact
//! point) whatever the normal force, so even a foot that is lifting off
//! resists sliding during the step (field-and-physics.md §6.4). Rapier's
//! friction is bounded by the normal impulse, so it is switched off for
//! these contacts and replaced by one joint per touching part: ground to
//! part at the centre of the part's contact points, with force-based
//! velocity motors of zero target on the two tangent axes (damping = the
//! per-point coefficient × points) and about the normal (damping = the
//! coefficient × Σ r² of the points). Rapier solves such a motor
//! implicitly, so the creep is exact and stable however stiff. The ground
//! is the plane z = 0: its normal is the joints' z axis.

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use rapier3d::prelude::{GenericJoint, JointAxesMask, JointAxis, MotorModel};

use super::convert::{from_pose, from_vec, to_pose};
use super::{tag_kind, World, KIND_GROUND};

impl World {
    /// Sets the slip joints for the coming step from the contacts of the
    /// last one (the reference likewise builds its contact joints from
    /// the collisions found at the start of the step).
    pub(super) fn update_slip_joints(&mut self) {
        let per_point = self.cfg.ground_slip_damping;
        if per_point <= 0.0 {
            return;
        }
        let ground = self.ground_body;
        for r in self.robots.values_mut() {
            for part in 0..r.bodies.len() {
                let mut points: Vec<Vector3<f32>> = Vec::new();
                if let Some(Some(ch)) = r.colliders.get(part).copied() {
                    for pair in self.narrow_phase.contact_pairs_with(ch) {
                        if !pair.has_any_active_contact() {
                            continue;
                        }
                        let ground_is_2 = pair.collider1 == ch;
                        let other = if ground_is_2 {
                            pair.collider2
                        } else {
                            pair.collider1
                        };
                        let is_ground = self
                            .colliders
                            .get(other)
                            .is_some_and(|c| tag_kind(c.user_data) == KIND_GROUND);
                        if !is_ground {
                            continue;
                        }
                        // Touching points only: rapier also hands the
                        // solver points within its prediction distance,
                        // where the reference has no contact yet. The
                        // ground has no body: its side of a solver contact
                        // is the world point where the part touched it.
                        for m in pair.solver_manifolds() {
                            points.extend(
                                m.data
                                    .solver_contacts
                                    .iter()
                                    .filter(|c| c.dist <= 0.0)
                                    .map(|c| {
                                        from_vec(if ground_is_2 { c.anchor2 } else { c.anchor1 })
                                    }),
                            );
                        }
                    }
                }
                let existing = r.slip[part];
                if points.is_empty() {
                    if let Some(jh) = existing {
                        if let Some(j) = self.impulse_joints.get_mut(jh, false) {
                            j.data.set_enabled(false);
                        }
                    }
                    continue;
                }
                let Some(body) = self.bodies.get(r.bodies[part]) else {
                    continue;
                };
                let n = points.len() as f32;
                let centre = points.iter().sum::<Vector3<f32>>() / n;
                let twist: f32 = points
                    .iter()
                    .map(|p| (p - centre).xy().norm_squared())
                    .sum();
                let frame1 =
                    Isometry3::from_parts(Translation3::from(centre), UnitQuaternion::identity());
                let frame2 = from_pose(body.position()).inverse() * frame1;
                let mut joint = GenericJoint::new(JointAxesMask::empty());
                joint
                    .set_local_frame1(to_pose(&frame1))
                    .set_local_frame2(to_pose(&frame2))
                    .set_contacts_enabled(true);
                for (axis, damping) in [
                    (JointAxis::LinX, per_point * n),
                    (JointAxis::LinY, per_point * n),
                    (JointAxis::AngZ, per_point * twist),
                ] {
                    joint.set_motor_model(axis, MotorModel::ForceBased);
                    joint.set_motor_velocity(axis, 0.0, damping);
                }
                match existing.and_then(|jh| self.impulse_joints.get_mut(jh, false)) {
                    Some(j) => j.data = joint,
                    None => {
                        r.slip[part] =
                            Some(
                                self.impulse_joints
                                    .insert(ground, r.bodies[part], joint, false),
                            );
                    }
                }
            }
        }
    }
}
