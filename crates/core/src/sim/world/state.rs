//! A robot's whole mechanical state set from outside: torso pose and
//! velocity, every joint angle and rate, and the angle each joint
//! commanded to stand still is held at.
//!
//! This is how a recorded state (a reference trace row) is put into the
//! world, so that one step of our physics can be compared with one step
//! of the reference's from the very same state (the fitting tools), and
//! how tests start a robot mid-motion.

use nalgebra::{Isometry3, Vector3};

use super::convert::{from_pose, to_pose, to_vec};
use super::{JointRef, RobotHandle, World};

/// The mechanical state of one robot. Angles and rates are in the
/// model's joint order; the velocities are in the field frame, the linear
/// one of the torso's centre of mass.
#[derive(Clone, Debug, PartialEq)]
pub struct RobotState {
    /// Pose of the torso body.
    pub torso: Isometry3<f32>,
    /// Linear velocity of the torso's centre of mass, m/s.
    pub linvel: Vector3<f32>,
    /// Angular velocity of the torso, rad/s.
    pub angvel: Vector3<f32>,
    /// Joint angles, rad.
    pub joint_angles: Vec<f32>,
    /// Joint rates, rad/s.
    pub joint_rates: Vec<f32>,
    /// Per joint: how far its child's copy of the anchor is from its
    /// parent's (field frame, m), the separation under fast motion of the
    /// reference's joints (`JointConfig::stretch_erp`). Empty = none.
    pub joint_separations: Vec<Vector3<f32>>,
    /// Per joint: the angle the motor holds it at while it is commanded to
    /// stand still (`JointConfig::anchor`), rad. Empty = every
    /// joint held where the state puts it, as after a teleport.
    pub held_angles: Vec<f32>,
}

/// Why a state could not be set.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StateError {
    /// The handle names no robot of this world.
    #[error("no such robot")]
    NoRobot,
    /// The robot's hinges are not one articulation.
    #[error("the robot's hinges are not one multibody rooted at the torso")]
    NotArticulated,
    /// The state's joint count differs from the robot's.
    #[error("the state has {got} joints, the robot {want}")]
    JointCount {
        /// Joints in the state.
        got: usize,
        /// Joints of the robot.
        want: usize,
    },
    /// NaN or an infinity in the state.
    #[error("the state has a non-finite value")]
    NotFinite,
}

impl World {
    /// Puts robot `h` into state `s`: the torso pose and velocity, the
    /// joint angles and rates (every other part follows by forward
    /// kinematics). Forces are cleared and the foot sensors forget their
    /// contacts, as after any move. Only for multibody robots (the
    /// default joint kind).
    pub fn set_robot_state(&mut self, h: RobotHandle, s: &RobotState) -> Result<(), StateError> {
        let finite = s.torso.translation.vector.iter().all(|x| x.is_finite())
            && s.torso.rotation.coords.iter().all(|x| x.is_finite())
            && s.linvel
                .iter()
                .chain(s.angvel.iter())
                .all(|x| x.is_finite())
            && s.joint_angles
                .iter()
                .chain(&s.joint_rates)
                .chain(&s.held_angles)
                .chain(s.joint_separations.iter().flat_map(|e| e.iter()))
                .all(|x| x.is_finite());
        if !finite {
            return Err(StateError::NotFinite);
        }
        let r = self.robots.get(&h).ok_or(StateError::NoRobot)?;
        let n = r.joints.len();
        // Angles and rates are per joint; the optional lists are empty or
        // per joint too. The first list of another length is reported.
        let optional = [s.joint_separations.len(), s.held_angles.len()];
        let wrong = [s.joint_angles.len(), s.joint_rates.len()]
            .into_iter()
            .chain(optional.into_iter().filter(|&len| len != 0))
            .find(|&len| len != n);
        if let Some(got) = wrong {
            return Err(StateError::JointCount { got, want: n });
        }
        let torso_body = r.bodies[r.model.torso];
        // Every hinge must be a link of the same multibody.
        let mut links = Vec::with_capacity(n);
        let mut handle = None;
        for j in &r.joints {
            let JointRef::Multibody(mh) = *j else {
                return Err(StateError::NotArticulated);
            };
            let (_, link) = self
                .multibody_joints
                .get(mh)
                .ok_or(StateError::NotArticulated)?;
            links.push(link);
            handle.get_or_insert(mh);
        }
        let mh = handle.ok_or(StateError::NotArticulated)?;
        for b in &r.bodies {
            if let Some(rb) = self.bodies.get_mut(*b) {
                rb.reset_forces(true);
                rb.reset_torques(true);
            }
        }
        if let Some(rb) = self.bodies.get_mut(torso_body) {
            rb.set_position(to_pose(&s.torso), true);
            rb.set_linvel(to_vec(&s.linvel), true);
            rb.set_angvel(to_vec(&s.angvel), true);
        }
        let (mb, _) = self
            .multibody_joints
            .get_mut(mh)
            .ok_or(StateError::NotArticulated)?;
        if mb.root().rigid_body_handle() != torso_body {
            return Err(StateError::NotArticulated);
        }
        let mut disp = vec![0.0; mb.ndofs()];
        let mut dofs = Vec::with_capacity(n);
        for (j, link) in links.iter().enumerate() {
            let l = mb.link(*link).ok_or(StateError::NotArticulated)?;
            // A revolute link's one coordinate is its angle about the
            // hinge axis (rapier's local x), zero in the model's zero pose.
            let dof = l.assembly_id();
            disp[dof] = s.joint_angles[j] - l.joint().coords()[3];
            dofs.push(dof);
        }
        mb.apply_displacements(&disp);
        {
            let mut v = mb.generalized_velocity_mut();
            v.fill(0.0);
            for i in 0..3 {
                v[i] = s.linvel[i];
                v[3 + i] = s.angvel[i];
            }
            for (j, dof) in dofs.iter().enumerate() {
                v[*dof] = s.joint_rates[j];
            }
        }
        mb.forward_kinematics(&self.bodies, true);
        mb.update_rigid_bodies(&mut self.bodies, false);
        if let Some(r) = self.robots.get_mut(&h) {
            for f in r.foot_result.iter_mut() {
                *f = None;
            }
            // A still joint is held where the state puts it, not where it
            // stood before: otherwise the motor would pull it back there.
            if s.held_angles.is_empty() {
                for ((held, angle), j) in
                    r.refs.iter_mut().zip(&s.joint_angles).zip(&r.model.joints)
                {
                    let (lo, hi) = j.limits_rad();
                    *held = angle.clamp(lo, hi);
                }
            } else {
                r.refs.copy_from_slice(&s.held_angles);
            }
        }
        self.stretch_reset(h);
        self.forget_step_motion(h);
        if !s.joint_separations.is_empty() {
            self.set_joint_stretch(h, &s.joint_separations);
        }
        Ok(())
    }

    /// The mechanical state of robot `h` (see [`RobotState`]), velocities
    /// from the multibody's generalized velocities (the rigid bodies'
    /// own velocities are those the last step started from).
    pub fn robot_state(&self, h: RobotHandle) -> Option<RobotState> {
        let r = self.robots.get(&h)?;
        let torso = self.bodies.get(r.bodies[r.model.torso])?;
        let mut rates = Vec::with_capacity(r.joints.len());
        for j in &r.joints {
            let JointRef::Multibody(mh) = *j else {
                return None;
            };
            let (mb, link) = self.multibody_joints.get(mh)?;
            rates.push(mb.generalized_velocity()[mb.link(link)?.assembly_id()]);
        }
        let (linvel, angvel) = self.root_velocity(h)?;
        Some(RobotState {
            torso: from_pose(torso.position()),
            linvel,
            angvel,
            joint_angles: (0..r.joints.len())
                .map(|j| self.joint_angle_rad(h, j).unwrap_or(0.0))
                .collect(),
            joint_rates: rates,
            joint_separations: r.stretch.separations().to_vec(),
            held_angles: r.refs.clone(),
        })
    }
}
