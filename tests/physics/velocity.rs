//! The torso velocities the perceptors read (gyro, accelerometer) are
//! the torso's motion over the last step, as the reference's: its gyro
//! equals the rotation of the torso over that step divided by the step.

use rcss3d::sim::world::PhysicsConfig;

use crate::util::{reference_setup, world};
use rcss3d_tools::replay::{apply, gaits_dir, start, Scenario};

#[test]
fn torso_velocities_are_those_the_last_step_ended_with() {
    let mut w = world();
    let h = reference_setup(&mut w, 0);
    let m = w.robot_model(h).clone();
    for _ in 0..50 {
        w.step();
    }
    // Swing both hip pitches at full speed: the torso pitches and moves.
    let hips: Vec<usize> = ["lle3", "rle3"]
        .iter()
        .map(|e| m.joint_by_effector(e).expect("hip pitch"))
        .collect();
    let mut compared = 0;
    for step in 0..6 {
        let before = w.part_pose(h, m.torso);
        for &j in &hips {
            w.set_joint_speed(h, j, if step < 3 { 4.0 } else { -4.0 });
        }
        w.step();
        let after = w.part_pose(h, m.torso);
        let turned = (after.rotation * before.rotation.inverse()).scaled_axis() / 0.02;
        let moved = (after.translation.vector - before.translation.vector) / 0.02;
        let gyro = after.rotation * w.torso_angvel_local(h);
        let v = w.torso_linvel(h);
        // The step moved the torso with the velocity it ended with (up to
        // rapier's relaxation pass after the position update).
        assert!(
            (gyro - turned).norm() <= 0.1 * turned.norm() + 0.01,
            "step {step}: gyro {gyro:?}, rotation over the step / dt {turned:?}"
        );
        assert!(
            (v - moved).norm() <= 0.1 * moved.norm() + 0.01,
            "step {step}: velocity {v:?}, motion over the step / dt {moved:?}"
        );
        if turned.norm() > 0.1 {
            compared += 1;
        }
    }
    assert!(compared >= 4, "the torso hardly turned: {compared} steps");
}

/// A robot that falls and lands, pushed by its contacts with the ground,
/// reads the same torso motion as a standing one: the rotation and
/// displacement of the torso over each step. (Rapier's velocities after
/// such a step differ from that motion by up to 100°/s, as its relaxation
/// pass removes the contacts' position correction from them.)
#[test]
fn a_landing_robot_reads_its_torso_motion_over_the_step() {
    let sc = Scenario::load(&gaits_dir(), "g_getup_t1");
    let (mut w, h) = start(&PhysicsConfig::default(), &sc.script);
    let torso = w.robot_model(h).torso;
    let mut largest_turn = 0.0f32;
    for step in 0..100 {
        let before = w.part_pose(h, torso);
        apply(&mut w, h, &sc.script, step);
        w.step();
        let after = w.part_pose(h, torso);
        let turned = (before.rotation.inverse() * after.rotation).scaled_axis() / 0.02;
        let moved = (after.translation.vector - before.translation.vector) / 0.02;
        let gyro = w.torso_angvel_local(h);
        let v = w.torso_linvel(h);
        assert!(
            (gyro - turned).norm() <= 1e-3,
            "row {}: gyro {gyro:?} rad/s, rotation over the step / dt {turned:?}",
            step + 1
        );
        assert!(
            (v - moved).norm() <= 1e-3,
            "row {}: velocity {v:?}, motion over the step / dt {moved:?}",
            step + 1
        );
        largest_turn = largest_turn.max(turned.norm());
    }
    // The get-up's planned fall lands within these 100 rows.
    assert!(
        largest_turn > 2.0,
        "the torso hardly turned: {largest_turn} rad/s"
    );
}
