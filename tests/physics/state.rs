//! A robot's whole mechanical state can be read and put back: the world
//! then steps exactly as from the original, which is what the fitting
//! tools rely on when they start our physics from the reference's
//! recorded states.

use rcss3d::sim::world::{PhysicsConfig, StateError};

use crate::util::{reference_setup, world};
use rcss3d_tools::replay::{apply, gaits_dir, start, Script};

#[test]
fn a_robot_put_back_into_a_recorded_state_steps_as_from_the_original() {
    let script = Script::load(&gaits_dir().join("g_walk_t0.sent.txt"));
    let cfg = PhysicsConfig::default();
    let (mut a, ha) = start(&cfg, &script);
    let (mut b, hb) = start(&cfg, &script);
    // Mid-walk: the robot moves, its feet touch and leave the ground.
    for step in 0..60 {
        apply(&mut a, ha, &script, step);
        a.step();
        apply(&mut b, hb, &script, step);
        b.step();
    }
    let recorded = a.robot_state(ha).expect("an articulated robot");
    assert!(recorded.angvel.norm() > 0.1, "the robot is not moving");
    // Disturb b, then put it back.
    let mut other = recorded.clone();
    other.joint_angles.iter_mut().for_each(|q| *q += 0.1);
    other.torso.translation.vector.z += 0.05;
    other.angvel *= -1.0;
    b.set_robot_state(hb, &other)
        .expect("set the disturbed state");
    assert_ne!(b.robot_state(hb).as_ref(), Some(&recorded));
    b.set_robot_state(hb, &recorded)
        .expect("set the recorded state");
    let m = a.robot_model(ha).clone();
    for step in 60..63 {
        apply(&mut a, ha, &script, step);
        a.step();
        apply(&mut b, hb, &script, step);
        b.step();
        let (ta, tb) = (a.part_pose(ha, m.torso), b.part_pose(hb, m.torso));
        assert!(
            (ta.translation.vector - tb.translation.vector).norm() < 1e-5,
            "step {step}: torso {:?} against {:?}",
            ta.translation.vector,
            tb.translation.vector
        );
        for j in 0..m.joints.len() {
            let (qa, qb) = (a.joint_angle_deg(ha, j), b.joint_angle_deg(hb, j));
            assert!(
                (qa - qb).abs() < 1e-3,
                "step {step}: joint {j} {qa}° against {qb}°"
            );
        }
    }
    // A state that does not fit the robot is refused.
    let mut short = recorded.clone();
    short.joint_rates.pop();
    assert!(matches!(
        b.set_robot_state(hb, &short),
        Err(StateError::JointCount { .. })
    ));
    let mut short_hold = recorded.clone();
    short_hold.held_angles.pop();
    let want = recorded.joint_angles.len();
    assert_eq!(
        b.set_robot_state(hb, &short_hold),
        Err(StateError::JointCount {
            got: want - 1,
            want
        })
    );
    let mut nan = recorded;
    nan.linvel.x = f32::NAN;
    assert_eq!(b.set_robot_state(hb, &nan), Err(StateError::NotFinite));
}

/// A state sets where still joints are held: a joint put 3° away from
/// where it stood stays there (the fitting tools start every window from
/// the reference's angles), unless the state also carries the old held
/// angle, which the motor then pulls the joint back to.
#[test]
fn a_robot_put_into_a_state_holds_its_joints_where_the_state_puts_them() {
    let head_after = |keep_old_hold: bool| {
        let mut w = world();
        let h = reference_setup(&mut w, 0);
        for _ in 0..50 {
            w.step();
        }
        let mut moved = w.robot_state(h).expect("an articulated robot");
        moved.joint_angles[0] += 0.05;
        if !keep_old_hold {
            moved.held_angles.clear();
        }
        w.set_robot_state(h, &moved).expect("set the state");
        for _ in 0..25 {
            w.step();
        }
        w.joint_angle_deg(h, 0) - moved.joint_angles[0].to_degrees()
    };
    let off_new = head_after(false);
    let off_old = head_after(true);
    eprintln!(
        "head yaw 0.5 s after the move: {off_new:.3}° off it (new hold), {off_old:.3}° (old hold)"
    );
    assert!(
        off_new.abs() < 0.1,
        "the head yaw drifted {off_new:.3}° off where it was put"
    );
    assert!(
        off_old < -2.5,
        "the old held angle did not pull the head back ({off_old:.3}°)"
    );
}
