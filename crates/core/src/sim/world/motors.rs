//! Joint motors: speed commands, the per-step motor settings (velocity
//! motor capped at the model's torque, a brake holding the angle where a
//! joint stopped) and the joint angle read from the bodies.

use nalgebra::{UnitQuaternion, Vector3};
use rapier3d::prelude::{GenericJoint, JointAxesMask, JointAxis, Multibody};

use super::config::JointStops;

use super::convert::{from_rot, to_vec};
use super::stops;
use super::{JointRef, RobotHandle, World};

/// Signed hinge angle (rad) of `child` relative to `parent` about `axis`
/// (given in the parent frame; zero pose has identity relative rotation).
fn hinge_angle(
    parent: &UnitQuaternion<f32>,
    child: &UnitQuaternion<f32>,
    axis: &Vector3<f32>,
) -> f32 {
    let q = parent.inverse() * child;
    let a = 2.0 * axis.dot(&q.imag()).atan2(q.w);
    // Wrap to (-pi, pi].
    if a > std::f32::consts::PI {
        a - 2.0 * std::f32::consts::PI
    } else if a <= -std::f32::consts::PI {
        a + 2.0 * std::f32::consts::PI
    } else {
        a
    }
}

/// Index of a revolute multibody joint's angle in its generalized
/// coordinates (three linear, then three angular; the hinge is `AngX`).
const HINGE_COORD: usize = 3;

/// Keeps a multibody hinge's limit row only in the steps that start with
/// the joint beyond a limit, and returns the motor's target speed.
///
/// Rapier builds a limit row for every limited axis in every step, but
/// gives it impulse bounds [0, 0] unless the joint already starts the step
/// beyond the limit: then the row can never push and costs a full row
/// solve (dense over the robot's 28 degrees of freedom) in each of the
/// solver's sweeps, about a sixth of the physics time. Without the row,
/// rapier would also stop clamping the motor's target speed so that the
/// joint lands on the limit; that clamp is done here with the same
/// numbers, so the step is bit-identical.
fn limit_row_or_clamp(data: &mut GenericJoint, angle: f32, speed: f32, inv_dt: f32) -> f32 {
    let limits = data.limits[HINGE_COORD];
    let (lo, hi) = (limits.min, limits.max);
    if angle < lo || hi < angle {
        data.limit_axes |= JointAxesMask::ANG_X;
        speed
    } else {
        data.limit_axes.remove(JointAxesMask::ANG_X);
        speed.clamp((lo - angle) * inv_dt, (hi - angle) * inv_dt)
    }
}

/// Sets a multibody hinge's motor, limit row and damping for a step with
/// the reference's stops, and returns the plain motor torque (N·m about
/// the hinge axis) the step needs while a stop is active.
///
/// `command` is (speed command, maximum torque); `hinge` is (step, hinge
/// damping); `motor` is (held angle, stiffness, damping) of the motor
/// inside the range.
fn reference_stop(
    mb: &mut Multibody,
    link: usize,
    (lo, hi): (f32, f32),
    (v, max_torque): (f32, f32),
    settings: &JointStops,
    (dt, hinge_damping): (f32, f32),
    (reference, stiffness, damping): (f32, f32, f32),
) -> Option<f32> {
    let (dof, angle) = mb
        .link(link)
        .map(|l| (l.assembly_id(), l.joint.coords()[HINGE_COORD]))?;
    let stop = stops::active_stop(angle, lo, hi);
    // The joint's rate only matters to an active stop.
    let rate = match stop {
        Some(_) => mb.generalized_velocity().get(dof).copied().unwrap_or(0.0),
        None => 0.0,
    };
    // A joint at an active stop is left free by its motor; the hinge
    // damping would then be the only thing holding it.
    if let Some(d) = mb.damping_mut().get_mut(dof) {
        *d = if stop.is_some() { 0.0 } else { hinge_damping };
    }
    let data = &mut mb.link_mut(link)?.joint.data;
    match stop {
        Some(stop) => {
            let torque = stops::motor_torque(stop, v, max_torque, settings.fudge);
            let limits = stops::stop_row_limits(
                stop,
                angle,
                (lo, hi),
                rate,
                settings,
                dt,
                data.softness.erp_inv_dt(dt),
            );
            data.limits[HINGE_COORD].min = limits[0];
            data.limits[HINGE_COORD].max = limits[1];
            data.limit_axes |= JointAxesMask::ANG_X;
            if torque.abs() < max_torque {
                // Commanded away from the stop: the fudge factor's torque
                // only, the motor row off.
                data.motor_axes.remove(JointAxesMask::ANG_X);
                Some(torque)
            } else {
                // Pushed into the stop with the full torque: against the
                // stop's row that is the motor held at its command (the
                // row takes the rest), which the iterative solver keeps
                // on the stop where a plain torque sinks it past it.
                data.set_motor(JointAxis::AngX, reference, v, stiffness, damping);
                None
            }
        }
        None => {
            data.limit_axes.remove(JointAxesMask::ANG_X);
            data.set_motor(JointAxis::AngX, reference, v, stiffness, damping);
            None
        }
    }
}

impl World {
    /// Sets a joint's speed target (rad/s): clamped to ±max speed, NaN and
    /// infinities ignored, held until the next command; wakes the robot.
    pub fn set_joint_speed(&mut self, h: RobotHandle, joint: usize, rad_per_s: f32) {
        if !rad_per_s.is_finite() {
            return;
        }
        // The angle is only needed for the 0.7.3 rule (and reading it costs
        // an arc tangent per command).
        let angle = if self.cfg.joints.ignore_commands_outside_range {
            let Some(angle) = self.joint_angle_rad(h, joint) else {
                return;
            };
            Some(angle)
        } else {
            None
        };
        let Some(r) = self.robots.get_mut(&h) else {
            return;
        };
        let Some(j) = r.model.joints.get(joint) else {
            return;
        };
        if let Some(angle) = angle {
            let (lo, hi) = j.limits_rad();
            if !(angle > lo && angle < hi) {
                return;
            }
        }
        let v = rad_per_s.clamp(-j.max_speed, j.max_speed);
        // The motor itself is set at the start of the next step
        // (`update_motors`).
        // Robots never sleep, so nothing needs waking (and touching a body
        // through the set marks it modified for rapier's next step).
        r.targets[joint] = v;
    }

    /// The current speed target of a joint (rad/s).
    pub fn joint_target(&self, h: RobotHandle, joint: usize) -> f32 {
        self.robots
            .get(&h)
            .and_then(|r| r.targets.get(joint).copied())
            .unwrap_or(0.0)
    }

    /// Sets every motor for the coming rapier step: target velocity = the
    /// command, target angle = the reference angle, which then advances by
    /// command × step (see [`JointConfig::anchor`]). The position term
    /// therefore only corrects drift.
    ///
    /// [`JointConfig::anchor`]: super::JointConfig::anchor
    pub(super) fn update_motors(&mut self) {
        let step_dt = self.params.dt;
        let anchor = self.cfg.joints.anchor;
        let erp = anchor.map_or(0.0, |a| a.erp.clamp(0.0, 1.0));
        let gain = self.cfg.joints.motor_gain;
        // Rapier's acceleration-based motor with stiffness K and damping D
        // corrects erp = dt K / (dt K + D) of the angle error per step and
        // is soft by cfm = 1 / (dt² K + dt D) of the joint's effective
        // mass. The moving motor (K = 0, D = gain) has cfm = 1 / (dt gain);
        // the brake takes D = K dt (1/erp - 1) for the anchoring and
        // K = gain erp / dt, so it is exactly as soft as the moving motor.
        let (stiffness, damping) = if erp > 0.0 {
            let k = gain * erp / step_dt;
            (k, k * step_dt * (1.0 / erp - 1.0))
        } else {
            (0.0, gain)
        };
        let resync = anchor.map_or(0.0, |a| a.resync);
        // See `limit_row_or_clamp`: only exact when the step's constraints
        // are built once from the positions it starts from.
        let prune_limits = self.params.num_solver_iterations == 1;
        let inv_dt = self.params.inv_dt();
        let reference_stops = self.cfg.joints.reference_stops;
        let joint_damping = self.cfg.joints.damping;
        let handles: Vec<RobotHandle> = self.robots.keys().copied().collect();
        for h in handles {
            let n = self.robots.get(&h).map(|r| r.joints.len()).unwrap_or(0);
            for j in 0..n {
                let Some(actual) = self.joint_angle_rad(h, j) else {
                    continue;
                };
                let Some(r) = self.robots.get_mut(&h) else {
                    continue;
                };
                let v = r.targets[j];
                let (lo, hi) = r.model.joints[j].limits_rad();
                // A moving joint is a pure velocity motor (exactly the
                // commanded travel per step). A joint commanded to 0 is a
                // brake held at the angle where it stopped: the angle at
                // the start of the first step without motion, so a joint
                // keeps all the travel of its last moving step. The held
                // angle follows the joint when the motor was overpowered,
                // so it never springs back from far away.
                let mut reference = r.refs[j];
                if v != 0.0 || r.applied[j] != 0.0 || (actual - reference).abs() > resync {
                    reference = actual.clamp(lo, hi);
                }
                r.applied[j] = v;
                r.refs[j] = reference;
                let (stiffness, damping) = if v == 0.0 {
                    (stiffness, damping)
                } else {
                    (0.0, gain)
                };
                match r.joints[j] {
                    JointRef::Impulse(jh) => {
                        if let Some(ij) = self.impulse_joints.get_mut(jh, false) {
                            ij.data
                                .set_motor(JointAxis::AngX, reference, v, stiffness, damping);
                        }
                    }
                    JointRef::Multibody(mh) => {
                        let Some((mb, link)) = self.multibody_joints.get_mut(mh) else {
                            continue;
                        };
                        if let Some(stops) = &reference_stops {
                            let jd = &r.model.joints[j];
                            let torque = reference_stop(
                                mb,
                                link,
                                (lo, hi),
                                (v, jd.max_torque),
                                stops,
                                (step_dt, joint_damping),
                                (reference, stiffness, damping),
                            );
                            let (parent, child) = (r.bodies[jd.parent], r.bodies[jd.child]);
                            let parent_rot =
                                self.bodies.get(parent).map(|b| from_rot(b.rotation()));
                            if let (Some(torque), Some(rot)) = (torque, parent_rot) {
                                let t = to_vec(&(rot * jd.axis.into_inner() * torque));
                                self.step_forces.push_hinge_torque(parent, child, t);
                            }
                            continue;
                        }
                        let Some(l) = mb.link_mut(link) else {
                            continue;
                        };
                        let angle = l.joint.coords()[HINGE_COORD];
                        let data = &mut l.joint.data;
                        let v = if prune_limits {
                            limit_row_or_clamp(data, angle, v, inv_dt)
                        } else {
                            v
                        };
                        data.set_motor(JointAxis::AngX, reference, v, stiffness, damping);
                    }
                }
            }
        }
        self.give_back_hinge_damping();
        // The stops' motor torques and the damping's given-back brake hold
        // for the coming step only.
        self.add_step_forces();
    }

    pub(super) fn joint_angle_rad(&self, h: RobotHandle, joint: usize) -> Option<f32> {
        let r = self.robot(h)?;
        let j = r.model.joints.get(joint)?;
        let p = self.bodies.get(r.bodies[j.parent])?;
        let c = self.bodies.get(r.bodies[j.child])?;
        Some(hinge_angle(
            &from_rot(p.rotation()),
            &from_rot(c.rotation()),
            &j.axis,
        ))
    }

    /// Joint angle in degrees (child relative to parent about the axis,
    /// right-hand rule; docs/protocol.md#hinge-joints). 0 for an unknown joint.
    pub fn joint_angle_deg(&self, h: RobotHandle, joint: usize) -> f32 {
        self.joint_angle_rad(h, joint)
            .map(f32::to_degrees)
            .unwrap_or(0.0)
    }
}
