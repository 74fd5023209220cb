//! Joint limits: rapier's (the motor's speed clamped so that the joint
//! lands on the limit, a row only beyond it), and the reference's stops
//! (`physics.joints.reference_stops`). In the reference's walk g_walk_t0 the left ankle reaches its 75° stop
//! at row 109; in the next step it is commanded 2.65° back but swings
//! 8.34°, because its motor leaves a joint at a stop to the body's motion
//! (the leg accelerates forward under the light foot). With rapier's
//! limits the motor holds the command; with the reference's stops the
//! foot swings as the reference's does.

use rcss3d::sim::world::{JointConfig, JointStops, PhysicsConfig};

use rcss3d_tools::replay::{
    apply, gaits_dir, joint_names, recorded_states_with_stretch, start, Scenario,
};

/// The left ankle's travel (°) in the step from recorded row 109 to row
/// 110 of g_walk_t0, with `cfg`; and the reference's.
fn ankle_travel_off_its_stop(cfg: &PhysicsConfig) -> (f32, f32) {
    let sc = Scenario::load(&gaits_dir(), "g_walk_t0");
    let (mut w, h) = start(cfg, &sc.script);
    let m = w.robot_model(h).clone();
    let names = joint_names(&m);
    let ankle = names
        .iter()
        .position(|n| n == "llj5")
        .expect("the robot has a left ankle pitch");
    let recorded = sc.trace.column("hj_llj5");
    assert!(
        (recorded[109] - 75.0).abs() < 0.01,
        "the trace's ankle should rest on its stop at row 109"
    );
    // The recorded states up to row 109 (with the joint stretch emulation
    // on, each with the joints' separations the recorded motion built up:
    // the stance foot is then where the reference's is).
    let states = recorded_states_with_stretch(&mut w, h, &sc, 109, cfg.joints.stretch_erp);
    // One-step windows from rows 99..108, so that the solver's memory
    // (warm start, held angles, contacts) is that of a run; then the step
    // from row 109.
    for step in 0..100 {
        apply(&mut w, h, &sc.script, step);
    }
    for row in 99..=109 {
        w.set_robot_state(h, &states[row - 1])
            .expect("a recorded state");
        apply(&mut w, h, &sc.script, row + 1);
        if row < 109 {
            w.step();
        }
    }
    let before = w.joint_angle_deg(h, ankle);
    w.step();
    (
        w.joint_angle_deg(h, ankle) - before,
        (recorded[110] - recorded[109]) as f32,
    )
}

#[test]
fn with_rapiers_limits_a_foot_on_its_stop_follows_its_command() {
    let (ours, reference) = ankle_travel_off_its_stop(&PhysicsConfig::default());
    eprintln!("ankle travel off its stop: ours {ours:.2}°, reference {reference:.2}°");
    // The commanded travel is 2.65° (a velocity motor holds it).
    assert!(
        (ours + 2.65).abs() < 0.5,
        "rapier's limits keep the motor on: {ours:.2}° instead of -2.65°"
    );
    assert!((ours - reference).abs() > 4.0);
}

#[test]
fn with_the_reference_stops_a_foot_on_its_stop_swings_with_the_leg() {
    let cfg = PhysicsConfig {
        joints: JointConfig {
            reference_stops: Some(JointStops::default()),
            stretch_erp: Some(0.2),
            ..JointConfig::default()
        },
        ..PhysicsConfig::default()
    };
    let (ours, reference) = ankle_travel_off_its_stop(&cfg);
    eprintln!(
        "reference stops: ankle travel off its stop: ours {ours:.2}°, reference {reference:.2}°"
    );
    assert!(
        (ours - reference).abs() < 1.0,
        "the ankle should swing {reference:.2}° as the reference's, not {ours:.2}°"
    );
}
