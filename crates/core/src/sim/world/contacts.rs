//! Contacts: the hooks that drop a robot's self-contacts and the contacts
//! of robots put inside each other, set the robot-ball restitution and
//! take Coulomb friction off robot-ground and ball-ground contacts (see
//! `slip.rs`),
//! and what is read back after a step (foot forces, ball touches, robots
//! touching each other).

use std::collections::BTreeSet;

use nalgebra::{Point3, Vector3};
use rapier3d::prelude::{
    ColliderHandle, ContactModificationContext, PairFilterContext, PhysicsHooks, SolverFlags,
    NEW_CONTACT_BIT,
};

use super::convert::{from_pose, from_vec};
use super::{
    robot_pair, tag_kind, tag_robot, RobotHandle, World, KIND_BALL, KIND_GROUND, KIND_PART,
};

/// Drops contacts between two parts of the same robot and between two
/// robots that were put inside each other (`World::ghosts`), sets the
/// restitution of robot-ball contacts and takes the Coulomb friction off
/// robot-ground and ball-ground contacts when slip joints replace it.
pub(super) struct ContactRules<'a> {
    pub(super) robot_ball_restitution: f32,
    /// Extra depth at which the ball rests in the ground (`ball_ground_layer`).
    pub(super) ball_ground_layer: f32,
    /// Penetration of a robot part into the ground left uncorrected
    /// (`robot_ground_layer`).
    pub(super) robot_ground_layer: f32,
    /// Robot-ground contacts have no Coulomb friction: the slip joints
    /// (`slip.rs`) hold them.
    pub(super) ground_slip: bool,
    /// Ball-ground contacts have no Coulomb friction: the ball's slip
    /// joint (`slip.rs`) holds them.
    pub(super) ball_ground_slip: bool,
    pub(super) ghosts: &'a BTreeSet<(RobotHandle, RobotHandle)>,
}

impl PhysicsHooks for ContactRules<'_> {
    fn modify_solver_contacts(&self, ctx: &mut ContactModificationContext) {
        let a = ctx
            .colliders
            .get(ctx.collider1)
            .map(|c| tag_kind(c.user_data));
        let b = ctx
            .colliders
            .get(ctx.collider2)
            .map(|c| tag_kind(c.user_data));
        let robot_ball = matches!(
            (a, b),
            (Some(KIND_PART), Some(KIND_BALL)) | (Some(KIND_BALL), Some(KIND_PART))
        );
        let ball_ground = matches!(
            (a, b),
            (Some(KIND_BALL), Some(KIND_GROUND)) | (Some(KIND_GROUND), Some(KIND_BALL))
        );
        let robot_ground = matches!(
            (a, b),
            (Some(KIND_PART), Some(KIND_GROUND)) | (Some(KIND_GROUND), Some(KIND_PART))
        );
        // The ball's centre, when the ball is the pair's second body (the
        // ground collider is created first, so the narrow phase pairs it
        // as the first).
        let ball_centre = if b == Some(KIND_BALL) {
            ctx.rigid_body2
                .and_then(|h| ctx.bodies.get(h))
                .map(|rb| rb.translation())
        } else {
            None
        };
        // Friction and restitution are per manifold in rapier.
        let Some(m) = ctx.rigid_mut() else {
            return;
        };
        if robot_ball {
            *m.restitution = self.robot_ball_restitution;
        } else if robot_ground {
            if self.ground_slip {
                *m.friction = 0.0;
            }
            // The reference's surface layer: the contact is solved as if
            // the part were this much less deep, so a penetration up to
            // the layer is not pushed back out (only the excess is), and
            // a part standing higher may sink to it within the step, as
            // the ball does in its own layer. A part resting in the layer
            // keeps touching when it lifts by less than the layer.
            if self.robot_ground_layer > 0.0 {
                for c in m.solver_contacts.iter_mut() {
                    c.dist += self.robot_ground_layer;
                }
            }
        } else if ball_ground {
            if self.ball_ground_slip {
                *m.friction = 0.0;
                // Without friction the contact needs no lever arm: its
                // point on the ball goes to the ball's centre (rapier keeps
                // the normal offset as the separation), so that the
                // solver's tracking of the separation within the step
                // follows the centre. A point on the surface turns with
                // the ball: a ball rolling at 2.5 m/s carries it 3 cm up
                // per step, which the solver takes for the ball lifting
                // off, and the ball sinks and hops.
                if let Some(centre) = ball_centre {
                    for c in m.solver_contacts.iter_mut() {
                        c.anchor2 = centre;
                    }
                }
            }
            for c in m.solver_contacts.iter_mut() {
                c.dist += self.ball_ground_layer;
            }
        }
    }

    fn filter_contact_pair(&self, ctx: &PairFilterContext) -> Option<SolverFlags> {
        let a = ctx.colliders.get(ctx.collider1).map(|c| c.user_data)?;
        let b = ctx.colliders.get(ctx.collider2).map(|c| c.user_data)?;
        if tag_kind(a) == KIND_PART && tag_kind(b) == KIND_PART {
            let (ra, rb) = (tag_robot(a), tag_robot(b));
            if ra == rb
                || self
                    .ghosts
                    .contains(&robot_pair(RobotHandle(ra), RobotHandle(rb)))
            {
                return None;
            }
        }
        Some(SolverFlags::COMPUTE_RIGID_IMPULSES)
    }
}

impl World {
    pub(super) fn robot_of(&self, c: ColliderHandle) -> Option<RobotHandle> {
        let u = self.colliders.get(c)?.user_data;
        (tag_kind(u) == KIND_PART).then(|| RobotHandle(tag_robot(u)))
    }

    /// Accumulates foot forces, ball touches and robot pairs after one
    /// rapier step.
    pub(super) fn collect_contacts(&mut self) {
        for pair in self.narrow_phase.contact_pairs_with(self.ball_collider) {
            if !pair.has_any_active_contact() {
                continue;
            }
            let other = if pair.collider1 == self.ball_collider {
                pair.collider2
            } else {
                pair.collider1
            };
            if let Some(h) = self.robot_of(other) {
                self.touches.insert(h);
            }
        }
        for pair in self.narrow_phase.contact_pairs() {
            if !pair.has_any_active_contact() {
                continue;
            }
            if let (Some(a), Some(b)) =
                (self.robot_of(pair.collider1), self.robot_of(pair.collider2))
            {
                if a != b {
                    self.robot_pairs.insert(robot_pair(a, b));
                }
            }
        }
        for r in self.robots.values_mut() {
            for (si, s) in r.model.foot_sensors.iter().enumerate() {
                let Some(Some(ch)) = r.colliders.get(s.part).copied() else {
                    continue;
                };
                let Some(foot) = self.bodies.get(r.bodies[s.part]) else {
                    continue;
                };
                let foot_pose = from_pose(foot.position());
                let acc = &mut r.foot_accum[si];
                for pair in self.narrow_phase.contact_pairs_with(ch) {
                    if !pair.has_any_active_contact() {
                        continue;
                    }
                    let foot_is_1 = pair.collider1 == ch;
                    // Contact points on the foot's own surface.
                    let Some(foot_collider) = self.colliders.get(ch) else {
                        continue;
                    };
                    let fc_pose = from_pose(foot_collider.position());
                    for m in pair.solver_manifolds() {
                        if m.data.solver_contacts.is_empty() {
                            continue;
                        }
                        acc.touched = true;
                        let normal = from_vec(m.data.normal);
                        let n = if foot_is_1 { -normal } else { normal };
                        // The points the solver saw (rapier keeps at most
                        // four of a manifold's points for it).
                        let solved = m.data.solver_contacts.iter().filter_map(|c| {
                            m.points.get((c.contact_id[0] & !NEW_CONTACT_BIT) as usize)
                        });
                        for pt in solved {
                            // The point's normal impulse over the whole
                            // step (every solver iteration's).
                            let imp = pt.data.impulse;
                            if imp <= 0.0 {
                                continue;
                            }
                            let f_world = n * imp;
                            let local = from_vec(if foot_is_1 { pt.local_p1 } else { pt.local_p2 });
                            let p_world = fc_pose * Point3::from(local);
                            let p_local = foot_pose.inverse_transform_point(&p_world);
                            acc.force += foot_pose.rotation.inverse_transform_vector(&f_world);
                            acc.weighted_point += p_local.coords * imp;
                            acc.weight += imp;
                        }
                    }
                }
            }
        }
    }

    /// Contact centre and force on a foot sensor during the last step, both
    /// in the foot's local frame (centre relative to the foot centre);
    /// `None` without contact (docs/protocol.md#frp). The force is the
    /// contacts' normal force plus, on the ground, the slip joint's
    /// tangential force (`slip.rs`).
    pub fn foot_force(
        &self,
        h: RobotHandle,
        sensor: usize,
    ) -> Option<(Vector3<f32>, Vector3<f32>)> {
        self.robot(h)?.foot_result.get(sensor).copied().flatten()
    }

    /// Robots in contact with the ball during the last step, sorted.
    pub fn ball_touches(&self) -> Vec<RobotHandle> {
        self.touches.iter().copied().collect()
    }

    /// Robot-robot contacts during the last step, each pair (smaller,
    /// larger), sorted.
    pub fn robot_contacts(&self) -> Vec<(RobotHandle, RobotHandle)> {
        self.robot_pairs.iter().copied().collect()
    }
}
