//! The robot-ground friction law: no Coulomb limit, a viscous resistance
//! of `contacts.ground_slip` N·s/m per touching contact point whatever the
//! normal force (docs/physics.md#ground-friction). A pushed robot creeps at
//! push / (damping × points); under Coulomb friction a push well below the
//! friction limit would not move it at all.

use nalgebra::Vector3;
use rcss3d::sim::world::{PhysicsConfig, RobotHandle, World};

use super::util::{reference_setup, world_with};
use rcss3d_tools::replay::{gaits_dir, run, Scenario};

/// Mean horizontal position of the robot's feet.
fn feet_xy(w: &World, h: RobotHandle, feet: &[usize]) -> Vector3<f32> {
    let sum: Vector3<f32> = feet
        .iter()
        .map(|&f| w.part_pose(h, f).translation.vector)
        .sum();
    let mut mean = sum / feet.len() as f32;
    mean.z = 0.0;
    mean
}

/// Pushes both feet of a standing type-0 robot forward with `per_foot`
/// newtons for 1 s and returns the feet's speed over the last half second.
fn creep_speed(cfg: &PhysicsConfig, per_foot: f32) -> f32 {
    let mut w = world_with(cfg);
    let h = reference_setup(&mut w, 0);
    for _ in 0..50 {
        w.step();
    }
    let m = w.robot_model(h).clone();
    let feet: Vec<usize> = m.foot_sensors.iter().map(|s| s.part).collect();
    for &f in &feet {
        w.set_part_force(h, f, Vector3::new(per_foot, 0.0, 0.0));
    }
    for _ in 0..25 {
        w.step();
    }
    let start = feet_xy(&w, h, &feet);
    for _ in 0..25 {
        w.step();
    }
    let end = feet_xy(&w, h, &feet);
    let up = (w.part_pose(h, m.torso).rotation * Vector3::z()).z;
    assert!(up > 0.99, "the pushed robot tilted (up.z {up:.4})");
    let d = end - start;
    assert!(
        d.y.abs() < 0.2 * d.x.abs().max(1e-3),
        "the robot drifted sideways: {d:?}"
    );
    d.x / 0.5
}

#[test]
fn pushed_feet_creep_at_the_push_over_the_viscous_resistance() {
    let cfg = PhysicsConfig::default();
    let d = cfg
        .contacts
        .ground_slip
        .expect("the slip law is on by default");
    // Two flat feet, four touching corners each.
    let points = 8.0;
    for per_foot in [2.0f32, 4.0] {
        let v = creep_speed(&cfg, per_foot);
        let expected = 2.0 * per_foot / (d * points);
        eprintln!("push {per_foot} N per foot: {v:.4} m/s (law {expected:.4})");
        assert!(
            (v - expected).abs() <= 0.25 * expected,
            "push {per_foot} N per foot: creep {v:.4} m/s, law {expected:.4} m/s"
        );
    }
}

#[test]
fn without_a_push_standing_feet_do_not_creep() {
    let v = creep_speed(&PhysicsConfig::default(), 0.0);
    assert!(v.abs() < 1e-3, "unpushed feet creep at {v:.5} m/s");
}

/// The reference's ground contact model: its slip coefficient (200 N·s/m
/// per point) on contacts found at the poses each step starts from.
fn reference_ground() -> PhysicsConfig {
    let mut cfg = PhysicsConfig::default();
    cfg.contacts.ground_slip = Some(200.0);
    cfg
}

#[test]
fn with_the_reference_ground_planted_feet_resist_a_full_speed_hip_yaw_pitch_like_the_reference() {
    // The reference walk of type 0 starts, after a 1 s bent-knee stand,
    // with both hip yaw-pitch joints commanded at full speed (-7.03° per
    // cycle). Both feet are planted, so the joints turn the feet against
    // the ground's twist resistance and the motors saturate: the
    // reference's joints travel only -3.75° and -2.02° in that cycle.
    let sc = Scenario::load(&gaits_dir(), "g_walk_t0");
    let row = 51;
    let ours = run(&reference_ground(), &sc.script, row);
    for name in ["llj1", "rlj1"] {
        let reference = sc.trace.column(&format!("hj_{name}"))[row - 1];
        let Some((_, angles)) = ours.joints.iter().find(|(n, _)| n == name) else {
            panic!("no joint {name}");
        };
        let got = angles[row - 1];
        eprintln!("{name} after the first walking cycle: {got:.2}° (reference {reference:.2}°)");
        assert!(
            (got - reference).abs() <= 0.2,
            "{name} reads {got:.2}° after the first walking cycle, reference {reference:.2}°"
        );
    }
}

#[test]
fn with_contacts_at_the_step_start_a_lifted_robot_meets_no_ground_resistance() {
    // With the ground's contacts taken at the poses each step starts from,
    // a robot raised into the air is free at once, exactly as one that
    // never had the viscous ground contacts (Coulomb friction cannot act
    // in the air either). Rapier's last detected contacts would hold the
    // foot for one more step.
    let pushed_foot_speed = |cfg: &PhysicsConfig| -> f32 {
        let mut w = world_with(cfg);
        let h = reference_setup(&mut w, 0);
        for _ in 0..50 {
            w.step();
        }
        let m = w.robot_model(h).clone();
        let torso = w.part_pose(h, m.torso).translation.vector;
        w.shift_robot(h, torso + Vector3::new(0.0, 0.0, 0.3));
        let foot = m.foot_sensors[0].part;
        let before = w.part_pose(h, foot).translation.vector.x;
        w.set_part_force(h, foot, Vector3::new(20.0, 0.0, 0.0));
        w.step();
        (w.part_pose(h, foot).translation.vector.x - before) / 0.02
    };
    let viscous = pushed_foot_speed(&reference_ground());
    let mut coulomb = PhysicsConfig::default();
    coulomb.contacts.ground_slip = None;
    let coulomb = pushed_foot_speed(&coulomb);
    eprintln!("pushed foot after one step in the air: {viscous:.5} m/s (without the viscous contacts {coulomb:.5} m/s)");
    assert!(
        coulomb > 0.01,
        "the push did not move the foot ({coulomb:.5} m/s)"
    );
    assert!(
        (viscous - coulomb).abs() <= 0.01 * coulomb,
        "a lifted foot was held back by the ground: {viscous:.5} m/s, free {coulomb:.5} m/s"
    );
}

/// A part touching the ground at one point (a lower arm's end) has no
/// resistance to turning about the vertical: a lying robot's arms move as
/// commanded while their hands rest on the ground, as on the reference.
/// Put into the reference's recorded states of a get-up, one step each.
#[test]
fn a_part_touching_at_one_point_turns_freely_about_the_vertical() {
    let sc = Scenario::load(&gaits_dir(), "g_getup_t0");
    let (mut w, h) = rcss3d_tools::replay::start(&PhysicsConfig::default(), &sc.script);
    let m = w.robot_model(h).clone();
    let names = rcss3d_tools::replay::joint_names(&m);
    let hj = |n: &str| sc.trace.column(&format!("hj_{n}"));
    let (mut checked, mut blocked) = (0, Vec::new());
    // The arms push the lying robot up from about 1.8 s on.
    for row in 85..115 {
        w.set_robot_state(h, &rcss3d_tools::replay::recorded_state(&sc, &names, row))
            .expect("a recorded state");
        rcss3d_tools::replay::apply(&mut w, h, &sc.script, row);
        let before: Vec<f32> = (0..names.len()).map(|j| w.joint_angle_deg(h, j)).collect();
        w.step();
        for (j, n) in names.iter().enumerate() {
            let commanded = w.joint_target(h, j).to_degrees() * 0.02;
            let theirs = (hj(n)[row + 1] - hj(n)[row]) as f32;
            if !n.contains("aj") || commanded.abs() < 3.0 || (theirs - commanded).abs() > 1.0 {
                continue;
            }
            checked += 1;
            let ours = w.joint_angle_deg(h, j) - before[j];
            if (ours - commanded).abs() > 1.5 {
                blocked.push(format!("row {row} {n}: {ours:.2}° of {commanded:.2}°"));
            }
        }
    }
    assert!(checked >= 20, "only {checked} arm moves checked");
    assert!(
        blocked.is_empty(),
        "{} of {checked} arm moves blocked: {blocked:?}",
        blocked.len()
    );
}

/// The foot sensors read the whole ground force, friction included
/// (docs/physics.md#foot-sensors): feet pushed forward while creeping steadily feel
/// the ground pushing them back just as hard.
#[test]
fn foot_sensors_read_the_grounds_tangential_push() {
    let mut w = world_with(&PhysicsConfig::default());
    let h = reference_setup(&mut w, 0);
    for _ in 0..50 {
        w.step();
    }
    let m = w.robot_model(h).clone();
    let per_foot = 4.0f32;
    for s in &m.foot_sensors {
        w.set_part_force(h, s.part, Vector3::new(per_foot, 0.0, 0.0));
    }
    let mut sum = Vector3::zeros();
    let steps = 25;
    for _ in 0..25 {
        w.step();
    }
    for _ in 0..steps {
        w.step();
        for (i, s) in m.foot_sensors.iter().enumerate() {
            let (_, f) = w.foot_force(h, i).expect("a standing foot touches");
            sum += w.part_pose(h, s.part).rotation * f;
        }
    }
    let mean = sum / steps as f32;
    let push = per_foot * m.foot_sensors.len() as f32;
    eprintln!("feet pushed with {push} N along x: sensors read {mean:.2?} N (field frame)");
    assert!(
        (mean.x + push).abs() < 0.1 * push,
        "the sensors read {:.2} N along x against the {push} N push",
        mean.x
    );
    assert!(
        mean.y.abs() < 0.1 * push,
        "sideways {:.2} N on a straight push",
        mean.y
    );
}
