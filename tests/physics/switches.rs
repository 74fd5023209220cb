//! Every mechanism the `physics:` section can switch off, on (the
//! default) and off: the switch reaches the world and changes what it
//! does. (The velocity-product forces: `coriolis.rs`; the robot-ground
//! slip law: `slip.rs`.)

use nalgebra::Vector3;
use rcss3d::sim::world::{PhysicsConfig, World};

use super::util::{model, reference_setup, world_with};
use rcss3d_tools::replay::{apply, gaits_dir, start, Scenario};

/// The fraction of its slip (speed less the rolling speed of its spin) a
/// ball resting on the ground and pushed to 2 m/s without spin keeps
/// after one step.
fn slip_kept_after_one_step(cfg: &PhysicsConfig) -> f32 {
    let mut w = world_with(cfg);
    w.set_ball_position(Vector3::new(-2.0, -3.0, 0.042));
    w.set_ball_velocity(Vector3::zeros());
    for _ in 0..50 {
        w.step();
    }
    w.set_ball_velocity(Vector3::new(2.0, 0.0, 0.0));
    w.step();
    let radius = 0.042;
    let slip = w.ball_velocity().x - w.ball_angular_velocity().y * radius;
    slip / 2.0
}

#[test]
fn the_ball_ground_slip_law_rolls_a_sliding_ball_within_a_step_coulomb_friction_does_not() {
    let law = slip_kept_after_one_step(&PhysicsConfig::default());
    let mut coulomb = PhysicsConfig::default();
    coulomb.contacts.ball_ground_slip = None;
    let coulomb = slip_kept_after_one_step(&coulomb);
    eprintln!("slip kept after one step: slip law {law:.3}, Coulomb friction {coulomb:.3}");
    assert!(law.abs() < 0.2, "the slip law keeps {law:.3} of the slip");
    assert!(coulomb > 0.4, "Coulomb friction keeps only {coulomb:.3}");
}

/// The largest joint separation (m) after one second of the recorded walk
/// g_walk_t0 with `cfg`.
fn largest_separation_in_a_walk(cfg: &PhysicsConfig) -> f32 {
    let sc = Scenario::load(&gaits_dir(), "g_walk_t0");
    let (mut w, h) = start(cfg, &sc.script);
    for step in 1..=50 {
        apply(&mut w, h, &sc.script, step);
        w.step();
    }
    let state = w.robot_state(h).expect("an articulated robot");
    state
        .joint_separations
        .iter()
        .map(|s| s.norm())
        .fold(0.0, f32::max)
}

#[test]
fn the_joint_stretch_separates_a_walking_robots_joints_rigid_joints_stay_together() {
    let mut stretched = PhysicsConfig::default();
    stretched.joints.stretch_erp = Some(0.2);
    let stretched = largest_separation_in_a_walk(&stretched);
    let rigid = PhysicsConfig::default();
    assert_eq!(
        rigid.joints.stretch_erp, None,
        "rigid joints are the default"
    );
    let rigid = largest_separation_in_a_walk(&rigid);
    eprintln!("largest joint separation: stretched {stretched:.6} m, rigid {rigid:.6} m");
    assert!(stretched > 1e-4, "stretched joints: {stretched} m");
    assert_eq!(rigid, 0.0);
}

/// How far (°) the joints of a standing robot, all commanded to stand
/// still, move from where they stood over `cycles` cycles with `cfg`: the
/// largest of them.
fn held_joints_drift(cfg: &PhysicsConfig, cycles: usize) -> f32 {
    let mut w = world_with(cfg);
    let h = reference_setup(&mut w, 0);
    for _ in 0..50 {
        w.step();
    }
    let n = w.robot_model(h).joints.len();
    let before: Vec<f32> = (0..n).map(|j| w.joint_angle_deg(h, j)).collect();
    for _ in 0..cycles {
        w.step();
    }
    (0..n)
        .map(|j| (w.joint_angle_deg(h, j) - before[j]).abs())
        .fold(0.0, f32::max)
}

#[test]
fn anchored_motors_hold_still_joints_where_they_stopped_a_pure_brake_lets_them_creep() {
    let anchored = held_joints_drift(&PhysicsConfig::default(), 100);
    let mut brake = PhysicsConfig::default();
    brake.joints.anchor = None;
    let brake = held_joints_drift(&brake, 100);
    eprintln!(
        "held joints' largest drift over 2 s: anchored {anchored:.4}°, pure brake {brake:.4}°"
    );
    assert!(
        anchored < 0.5 * brake,
        "anchored {anchored:.4}° against a pure brake's {brake:.4}°"
    );
}

/// A robot in the air with its first joint put 0.1 rad beyond its upper
/// limit (as a robot pushed into a stop ends up).
fn robot_with_a_joint_beyond_its_limit(
    cfg: &PhysicsConfig,
) -> (World, rcss3d::sim::world::RobotHandle) {
    let mut w = world_with(cfg);
    let h = w.add_robot(model(0), Vector3::new(0.0, 0.0, 1.0), 0.0);
    let (_, hi) = w.robot_model(h).joints[0].limits_rad();
    let mut state = w.robot_state(h).expect("an articulated robot");
    state.joint_angles[0] = hi + 0.1;
    w.set_robot_state(h, &state).expect("a valid state");
    (w, h)
}

#[test]
fn the_0_7_3_rule_ignores_commands_to_a_joint_beyond_its_limit_0_7_1_takes_them() {
    let (mut w, h) = robot_with_a_joint_beyond_its_limit(&PhysicsConfig::default());
    w.set_joint_speed(h, 0, -0.5);
    assert_eq!(w.joint_target(h, 0), -0.5, "0.7.1 takes every command");

    let mut rule = PhysicsConfig::default();
    rule.joints.ignore_commands_outside_range = true;
    let (mut w, h) = robot_with_a_joint_beyond_its_limit(&rule);
    w.set_joint_speed(h, 0, -0.5);
    assert_eq!(w.joint_target(h, 0), 0.0, "the 0.7.3 rule ignores it");
}
