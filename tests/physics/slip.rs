//! The robot-ground friction law: no Coulomb limit, a viscous resistance
//! of `ground_slip_damping` N·s/m per touching contact point whatever the
//! normal force (field-and-physics.md §6.4). A pushed robot creeps at
//! push / (damping × points); under Coulomb friction a push well below the
//! friction limit would not move it at all.

use nalgebra::Vector3;
use rcss3d::sim::world::{PhysicsConfig, RobotHandle, World};

use super::util::{reference_setup, world_with};

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
    let d = cfg.ground_slip_damping;
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
