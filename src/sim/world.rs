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
//! * one cycle = `substeps` (2) rapier steps of `0.02 / substeps` s, each
//!   with `solver_iterations` (3) TGS sub-iterations of
//!   `internal_pgs_iterations` (6); speed targets are held over the cycle;
//! * hinges as multibody (reduced-coordinate) joints with the torso as
//!   root (default) or as impulse joints ([`JointKind`]); impulse joints
//!   cannot make the 1e-6 kg·m² link bodies follow their motors;
//! * motors: rapier velocity motors limited to the model's 10 N·m; a joint
//!   commanded to 0 is additionally held at the angle where it stopped
//!   (drift-free brake); plain hard limits (no stop bounce);
//! * no self-collision: a contact filter hook drops pairs of one robot;
//!   the same hook sets the robot-ball restitution;
//! * drag as rapier damping coefficients (linear exact, angular capped);
//! * friction: Coulomb with μ = 1 (the reference has unbounded friction
//!   with force-dependent slip);
//! * sleeping disabled for robots and ball.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};
use rapier3d::prelude::*;

use crate::sim::model::{collider_shape, collider_surface, RobotModel, ShapeDesc};
use crate::sim::scene::{SceneError, SceneLibrary, SceneTree};

mod relocate;

/// Which rapier joint kind carries the robot's hinges.
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum JointKind {
    /// Impulse joints: one constraint per hinge, solved iteratively with
    /// the contacts. Fast (linear in the number of bodies).
    Impulse,
    /// Multibody (reduced-coordinate) joints with the torso as root: exact
    /// hinges, but a dense solve per robot.
    Multibody,
}

/// Physics settings: the `physics:` section of `conf/server.ron`.
#[derive(serde::Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields, default)]
pub struct PhysicsConfig {
    /// Field scene file (ground, goals, border walls, ball). Default:
    /// `scenes/soccer.rsg` of this crate. Files it imports are resolved
    /// relative to its directory.
    pub field_scene: PathBuf,
    /// Cycle length in seconds. Default 0.02. Not read from the file: the
    /// server sets it from the top-level `step`, so the cycle is
    /// configured once.
    #[serde(skip)]
    pub cycle_dt: f32,
    /// Rapier steps per cycle (each `cycle_dt / substeps` long). Default 2
    /// (1 lets a standing multibody robot drift and tip over).
    pub substeps: usize,
    /// Rapier solver iterations (TGS sub-steps) per rapier step. Default 3
    /// (each costs one multibody mass-matrix update per robot; 2 lets a
    /// standing robot sink and tip over).
    pub solver_iterations: usize,
    /// Internal PGS iterations per solver iteration. Default 6: the motor
    /// rows of one robot disturb each other through its mass matrix, and
    /// with 2 the first cycle of a full-speed command moves 6.89° instead
    /// of 7.035° (4: 6.966°, 6: 6.995°); 1 lets the hip joints of a
    /// standing robot drift by ~0.15°/s. Cheap next to the multibody
    /// update (22 robots: the same CPU per cycle within noise).
    pub internal_pgs_iterations: usize,
    /// Gravity along −z, m/s². Default 9.81.
    pub gravity: f32,
    /// Joint kind for the robot's hinges. Default `Multibody` (impulse
    /// joints cannot make the 1e-6 kg·m² link bodies follow the motors).
    pub joint_kind: JointKind,
    /// Velocity-motor gain (rapier "damping" factor of the
    /// acceleration-based motor model; larger = closer to a hard velocity
    /// constraint). Default 1000.
    pub motor_gain: f32,
    /// Position anchoring of joints commanded to 0: the motor also pulls
    /// the joint back to the angle where it stopped, removing the slow
    /// drift of the iterative solver (0 = pure velocity brake; 1 = full
    /// correction in one step). A moving joint is a pure velocity motor.
    /// Default 0.5.
    pub motor_anchor_erp: f32,
    /// When a joint commanded to 0 is pushed further than this (rad) from
    /// its held angle — the motor was overpowered — the held angle is reset
    /// to the actual one, so the joint does not spring back (as in the
    /// reference). Smaller pushes are undone at up to the motor torque.
    /// Default 0.2 (a type-3 beam 4 cm into the ground rolls the ankles by
    /// up to ~10°; they must recover).
    pub motor_anchor_resync: f32,
    /// Apply the 0.7.3 rule: ignore a speed command while the joint is not
    /// strictly inside its limits. Default false (0.7.1 behaviour).
    pub ignore_commands_outside_range: bool,
    /// Friction coefficient of robot parts (combined with `Max`). The
    /// reference has unbounded friction. Default 1.0.
    pub robot_friction: f32,
    /// Friction coefficient of the ball. Default 1.0.
    pub ball_friction: f32,
    /// Restitution of the ball (tuned to the reference drop traces).
    /// Default 0.68.
    pub ball_restitution: f32,
    /// Restitution of robot-ball contacts (tuned to the reference kick
    /// trace). Default 0.3.
    pub robot_ball_restitution: f32,
    /// Restitution of goals and border walls. Default 0.8.
    pub static_restitution: f32,
    /// Linear drag of every robot part, N per m/s. Default 0.01.
    pub part_linear_drag: f32,
    /// Angular drag of every robot part, N·m per rad/s. Default 0.01
    /// (applied as damping = drag / mean inertia, capped at
    /// `max_part_angular_damping`).
    pub part_angular_drag: f32,
    /// Cap of the per-part angular damping coefficient, 1/s. Default 2.0.
    pub max_part_angular_damping: f32,
    /// Linear drag of the ball, N per m/s. Default 0.01.
    pub ball_linear_drag: f32,
    /// Angular drag of the ball, N·m per rad/s. Default 5e-5.
    pub ball_angular_drag: f32,
    /// Contact spring natural frequency (rapier), Hz. Default 30.
    pub contact_natural_frequency: f32,
    /// Contact spring damping ratio (rapier). Default 5.
    pub contact_damping_ratio: f32,
    /// Penetration allowed before correction, m (the reference's surface
    /// layer). Default 0.001.
    pub allowed_linear_error: f32,
    /// Maximum speed at which penetrations are corrected, m/s (rapier's
    /// default; the reference has no cap). Default 10.
    pub max_corrective_velocity: f32,
    /// Let bodies sleep when idle. Default false.
    pub allow_sleep: bool,
    /// Rapier stabilization (position-correction) iterations per solver
    /// iteration. Default 2 (rapier's default).
    pub stabilization_iterations: usize,
    /// Rapier warm-start coefficient (0 = off, 1 = full). Default 1.
    pub warmstart_coefficient: f32,
    /// Lower bound applied to every principal moment of inertia of robot
    /// parts, kg·m². The link bodies (shoulders, elbows, hips, ankles) have
    /// 1.4e-6..5e-6; raising them conditions the iterative solver. Default
    /// 0 (exact model values).
    pub min_part_inertia: f32,
}

impl Default for PhysicsConfig {
    fn default() -> Self {
        PhysicsConfig {
            field_scene: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/soccer.rsg")),
            cycle_dt: 0.02,
            substeps: 2,
            solver_iterations: 3,
            internal_pgs_iterations: 6,
            gravity: 9.81,
            joint_kind: JointKind::Multibody,
            motor_gain: 1000.0,
            motor_anchor_erp: 0.5,
            motor_anchor_resync: 0.2,
            ignore_commands_outside_range: false,
            robot_friction: 1.0,
            ball_friction: 1.0,
            ball_restitution: 0.68,
            robot_ball_restitution: 0.3,
            static_restitution: 0.8,
            part_linear_drag: 0.01,
            part_angular_drag: 0.01,
            max_part_angular_damping: 2.0,
            ball_linear_drag: 0.01,
            ball_angular_drag: 5e-5,
            contact_natural_frequency: 30.0,
            contact_damping_ratio: 5.0,
            allowed_linear_error: 0.001,
            max_corrective_velocity: 10.0,
            allow_sleep: false,
            min_part_inertia: 0.0,
            stabilization_iterations: 2,
            warmstart_coefficient: 1.0,
        }
    }
}

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

/// Drops contacts between two parts of the same robot and between two
/// robots that were put inside each other (`World::ghosts`), and sets the
/// restitution of robot-ball contacts.
struct ContactRules<'a> {
    robot_ball_restitution: f32,
    ghosts: &'a BTreeSet<(RobotHandle, RobotHandle)>,
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
        if robot_ball {
            for c in ctx.solver_contacts.iter_mut() {
                c.restitution = self.robot_ball_restitution;
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
        Some(SolverFlags::COMPUTE_IMPULSES)
    }
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
    refs: Vec<f32>,
    foot_accum: Vec<FootAccum>,
    foot_result: Vec<Option<(Vector3<f32>, Vector3<f32>)>>,
    /// Torso position after the last sub-step that left the robot sane.
    last_sane: Vector3<f32>,
}

/// Distance from the field centre beyond which a body is taken to have run
/// away (the field is 30 x 20 m).
const RUNAWAY_DISTANCE: f32 = 60.0;

/// Two robots whose parts overlap by more than this (m) when one is created
/// or placed do not collide with each other until they are apart.
const GHOST_PENETRATION: f32 = 0.005;

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
            if let Ok(Some(c)) = rapier3d::parry::query::contact(p1, *s1, p2, *s2, 0.0) {
                deepest = Some(deepest.unwrap_or(0.0).max(-c.dist));
            }
        }
    }
    deepest
}

/// Static geometry and the ball, read from the field scene.
#[derive(Debug, Clone)]
struct FieldDesc {
    ground: Option<(Vector3<f32>, f32)>,
    statics: Vec<(Isometry3<f32>, ShapeDesc, bool)>,
    ball: Option<BallDesc>,
}

#[derive(Debug, Clone, Copy)]
struct BallDesc {
    pos: Vector3<f32>,
    radius: f32,
    mass: f32,
}

/// The rapier world: field, ball and robots.
pub struct World {
    cfg: PhysicsConfig,
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
    ccd: CCDSolver,
    ball_body: RigidBodyHandle,
    ball_collider: ColliderHandle,
    robots: BTreeMap<RobotHandle, Robot>,
    next_robot: u32,
    touches: BTreeSet<RobotHandle>,
    robot_pairs: BTreeSet<(RobotHandle, RobotHandle)>,
    /// Robot pairs (lower handle first) created or placed inside each
    /// other: their contacts are dropped until no part of one overlaps a
    /// part of the other, instead of the solver flinging them apart.
    ghosts: BTreeSet<(RobotHandle, RobotHandle)>,
}

fn shape_of(s: ShapeDesc) -> SharedShape {
    match s {
        ShapeDesc::Box(l) => SharedShape::cuboid(l.x / 2.0, l.y / 2.0, l.z / 2.0),
        ShapeDesc::Sphere { radius } => SharedShape::ball(radius),
        ShapeDesc::Capsule { radius, length } => SharedShape::capsule_z(length / 2.0, radius),
    }
}

fn iso32(i: &Isometry3<f64>) -> Isometry3<f32> {
    nalgebra::convert(*i)
}

fn read_field(tree: &SceneTree, scene: &str) -> Result<FieldDesc, SceneError> {
    let mut field = FieldDesc {
        ground: None,
        statics: Vec::new(),
        ball: None,
    };
    for i in tree.depth_first() {
        let n = &tree.nodes[i];
        if n.class == "PlaneCollider" {
            let c = n
                .last_call("setParams")
                .ok_or_else(|| n.error("missing setParams"))?;
            c.expect_args(4)?;
            let normal = c.vec3(0)?;
            let len = normal.norm();
            if len < 1e-9 {
                return Err(c.error("plane normal has zero length"));
            }
            let d = c.num(3)?;
            field.ground = Some(((normal / len).map(|x| x as f32), (d / len) as f32));
            continue;
        }
        let Some(shape) = collider_shape(tree, i)? else {
            continue;
        };
        let tr = tree.enclosing_transform(i);
        let body_sibling = tr.and_then(|t| {
            tree.nodes[t]
                .children
                .iter()
                .copied()
                .find(|&c| tree.nodes[c].class == "RigidBody")
        });
        match body_sibling {
            Some(b) => {
                let bn = &tree.nodes[b];
                let c = bn.last_call("setSphereTotal").ok_or_else(|| {
                    bn.error("the field's dynamic body must be a sphere (setSphereTotal)")
                })?;
                c.expect_args(2)?;
                let radius = match shape {
                    ShapeDesc::Sphere { radius } => radius,
                    _ => return Err(n.error("the ball collider must be a SphereCollider")),
                };
                if field.ball.is_some() {
                    return Err(bn.error("a second dynamic body in the field scene"));
                }
                let mass = c.num(0)? as f32;
                if mass <= 0.0 {
                    return Err(c.error("mass must be positive"));
                }
                field.ball = Some(BallDesc {
                    pos: n.world.translation.vector.map(|x| x as f32),
                    radius,
                    mass,
                });
            }
            None => {
                let has_contact = n.children.iter().any(|&c| {
                    matches!(
                        tree.nodes[c].class.as_str(),
                        "ContactJointHandler" | "TouchPerceptorHandler"
                    )
                });
                let has_handler = !n.children.is_empty();
                // A collider with only a recorder handler senses, never touches.
                let sensor = has_handler && !has_contact;
                let _ = collider_surface(tree, i)?;
                field.statics.push((iso32(&n.world), shape, sensor));
            }
        }
    }
    if field.ball.is_none() {
        return Err(SceneError::Invalid {
            scene: scene.to_string(),
            message: "the field scene has no ball (a Ball with a RigidBody and a SphereCollider)"
                .into(),
        });
    }
    Ok(field)
}

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

/// The torso orientation for a heading in the field frame (0 = facing +x).
fn heading_rotation(heading_deg: f32) -> UnitQuaternion<f32> {
    UnitQuaternion::from_axis_angle(&Vector3::z_axis(), (heading_deg - 90.0).to_radians())
}

impl World {
    /// Builds the world from the configuration: ground, goals, border
    /// walls and ball from the field scene.
    pub fn new(cfg: &PhysicsConfig) -> Result<World, SceneError> {
        let dir = cfg
            .field_scene
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_else(|| PathBuf::from("."));
        let name = cfg
            .field_scene
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let lib = SceneLibrary::load(&dir)?;
        if !lib.contains(&name) {
            return Err(SceneError::UnknownScene(
                cfg.field_scene.display().to_string(),
            ));
        }
        let tree = lib.instantiate(&name, &[])?;
        let field = read_field(&tree, &name)?;

        let mut params = IntegrationParameters::default();
        let substeps = cfg.substeps.max(1);
        params.dt = cfg.cycle_dt / substeps as f32;
        params.num_solver_iterations = std::num::NonZeroUsize::new(cfg.solver_iterations.max(1))
            .unwrap_or(std::num::NonZeroUsize::MIN);
        params.num_internal_pgs_iterations = cfg.internal_pgs_iterations.max(1);
        params.contact_natural_frequency = cfg.contact_natural_frequency;
        params.contact_damping_ratio = cfg.contact_damping_ratio;
        params.normalized_allowed_linear_error = cfg.allowed_linear_error;
        params.num_internal_stabilization_iterations = cfg.stabilization_iterations;
        params.normalized_max_corrective_velocity = cfg.max_corrective_velocity;
        params.warmstart_coefficient = cfg.warmstart_coefficient;

        let mut bodies = RigidBodySet::new();
        let mut colliders = ColliderSet::new();
        if let Some((n, d)) = field.ground {
            let normal = nalgebra::Unit::new_normalize(n);
            colliders.insert(
                ColliderBuilder::halfspace(normal)
                    .translation(n * d)
                    .friction(cfg.robot_friction)
                    .restitution(cfg.ball_restitution)
                    .restitution_combine_rule(CoefficientCombineRule::Min)
                    .user_data(tag(KIND_GROUND, 0, 0))
                    .build(),
            );
        }
        for (pose, shape, sensor) in &field.statics {
            colliders.insert(
                ColliderBuilder::new(shape_of(*shape))
                    .position(*pose)
                    .sensor(*sensor)
                    .restitution(cfg.static_restitution)
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
                .translation(ball.pos)
                .additional_mass_properties(MassProperties::new(
                    Point3::origin(),
                    ball.mass,
                    Vector3::repeat(inertia),
                ))
                .linear_damping(cfg.ball_linear_drag / ball.mass)
                .angular_damping(cfg.ball_angular_drag / inertia)
                .can_sleep(cfg.allow_sleep)
                .ccd_enabled(true)
                .build(),
        );
        let ball_collider = colliders.insert_with_parent(
            ColliderBuilder::ball(ball.radius)
                .density(0.0)
                .friction(cfg.ball_friction)
                .restitution(cfg.ball_restitution)
                .restitution_combine_rule(CoefficientCombineRule::Min)
                .active_hooks(ActiveHooks::MODIFY_SOLVER_CONTACTS)
                .user_data(tag(KIND_BALL, 0, 0))
                .build(),
            ball_body,
            &mut bodies,
        );
        Ok(World {
            cfg: cfg.clone(),
            params,
            gravity: Vector3::new(0.0, 0.0, -cfg.gravity),
            pipeline: PhysicsPipeline::new(),
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
            robots: BTreeMap::new(),
            next_robot: 1,
            touches: BTreeSet::new(),
            robot_pairs: BTreeSet::new(),
            ghosts: BTreeSet::new(),
        })
    }

    /// The configuration the world was built with.
    pub fn config(&self) -> &PhysicsConfig {
        &self.cfg
    }

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
        let cfg = &self.cfg;
        let mut bodies = Vec::with_capacity(model.parts.len());
        let mut colliders = Vec::with_capacity(model.parts.len());
        for (pi, p) in model.parts.iter().enumerate() {
            let pos = Isometry3::from_parts(Translation3::from(torso_pos + rot * p.pos), rot);
            let mean_i = (p.inertia.x + p.inertia.y + p.inertia.z) / 3.0;
            let ang_damp = if mean_i > 0.0 {
                (cfg.part_angular_drag / mean_i).min(cfg.max_part_angular_damping)
            } else {
                0.0
            };
            let b = self.bodies.insert(
                RigidBodyBuilder::dynamic()
                    .position(pos)
                    .additional_mass_properties(MassProperties::new(
                        Point3::origin(),
                        p.mass,
                        p.inertia.map(|i| i.max(cfg.min_part_inertia)),
                    ))
                    .linear_damping(cfg.part_linear_drag / p.mass)
                    .angular_damping(ang_damp)
                    .can_sleep(cfg.allow_sleep)
                    .build(),
            );
            let c = p.collider.map(|s| {
                self.colliders.insert_with_parent(
                    ColliderBuilder::new(shape_of(s))
                        .density(0.0)
                        .friction(cfg.robot_friction)
                        .friction_combine_rule(CoefficientCombineRule::Max)
                        .restitution(0.0)
                        .restitution_combine_rule(CoefficientCombineRule::Min)
                        .active_hooks(ActiveHooks::FILTER_CONTACT_PAIRS)
                        .user_data(tag(KIND_PART, id, pi))
                        .build(),
                    b,
                    &mut self.bodies,
                )
            });
            bodies.push(b);
            colliders.push(c);
        }
        let mut joints = Vec::with_capacity(model.joints.len());
        for j in &model.joints {
            let joint = RevoluteJointBuilder::new(j.axis)
                .local_anchor1(Point3::from(j.anchor - model.parts[j.parent].pos))
                .local_anchor2(Point3::from(j.anchor - model.parts[j.child].pos))
                .limits([j.min_deg.to_radians(), j.max_deg.to_radians()])
                .motor_model(MotorModel::AccelerationBased)
                .motor_velocity(0.0, cfg.motor_gain)
                .motor_max_force(j.max_torque)
                .contacts_enabled(false)
                .build();
            let (p, c) = (bodies[j.parent], bodies[j.child]);
            let r = match cfg.joint_kind {
                JointKind::Impulse => Some(JointRef::Impulse(
                    self.impulse_joints.insert(p, c, joint, true),
                )),
                JointKind::Multibody => self
                    .multibody_joints
                    .insert(p, c, joint, true)
                    .map(JointRef::Multibody),
            };
            match r {
                Some(r) => joints.push(r),
                // A joint that closes a loop cannot be a multibody link; keep
                // it as an impulse joint.
                None => joints.push(JointRef::Impulse(
                    self.impulse_joints.insert(p, c, joint, true),
                )),
            }
        }
        let n_feet = model.foot_sensors.len();
        let n_joints = model.joints.len();
        self.robots.insert(
            handle,
            Robot {
                model,
                bodies,
                colliders,
                joints,
                targets: vec![0.0; n_joints],
                refs: vec![0.0; n_joints],
                foot_accum: vec![FootAccum::default(); n_feet],
                foot_result: vec![None; n_feet],
                last_sane: torso_pos,
            },
        );
        self.mark_ghosts(handle);
        handle
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
                    true,
                );
            }
        }
        self.touches.remove(&h);
        self.robot_pairs.retain(|(a, b)| *a != h && *b != h);
        self.ghosts.retain(|(a, b)| *a != h && *b != h);
    }

    /// World pose, shape and bounding box of each collider of a robot.
    fn robot_parts(&self, h: RobotHandle) -> Vec<(Isometry3<f32>, &dyn Shape, Aabb)> {
        let Some(r) = self.robots.get(&h) else {
            return Vec::new();
        };
        r.bodies
            .iter()
            .zip(&r.colliders)
            .filter_map(|(b, c)| {
                let rb = self.bodies.get(*b)?;
                let co = self.colliders.get((*c)?)?;
                let pose = rb.position()
                    * co.position_wrt_parent()
                        .copied()
                        .unwrap_or_else(Isometry3::identity);
                let shape = co.shape();
                Some((pose, shape, shape.compute_aabb(&pose)))
            })
            .collect()
    }

    /// The deepest overlap (m, positive) between a part of `a` and a part
    /// of `b`, or `None` when no parts touch.
    fn robots_overlap(&self, a: RobotHandle, b: RobotHandle) -> Option<f32> {
        parts_overlap(&self.robot_parts(a), &self.robot_parts(b))
    }

    /// Records every robot that `h` was just put inside of (parts overlapping
    /// by more than `GHOST_PENETRATION`): the two ignore each other until
    /// they are apart, instead of being flung off the field by the solver.
    fn mark_ghosts(&mut self, h: RobotHandle) {
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
    fn release_ghosts(&mut self) {
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

    /// Handles of all robots, sorted.
    pub fn robots(&self) -> Vec<RobotHandle> {
        self.robots.keys().copied().collect()
    }

    /// Sets a joint's speed target (rad/s): clamped to ±max speed, NaN and
    /// infinities ignored, held until the next command; wakes the robot.
    pub fn set_joint_speed(&mut self, h: RobotHandle, joint: usize, rad_per_s: f32) {
        if !rad_per_s.is_finite() {
            return;
        }
        let Some(angle) = self.joint_angle_rad(h, joint) else {
            return;
        };
        let ignore_outside = self.cfg.ignore_commands_outside_range;
        let Some(r) = self.robots.get_mut(&h) else {
            return;
        };
        let Some(j) = r.model.joints.get(joint) else {
            return;
        };
        if ignore_outside {
            let (lo, hi) = (j.min_deg.to_radians(), j.max_deg.to_radians());
            if !(angle > lo && angle < hi) {
                return;
            }
        }
        let v = rad_per_s.clamp(-j.max_speed, j.max_speed);
        // The motor itself is set at the start of the next step
        // (`update_motors`).
        r.targets[joint] = v;
        for b in &r.bodies {
            if let Some(rb) = self.bodies.get_mut(*b) {
                rb.wake_up(true);
            }
        }
    }

    /// The current speed target of a joint (rad/s).
    pub fn joint_target(&self, h: RobotHandle, joint: usize) -> f32 {
        self.robots
            .get(&h)
            .and_then(|r| r.targets.get(joint).copied())
            .unwrap_or(0.0)
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
            .map(|b| *b.position())
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
                    delta * rb.position()
                };
                rb.set_position(p, true);
                rb.set_linvel(Vector3::zeros(), true);
                rb.set_angvel(Vector3::zeros(), true);
                rb.reset_forces(true);
                rb.reset_torques(true);
            }
        }
        if let Some(JointRef::Multibody(mh)) = r.joints.first().copied() {
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
        self.mark_ghosts(h);
    }

    /// Puts back any robot (or the ball) that the solver flung off the
    /// field or into non-finite coordinates: the robot is placed upright at
    /// its last sane torso position with zero velocity, the ball at the
    /// centre spot. Logged, since it means the contact solver failed.
    fn recover_runaways(&mut self) {
        let insane = |t: &Vector3<f32>| {
            !t.iter().all(|x| x.is_finite())
                || t.x.abs() > RUNAWAY_DISTANCE
                || t.y.abs() > RUNAWAY_DISTANCE
                || t.z.abs() > RUNAWAY_DISTANCE
        };
        let mut bad = Vec::new();
        for (h, r) in &self.robots {
            let broken = r.bodies.iter().any(|b| {
                self.bodies
                    .get(*b)
                    .is_some_and(|rb| insane(rb.translation()))
            });
            if broken {
                bad.push((*h, r.last_sane));
            }
        }
        for (h, p) in bad {
            tracing::warn!(robot = ?h, pos = ?p, "robot flung away by the solver; rebuilt");
            self.rebuild_robot(h, p);
        }
        let torso_positions: Vec<(RobotHandle, Vector3<f32>)> = self
            .robots
            .iter()
            .filter_map(|(h, r)| {
                let t = *self.bodies.get(r.bodies[r.model.torso])?.translation();
                (!insane(&t)).then_some((*h, t))
            })
            .collect();
        for (h, t) in torso_positions {
            if let Some(r) = self.robots.get_mut(&h) {
                r.last_sane = t;
            }
        }
        if insane(&self.ball_position()) {
            tracing::warn!("ball flung away by the solver; put back on the centre spot");
            let r = self
                .colliders
                .get(self.ball_collider)
                .and_then(|c| c.shape().as_ball().map(|b| b.radius))
                .unwrap_or(0.042);
            self.set_ball_position(Vector3::new(0.0, 0.0, r));
            self.set_ball_velocity(Vector3::zeros());
        }
    }

    /// Replaces a robot's bodies, colliders and joints by fresh ones standing
    /// at `torso_pos` (zero joint angles), keeping its handle and its joint
    /// speed targets. Used when the solver has corrupted the robot: fresh
    /// colliders also leave no far-away proxies in the broad phase.
    fn rebuild_robot(&mut self, h: RobotHandle, torso_pos: Vector3<f32>) {
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

    /// Caps every speed before a solver step. Nothing on a soccer field
    /// moves faster than a few m/s; a body the solver flings away (robots
    /// started inside each other, say) would otherwise run off to
    /// thousands of kilometres within a few steps and make the broad phase
    /// allocate without end. The caps are far above any legitimate motion
    /// (a kicked ball reaches ~10 m/s, joints 8.8 rad/s).
    fn limit_velocities(&mut self) {
        const MAX_LINEAR: f32 = 40.0;
        const MAX_ANGULAR: f32 = 100.0;
        for r in self.robots.values() {
            if let Some(JointRef::Multibody(mh)) = r.joints.first() {
                if let Some((mb, _)) = self.multibody_joints.get_mut(*mh) {
                    for v in mb.generalized_velocity_mut().iter_mut() {
                        if !v.is_finite() {
                            *v = 0.0;
                        } else {
                            *v = v.clamp(-MAX_ANGULAR, MAX_ANGULAR);
                        }
                    }
                }
            }
        }
        for (_, b) in self.bodies.iter_mut() {
            if !b.is_dynamic() {
                continue;
            }
            let v = *b.linvel();
            let w = *b.angvel();
            let fix = |x: nalgebra::Vector3<f32>, max: f32| {
                if !x.iter().all(|c| c.is_finite()) {
                    Some(nalgebra::Vector3::zeros())
                } else if x.norm() > max {
                    Some(x * (max / x.norm()))
                } else {
                    None
                }
            };
            if let Some(v) = fix(v, MAX_LINEAR) {
                b.set_linvel(v, false);
            }
            if let Some(w) = fix(w, MAX_ANGULAR) {
                b.set_angvel(w, false);
            }
        }
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
        for _ in 0..self.cfg.substeps.max(1) {
            self.update_motors();
            self.limit_velocities();
            let hooks = ContactRules {
                robot_ball_restitution: self.cfg.robot_ball_restitution,
                ghosts: &self.ghosts,
            };
            self.pipeline.step(
                &self.gravity,
                &self.params,
                &mut self.islands,
                &mut self.broad_phase,
                &mut self.narrow_phase,
                &mut self.bodies,
                &mut self.colliders,
                &mut self.impulse_joints,
                &mut self.multibody_joints,
                &mut self.ccd,
                None,
                &hooks,
                &(),
            );
            self.recover_runaways();
            self.collect_contacts();
        }
        self.release_ghosts();
        let cycle = self.cfg.cycle_dt;
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

    /// Sets every motor for the coming rapier step: target velocity = the
    /// command, target angle = the reference angle, which then advances by
    /// command × step (see [`PhysicsConfig::motor_anchor_erp`]). The
    /// position term therefore only corrects drift.
    fn update_motors(&mut self) {
        let step_dt = self.params.dt;
        let erp = self.cfg.motor_anchor_erp.clamp(0.0, 1.0);
        let gain = self.cfg.motor_gain;
        // erp_inv_dt = K / (dt K + D)  =>  D = K dt (1/erp - 1).
        let (stiffness, damping) = if erp > 0.0 {
            let k = 1.0e6;
            (k, k * step_dt * (1.0 / erp - 1.0) + gain)
        } else {
            (0.0, gain)
        };
        let resync = self.cfg.motor_anchor_resync;
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
                let jd = &r.model.joints[j];
                let (lo, hi) = (jd.min_deg.to_radians(), jd.max_deg.to_radians());
                // A moving joint is a pure velocity motor (exactly the
                // commanded travel per step); a joint commanded to 0 is
                // held at its reference angle (drift-free brake). The
                // reference follows the joint while it moves or when the
                // motor was overpowered, so it never catches up.
                let mut reference = r.refs[j];
                if v != 0.0 || (actual - reference).abs() > resync {
                    reference = actual.clamp(lo, hi);
                }
                r.refs[j] = reference;
                let (stiffness, damping) = if v == 0.0 {
                    (stiffness, damping)
                } else {
                    (0.0, gain)
                };
                let data = match r.joints[j] {
                    JointRef::Impulse(jh) => self.impulse_joints.get_mut(jh).map(|ij| &mut ij.data),
                    JointRef::Multibody(mh) => self
                        .multibody_joints
                        .get_mut(mh)
                        .and_then(|(mb, link)| mb.link_mut(link))
                        .map(|l| &mut l.joint.data),
                };
                if let Some(data) = data {
                    data.set_motor(JointAxis::AngX, reference, v, stiffness, damping);
                }
            }
        }
    }

    fn robot_of(&self, c: ColliderHandle) -> Option<RobotHandle> {
        let u = self.colliders.get(c)?.user_data;
        (tag_kind(u) == KIND_PART).then(|| RobotHandle(tag_robot(u)))
    }

    /// Accumulates foot forces, ball touches and robot pairs after one
    /// rapier step.
    fn collect_contacts(&mut self) {
        for pair in self.narrow_phase.contact_pairs_with(self.ball_collider) {
            if !pair.has_any_active_contact {
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
            if !pair.has_any_active_contact {
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
                let foot_pose = *foot.position();
                let acc = &mut r.foot_accum[si];
                for pair in self.narrow_phase.contact_pairs_with(ch) {
                    if !pair.has_any_active_contact {
                        continue;
                    }
                    let foot_is_1 = pair.collider1 == ch;
                    // Contact points on the foot's own surface.
                    let Some(foot_collider) = self.colliders.get(ch) else {
                        continue;
                    };
                    let fc_pose = *foot_collider.position();
                    for m in &pair.manifolds {
                        if m.data.solver_contacts.is_empty() {
                            continue;
                        }
                        acc.touched = true;
                        let n = if foot_is_1 {
                            -m.data.normal
                        } else {
                            m.data.normal
                        };
                        for pt in &m.points {
                            let imp = pt.data.impulse;
                            if imp <= 0.0 {
                                continue;
                            }
                            let f_world = n * imp;
                            let p_world =
                                fc_pose * if foot_is_1 { pt.local_p1 } else { pt.local_p2 };
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

    fn joint_angle_rad(&self, h: RobotHandle, joint: usize) -> Option<f32> {
        let r = self.robot(h)?;
        let j = r.model.joints.get(joint)?;
        let p = self.bodies.get(r.bodies[j.parent])?;
        let c = self.bodies.get(r.bodies[j.child])?;
        Some(hinge_angle(p.rotation(), c.rotation(), &j.axis))
    }

    /// Joint angle in degrees (child relative to parent about the axis,
    /// right-hand rule; agent-protocol.md §2.7). 0 for an unknown joint.
    pub fn joint_angle_deg(&self, h: RobotHandle, joint: usize) -> f32 {
        self.joint_angle_rad(h, joint)
            .map(f32::to_degrees)
            .unwrap_or(0.0)
    }

    /// Pose of a part in the field frame (identity for an unknown part).
    pub fn part_pose(&self, h: RobotHandle, part: usize) -> Isometry3<f32> {
        self.robot(h)
            .and_then(|r| r.bodies.get(part))
            .and_then(|b| self.bodies.get(*b))
            .map(|b| *b.position())
            .unwrap_or_else(Isometry3::identity)
    }

    /// Linear velocity of a part in the field frame (m/s).
    pub fn part_linvel(&self, h: RobotHandle, part: usize) -> Vector3<f32> {
        self.robot(h)
            .and_then(|r| r.bodies.get(part))
            .and_then(|b| self.bodies.get(*b))
            .map(|b| *b.linvel())
            .unwrap_or_else(Vector3::zeros)
    }

    /// Torso linear velocity in the field frame (m/s).
    pub fn torso_linvel(&self, h: RobotHandle) -> Vector3<f32> {
        match self.robot(h) {
            Some(r) => self.part_linvel(h, r.model.torso),
            None => Vector3::zeros(),
        }
    }

    /// Torso angular velocity in the torso frame (rad/s).
    pub fn torso_angvel_local(&self, h: RobotHandle) -> Vector3<f32> {
        self.robot(h)
            .and_then(|r| self.bodies.get(r.bodies[r.model.torso]))
            .map(|b| b.rotation().inverse_transform_vector(b.angvel()))
            .unwrap_or_else(Vector3::zeros)
    }

    /// Contact centre and force on a foot sensor during the last step, both
    /// in the foot's local frame (centre relative to the foot centre);
    /// `None` without contact (agent-protocol.md §3.9). The force is the
    /// normal contact force (see the module notes).
    pub fn foot_force(
        &self,
        h: RobotHandle,
        sensor: usize,
    ) -> Option<(Vector3<f32>, Vector3<f32>)> {
        self.robot(h)?.foot_result.get(sensor).copied().flatten()
    }

    /// Ball centre in the field frame.
    pub fn ball_position(&self) -> Vector3<f32> {
        self.ball_pose().translation.vector
    }

    /// Ball pose in the field frame.
    pub fn ball_pose(&self) -> Isometry3<f32> {
        self.bodies
            .get(self.ball_body)
            .map(|b| *b.position())
            .unwrap_or_else(Isometry3::identity)
    }

    /// Ball linear velocity (m/s).
    pub fn ball_velocity(&self) -> Vector3<f32> {
        self.bodies
            .get(self.ball_body)
            .map(|b| *b.linvel())
            .unwrap_or_else(Vector3::zeros)
    }

    /// Moves the ball (keeps its velocity, wakes it). Non-finite input is
    /// ignored.
    pub fn set_ball_position(&mut self, p: Vector3<f32>) {
        if !p.iter().all(|x| x.is_finite()) {
            return;
        }
        if let Some(b) = self.bodies.get_mut(self.ball_body) {
            b.set_translation(p, true);
        }
    }

    /// Sets the ball's linear velocity and zeroes its spin. Non-finite
    /// input is ignored.
    pub fn set_ball_velocity(&mut self, v: Vector3<f32>) {
        if !v.iter().all(|x| x.is_finite()) {
            return;
        }
        if let Some(b) = self.bodies.get_mut(self.ball_body) {
            b.set_linvel(v, true);
            b.set_angvel(Vector3::zeros(), true);
        }
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
