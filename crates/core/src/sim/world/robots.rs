//! Robots entering, leaving and being moved: creation from a model,
//! removal, rigid placement (beam, trainer, referee), rebuilding a robot
//! the solver corrupted, and the ghost pairs of robots put inside each
//! other.

use std::sync::Arc;

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use rapier3d::prelude::{
    Aabb, ActiveHooks, BoundingVolume, CoefficientCombineRule, ColliderBuilder, ColliderHandle,
    MassProperties, MotorModel, RevoluteJointBuilder, RigidBodyBuilder, RigidBodyHandle, Shape,
};

use super::convert::{from_pose, to_pose, to_vec};
use super::field::shape_of;
use super::{robot_pair, tag, FootAccum, JointRef, Robot, RobotHandle, World, KIND_PART};
use crate::sim::model::RobotModel;

/// The torso orientation for a heading in the field frame (0 = facing +x).
pub(super) fn heading_rotation(heading_deg: f32) -> UnitQuaternion<f32> {
    UnitQuaternion::from_axis_angle(&Vector3::z_axis(), (heading_deg - 90.0).to_radians())
}

/// Two robots whose parts overlap by more than this (m) when one is created
/// or placed do not collide with each other until they are apart.
pub(super) const GHOST_PENETRATION: f32 = 0.005;

/// The deepest overlap (m, positive) between a part in `a` and a part in
/// `b` (world pose, shape, bounding box each), or `None` when none touch.
fn parts_overlap(
    a: &[(Isometry3<f32>, &dyn Shape, Aabb)],
    b: &[(Isometry3<f32>, &dyn Shape, Aabb)],
) -> Option<f32> {
    let mut deepest: Option<f32> = None;
    for (p1, s1, b1) in a {
        for (p2, s2, b2) in b {
            if !b1.intersects(b2) {
                continue;
            }
            if let Ok(Some(c)) =
                rapier3d::parry::query::contact(&to_pose(p1), *s1, &to_pose(p2), *s2, 0.0)
            {
                deepest = Some(deepest.unwrap_or(0.0).max(-c.dist));
            }
        }
    }
    deepest
}

impl World {
    /// Adds a robot in its zero pose with the torso centre at `torso_pos`
    /// and the given heading in the field frame (0 = facing +x; the model
    /// faces its local +y, so it is turned by heading − 90° about z).
    pub fn add_robot(
        &mut self,
        model: Arc<RobotModel>,
        torso_pos: Vector3<f32>,
        heading_deg: f32,
    ) -> RobotHandle {
        let id = self.next_robot;
        self.next_robot = self.next_robot.wrapping_add(1).max(1);
        let handle = RobotHandle(id);
        let rot = heading_rotation(if heading_deg.is_finite() {
            heading_deg
        } else {
            0.0
        });
        let (bodies, colliders) = self.insert_parts(id, &model, torso_pos, rot);
        let joints = self.insert_joints(&model, &bodies);
        self.set_joint_damping(&joints);
        let n_feet = model.foot_sensors.len();
        let n_joints = model.joints.len();
        let n_parts = model.parts.len();
        let stretch = super::stretch::Stretch::new(&model);
        self.robots.insert(
            handle,
            Robot {
                model,
                bodies,
                colliders,
                joints,
                targets: vec![0.0; n_joints],
                refs: vec![0.0; n_joints],
                applied: vec![0.0; n_joints],
                foot_accum: vec![FootAccum::default(); n_feet],
                foot_result: vec![None; n_feet],
                last_sane: torso_pos,
                slip: vec![None; n_parts],
                stretch,
                torso_at_step_start: None,
                step_motion: None,
            },
        );
        self.mark_ghosts(handle);
        handle
    }

    /// The model's parts as rigid bodies (with their colliders) in the
    /// zero pose, the torso centre at `torso_pos`, turned by `rot`.
    fn insert_parts(
        &mut self,
        id: u32,
        model: &RobotModel,
        torso_pos: Vector3<f32>,
        rot: UnitQuaternion<f32>,
    ) -> (Vec<RigidBodyHandle>, Vec<Option<ColliderHandle>>) {
        let cfg = &self.cfg;
        let mut bodies = Vec::with_capacity(model.parts.len());
        let mut colliders = Vec::with_capacity(model.parts.len());
        for (pi, p) in model.parts.iter().enumerate() {
            let pos = Isometry3::from_parts(Translation3::from(torso_pos + rot * p.pos), rot);
            // No body damping: rapier's does not act on the links of a
            // multibody; the parts' drag is applied as forces (`drag`).
            let b = self.bodies.insert(
                RigidBodyBuilder::dynamic()
                    .pose(to_pose(&pos))
                    .additional_mass_properties(MassProperties::new(
                        to_vec(&Vector3::zeros()),
                        p.mass,
                        to_vec(&p.inertia),
                    ))
                    .can_sleep(false)
                    .build(),
            );
            let c = p.collider.map(|s| {
                self.colliders.insert_with_parent(
                    ColliderBuilder::new(shape_of(s))
                        .density(0.0)
                        .friction(cfg.contacts.robot_friction)
                        .friction_combine_rule(CoefficientCombineRule::Max)
                        .restitution(0.0)
                        .restitution_combine_rule(CoefficientCombineRule::Min)
                        .active_hooks(
                            ActiveHooks::FILTER_CONTACT_PAIRS | ActiveHooks::MODIFY_SOLVER_CONTACTS,
                        )
                        .user_data(tag(KIND_PART, id, pi))
                        .build(),
                    b,
                    &mut self.bodies,
                )
            });
            bodies.push(b);
            colliders.push(c);
        }
        (bodies, colliders)
    }

    /// The model's hinges between `bodies`: multibody links, or impulse
    /// joints where a joint closes a loop.
    fn insert_joints(&mut self, model: &RobotModel, bodies: &[RigidBodyHandle]) -> Vec<JointRef> {
        let cfg = &self.cfg;
        let mut joints = Vec::with_capacity(model.joints.len());
        for j in &model.joints {
            let joint = RevoluteJointBuilder::new(to_vec(&j.axis))
                .local_anchor1(to_vec(&(j.anchor - model.parts[j.parent].pos)))
                .local_anchor2(to_vec(&(j.anchor - model.parts[j.child].pos)))
                .limits(j.limits_rad().into())
                .motor_model(MotorModel::AccelerationBased)
                .motor_velocity(0.0, cfg.joints.motor_gain)
                .motor_max_force(j.max_torque)
                .contacts_enabled(false)
                .build();
            let (p, c) = (bodies[j.parent], bodies[j.child]);
            match self
                .multibody_joints
                .insert(p, c, joint, true)
                .map(JointRef::Multibody)
            {
                Some(r) => joints.push(r),
                // A joint that closes a loop cannot be a multibody link; keep
                // it as an impulse joint.
                None => joints.push(JointRef::Impulse(
                    self.impulse_joints.insert(p, c, joint, true),
                )),
            }
        }
        joints
    }

    /// The multibody's damping: none on the free root's rotation, the
    /// configured one on each hinge.
    fn set_joint_damping(&mut self, joints: &[JointRef]) {
        let cfg = &self.cfg;
        // Rapier gives every rotational degree of freedom of a multibody a
        // damping of its own (0.1 N·m·s/rad, implicit): the hinges and the
        // free root's rotation, an external torque on the torso braking
        // the whole robot's turning. The reference has neither: the root's
        // is removed, the hinges' is a setting (`joints.damping`).
        if let Some(JointRef::Multibody(mh)) = joints.first() {
            if let Some((mb, _)) = self.multibody_joints.get_mut(*mh) {
                // A free root's degrees of freedom: three linear, then
                // three angular.
                let all = mb.root().joint().ndofs();
                let angular = all.min(3);
                mb.damping_mut().rows_mut(all - angular, angular).fill(0.0);
            }
        }
        for j in joints {
            let JointRef::Multibody(mh) = j else {
                continue;
            };
            if let Some((mb, link)) = self.multibody_joints.get_mut(*mh) {
                if let Some(dof) = mb.link(link).map(|l| l.assembly_id()) {
                    if let Some(d) = mb.damping_mut().get_mut(dof) {
                        *d = cfg.joints.damping;
                    }
                }
            }
        }
    }

    /// Removes a robot and everything attached to it.
    pub fn remove_robot(&mut self, h: RobotHandle) {
        if let Some(r) = self.robots.remove(&h) {
            // Dissolve the whole articulation first: removing the links of a
            // multibody one by one leaves stale body-to-multibody links in
            // rapier 0.22 and the next step panics in the solver.
            if let Some(first) = r.bodies.first() {
                self.multibody_joints
                    .remove_multibody_articulations(*first, true);
            }
            for b in r.bodies {
                self.bodies.remove(
                    b,
                    &mut self.islands,
                    &mut self.colliders,
                    &mut self.impulse_joints,
                    &mut self.multibody_joints,
                    &mut self.soft_bodies,
                    true,
                );
            }
        }
        self.touches.remove(&h);
        self.robot_pairs.retain(|(a, b)| *a != h && *b != h);
        self.ghosts.retain(|(a, b)| *a != h && *b != h);
    }

    /// World pose, shape and bounding box of each collider of a robot.
    pub(super) fn robot_parts(&self, h: RobotHandle) -> Vec<(Isometry3<f32>, &dyn Shape, Aabb)> {
        let Some(r) = self.robots.get(&h) else {
            return Vec::new();
        };
        r.bodies
            .iter()
            .zip(&r.colliders)
            .filter_map(|(b, c)| {
                let rb = self.bodies.get(*b)?;
                let co = self.colliders.get((*c)?)?;
                let pose = from_pose(rb.position())
                    * co.position_wrt_parent()
                        .map(from_pose)
                        .unwrap_or_else(Isometry3::identity);
                let shape = co.shape();
                Some((pose, shape, shape.compute_aabb(&to_pose(&pose))))
            })
            .collect()
    }

    /// Height of the lowest point of a robot's colliders in its current
    /// pose (m; negative when a part is below the ground), `None` for an
    /// unknown robot.
    pub fn robot_lowest_point(&self, h: RobotHandle) -> Option<f32> {
        self.robot_parts(h)
            .iter()
            .map(|(_, _, aabb)| aabb.mins.z)
            .reduce(f32::min)
    }

    /// The deepest overlap (m, positive) between a part of `a` and a part
    /// of `b`, or `None` when no parts touch.
    pub(super) fn robots_overlap(&self, a: RobotHandle, b: RobotHandle) -> Option<f32> {
        parts_overlap(&self.robot_parts(a), &self.robot_parts(b))
    }

    /// Records every robot that `h` was just put inside of (parts overlapping
    /// by more than `GHOST_PENETRATION`): the two ignore each other until
    /// they are apart, instead of being flung off the field by the solver.
    pub(super) fn mark_ghosts(&mut self, h: RobotHandle) {
        let mine = self.robot_parts(h);
        let mut found = Vec::new();
        for o in self.robots.keys().copied().filter(|o| *o != h) {
            if let Some(depth) = parts_overlap(&mine, &self.robot_parts(o)) {
                if depth > GHOST_PENETRATION {
                    tracing::debug!(
                        robot = h.0,
                        other = o.0,
                        depth,
                        "robot put inside another: no contact between them until they are apart"
                    );
                    found.push(robot_pair(h, o));
                }
            }
        }
        self.ghosts.extend(found);
    }

    /// Drops the ghost pairs whose robots no longer touch.
    pub(super) fn release_ghosts(&mut self) {
        if self.ghosts.is_empty() {
            return;
        }
        let pairs: Vec<_> = self.ghosts.iter().copied().collect();
        for (a, b) in pairs {
            if self.robots_overlap(a, b).is_none() {
                self.ghosts.remove(&(a, b));
            }
        }
    }

    /// Rigidly moves a robot: torso upright at `torso_pos` with the
    /// heading, every other part keeping its pose relative to the torso
    /// (joint angles kept), all velocities zeroed.
    pub fn place_robot(&mut self, h: RobotHandle, torso_pos: Vector3<f32>, heading_deg: f32) {
        let Some(r) = self.robots.get(&h) else {
            return;
        };
        let heading = if heading_deg.is_finite() {
            heading_deg
        } else {
            0.0
        };
        let torso_pos = if torso_pos.iter().all(|x| x.is_finite()) {
            torso_pos
        } else {
            return;
        };
        let Some(old_torso) = self
            .bodies
            .get(r.bodies[r.model.torso])
            .map(|b| from_pose(b.position()))
        else {
            return;
        };
        let new_torso =
            Isometry3::from_parts(Translation3::from(torso_pos), heading_rotation(heading));
        let delta = new_torso * old_torso.inverse();
        let torso_body = r.bodies[r.model.torso];
        for b in &r.bodies {
            if let Some(rb) = self.bodies.get_mut(*b) {
                // The torso gets the exact pose: composing with a pose far
                // away (a robot flung off by the solver) loses precision.
                let p = if *b == torso_body {
                    new_torso
                } else {
                    delta * from_pose(rb.position())
                };
                rb.set_position(to_pose(&p), true);
                rb.set_linvel(to_vec(&Vector3::zeros()), true);
                rb.set_angvel(to_vec(&Vector3::zeros()), true);
                rb.reset_forces(true);
                rb.reset_torques(true);
            }
        }
        self.settle_after_move(h);
    }

    /// After a robot's bodies were moved by hand: its articulation state
    /// follows the bodies with zero joint velocities, its foot sensors
    /// forget the old contacts, its joints lose their separations, and
    /// robots it now overlaps become ghosts.
    pub(super) fn settle_after_move(&mut self, h: RobotHandle) {
        let first = self.robots.get(&h).and_then(|r| r.joints.first().copied());
        if let Some(JointRef::Multibody(mh)) = first {
            if let Some((mb, _)) = self.multibody_joints.get_mut(mh) {
                mb.generalized_velocity_mut().fill(0.0);
                mb.forward_kinematics(&self.bodies, true);
                mb.update_rigid_bodies(&mut self.bodies, false);
            }
        }
        if let Some(r) = self.robots.get_mut(&h) {
            for f in r.foot_result.iter_mut() {
                *f = None;
            }
        }
        self.stretch_reset(h);
        self.forget_step_motion(h);
        self.mark_ghosts(h);
    }

    /// Replaces a robot's bodies, colliders and joints by fresh ones standing
    /// at `torso_pos` (zero joint angles), keeping its handle and its joint
    /// speed targets. Used when the solver has corrupted the robot: fresh
    /// colliders also leave no far-away proxies in the broad phase.
    pub(super) fn rebuild_robot(&mut self, h: RobotHandle, torso_pos: Vector3<f32>) {
        let Some((model, targets)) = self
            .robots
            .get(&h)
            .map(|r| (r.model.clone(), r.targets.clone()))
        else {
            return;
        };
        self.remove_robot(h);
        let next = self.next_robot;
        self.next_robot = h.0;
        let z = torso_pos.z.max(model.standing_height() + 0.005);
        let rebuilt = self.add_robot(model, Vector3::new(torso_pos.x, torso_pos.y, z), 0.0);
        self.next_robot = next;
        debug_assert_eq!(rebuilt, h);
        for (j, t) in targets.into_iter().enumerate() {
            self.set_joint_speed(h, j, t);
        }
    }
}
