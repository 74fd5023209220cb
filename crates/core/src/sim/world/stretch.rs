//! The reference's joints stretch under fast motion, and this emulates it.
//!
//! The reference keeps every body as a free body held to its neighbours
//! by constraint rows, and integrates positions with a first-order step:
//! a body moves along its velocity while it rotates about its centre.
//! Two bodies turning about a shared hinge anchor therefore end each step
//! with their copies of the anchor apart by the difference of their
//! centripetal terms, `h²/2 · (ω_c × (ω_c × r_c) − ω_p × (ω_p × r_p))`
//! (r: from each body's centre to the anchor), and the joint rows remove
//! only the fraction ERP = 0.2 of such an error per step. In a walk this
//! leaves the legs 4–6 mm longer than their joint angles say; recomputed
//! from the reference's recorded rotations, this recurrence reproduces
//! its recorded part positions to 0.6 mm (0.2 mm vertically).
//!
//! Our articulations are exact, so the separation is kept per joint as
//! state and applied to the parts' collision shapes (and their reported
//! poses): the feet reach the ground as early as the reference's do, and
//! a loaded leg stands as long.

use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};

use super::convert::{from_pose, from_vec, to_pose, to_vec};
use rapier3d::prelude::{ColliderSet, MultibodyJointSet, RigidBodySet};

use super::config::StretchMoves;
use super::slip::ground_points;
use super::{JointRef, Robot, RobotHandle, World};
use crate::sim::model::RobotModel;

/// Collider shifts smaller than this (m) are not applied.
const MIN_SHIFT: f32 = 1e-6;

/// Per robot: the joint separations and the part poses they act on.
#[derive(Clone, Debug, Default)]
pub(super) struct Stretch {
    /// Per joint: child anchor minus parent anchor, field frame (m).
    separation: Vec<Vector3<f32>>,
    /// Per part: its displacement from where its joint angles put it: the
    /// separations from the torso down to it, field frame (m).
    offset: Vec<Vector3<f32>>,
    /// Per part: the body pose the running step started from.
    start: Vec<Isometry3<f32>>,
    /// Per part: the body pose the last step ended with (kept to reuse
    /// its memory).
    end: Vec<Isometry3<f32>>,
    /// Per part: the joint that moves it (none for the torso).
    joint_of: Vec<Option<usize>>,
}

impl Stretch {
    pub(super) fn new(model: &RobotModel) -> Stretch {
        let parts = model.parts.len();
        Stretch {
            separation: vec![Vector3::zeros(); model.joints.len()],
            offset: vec![Vector3::zeros(); parts],
            start: Vec::with_capacity(parts),
            end: Vec::with_capacity(parts),
            joint_of: (0..parts)
                .map(|b| model.joints.iter().position(|j| j.child == b))
                .collect(),
        }
    }

    /// Per joint: the separation (see [`super::RobotState`]).
    #[cfg(feature = "fitting")]
    pub(super) fn separations(&self) -> &[Vector3<f32>] {
        &self.separation
    }

    /// The displacement of a part from where its joint angles put it.
    pub(super) fn offset(&self, part: usize) -> Vector3<f32> {
        self.offset
            .get(part)
            .copied()
            .unwrap_or_else(Vector3::zeros)
    }
}

/// Per part: the angular velocity that turns it from its `start` pose to
/// its `end` pose in a step of length `h`.
fn step_rate<'a>(
    start: &'a [Isometry3<f32>],
    end: &'a [Isometry3<f32>],
    h: f32,
) -> impl Fn(usize) -> Vector3<f32> + 'a {
    move |part: usize| (end[part].rotation * start[part].rotation.inverse()).scaled_axis() / h
}

/// The separation each joint of a robot gains in one first-order step of
/// length `h` that took its parts from the poses `start` to `end` (one per
/// part, bodies' centres), in the model's joint order: the difference of
/// the child's and the parent's centripetal terms at the anchor,
/// `h²/2 · (ω_c × (ω_c × r_c) − ω_p × (ω_p × r_p))`, with each part's
/// angular velocity taken from its rotation over the step.
pub fn joint_drift<'a>(
    model: &'a RobotModel,
    start: &'a [Isometry3<f32>],
    end: &'a [Isometry3<f32>],
    h: f32,
) -> impl Iterator<Item = Vector3<f32>> + 'a {
    let omega = step_rate(start, end, h);
    model.joints.iter().map(move |j| {
        let (c, p) = (&start[j.child], &start[j.parent]);
        let anchor = c * Point3::from(j.anchor - model.parts[j.child].pos);
        let rc = anchor.coords - c.translation.vector;
        let rp = anchor.coords - p.translation.vector;
        let (wc, wp) = (omega(j.child), omega(j.parent));
        0.5 * h * h * (wc.cross(&wc.cross(&rc)) - wp.cross(&wp.cross(&rp)))
    })
}

/// The poses of a robot's bodies (identity for a missing one).
fn body_poses<'a>(
    bodies: &'a RigidBodySet,
    robot: &'a Robot,
) -> impl Iterator<Item = Isometry3<f32>> + 'a {
    robot.bodies.iter().map(|b| {
        bodies
            .get(*b)
            .map(|b| from_pose(b.position()))
            .unwrap_or_else(Isometry3::identity)
    })
}

/// What stays in place when the separations move a robot's bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held {
    /// The parts touching the ground, or in the air the robot's centre
    /// of mass: the separations a step built up.
    Ground,
    /// The torso: separations set with a robot's pose, or removed.
    Torso,
}

/// Applies a robot's separations: to its bodies (each hinge's anchor on the
/// parent side moved by the joint's separation) or to its collision shapes.
fn apply(
    robot: &mut Robot,
    bodies: &mut RigidBodySet,
    colliders: &mut ColliderSet,
    multibodies: &mut MultibodyJointSet,
    (moves, held): (StretchMoves, Held),
) {
    match moves {
        StretchMoves::Bodies => apply_to_bodies(robot, bodies, colliders, multibodies, held),
        StretchMoves::Shapes => apply_to_shapes(robot, bodies, colliders),
    }
}

/// Moves every multibody hinge's anchor in its parent by the joint's
/// separation and places the robot's bodies by forward kinematics, so
/// that each part, with its mass and its shape, is where the separations
/// along its chain put it. The joint's unstretched anchor is the model's.
fn apply_to_bodies(
    robot: &mut Robot,
    bodies: &mut RigidBodySet,
    colliders: &ColliderSet,
    multibodies: &mut MultibodyJointSet,
    held: Held,
) {
    let model = &robot.model;
    let s = &robot.stretch;
    let mut root = None;
    for (k, (j, jr)) in model.joints.iter().zip(&robot.joints).enumerate() {
        let JointRef::Multibody(mh) = jr else {
            continue;
        };
        let Some(parent) = bodies.get(robot.bodies[j.parent]) else {
            continue;
        };
        let inv = from_pose(parent.position()).rotation.inverse();
        let anchor = j.anchor - model.parts[j.parent].pos + inv * s.separation[k];
        let Some((mb, link)) = multibodies.get_mut(*mh) else {
            continue;
        };
        if let Some(l) = mb.link_mut(link) {
            let now = from_vec(l.joint.data.local_frame1.translation);
            if (now - anchor).norm() >= MIN_SHIFT {
                l.joint.data.local_frame1.translation = to_vec(&anchor);
                root = Some(*mh);
            }
        }
    }
    let Some((mb, _)) = root.and_then(|mh| multibodies.get_mut(mh)) else {
        return;
    };
    // The reference's separations come from each body turning about its
    // own centre and from internal joint rows: they move no part that the
    // ground's contact rows hold, and never the robot's centre of mass.
    // Forward kinematics from the torso would move every part below a
    // stretched joint (a stance foot into the ground, or off it as the
    // stretch shrinks), so the whole robot is shifted back to keep the
    // parts touching the ground where they were (on average), or, in the
    // air, its centre of mass.
    if held == Held::Torso {
        mb.forward_kinematics(bodies, false);
        mb.update_rigid_bodies(bodies, true);
        return;
    }
    let mut points = Vec::new();
    let touching: Vec<usize> = (0..robot.bodies.len())
        .filter(|&p| {
            points.clear();
            if let (Some(c), Some(b)) = (
                robot
                    .colliders
                    .get(p)
                    .copied()
                    .flatten()
                    .and_then(|c| colliders.get(c)),
                bodies.get(robot.bodies[p]),
            ) {
                ground_points(c, b, &mut points);
            }
            !points.is_empty()
        })
        .collect();
    let held_at = |bodies: &RigidBodySet| {
        if touching.is_empty() {
            centre_of_mass(bodies, &robot.bodies)
        } else {
            touching
                .iter()
                .filter_map(|p| bodies.get(robot.bodies[*p]))
                .map(|b| from_vec(b.translation()))
                .sum::<Vector3<f32>>()
                / touching.len() as f32
        }
    };
    let before = held_at(bodies);
    mb.forward_kinematics(bodies, false);
    mb.update_rigid_bodies(bodies, true);
    let after = held_at(bodies);
    let shift = before - after;
    if shift.norm() < MIN_SHIFT {
        return;
    }
    let root_body = mb.root().rigid_body_handle();
    if let Some(b) = bodies.get_mut(root_body) {
        let mut pose = from_pose(b.position());
        pose.translation.vector += shift;
        b.set_position(to_pose(&pose), false);
    }
    mb.forward_kinematics(bodies, true);
    mb.update_rigid_bodies(bodies, true);
}

/// The centre of mass (field frame) of the bodies `parts`.
fn centre_of_mass(
    bodies: &RigidBodySet,
    parts: &[rapier3d::prelude::RigidBodyHandle],
) -> Vector3<f32> {
    let (mut sum, mut mass) = (Vector3::zeros(), 0.0);
    for b in parts.iter().filter_map(|h| bodies.get(*h)) {
        sum += from_vec(b.center_of_mass()) * b.mass();
        mass += b.mass();
    }
    if mass > 0.0 {
        sum / mass
    } else {
        sum
    }
}

/// Sums the separations along every part's chain and moves the part's
/// collision shape by that much.
fn apply_to_shapes(robot: &mut Robot, bodies: &RigidBodySet, colliders: &mut ColliderSet) {
    let s = &mut robot.stretch;
    let model = &robot.model;
    for part in 0..s.offset.len() {
        let mut shift = Vector3::zeros();
        let mut b = part;
        while let Some(k) = s.joint_of[b] {
            shift += s.separation[k];
            b = model.joints[k].parent;
        }
        s.offset[part] = shift;
    }
    for (part, c) in robot.colliders.iter().enumerate() {
        let (Some(c), Some(body)) = (
            c.and_then(|c| colliders.get_mut(c)),
            bodies.get(robot.bodies[part]),
        ) else {
            continue;
        };
        let inv = from_pose(body.position()).rotation.inverse();
        let local = inv * s.offset[part];
        // Moving a collider makes rapier recompute its body's mass
        // properties and rebuild the joint rows attached to it: skip the
        // shifts nothing could notice (a standing robot's).
        let applied = c
            .position_wrt_parent()
            .map(from_pose)
            .unwrap_or_else(Isometry3::identity);
        if (local - applied.translation.vector).norm() < MIN_SHIFT {
            continue;
        }
        c.set_position_wrt_parent(to_pose(&Isometry3::from_parts(
            Translation3::from(local),
            UnitQuaternion::identity(),
        )));
    }
}

impl World {
    /// Remembers every part's pose before the step.
    pub(super) fn stretch_before_step(&mut self) {
        if self.stretch_erp().is_none() {
            return;
        }
        for r in self.robots.values_mut() {
            let mut start = std::mem::take(&mut r.stretch.start);
            start.clear();
            start.extend(body_poses(&self.bodies, r));
            r.stretch.start = start;
        }
    }

    /// Advances every joint's separation by the step just taken and moves
    /// the parts' collision shapes by the sum along their chain.
    pub(super) fn stretch_after_step(&mut self) {
        let Some(erp) = self.stretch_erp() else {
            return;
        };
        let h = self.params.dt;
        for r in self.robots.values_mut() {
            if r.stretch.start.len() != r.bodies.len() {
                continue;
            }
            let mut end = std::mem::take(&mut r.stretch.end);
            end.clear();
            end.extend(body_poses(&self.bodies, r));
            let s = &mut r.stretch;
            for (e, d) in s
                .separation
                .iter_mut()
                .zip(joint_drift(&r.model, &s.start, &end, h))
            {
                *e = *e * (1.0 - erp) + d;
            }
            s.end = end;
            apply(
                r,
                &mut self.bodies,
                &mut self.colliders,
                &mut self.multibody_joints,
                (self.cfg.joints.stretch_moves, Held::Ground),
            );
        }
    }

    /// The joint stretch emulation's ERP, if it is on.
    fn stretch_erp(&self) -> Option<f32> {
        self.cfg.joints.stretch_erp.filter(|erp| *erp > 0.0)
    }

    /// Sets a robot's joint separations (one per joint, field frame; an
    /// empty list leaves them at zero).
    #[cfg(feature = "fitting")]
    pub(super) fn set_joint_stretch(&mut self, h: RobotHandle, separations: &[Vector3<f32>]) {
        let Some(r) = self.robots.get_mut(&h) else {
            return;
        };
        let n = r.stretch.separation.len();
        if separations.len() == n {
            r.stretch.separation.copy_from_slice(separations);
        }
        apply(
            r,
            &mut self.bodies,
            &mut self.colliders,
            &mut self.multibody_joints,
            (self.cfg.joints.stretch_moves, Held::Torso),
        );
    }

    /// Removes a robot's joint separations (after it was put somewhere by
    /// hand).
    pub(super) fn stretch_reset(&mut self, h: RobotHandle) {
        let Some(r) = self.robots.get_mut(&h) else {
            return;
        };
        let s = &mut r.stretch;
        if s.separation.iter().all(|e| *e == Vector3::zeros()) {
            return;
        }
        s.separation.fill(Vector3::zeros());
        apply(
            r,
            &mut self.bodies,
            &mut self.colliders,
            &mut self.multibody_joints,
            (self.cfg.joints.stretch_moves, Held::Torso),
        );
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::Vector3;

    use super::{apply, Held};
    use crate::sim::model::ModelLibrary;
    use crate::sim::world::config::StretchMoves;
    use crate::sim::world::{PhysicsConfig, RobotHandle, World, DEFAULT_CYCLE_DT};

    /// A type-0 robot with its torso at `z`, stepped `steps` times in a
    /// world with gravity `g`, the stretch on the bodies.
    fn robot_at(z: f32, g: f32, steps: usize) -> (World, RobotHandle) {
        let mut cfg = PhysicsConfig {
            gravity: g,
            ..PhysicsConfig::default()
        };
        cfg.joints.stretch_erp = Some(0.2);
        cfg.joints.stretch_moves = StretchMoves::Bodies;
        let mut w = World::new(&cfg, DEFAULT_CYCLE_DT).expect("world");
        let lib = ModelLibrary::built_in().expect("models");
        let m = lib.resolve("rsg/agent/nao/nao.rsg", &[]).expect("model");
        let h = w.add_robot(m, Vector3::new(-5.0, 0.0, z), 0.0);
        for _ in 0..steps {
            w.step();
        }
        (w, h)
    }

    /// Opens a 4 mm separation, straight down, at both knees.
    fn stretch_the_knees(w: &mut World, h: RobotHandle, held: Held) {
        let r = w.robots.get_mut(&h).expect("the robot");
        for (k, j) in r.model.joints.iter().enumerate() {
            if ["lshank", "rshank"].contains(&&*r.model.parts[j.child].name) {
                r.stretch.separation[k] = Vector3::new(0.0, 0.0, -0.004);
            }
        }
        let moves = (StretchMoves::Bodies, held);
        apply(
            r,
            &mut w.bodies,
            &mut w.colliders,
            &mut w.multibody_joints,
            moves,
        );
    }

    fn part_z(w: &World, h: RobotHandle, name: &str) -> f32 {
        let m = w.robot_model(h);
        let p = m.parts.iter().position(|p| &*p.name == name).expect(name);
        w.part_pose(h, p).translation.z
    }

    fn centre_of_mass(w: &World, h: RobotHandle) -> Vector3<f32> {
        let m = w.robot_model(h);
        let total: f32 = m.parts.iter().map(|p| p.mass).sum();
        (0..m.parts.len())
            .map(|p| w.part_pose(h, p).translation.vector * m.parts[p].mass)
            .sum::<Vector3<f32>>()
            / total
    }

    #[test]
    fn separations_opening_in_a_standing_robots_legs_raise_its_torso_on_its_feet() {
        let (mut w, h) = robot_at(0.4, 9.81, 50);
        let (foot, torso) = (part_z(&w, h, "lfoot"), part_z(&w, h, "torso"));
        stretch_the_knees(&mut w, h, Held::Ground);
        let foot_moved = part_z(&w, h, "lfoot") - foot;
        let torso_moved = part_z(&w, h, "torso") - torso;
        assert!(
            foot_moved.abs() < 1e-4,
            "the foot on the ground moved {:.2} mm",
            foot_moved * 1000.0
        );
        assert!(
            (torso_moved - 0.004).abs() < 2e-4,
            "the torso rose {:.2} mm",
            torso_moved * 1000.0
        );
    }

    #[test]
    fn separations_opening_in_the_air_move_no_centre_of_mass() {
        let (mut w, h) = robot_at(2.0, 0.0, 1);
        let before = centre_of_mass(&w, h);
        let shank = part_z(&w, h, "lshank");
        stretch_the_knees(&mut w, h, Held::Ground);
        let moved = centre_of_mass(&w, h) - before;
        assert!(
            moved.norm() < 1e-5,
            "the centre of mass moved {:.3} mm",
            moved.norm() * 1000.0
        );
        // The legs below the knees did stretch relative to the rest.
        let opened = (part_z(&w, h, "torso") - part_z(&w, h, "lshank")) - (2.0 - shank);
        assert!(
            opened > 0.0035,
            "legs stretched by {:.2} mm",
            opened * 1000.0
        );
    }

    #[test]
    fn separations_set_with_a_robots_pose_keep_its_torso() {
        let (mut w, h) = robot_at(0.4, 9.81, 50);
        let (foot, torso) = (part_z(&w, h, "lfoot"), part_z(&w, h, "torso"));
        stretch_the_knees(&mut w, h, Held::Torso);
        assert!((part_z(&w, h, "torso") - torso).abs() < 1e-6);
        assert!((part_z(&w, h, "lfoot") - (foot - 0.004)).abs() < 2e-4);
    }
}
