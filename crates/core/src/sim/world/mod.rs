//! The physical world: rapier3d sets holding the field (ground, goals,
//! border walls), the ball and every robot, stepped one 20 ms cycle at a
//! time.
//!
//! This module owns the rapier state and answers questions about it
//! through small read-only helpers; it never decides anything about the
//! game (that is `rules`), never reads sockets and never uses a clock or a
//! random generator. Robots are kept in a `BTreeMap` so that every pass
//! over them runs in handle order (deterministic).
//!
//! Engine choices (see also [`PhysicsConfig`] for every default):
//! * one cycle = one rapier step of 0.02 s (as the reference's single
//!   `dWorldStep`) with one solver iteration of `internal_pgs_iterations`
//!   (100) PGS sweeps: the robot's dense multibody update runs once per
//!   cycle, and the many cheap sweeps bring the coupled motor and contact
//!   rows close to the exact solution the reference's direct solver finds
//!   (rapier warm-starts the contacts of multibodies from the previous
//!   step); speed targets are held over the cycle;
//! * hinges as multibody (reduced-coordinate) joints with the torso as
//!   root: iterative impulse joints cannot make the 1e-6 kg·m² link bodies
//!   follow their motors;
//! * motors: rapier velocity motors limited to the model's 10 N·m; a joint
//!   commanded to 0 is additionally held at the angle where it stopped
//!   (drift-free brake); plain hard limits (no stop bounce);
//! * no self-collision: a contact filter hook drops pairs of one robot;
//!   the same hook sets the robot-ball restitution;
//! * drag: the ball and the robots' parts get the reference's drag as
//!   external forces before each step (`drag`; rapier's body damping acts
//!   after the solve and not at all on the links of a multibody);
//! * velocity-product forces explicit as in the reference: forces before
//!   each step cancel rapier's linearisation of a robot's Coriolis and
//!   centripetal forces in the coming velocity (`coriolis`);
//! * robot-ground and ball-ground friction: the reference's slip law (no
//!   Coulomb limit, a viscous resistance per contact point) through slip
//!   joints (`slip`);
//! * optionally (off by default: a robot rising from a get-up then does
//!   not stop turning when upright), the reference's joints stretching
//!   under fast motion (its first-order integration): each hinge carries
//!   that separation and the parts' shapes and poses are shifted by it
//!   (`stretch`);
//! * sleeping disabled for robots and ball; the ball may spin faster
//!   than rapier's default cap of 45° per step.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use nalgebra::{Isometry3, Vector3};
use rapier3d::prelude::{
    ActiveHooks, CCDSolver, CoefficientCombineRule, ColliderBuilder, ColliderHandle, ColliderSet,
    DefaultBroadPhase, ImpulseJointHandle, ImpulseJointSet, IntegrationParameters, IslandManager,
    MassProperties, MultibodyJointHandle, MultibodyJointSet, NarrowPhase, PhysicsPipeline,
    RigidBodyBuilder, RigidBodyHandle, RigidBodySet, SharedShape, SoftBodySet, SpringCoefficients,
};

use crate::sim::model::RobotModel;
use crate::sim::scene::SceneError;

mod config;
mod contacts;
mod convert;
mod coriolis;
mod drag;
mod field;
mod guards;
mod hinge_damping;
mod motion;
mod motors;
#[cfg(feature = "fitting")]
mod push;
mod relocate;
mod robots;
mod slip;
#[cfg(feature = "fitting")]
mod state;
mod step_forces;
mod stops;
mod stretch;

pub use config::{
    ContactConfig, DragConfig, JointConfig, JointStops, MotorAnchor, PhysicsConfig, SolverConfig,
    StretchMoves,
};
use contacts::ContactRules;
use convert::{from_pose, from_rot, from_vec, to_pose, to_vec};
pub use field::FieldSize;
use field::{read_field, shape_of, BallDesc};
#[cfg(feature = "fitting")]
pub use state::{RobotState, StateError};
#[cfg(feature = "fitting")]
pub use stretch::joint_drift;

/// Identifies a robot in the [`World`]. Handles are never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RobotHandle(pub u32);

// Collider user data: kind in the low byte, part index in the next 16 bits,
// robot id in the high 32 bits.
const KIND_STATIC: u128 = 0;
const KIND_GROUND: u128 = 1;
const KIND_BALL: u128 = 2;
const KIND_PART: u128 = 3;
const KIND_SENSOR: u128 = 4;

fn tag(kind: u128, robot: u32, part: usize) -> u128 {
    kind | ((part as u128 & 0xffff) << 8) | ((robot as u128) << 32)
}

fn tag_kind(u: u128) -> u128 {
    u & 0xff
}

fn tag_robot(u: u128) -> u32 {
    (u >> 32) as u32
}

/// A pair of robots as the sets of pairs key it: lower handle first.
fn robot_pair(a: RobotHandle, b: RobotHandle) -> (RobotHandle, RobotHandle) {
    (a.min(b), a.max(b))
}

#[derive(Clone, Copy, Debug)]
enum JointRef {
    Impulse(ImpulseJointHandle),
    Multibody(MultibodyJointHandle),
}

#[derive(Clone, Copy, Debug, Default)]
struct FootAccum {
    touched: bool,
    force: Vector3<f32>,
    weighted_point: Vector3<f32>,
    weight: f32,
}

struct Robot {
    model: Arc<RobotModel>,
    bodies: Vec<RigidBodyHandle>,
    colliders: Vec<Option<ColliderHandle>>,
    joints: Vec<JointRef>,
    targets: Vec<f32>,
    /// Per joint: the angle a joint commanded to 0 is held at (rad).
    refs: Vec<f32>,
    /// Per joint: the speed target the motor had during the last step.
    applied: Vec<f32>,
    foot_accum: Vec<FootAccum>,
    foot_result: Vec<Option<(Vector3<f32>, Vector3<f32>)>>,
    /// Torso position after the last sub-step that left the robot sane.
    last_sane: Vector3<f32>,
    /// Per part: its ground slip joint, once it has touched the ground.
    slip: Vec<Option<ImpulseJointHandle>>,
    /// The joints' separations under fast motion (see `stretch`).
    stretch: stretch::Stretch,
    /// Torso pose as the step being taken started (see `motion`).
    torso_at_step_start: Option<Isometry3<f32>>,
    /// The torso's motion over the last step; `None` after a move by hand.
    step_motion: Option<motion::StepMotion>,
}

/// The cycle length of the reference (50 Hz), seconds, and the server's
/// default `step`: what a world built outside the server (tests, tools,
/// benches) steps by.
pub const DEFAULT_CYCLE_DT: f32 = 0.02;

/// The rapier world: field, ball and robots.
pub struct World {
    cfg: PhysicsConfig,
    /// Seconds of simulated time per [`World::step`], given at
    /// construction (the server's top-level `step`).
    cycle_dt: f32,
    params: IntegrationParameters,
    gravity: Vector3<f32>,
    pipeline: PhysicsPipeline,
    islands: IslandManager,
    broad_phase: DefaultBroadPhase,
    narrow_phase: NarrowPhase,
    bodies: RigidBodySet,
    colliders: ColliderSet,
    impulse_joints: ImpulseJointSet,
    multibody_joints: MultibodyJointSet,
    /// Always empty: rapier's step takes the set of soft bodies.
    soft_bodies: SoftBodySet,
    ccd: CCDSolver,
    ball_body: RigidBodyHandle,
    ball_collider: ColliderHandle,
    /// A fixed body at the origin: the ground end of the slip joints.
    ground_body: RigidBodyHandle,
    /// The ball's ground slip joint, once the ball has touched the ground.
    ball_slip: Option<ImpulseJointHandle>,
    robots: BTreeMap<RobotHandle, Robot>,
    next_robot: u32,
    touches: BTreeSet<RobotHandle>,
    robot_pairs: BTreeSet<(RobotHandle, RobotHandle)>,
    /// Robot pairs (lower handle first) created or placed inside each
    /// other: their contacts are dropped until no part of one overlaps a
    /// part of the other, instead of the solver flinging them apart.
    ghosts: BTreeSet<(RobotHandle, RobotHandle)>,
    /// Robots the run-away guard rebuilt during the last step.
    recovered: BTreeSet<RobotHandle>,
    /// The field's dimensions (the run-away guard rebuilds robots inside
    /// its lines).
    field: FieldSize,
    /// Forces for the coming step only: joint stop torques, the parts'
    /// drag, the velocity-product compensation (`step_forces.rs`).
    step_forces: step_forces::StepForces,
    /// Buffers of the velocity-product compensation (`coriolis.rs`).
    coriolis_scratch: coriolis::Scratch,
}

impl World {
    /// Builds the world from the configuration on the default rules' field
    /// ([`FieldSize::default`]), each [`step`](World::step) advancing it by
    /// `cycle_dt` seconds ([`DEFAULT_CYCLE_DT`]: the reference's 50 Hz).
    pub fn new(cfg: &PhysicsConfig, cycle_dt: f32) -> Result<World, SceneError> {
        World::with_field(cfg, cycle_dt, &FieldSize::default())
    }

    /// Builds the world from the configuration: ground, goals, border
    /// walls and ball from the field scene, with the dimensions of `size`;
    /// each [`step`](World::step) advances it by `cycle_dt` seconds.
    pub fn with_field(
        cfg: &PhysicsConfig,
        cycle_dt: f32,
        size: &FieldSize,
    ) -> Result<World, SceneError> {
        let (tree, name) = field::field_tree(cfg.field_scene.as_deref(), size)?;
        let field = read_field(&tree, &name)?;

        let params = integration_parameters(cfg, cycle_dt);

        let mut bodies = RigidBodySet::new();
        let mut colliders = ColliderSet::new();
        if let Some((n, d)) = field.ground {
            let normal = n.normalize();
            colliders.insert(
                ColliderBuilder::new(SharedShape::halfspace(to_vec(&normal)))
                    .translation(to_vec(&(n * d)))
                    .friction(cfg.contacts.robot_friction)
                    .restitution(cfg.contacts.ball_restitution)
                    .restitution_combine_rule(CoefficientCombineRule::Min)
                    .user_data(tag(KIND_GROUND, 0, 0))
                    .build(),
            );
        }
        for (pose, shape, sensor) in &field.statics {
            colliders.insert(
                ColliderBuilder::new(shape_of(*shape))
                    .position(to_pose(pose))
                    .sensor(*sensor)
                    .restitution(cfg.contacts.static_restitution)
                    .restitution_combine_rule(CoefficientCombineRule::Min)
                    .user_data(tag(if *sensor { KIND_SENSOR } else { KIND_STATIC }, 0, 0))
                    .build(),
            );
        }
        let ball = field.ball.unwrap_or(BallDesc {
            pos: Vector3::new(0.0, 0.0, 0.042),
            radius: 0.042,
            mass: 0.026,
        });
        let inertia = 0.4 * ball.mass * ball.radius * ball.radius;
        let ball_body = bodies.insert(
            RigidBodyBuilder::dynamic()
                .translation(to_vec(&ball.pos))
                .additional_mass_properties(MassProperties::new(
                    to_vec(&Vector3::zeros()),
                    ball.mass,
                    to_vec(&Vector3::repeat(inertia)),
                ))
                // The ball's drag is applied as forces before each step
                // (`drag`), not as rapier's damping after the solve.
                .can_sleep(false)
                .ccd_enabled(true)
                // Rapier caps a body's spin at 45° per step by default
                // (39 rad/s here), which a ball rolling faster than
                // 1.65 m/s exceeds; a sphere's spin does not matter to its
                // collision detection.
                .allow_fast_rotation(true)
                .build(),
        );
        let ball_collider = colliders.insert_with_parent(
            ColliderBuilder::ball(ball.radius)
                .density(0.0)
                .friction(cfg.contacts.ball_friction)
                .restitution(cfg.contacts.ball_restitution)
                .restitution_combine_rule(CoefficientCombineRule::Min)
                .active_hooks(ActiveHooks::MODIFY_SOLVER_CONTACTS)
                .user_data(tag(KIND_BALL, 0, 0))
                .build(),
            ball_body,
            &mut bodies,
        );
        let ground_body = bodies.insert(RigidBodyBuilder::fixed().build());
        Ok(World {
            cfg: cfg.clone(),
            cycle_dt,
            params,
            gravity: Vector3::new(0.0, 0.0, -cfg.gravity),
            pipeline: PhysicsPipeline::new(),
            soft_bodies: SoftBodySet::new(),
            islands: IslandManager::new(),
            broad_phase: DefaultBroadPhase::new(),
            narrow_phase: NarrowPhase::new(),
            bodies,
            colliders,
            impulse_joints: ImpulseJointSet::new(),
            multibody_joints: MultibodyJointSet::new(),
            ccd: CCDSolver::new(),
            ball_body,
            ball_collider,
            ground_body,
            ball_slip: None,
            robots: BTreeMap::new(),
            next_robot: 1,
            touches: BTreeSet::new(),
            robot_pairs: BTreeSet::new(),
            ghosts: BTreeSet::new(),
            recovered: BTreeSet::new(),
            field: *size,
            step_forces: step_forces::StepForces::default(),
            coriolis_scratch: coriolis::Scratch::default(),
        })
    }

    /// The configuration the world was built with.
    pub fn config(&self) -> &PhysicsConfig {
        &self.cfg
    }

    /// Handles of all robots, sorted.
    pub fn robots(&self) -> Vec<RobotHandle> {
        self.robots.keys().copied().collect()
    }

    /// Advances the world by one cycle (`substeps` rapier steps).
    pub fn step(&mut self) {
        for r in self.robots.values_mut() {
            for a in r.foot_accum.iter_mut() {
                *a = FootAccum::default();
            }
        }
        self.touches.clear();
        self.robot_pairs.clear();
        self.recovered.clear();
        self.begin_step_motion();
        for _ in 0..self.cfg.solver.substeps.max(1) {
            // Bodies moved by hand since the last step get the same guard.
            self.recover_runaways();
            self.update_motors();
            self.update_slip_joints();
            self.update_ball_slip_joint();
            self.limit_velocities();
            self.stretch_before_step();
            self.add_part_drag();
            self.add_ball_drag();
            self.add_explicit_coriolis(self.params.dt);
            let hooks = ContactRules {
                robot_ball_restitution: self.cfg.contacts.robot_ball_restitution,
                ball_ground_layer: self.cfg.contacts.ball_ground_layer,
                robot_ground_layer: self.cfg.contacts.robot_ground_layer,
                ground_slip: self.cfg.contacts.ground_slip().is_some(),
                ball_ground_slip: self.cfg.contacts.ball_ground_slip().is_some(),
                ghosts: &self.ghosts,
            };
            self.pipeline.step(
                to_vec(&self.gravity),
                &self.params,
                &mut self.islands,
                &mut self.broad_phase,
                &mut self.narrow_phase,
                &mut self.bodies,
                &mut self.colliders,
                &mut self.impulse_joints,
                &mut self.multibody_joints,
                &mut self.soft_bodies,
                &mut self.ccd,
                &hooks,
                &(),
            );
            self.remove_step_forces();
            self.stretch_after_step();
            self.recover_runaways();
            self.collect_contacts();
            self.collect_slip_forces();
        }
        self.release_ghosts();
        self.end_step_motion();
        let cycle = self.cycle_dt;
        for r in self.robots.values_mut() {
            for (a, out) in r.foot_accum.iter().zip(r.foot_result.iter_mut()) {
                *out = if a.touched {
                    let c = if a.weight > 0.0 {
                        a.weighted_point / a.weight
                    } else {
                        Vector3::zeros()
                    };
                    Some((c, a.force / cycle))
                } else {
                    None
                };
            }
        }
    }

    fn robot(&self, h: RobotHandle) -> Option<&Robot> {
        self.robots.get(&h)
    }

    /// The model of a robot.
    ///
    /// # Panics
    /// If the handle is not (or no longer) in the world: handles come from
    /// [`World::add_robot`] and must not be used after
    /// [`World::remove_robot`].
    pub fn robot_model(&self, h: RobotHandle) -> &Arc<RobotModel> {
        match self.robots.get(&h) {
            Some(r) => &r.model,
            None => panic!("robot_model: unknown robot handle {h:?}"),
        }
    }

    /// Whether a robot handle is in the world.
    pub fn contains_robot(&self, h: RobotHandle) -> bool {
        self.robots.contains_key(&h)
    }

    /// Pose of a part in the field frame (identity for an unknown part),
    /// with the joints' separations under fast motion (`stretch`).
    pub fn part_pose(&self, h: RobotHandle, part: usize) -> Isometry3<f32> {
        let Some(r) = self.robot(h) else {
            return Isometry3::identity();
        };
        let mut pose = r
            .bodies
            .get(part)
            .and_then(|b| self.bodies.get(*b))
            .map(|b| from_pose(b.position()))
            .unwrap_or_else(Isometry3::identity);
        pose.translation.vector += r.stretch.offset(part);
        pose
    }

    /// Linear velocity of a part in the field frame (m/s). For the links
    /// of an articulated robot this is the velocity the last step started
    /// from (see [`World::torso_linvel`] for the torso's current one).
    pub fn part_linvel(&self, h: RobotHandle, part: usize) -> Vector3<f32> {
        self.robot(h)
            .and_then(|r| r.bodies.get(part))
            .and_then(|b| self.bodies.get(*b))
            .map(|b| from_vec(b.linvel()))
            .unwrap_or_else(Vector3::zeros)
    }

    /// The torso's linear and angular velocity (field frame) at the end of
    /// the last step, for a robot whose hinges form one articulation: its
    /// root's generalized velocity. Rapier copies an articulation's
    /// velocities into the link bodies only when the next step starts, so
    /// the bodies' own velocities are one cycle old. The sensors read it
    /// only for a robot moved by hand since its last step (`motion.rs`).
    fn root_velocity(&self, h: RobotHandle) -> Option<(Vector3<f32>, Vector3<f32>)> {
        let r = self.robot(h)?;
        let JointRef::Multibody(mh) = *r.joints.first()? else {
            return None;
        };
        let (mb, _) = self.multibody_joints.get(mh)?;
        if mb.root().rigid_body_handle() != r.bodies[r.model.torso] || mb.ndofs() < 6 {
            return None;
        }
        let v = mb.generalized_velocity();
        Some((
            Vector3::new(v[0], v[1], v[2]),
            Vector3::new(v[3], v[4], v[5]),
        ))
    }

    /// Torso linear velocity in the field frame (m/s): the torso's motion
    /// over the last step (`motion.rs`), or after a move by hand the
    /// velocity it was given.
    pub fn torso_linvel(&self, h: RobotHandle) -> Vector3<f32> {
        if let Some(m) = self.robot(h).and_then(|r| r.step_motion) {
            return m.linvel;
        }
        match (self.root_velocity(h), self.robot(h)) {
            (Some((v, _)), _) => v,
            (None, Some(r)) => self.part_linvel(h, r.model.torso),
            (None, None) => Vector3::zeros(),
        }
    }

    /// Torso angular velocity in the torso frame (rad/s): the torso's
    /// turn over the last step (`motion.rs`), or after a move by hand the
    /// velocity it was given.
    pub fn torso_angvel_local(&self, h: RobotHandle) -> Vector3<f32> {
        if let Some(m) = self.robot(h).and_then(|r| r.step_motion) {
            return m.angvel_local;
        }
        let Some(b) = self
            .robot(h)
            .and_then(|r| self.bodies.get(r.bodies[r.model.torso]))
        else {
            return Vector3::zeros();
        };
        let w = match self.root_velocity(h) {
            Some((_, w)) => w,
            None => from_vec(b.angvel()),
        };
        from_rot(b.rotation()).inverse_transform_vector(&w)
    }

    /// Ball centre in the field frame.
    pub fn ball_position(&self) -> Vector3<f32> {
        self.ball_pose().translation.vector
    }

    /// Ball pose in the field frame.
    pub fn ball_pose(&self) -> Isometry3<f32> {
        self.bodies
            .get(self.ball_body)
            .map(|b| from_pose(b.position()))
            .unwrap_or_else(Isometry3::identity)
    }

    /// Ball linear velocity (m/s).
    pub fn ball_velocity(&self) -> Vector3<f32> {
        self.bodies
            .get(self.ball_body)
            .map(|b| from_vec(b.linvel()))
            .unwrap_or_else(Vector3::zeros)
    }

    /// Ball radius (m).
    fn ball_radius(&self) -> f32 {
        self.colliders
            .get(self.ball_collider)
            .and_then(|c| c.shape().as_ball().map(|b| b.radius))
            .unwrap_or(0.042)
    }

    /// Ball angular velocity (rad/s, field frame).
    pub fn ball_angular_velocity(&self) -> Vector3<f32> {
        self.bodies
            .get(self.ball_body)
            .map(|b| from_vec(b.angvel()))
            .unwrap_or_else(Vector3::zeros)
    }

    /// Moves the ball (keeps its velocity, wakes it). Non-finite input is
    /// ignored.
    pub fn set_ball_position(&mut self, p: Vector3<f32>) {
        if !p.iter().all(|x| x.is_finite()) {
            return;
        }
        if let Some(b) = self.bodies.get_mut(self.ball_body) {
            b.set_translation(to_vec(&p), true);
        }
    }

    /// Sets the ball's linear velocity and zeroes its spin. Non-finite
    /// input is ignored.
    pub fn set_ball_velocity(&mut self, v: Vector3<f32>) {
        if !v.iter().all(|x| x.is_finite()) {
            return;
        }
        if let Some(b) = self.bodies.get_mut(self.ball_body) {
            b.set_linvel(to_vec(&v), true);
            b.set_angvel(to_vec(&Vector3::zeros()), true);
        }
    }
}

/// Rapier's stepping and solver parameters from the configuration.
fn integration_parameters(cfg: &PhysicsConfig, cycle_dt: f32) -> IntegrationParameters {
    let mut params = IntegrationParameters::default();
    let solver = &cfg.solver;
    let substeps = solver.substeps.max(1);
    params.dt = cycle_dt / substeps as f32;
    params.num_solver_iterations = solver.iterations.max(1);
    params.num_internal_pgs_iterations = solver.internal_pgs_iterations.max(1);
    // One contact softness for every contact (rapier's default makes
    // contacts with fixed bodies twice as stiff).
    params.contact_softness =
        SpringCoefficients::new(cfg.contacts.natural_frequency, cfg.contacts.damping_ratio);
    params.static_contact_softness = params.contact_softness;
    params.normalized_allowed_linear_error = solver.allowed_linear_error;
    params.num_internal_stabilization_iterations = solver.stabilization_iterations;
    params.normalized_max_corrective_velocity = solver.max_corrective_velocity;
    params.warmstart_coefficient = solver.warmstart_coefficient;
    params.normalized_prediction_distance = solver.prediction_distance;
    // Every dynamic collider here has contact hooks, which rapier never
    // recycles, and no shape is composite (nothing to cluster): the
    // contacts read back are the narrow phase's manifolds.
    params.contact_recycling = false;
    params.contact_clustering = false;
    // Friction only in the relaxation pass (rapier's default): solved in
    // the position-correcting pass too, a ball rolling at 2 m/s keeps
    // 11 % too much speed at 1 s against the reference roll trace.
    params.friction_in_bias_pass = false;
    params
}
