//! The physics settings (the `physics:` section of the configuration),
//! every default documented with the reason for it.
//!
//! The section holds what the default physics uses and what a user may
//! choose, grouped by mechanism: `solver`, `joints`, `contacts`, `drag`.
//! One spelling for a mechanism that can be switched off: a mechanism
//! with a parameter is an `Option` of that parameter (`None` = off, e.g.
//! `contacts.ground_slip: None` for rapier's Coulomb friction), one
//! without a parameter is a `bool`. In a configuration file an option
//! takes its plain value (`ground_slip: 150.0`) or `None`.

use std::path::PathBuf;

/// Physics settings: the `physics:` section of `conf/server.ron`.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PhysicsConfig {
    /// Field scene file (ground, goals, border walls, ball). Default
    /// `None`: the built-in `scenes/soccer.rsg`. A file given here is read
    /// with the other scene files of its directory (and below), laid over
    /// the built-in ones, so it may import the built-in `goal.rsg`. In a
    /// configuration file a relative path is taken from the file's
    /// directory.
    pub field_scene: Option<PathBuf>,
    /// Gravity along −z, m/s². Default 9.81.
    pub gravity: f32,
    /// Rapier's stepping and solver.
    pub solver: SolverConfig,
    /// The robots' hinges and their motors.
    pub joints: JointConfig,
    /// Contacts: friction, restitution, the ground's slip.
    pub contacts: ContactConfig,
    /// Drag of the robots' parts and of the ball, applied as the
    /// reference does: external forces from the velocities before each
    /// step (`crates/core/src/sim/world/drag.rs`).
    pub drag: DragConfig,
}

impl Default for PhysicsConfig {
    fn default() -> Self {
        PhysicsConfig {
            field_scene: None,
            gravity: 9.81,
            solver: SolverConfig::default(),
            joints: JointConfig::default(),
            contacts: ContactConfig::default(),
            drag: DragConfig::default(),
        }
    }
}

/// Rapier's stepping and solver: `physics.solver`.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SolverConfig {
    /// Rapier steps per cycle (each a `substeps`-th of the cycle length
    /// the world is built with, [`super::World::new`]). Default 1,
    /// as the reference.
    pub substeps: usize,
    /// Rapier solver iterations (TGS sub-steps) per rapier step. Default 1:
    /// each costs one dense multibody update per robot, the bulk of the
    /// physics time.
    pub iterations: usize,
    /// Internal PGS iterations per solver iteration. Default 100: a
    /// robot's motor rows and its contacts disturb each other through its
    /// mass matrix, and the sweeps are cheap next to the multibody update.
    /// With 50 a lying robot's hip yaw-pitch moves 8 % short of its
    /// command; with 100 a loaded knee travels within 2 % of its command
    /// per cycle (the reference: exactly).
    pub internal_pgs_iterations: usize,
    /// Rapier stabilization (relaxation) iterations per solver iteration:
    /// sweeps after the positions are integrated that solve the
    /// constraints again without their error correction, so that the
    /// velocities the step ends with no longer carry it (Coulomb friction
    /// is then solved only there). Default 2 (rapier's own: 1). The
    /// reference has none (its single solve keeps the correcting velocity),
    /// but 0 costs FC Portugal's `Get_Up` more failed episodes while it
    /// lengthens UT Austin Villa's walks by 3–4 % (docs/physics.md#step).
    pub stabilization_iterations: usize,
    /// Rapier warm-start coefficient (0 = off, 1 = full). Default 1.
    pub warmstart_coefficient: f32,
    /// Maximum speed at which penetrations are corrected, m/s (the
    /// reference has no cap; rapier's own default is 3). Default 10.
    pub max_corrective_velocity: f32,
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
    /// halves the walks' foot-load error against 0.002.
    pub prediction_distance: f32,
    /// Integrate an articulated robot's velocity-product (Coriolis and
    /// centripetal) forces explicitly, as the reference's engine does,
    /// instead of rapier's linearisation of them in the coming velocity
    /// (`crates/core/src/sim/world/coriolis.rs`). One step from the reference's
    /// recorded states a robot in the air after a jump turns its torso
    /// within 0.1–0.3° of the reference's per step, against 1.0–1.2° with
    /// rapier's solve (a test), and replayed open-loop four get-ups of five
    /// end upright within 2 mm of the reference's height, against two.
    /// Default true; it costs about 4 % of the physics time.
    pub explicit_coriolis: bool,
}

impl Default for SolverConfig {
    fn default() -> Self {
        SolverConfig {
            substeps: 1,
            iterations: 1,
            internal_pgs_iterations: 100,
            stabilization_iterations: 2,
            warmstart_coefficient: 1.0,
            max_corrective_velocity: 10.0,
            allowed_linear_error: 0.001,
            prediction_distance: 0.0,
            explicit_coriolis: true,
        }
    }
}

/// The robots' hinges and their motors: `physics.joints`. The hinges are
/// multibody (reduced-coordinate) joints with the torso as root.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct JointConfig {
    /// Velocity-motor gain (rapier "damping" factor of the
    /// acceleration-based motor model): the motor rows are soft by
    /// 1 / (cycle × gain) of the joint's effective mass, so larger = closer
    /// to the reference's hard velocity constraint (1000 leaves a 5 %
    /// compliance: joints lag their commands). Default 1e5.
    pub motor_gain: f32,
    /// Position anchoring of joints commanded to 0: the motor also pulls
    /// the joint back to the angle where it stopped, removing the slow
    /// drift of the iterative solver. `None` = a pure velocity brake.
    /// A moving joint is a pure velocity motor. Default
    /// `Some((erp: 0.5, resync: 0.2))`.
    pub anchor: Option<MotorAnchor>,
    /// Viscous damping of every hinge, N·m·s/rad, applied implicitly (it
    /// adds damping × step to the hinge's diagonal of the mass matrix).
    /// The reference's hinges have none, but rapier's iterative solver
    /// needs it: without it the light link bodies (5e-6 kg·m²) leave the
    /// motor rows unconverged in 100 sweeps (held joints 0.8–3° off the
    /// reference's after 1 s, against 0.2°) and every gait replays further
    /// from the reference. Default 0.1, rapier's own.
    pub damping: f32,
    /// Whether the hinge damping also brakes a turning joint (rapier's
    /// −damping × rate). `false`: the brake is given back each step as an
    /// explicit torque at the rate the step starts with, so the damping
    /// only adds damping × step of inertia to each hinge and keeps the
    /// solver's convergence, while a joint overpowered by its load yields
    /// as freely as the reference's, which have no brake
    /// (`crates/core/src/sim/world/hinge_damping.rs`). Default true:
    /// without the brake a rising robot replayed from the reference's
    /// states rocks sideways on the feet's edges until it tips over
    /// (`tests/physics/getup.rs`, two of fifteen), as our solver does not
    /// keep its left and right exactly symmetric and nothing else damps
    /// the rocking.
    pub damping_brakes: bool,
    /// Emulation of the reference's joints stretching under fast motion
    /// (`crates/core/src/sim/world/stretch.rs`): the fraction of a joint's separation
    /// removed per step, as the reference's ERP (0.2). `None` = rigid
    /// joints. Default `None`: with the emulation a robot rising from a
    /// get-up turns back faster than the reference's and does not stop
    /// when it comes upright (docs/physics.md#joint-stretch); FC
    /// Portugal's get-up left the robot standing 20 of 25 times with it,
    /// 50 of 50 without.
    pub stretch_erp: Option<f32>,
    /// What the stretch moves (docs/physics.md#joint-stretch). Default
    /// `Shapes`.
    pub stretch_moves: StretchMoves,
    /// Joint stops as the reference has them (`crates/core/src/sim/world/stops.rs`):
    /// active for a step that starts at or beyond a limit, the motor then a
    /// plain torque and the joint free of the hinge damping, a one-sided
    /// row with error reduction and bounce; inside the range the motor is
    /// not clamped at the limits, so a joint driven into its stop
    /// overshoots and chatters as the reference's do. `None` = rapier's
    /// limits (the motor's speed clamped so that the joint lands on the
    /// limit, a row only beyond it). Default `None`.
    pub reference_stops: Option<JointStops>,
    /// Apply the 0.7.3 rule: ignore a speed command while the joint is not
    /// strictly inside its limits. Default false (0.7.1 behaviour).
    pub ignore_commands_outside_range: bool,
}

/// What the joint stretch emulation moves: `physics.joints.stretch_moves`.
#[derive(serde::Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StretchMoves {
    /// The bodies: each hinge's anchor in its parent is displaced by the
    /// joint's separation, so every part below it, with its mass and its
    /// shape, sits where the reference's would.
    Bodies,
    /// Only the parts' collision shapes (and reported poses); the bodies
    /// stay where the joint angles put them.
    #[default]
    Shapes,
}

impl Default for JointConfig {
    fn default() -> Self {
        JointConfig {
            motor_gain: 1.0e5,
            anchor: Some(MotorAnchor::default()),
            damping: 0.1,
            damping_brakes: true,
            stretch_erp: None,
            stretch_moves: StretchMoves::Shapes,
            reference_stops: None,
            ignore_commands_outside_range: false,
        }
    }
}

/// The reference's joint stops (`physics.joints.reference_stops`).
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct JointStops {
    /// Fraction of a stop's violation removed per step. Default 0.8, the
    /// reference's stop ERP.
    pub erp: f32,
    /// Restitution of a joint moving into its stop. Default 1, the
    /// reference's stop bounce.
    pub bounce: f32,
    /// Fraction of the maximum torque the motor has at an active stop when
    /// commanded away from it. Default 1e-5, the reference's fudge factor.
    pub fudge: f32,
}

impl Default for JointStops {
    fn default() -> Self {
        JointStops {
            erp: 0.8,
            bounce: 1.0,
            fudge: 1e-5,
        }
    }
}

/// How a joint commanded to 0 is held at the angle where it stopped
/// (`physics.joints.anchor`).
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MotorAnchor {
    /// Fraction of the angle error corrected per step (1 = all of it in
    /// one step). Default 0.5.
    pub erp: f32,
    /// When a held joint is pushed further than this (rad) from its held
    /// angle — the motor was overpowered — the held angle is reset to the
    /// actual one, so the joint does not spring back (as in the
    /// reference). Smaller pushes are undone at up to the motor torque.
    /// Default 0.2 (a type-3 beam 4 cm into the ground rolls the ankles by
    /// up to ~10°; they must recover).
    pub resync: f32,
}

impl Default for MotorAnchor {
    fn default() -> Self {
        MotorAnchor {
            erp: 0.5,
            resync: 0.2,
        }
    }
}

/// Contacts: `physics.contacts`.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ContactConfig {
    /// Contact spring natural frequency (rapier), Hz. With the damping
    /// ratio it sets the fraction of a penetration corrected per step,
    /// h·ω / (h·ω + 2ζ), and the contact's compliance,
    /// 1 / (h·ω·(h·ω + 2ζ)) of its effective mass. Default 150 with ratio
    /// 14.1: 0.40 per step, the reference's robot–ground error reduction,
    /// at a compliance of 0.001, as stiff as the reference's rows
    /// (2·10⁵ N/m per point) for a part of about 0.2 kg. With the
    /// reference's surface layer (`robot_ground_layer`) UT Austin Villa's
    /// walks then cover what they do on the reference, within 3 % for
    /// every robot type (docs/physics.md#ground-contacts). Rapier's softness
    /// is one for every contact: the ball's rest depth is kept by
    /// `ball_ground_layer`.
    pub natural_frequency: f32,
    /// Contact spring damping ratio (rapier). Default 14.1 (see
    /// `natural_frequency`).
    pub damping_ratio: f32,
    /// Friction coefficient of robot parts (combined with `Max`): against
    /// each other, the goals and walls, and against the ground when
    /// `ground_slip` is `None`. The reference has unbounded friction.
    /// Default 1.0.
    pub robot_friction: f32,
    /// Friction coefficient of the ball (Coulomb, combined by average):
    /// against robots, goals and walls, and against the ground when
    /// `ball_ground_slip` is `None`. Default 1.0.
    pub ball_friction: f32,
    /// Restitution of the ball (tuned to the reference drop traces: the
    /// first rebound apex of the 1 m drop is then 0.451 m, reference
    /// 0.432 m; of the 0.5 m drop 0.248 m, reference 0.249 m). Default
    /// 0.75.
    pub ball_restitution: f32,
    /// Restitution of robot-ball contacts. Default 0.8, the reference's
    /// bounce for robot-ball pairs (the kick trace f_kick then sends the
    /// ball 1.36 m, reference 1.76 m).
    pub robot_ball_restitution: f32,
    /// Restitution of goals and border walls. Default 0.8.
    pub static_restitution: f32,
    /// How much deeper than rapier's own contact the ball rests in the
    /// ground, m. The reference keeps a 1 mm surface layer on every
    /// contact and its ball-ground row is soft (350 N/m per point), so its
    /// resting ball sinks 1.7 mm (centre at z 0.0403: docs/physics.md#ball-contacts,
    /// and 0.04028 in the recorded kick traces); rapier's contact, as stiff
    /// as the robots' (`natural_frequency`), holds it at the surface. The
    /// ball's ground contacts are solved as if this much further apart.
    /// Default 0.00172: the ball then rests at the reference's z 0.04027;
    /// its bounce and roll stay within 1 % of rapier's own (a test).
    pub ball_ground_layer: f32,
    /// The reference's surface layer on robot-ground contacts, m: a part
    /// rests this deep in the ground without being pushed back out
    /// (deeper, only the excess is corrected), and a part above that
    /// depth may sink to it. The reference keeps 0.001 with a stiff
    /// contact, so its standing robots' soles rest 1.03 mm deep, and a
    /// foot that lifts by less than that keeps its contact points (those
    /// of the slip law, `ground_slip`): rising from a get-up, its feet stay
    /// 1.1–1.3 mm deep while the legs close on their edges. Default 0.001,
    /// the reference's: with the default contact the feet of types 0–3
    /// rest at the reference's depth (`tests/physics/standing.rs`), and
    /// without the layer a rising robot's feet, 0.3–1 mm deep, lose the
    /// ground for single steps and slide (docs/physics.md#ground-contacts).
    pub robot_ground_layer: f32,
    /// Robot-ground friction as in the reference: no Coulomb limit, a
    /// viscous resistance to sliding of this many N·s/m per contact point
    /// whatever the normal force (the reference's slip 5e-3 gives 200),
    /// the contact points taken from the parts' shapes at the poses each
    /// step starts from (`crates/core/src/sim/world/slip.rs`). `None` = rapier's
    /// Coulomb friction with `robot_friction` instead. Default
    /// `Some(200.0)`, the reference's: with no speculative contacts it
    /// is nearest the reference both one step from its recorded states
    /// and replayed open-loop.
    pub ground_slip: Option<f32>,
    /// Ball-ground friction as in the reference: no Coulomb limit, a
    /// viscous resistance to sliding of this many N·s/m at the ball's
    /// lowest point while it touches the ground (`crates/core/src/sim/world/slip.rs`).
    /// The reference's ball-ground slip 0.3025 gives 3.306: a ball sliding
    /// without spin keeps 10 % of its slip after one step, so it rolls
    /// within two, also when it only grazes the ground or leaves it.
    /// `None` = rapier's Coulomb friction with `ball_friction` instead.
    /// Default `Some(3.306)`.
    pub ball_ground_slip: Option<f32>,
}

impl Default for ContactConfig {
    fn default() -> Self {
        ContactConfig {
            natural_frequency: 150.0,
            damping_ratio: 14.1,
            robot_friction: 1.0,
            ball_friction: 1.0,
            ball_restitution: 0.75,
            robot_ball_restitution: 0.8,
            static_restitution: 0.8,
            ball_ground_layer: 0.00172,
            robot_ground_layer: 0.001,
            ground_slip: Some(200.0),
            ball_ground_slip: Some(3.306),
        }
    }
}

impl ContactConfig {
    /// The robot-ground slip per contact point, N·s/m, if the slip law is
    /// on (a zero or negative coefficient is taken as off).
    pub(super) fn ground_slip(&self) -> Option<f32> {
        self.ground_slip.filter(|d| *d > 0.0)
    }

    /// The ball-ground slip, N·s/m, if the slip law is on.
    pub(super) fn ball_ground_slip(&self) -> Option<f32> {
        self.ball_ground_slip.filter(|d| *d > 0.0)
    }
}

/// Drag as the reference applies it: `physics.drag`. Each part gets
/// −drag·v and −drag·ω; 0 leaves that drag out.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DragConfig {
    /// Linear drag of every robot part, N per m/s. Default 0.01, the
    /// reference's.
    pub part_linear: f32,
    /// Angular drag of every robot part, N·m per rad/s. Default 0.01, the
    /// reference's. A robot spinning in the air slows as the reference's
    /// parts' drag says (a test); the swinging limbs' small link bodies
    /// each carry the full −0.01·ω, which turns a jumping or beamed
    /// robot's torso as the reference's turns.
    pub part_angular: f32,
    /// Linear drag of the ball, N per m/s. Default 0.01: a ball rolling
    /// from 2 m/s slows by the reference's factor 0.979 per step.
    pub ball_linear: f32,
    /// Angular drag of the ball, N·m per rad/s. Default 5e-5.
    pub ball_angular: f32,
}

impl Default for DragConfig {
    fn default() -> Self {
        DragConfig {
            part_linear: 0.01,
            part_angular: 0.01,
            ball_linear: 0.01,
            ball_angular: 5e-5,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PhysicsConfig, ron::error::SpannedError> {
        ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
            .from_str(text)
    }

    #[test]
    fn an_empty_section_is_the_default() {
        assert_eq!(parse("()").expect("parses"), PhysicsConfig::default());
    }

    #[test]
    fn every_switch_parses_on_and_off() {
        let off = parse(
            "(solver: (explicit_coriolis: false), \
              joints: (anchor: None, stretch_erp: None, ignore_commands_outside_range: true), \
              contacts: (ground_slip: None, ball_ground_slip: None))",
        )
        .expect("parses");
        assert!(!off.solver.explicit_coriolis);
        assert_eq!(off.joints.anchor, None);
        assert_eq!(off.joints.stretch_erp, None);
        assert!(off.joints.ignore_commands_outside_range);
        assert_eq!(off.contacts.ground_slip(), None);
        assert_eq!(off.contacts.ball_ground_slip(), None);
        let on = parse(
            "(joints: (anchor: (erp: 0.3), stretch_erp: 0.1), \
              contacts: (ground_slip: 150.0, ball_ground_slip: Some(2.0)))",
        )
        .expect("parses");
        assert_eq!(
            on.joints.anchor,
            Some(MotorAnchor {
                erp: 0.3,
                resync: 0.2
            })
        );
        assert_eq!(on.joints.stretch_erp, Some(0.1));
        assert_eq!(on.contacts.ground_slip(), Some(150.0));
        assert_eq!(on.contacts.ball_ground_slip(), Some(2.0));
    }

    #[test]
    fn the_old_flat_keys_are_rejected_by_name() {
        for old in [
            "joint_kind: Multibody",
            "motor_gain: 1e5",
            "ground_slip_damping: 200.0",
            "reference_joint_stops: false",
        ] {
            let err = parse(&format!("({old})")).expect_err(old);
            let key = old.split(':').next().unwrap_or_default();
            assert!(err.to_string().contains(key), "{old}: {err}");
        }
    }
}
