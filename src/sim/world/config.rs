//! The physics settings (the `physics:` section of the configuration),
//! every default documented with the reason for it.

use std::path::PathBuf;

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
    /// Field scene file (ground, goals, border walls, ball). Default
    /// `None`: the built-in `scenes/soccer.rsg`. A file given here is read
    /// with the other scene files of its directory (and below), laid over
    /// the built-in ones, so it may import the built-in `goal.rsg`. In a
    /// configuration file a relative path is taken from the file's
    /// directory.
    pub field_scene: Option<PathBuf>,
    /// Cycle length in seconds. Default 0.02. Not read from the file: the
    /// server sets it from the top-level `step`, so the cycle is
    /// configured once.
    #[serde(skip)]
    pub cycle_dt: f32,
    /// Rapier steps per cycle (each `cycle_dt / substeps` long). Default 1,
    /// as the reference.
    pub substeps: usize,
    /// Rapier solver iterations (TGS sub-steps) per rapier step. Default 1:
    /// each costs one dense multibody update per robot, the bulk of the
    /// physics time.
    pub solver_iterations: usize,
    /// Internal PGS iterations per solver iteration. Default 100: a
    /// robot's motor rows and its contacts disturb each other through its
    /// mass matrix, and the sweeps are cheap next to the multibody update.
    /// With 50 a lying robot's hip yaw-pitch moves 8 % short of its
    /// command; with 100 a loaded knee travels within 2 % of its command
    /// per cycle (the reference: exactly).
    pub internal_pgs_iterations: usize,
    /// Gravity along −z, m/s². Default 9.81.
    pub gravity: f32,
    /// Joint kind for the robot's hinges. Default `Multibody` (impulse
    /// joints cannot make the 1e-6 kg·m² link bodies follow the motors).
    pub joint_kind: JointKind,
    /// Velocity-motor gain (rapier "damping" factor of the
    /// acceleration-based motor model): the motor rows are soft by
    /// 1 / (cycle × gain) of the joint's effective mass, so larger = closer
    /// to the reference's hard velocity constraint (1000 leaves a 5 %
    /// compliance: joints lag their commands). Default 1e5.
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
    /// Joint stops as the reference has them (`src/sim/world/stops.rs`):
    /// active for a step that starts at or beyond a limit, the motor then a
    /// plain torque (full into the stop, `joint_stop_fudge` of it away from
    /// it) and the joint free of rapier's hinge damping, a one-sided row
    /// with error reduction and bounce; inside the range the motor is not
    /// clamped at the limits. One step from the reference's states a foot
    /// resting on its stop and commanded away then swings as the
    /// reference's does (8.1° against its 8.3°, rapier's limits: the
    /// commanded 2.7°). Default false: replayed open-loop, the gaits come
    /// out no closer (one get-up more ends lying; whether the stop acts
    /// hinges on angles the recorded traces round to 0.01°), so rapier's
    /// limits stay (the motor's speed clamped so that the joint lands on
    /// the limit, a row only beyond it).
    pub reference_joint_stops: bool,
    /// Fraction of a stop's violation removed per step. Default 0.8, the
    /// reference's stop ERP.
    pub joint_stop_erp: f32,
    /// Restitution of a joint moving into its stop. Default 1, the
    /// reference's stop bounce.
    pub joint_stop_bounce: f32,
    /// Fraction of the maximum torque the motor has at an active stop when
    /// commanded away from it. Default 1e-5, the reference's fudge factor.
    pub joint_stop_fudge: f32,
    /// Apply the 0.7.3 rule: ignore a speed command while the joint is not
    /// strictly inside its limits. Default false (0.7.1 behaviour).
    pub ignore_commands_outside_range: bool,
    /// Friction coefficient of robot parts (combined with `Max`). The
    /// reference has unbounded friction. Default 1.0.
    pub robot_friction: f32,
    /// Friction coefficient of the ball (Coulomb, combined by average):
    /// against robots, goals and walls, and against the ground when
    /// `ball_ground_slip_damping` is 0. Default 1.0.
    pub ball_friction: f32,
    /// Restitution of the ball (tuned to the reference drop traces: the
    /// first rebound apex of the 1 m drop is then 0.447 m, reference
    /// 0.432 m; of the 0.5 m drop 0.246 m, reference 0.249 m). Default
    /// 0.75.
    pub ball_restitution: f32,
    /// Restitution of robot-ball contacts. Default 0.8, the reference's
    /// bounce for robot-ball pairs (the kick trace f_kick then sends the
    /// ball 1.36 m, reference 1.76 m).
    pub robot_ball_restitution: f32,
    /// How much deeper than rapier's own contact the ball rests in the
    /// ground, m. The reference keeps a 1 mm surface layer on every
    /// contact and its ball-ground row is soft (350 N/m per point), so its
    /// resting ball sinks 1.7 mm (centre at z 0.0403: docs/physics.md#ball-contacts,
    /// and 0.04028 in the recorded kick traces) where rapier's sinks
    /// 0.3 mm. The ball's ground contacts are solved as if this much
    /// further apart. Default 0.00145: the ball then rests at the
    /// reference's z 0.04027; its bounce and roll stay within 1 % of
    /// rapier's own (a test).
    pub ball_ground_layer: f32,
    /// Robot-ground friction as in the reference: no Coulomb limit, a
    /// viscous resistance to sliding of this many N·s/m per contact point
    /// whatever the normal force (the reference's slip 5e-3 gives 200).
    /// 0 = rapier's Coulomb friction with `robot_friction` instead.
    /// Default 200, the reference's: with contacts found at the step's
    /// start (`slip_contacts_at_step_start`), the joint stretch
    /// (`joint_stretch_erp`) and no speculative contacts
    /// (`prediction_distance`), it is nearest the reference both one step
    /// from its recorded states and replayed open-loop (docs/physics.md#ground-friction).
    pub ground_slip_damping: f32,
    /// Ball-ground friction as in the reference: no Coulomb limit, a
    /// viscous resistance to sliding of this many N·s/m at the ball's
    /// lowest point while it touches the ground (`src/sim/world/slip.rs`).
    /// The reference's ball-ground slip 0.3025 gives 3.306: a ball sliding
    /// without spin keeps 10 % of its slip after one step, so it rolls
    /// within two, also when it only grazes the ground or leaves it.
    /// 0 = rapier's Coulomb friction with `ball_friction` instead. Default
    /// 3.306.
    pub ball_ground_slip_damping: f32,
    /// Take the ground slip joints' contact points from the parts' shapes
    /// at the poses the step starts from, as the reference does, instead
    /// of rapier's contacts as last detected (at the start of the previous
    /// step). Default true.
    pub slip_contacts_at_step_start: bool,
    /// Restitution of goals and border walls. Default 0.8.
    pub static_restitution: f32,
    /// Linear drag of every robot part, N per m/s. Default 0.01, the
    /// reference's. Articulated robots (the default joint kind) get it
    /// only with `part_drag_as_forces`, as an external force before each
    /// step as the reference does; robots with impulse joints as rapier
    /// body damping.
    pub part_linear_drag: f32,
    /// Angular drag of every robot part, N·m per rad/s. Default 0.01, the
    /// reference's: exact for articulated robots with
    /// `part_drag_as_forces`; for impulse joints applied as damping =
    /// drag / mean inertia, capped at `max_part_angular_damping`.
    pub part_angular_drag: f32,
    /// Cap of the per-part angular damping coefficient of robots with
    /// impulse joints, 1/s. Default 2.0.
    pub max_part_angular_damping: f32,
    /// Apply the parts' drag to articulated robots as the reference does:
    /// external forces from each part's velocity before each step
    /// (`src/sim/world/drag.rs`). Rapier's body damping does not act on
    /// multibody links, so without this an articulated robot's parts have
    /// no drag at all. With it (and `root_angular_damping: 0`), a robot
    /// spinning in the air slows as the reference's parts' drag says (a
    /// test), and one step from the reference's states the walks' torso
    /// error no longer grows with their turning rate. It matters most in
    /// the air: the swinging limbs' small link bodies each carry the full
    /// −0.01·ω, which turns a jumping or beamed robot's torso as the
    /// reference's turns (the gaits' first rows: 11.6, 12.4, 13.3°/s
    /// against the reference's 11.5, 12.2, 13.0; without it 11.5, 8.4,
    /// 5.5). Default true: nudged open-loop replays come out nearest the
    /// reference's own physics with it (docs/physics.md#drag).
    pub part_drag_as_forces: bool,
    /// Damping of an articulated robot's free root rotation, N·m·s/rad
    /// (implicit, on the torso's angular velocity): rapier's default for
    /// every rotational degree of freedom. The reference has none; it
    /// brakes the whole robot's turning by 7 % per step in the air.
    /// Default 0, the reference's (the parts' drag is applied instead).
    pub root_angular_damping: f32,
    /// Linear drag of the ball, N per m/s. Default 0.01.
    pub ball_linear_drag: f32,
    /// Angular drag of the ball, N·m per rad/s. Default 5e-5.
    pub ball_angular_drag: f32,
    /// Apply the ball's drag as the reference does: an external force and
    /// torque from its velocities before each step (`src/sim/world/drag.rs`),
    /// instead of rapier body damping, which acts after the step's solve.
    /// With it a ball rolling from 2 m/s slows by the reference's factor
    /// 0.979 per step (damping: 0.980, its spin 5 % short of rolling) and a
    /// ball in flight moves as the reference's from the first step.
    /// Default true.
    pub ball_drag_as_forces: bool,
    /// Contact spring natural frequency (rapier), Hz. Default 30.
    pub contact_natural_frequency: f32,
    /// Contact spring damping ratio (rapier). Default 5.
    pub contact_damping_ratio: f32,
    /// Rapier's linear slop, m: the standoff of its continuous collision
    /// detection. (Rapier corrects contact penetration all the way to
    /// zero; the reference keeps a 1 mm surface layer.) Default 0.001.
    pub allowed_linear_error: f32,
    /// Distance within which rapier already hands the solver contact
    /// points that do not touch yet (speculative contacts), m. Default 0:
    /// as in the reference, whose collision detection before each step
    /// finds only shapes that already overlap, a foot reaching the ground
    /// during a step is first held at the next one (a later, harder
    /// touchdown). One step from the reference's recorded states this
    /// halves the walks' foot-load error against 0.002 (docs/physics.md#no-speculative-contacts).
    pub prediction_distance: f32,
    /// Solve contact friction in the biased (position-correcting) solver
    /// pass too, not only in the relaxation pass. Default false (rapier's
    /// default): with it, a ball rolling at 2 m/s keeps 11 % too much
    /// speed at 1 s against the reference roll trace (within 4 % without).
    pub friction_in_bias_pass: bool,
    /// Maximum speed at which penetrations are corrected, m/s (the
    /// reference has no cap; rapier's own default is 3). Default 10.
    pub max_corrective_velocity: f32,
    /// Let bodies sleep when idle. Default false.
    pub allow_sleep: bool,
    /// Rapier stabilization (relaxation, without position correction)
    /// iterations per solver iteration. Default 2 (rapier's own: 1).
    pub stabilization_iterations: usize,
    /// Rapier warm-start coefficient (0 = off, 1 = full). Default 1.
    pub warmstart_coefficient: f32,
    /// Reflected rotor inertia added to every hinge of a multibody robot
    /// (rapier's per-degree-of-freedom armature), kg·m². It makes the
    /// light link bodies heavier to the solver about their hinge only.
    /// Default 0 (the reference has none).
    pub joint_armature: f32,
    /// Viscous damping of every hinge of a multibody robot, N·m·s/rad,
    /// applied implicitly (it adds damping × step to the hinge's diagonal
    /// of the mass matrix). The reference's hinges have none, but rapier's
    /// iterative solver needs it: without it the light link bodies (5e-6
    /// kg·m²) leave the motor rows unconverged in 100 sweeps (held joints
    /// 0.8–3° off the reference's after 1 s, against 0.2°) and every gait
    /// replays further from the reference (docs/physics.md#motors). Default 0.1,
    /// rapier's own; a joint at an active reference stop has none.
    pub joint_damping: f32,
    /// Emulation of the reference's joints stretching under fast motion
    /// (`src/sim/world/stretch.rs`): the fraction of a joint's separation
    /// removed per step, as the reference's ERP. 0 = rigid joints.
    /// Default 0.2, the reference's global ERP.
    pub joint_stretch_erp: f32,
    /// Emulate also the reference's hinges turning off their axes under
    /// fast motion (`src/sim/world/stretch.rs`): each body of its
    /// first-order step turns about its own angular velocity, so a
    /// hinge's two bodies gain `−h²/2 · ω_p × ω_c` of relative rotation
    /// per step, `joint_stretch_erp` of which is removed per step. The
    /// parts below such a joint turn about its anchor (shape and reported
    /// pose). With it, the feet recomputed from the reference's recorded
    /// rotations lie 0.25–0.43 mm from its recorded feet instead of
    /// 0.6–0.7 mm, and one step from the reference's states every kind of
    /// gait is nearer (get-up joints 0.23° against 0.35° RMS), and its
    /// nudged open-loop replays come nearest the reference's own physics.
    /// Default false: replayed once from the recorded start, the walks
    /// leave the reference's path early (up to 17 cm off at 2 s) and one
    /// more get-up ends lying (docs/physics.md#joint-stretch).
    pub joint_misalignment: bool,
    /// Integrate an articulated robot's velocity-product (Coriolis and
    /// centripetal) forces explicitly, as the reference's engine does,
    /// instead of rapier's linearisation of them in the coming velocity
    /// (`src/sim/world/coriolis.rs`). One step from the reference's
    /// recorded states a robot in the air after a jump turns its torso
    /// within 0.1–0.3° of the reference's per step, against 1.0–1.2° with
    /// rapier's solve (a test), and replayed open-loop four get-ups of five
    /// end upright within 2 mm of the reference's height, against two.
    /// Default true; it costs about 4 % of the physics time.
    pub explicit_coriolis: bool,
    /// Lower bound applied to every principal moment of inertia of robot
    /// parts, kg·m². The link bodies (shoulders, elbows, hips, ankles) have
    /// 1.4e-6..5e-6; raising them conditions the iterative solver. Default
    /// 0 (exact model values).
    pub min_part_inertia: f32,
}

impl Default for PhysicsConfig {
    fn default() -> Self {
        PhysicsConfig {
            field_scene: None,
            cycle_dt: 0.02,
            substeps: 1,
            solver_iterations: 1,
            internal_pgs_iterations: 100,
            gravity: 9.81,
            joint_kind: JointKind::Multibody,
            motor_gain: 1.0e5,
            motor_anchor_erp: 0.5,
            motor_anchor_resync: 0.2,
            ignore_commands_outside_range: false,
            reference_joint_stops: false,
            joint_stop_erp: 0.8,
            joint_stop_bounce: 1.0,
            joint_stop_fudge: 1e-5,
            robot_friction: 1.0,
            ball_friction: 1.0,
            ball_restitution: 0.75,
            robot_ball_restitution: 0.8,
            ball_ground_layer: 0.00145,
            ground_slip_damping: 200.0,
            ball_ground_slip_damping: 3.306,
            slip_contacts_at_step_start: true,
            static_restitution: 0.8,
            part_linear_drag: 0.01,
            part_angular_drag: 0.01,
            max_part_angular_damping: 2.0,
            part_drag_as_forces: true,
            root_angular_damping: 0.0,
            ball_linear_drag: 0.01,
            ball_angular_drag: 5e-5,
            ball_drag_as_forces: true,
            contact_natural_frequency: 30.0,
            contact_damping_ratio: 5.0,
            allowed_linear_error: 0.001,
            prediction_distance: 0.0,
            friction_in_bias_pass: false,
            max_corrective_velocity: 10.0,
            allow_sleep: false,
            min_part_inertia: 0.0,
            joint_armature: 0.0,
            joint_damping: 0.1,
            joint_stretch_erp: 0.2,
            joint_misalignment: false,
            explicit_coriolis: true,
            stabilization_iterations: 2,
            warmstart_coefficient: 1.0,
        }
    }
}
