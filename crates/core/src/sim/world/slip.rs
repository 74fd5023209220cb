//! Contact slip on the ground. The reference's robot-ground contacts have
//! no Coulomb limit: their friction rows are soft velocity constraints
//! (tangential velocity = slip × force, a viscous 200 N·s/m per contact
//! point) whatever the normal force, so even a foot that is lifting off
//! resists sliding during the step (docs/physics.md#ground-friction). Rapier's
//! friction is bounded by the normal impulse, so it is switched off for
//! these contacts and replaced by one joint per touching part: ground to
//! part at the centre of the part's contact points, with force-based
//! velocity motors of zero target on the two tangent axes (damping = the
//! per-point coefficient × points) and about the normal (damping = the
//! coefficient × Σ r² of the points). Rapier solves such a motor
//! implicitly, so the creep is exact and stable however stiff. The ground
//! is the plane z = 0: its normal is the joints' z axis.
//!
//! The ball's ground contact follows the same law with its own slip
//! (`contacts.ball_ground_slip`): one joint at the ball's lowest point,
//! where the reference puts its sphere-plane contact, whose lever arm is
//! the full radius however deep the ball sinks in. Its tangential motors
//! turn a sliding ball's slip into spin in a step or two, also while the
//! ball is leaving the ground (the reference's friction rows do not
//! depend on the normal force either), and never spin it past rolling.
//!
//! The contact points come from the parts' shapes at the poses the step
//! starts from, as the reference's collision detection runs just before
//! its step (rapier's contacts as last detected are a step late: a
//! lifting foot would keep resisting and a landing one slide freely for a
//! cycle).

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use rapier3d::prelude::{GenericJoint, JointAxesMask, JointAxis, MotorModel};

use super::convert::{from_pose, from_vec, to_pose};
use super::World;

impl World {
    /// Sets the slip joints for the coming step from the parts' ground
    /// contacts (see the module documentation for which ones).
    pub(super) fn update_slip_joints(&mut self) {
        let Some(per_point) = self.cfg.contacts.ground_slip() else {
            return;
        };
        let ground = self.ground_body;
        // One buffer for every part's points (at most a few each).
        let mut points: Vec<Vector3<f32>> = Vec::new();
        for r in self.robots.values_mut() {
            for part in 0..r.bodies.len() {
                points.clear();
                if let Some(Some(ch)) = r.colliders.get(part).copied() {
                    if let (Some(c), Some(b)) =
                        (self.colliders.get(ch), self.bodies.get(r.bodies[part]))
                    {
                        ground_points(c, b, &mut points);
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
                    // A part touching at one point has no twist resistance;
                    // a motor of zero damping would be a rigid lock (rapier
                    // takes a zero coefficient as an infinitely stiff row).
                    if damping <= 0.0 {
                        continue;
                    }
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

impl World {
    /// Sets the ball's slip joint for the coming step: while the ball
    /// touches the ground plane (its centre no higher than its radius, as
    /// the reference's collision test at the step's start), a joint from
    /// the ground to the ball's lowest point with force-based velocity
    /// motors of zero target along x and y; otherwise the joint is off.
    /// The ball's own contacts with the ground then carry no Coulomb
    /// friction (`contacts.rs`).
    pub(super) fn update_ball_slip_joint(&mut self) {
        let Some(damping) = self.cfg.contacts.ball_ground_slip() else {
            return;
        };
        let radius = self.ball_radius();
        let Some(ball) = self.bodies.get(self.ball_body) else {
            return;
        };
        let pose = from_pose(ball.position());
        let centre = pose.translation.vector;
        if centre.z > radius {
            if let Some(j) = self
                .ball_slip
                .and_then(|jh| self.impulse_joints.get_mut(jh, false))
            {
                j.data.set_enabled(false);
            }
            return;
        }
        let lowest = centre - Vector3::z() * radius;
        let frame1 = Isometry3::from_parts(Translation3::from(lowest), UnitQuaternion::identity());
        let frame2 = pose.inverse() * frame1;
        let mut joint = GenericJoint::new(JointAxesMask::empty());
        joint
            .set_local_frame1(to_pose(&frame1))
            .set_local_frame2(to_pose(&frame2))
            .set_contacts_enabled(true);
        for axis in [JointAxis::LinX, JointAxis::LinY] {
            joint.set_motor_model(axis, MotorModel::ForceBased);
            joint.set_motor_velocity(axis, 0.0, damping);
        }
        match self
            .ball_slip
            .and_then(|jh| self.impulse_joints.get_mut(jh, false))
        {
            Some(j) => j.data = joint,
            None => {
                self.ball_slip = Some(self.impulse_joints.insert(
                    self.ground_body,
                    self.ball_body,
                    joint,
                    false,
                ));
            }
        }
    }
}

impl World {
    /// Adds the slip joints' tangential forces of the step just taken to
    /// the foot sensors: the reference's foot sensors read the whole
    /// contact force, friction included (docs/physics.md#foot-sensors), and here the
    /// friction is the slip joint's, not the contacts'. The force acts at
    /// the joint's anchor (the centre of the part's contact points) and
    /// weighs into the sensor's contact centre by its magnitude, as a
    /// contact point's force does.
    pub(super) fn collect_slip_forces(&mut self) {
        if self.cfg.contacts.ground_slip().is_none() {
            return;
        }
        for r in self.robots.values_mut() {
            for (sensor, desc) in r.model.foot_sensors.iter().enumerate() {
                let Some(Some(jh)) = r.slip.get(desc.part).copied() else {
                    continue;
                };
                let (Some(joint), Some(foot)) = (
                    self.impulse_joints.get(jh),
                    self.bodies.get(r.bodies[desc.part]),
                ) else {
                    continue;
                };
                if !joint.data.is_enabled() {
                    continue;
                }
                // The joint's first frame is the ground's, axes the
                // field's: its motors' impulses along x and y are those
                // on the ground, the part gets the opposite.
                let motors = &joint.data.motors;
                let impulse = -Vector3::new(
                    motors[JointAxis::LinX as usize].impulse,
                    motors[JointAxis::LinY as usize].impulse,
                    0.0,
                );
                let magnitude = impulse.norm();
                if magnitude <= 0.0 {
                    continue;
                }
                let foot = from_pose(foot.position());
                let anchor = from_pose(&joint.data.local_frame1).translation.vector;
                let at = foot.inverse_transform_point(&anchor.into());
                let acc = &mut r.foot_accum[sensor];
                acc.force += foot.rotation.inverse_transform_vector(&impulse);
                acc.weighted_point += at.coords * magnitude;
                acc.weight += magnitude;
            }
        }
    }
}

/// The points where a robot part touches the ground plane z = 0 at its
/// current pose, as the reference's collision detection finds them just
/// before its step: the penetrating vertices of a box (at most the 4
/// deepest), the lowest point of a sphere or of each end of a capsule.
/// Each point is returned on the plane. The collider's pose is taken
/// from its body: rapier moves colliders to their bodies' poses only at
/// the start of its next step, so the collider's own pose is a step late.
pub(super) fn ground_points(
    c: &rapier3d::prelude::Collider,
    body: &rapier3d::prelude::RigidBody,
    out: &mut Vec<Vector3<f32>>,
) {
    let on_body = c.position_wrt_parent().copied().unwrap_or_default();
    let pose = from_pose(&(*body.position() * on_body));
    let shape = c.shape();
    if let Some(b) = shape.as_cuboid() {
        let h = from_vec(b.half_extents);
        let mut corners: Vec<Vector3<f32>> = (0..8)
            .map(|i| {
                let sx = if i & 1 == 0 { -h.x } else { h.x };
                let sy = if i & 2 == 0 { -h.y } else { h.y };
                let sz = if i & 4 == 0 { -h.z } else { h.z };
                pose * nalgebra::Point3::new(sx, sy, sz)
            })
            .map(|p| p.coords)
            .filter(|p| p.z <= 0.0)
            .collect();
        corners.sort_by(|a, b| a.z.total_cmp(&b.z));
        out.extend(corners.iter().take(4).map(|p| Vector3::new(p.x, p.y, 0.0)));
    } else if let Some(ball) = shape.as_ball() {
        let centre = pose.translation.vector;
        if centre.z - ball.radius <= 0.0 {
            out.push(Vector3::new(centre.x, centre.y, 0.0));
        }
    } else if let Some(cap) = shape.as_capsule() {
        for end in [cap.segment.a, cap.segment.b] {
            let p = pose * nalgebra::Point3::from(from_vec(end));
            if p.z - cap.radius <= 0.0 {
                out.push(Vector3::new(p.x, p.y, 0.0));
            }
        }
    }
}
