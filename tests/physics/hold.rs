//! How a motor holds and moves a joint, as in the reference's exact
//! velocity motor: a joint stopped after moving keeps all of its travel
//! (no spring-back to a mid-cycle angle), a loaded knee travels the full
//! commanded amount per cycle, and a lying robot's hip yaw-pitch follows
//! its command.

use rcss3d::sim::world::PhysicsConfig;

use super::util::{reference_setup, world};
use rcss3d_tools::replay::{gaits_dir, joint_names, recorded_state, start, Scenario};

/// Commands `effector` at `speed` rad/s for `cycles` cycles, then 0, and
/// returns (angle after the moving cycles, angle 25 cycles later) in
/// degrees, for a standing type-0 robot.
fn move_then_hold(effector: &str, speed: f32, cycles: usize) -> (f32, f32) {
    let mut w = world();
    let h = reference_setup(&mut w, 0);
    for _ in 0..50 {
        w.step();
    }
    let j = w.robot_model(h).joint_by_effector(effector).unwrap_or(0);
    let start = w.joint_angle_deg(h, j);
    w.set_joint_speed(h, j, speed);
    for _ in 0..cycles {
        w.step();
    }
    let moved = w.joint_angle_deg(h, j) - start;
    w.set_joint_speed(h, j, 0.0);
    for _ in 0..25 {
        w.step();
    }
    (moved, w.joint_angle_deg(h, j) - start)
}

#[test]
fn a_stopped_joint_keeps_its_travel() {
    for (effector, speed, cycles) in [
        ("he1", 1.0, 1),
        ("he1", 6.14, 1),
        ("he1", 1.0, 3),
        ("lae1", 1.0, 1),
        ("rae2", -1.0, 3),
    ] {
        let expected = (speed * 0.02 * cycles as f32).to_degrees();
        let (moved, held) = move_then_hold(effector, speed, cycles);
        eprintln!("{effector} {speed} rad/s x {cycles}: moved {moved:.3}°, held at {held:.3}° (commanded {expected:.3}°)");
        assert!(
            (moved - expected).abs() <= 0.02 * expected.abs() + 0.02,
            "{effector}: moved {moved:.3}°, commanded {expected:.3}°"
        );
        assert!(
            (held - moved).abs() <= 0.05,
            "{effector}: stopped at {moved:.3}° but settled at {held:.3}°"
        );
    }
}

#[test]
fn a_loaded_knee_travels_the_commanded_angle_every_cycle() {
    let mut w = world();
    let h = reference_setup(&mut w, 0);
    for _ in 0..50 {
        w.step();
    }
    let m = w.robot_model(h).clone();
    let knees = [
        m.joint_by_effector("lle4").unwrap_or(0),
        m.joint_by_effector("rle4").unwrap_or(0),
    ];
    let hips = [
        m.joint_by_effector("lle3").unwrap_or(0),
        m.joint_by_effector("rle3").unwrap_or(0),
    ];
    let ankles = [
        m.joint_by_effector("lle5").unwrap_or(0),
        m.joint_by_effector("rle5").unwrap_or(0),
    ];
    // A slow crouch: knees bend at 1 rad/s, hips and ankles at half that,
    // so the feet stay flat under the torso.
    for k in 0..2 {
        w.set_joint_speed(h, knees[k], -1.0);
        w.set_joint_speed(h, hips[k], 0.5);
        w.set_joint_speed(h, ankles[k], 0.5);
    }
    let per_cycle = (1.0f32 * 0.02).to_degrees();
    let mut last = w.joint_angle_deg(h, knees[0]);
    for cycle in 0..10 {
        w.step();
        let a = w.joint_angle_deg(h, knees[0]);
        let d = last - a;
        last = a;
        eprintln!("cycle {cycle}: knee bent {d:.3}° (commanded {per_cycle:.3}°)");
        assert!(
            (d - per_cycle).abs() <= 0.03 * per_cycle,
            "cycle {cycle}: the loaded knee bent {d:.3}°, commanded {per_cycle:.3}°"
        );
    }
}

#[test]
fn a_lying_robots_hip_yaw_pitch_follows_its_command() {
    // The reference get-up recording of type 0: the robot falls face down
    // (below 0.25 m from step 64); at step 75 it lies still. It is put into
    // the reference's recorded state there, so the check does not depend
    // on how our own replay of the fall lands.
    let sc = Scenario::load(&gaits_dir(), "g_getup_t0");
    let (mut w, h) = start(&PhysicsConfig::default(), &sc.script);
    let m = w.robot_model(h).clone();
    let names = joint_names(&m);
    w.set_robot_state(h, &recorded_state(&sc, &names, 75))
        .expect("a recorded state");
    let torso = w.part_pose(h, m.torso);
    assert!(
        torso.translation.z < 0.15,
        "the robot is not lying (torso at {:.3} m)",
        torso.translation.z
    );
    for j in 0..m.joints.len() {
        w.set_joint_speed(h, j, 0.0);
    }
    let joints: Vec<usize> = ["lle1", "rle1"]
        .iter()
        .map(|e| m.joint_by_effector(e).unwrap_or(0))
        .collect();
    let start_angles: Vec<f32> = joints.iter().map(|&j| w.joint_angle_deg(h, j)).collect();
    // As the reference get-up does from step 82: both hip yaw-pitch joints
    // together at -0.5° per cycle for 10 cycles (the reference follows
    // within 0.01° per cycle).
    let speed = (-0.5f32).to_radians() / 0.02;
    for &j in &joints {
        w.set_joint_speed(h, j, speed);
    }
    for _ in 0..10 {
        w.step();
    }
    let expected = -5.0f32;
    for (k, &j) in joints.iter().enumerate() {
        let moved = w.joint_angle_deg(h, j) - start_angles[k];
        eprintln!(
            "{}: from {:.2}° moved {moved:.2}° (commanded {expected:.2}°)",
            m.joints[j].effector, start_angles[k]
        );
        assert!(
            (moved - expected).abs() <= 0.05 * expected.abs(),
            "{} moved {moved:.2}° lying face down, commanded {expected:.2}°",
            m.joints[j].effector
        );
    }
}
