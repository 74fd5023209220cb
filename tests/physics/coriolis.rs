//! The velocity-product forces of a robot's swinging limbs, integrated
//! explicitly as in the reference (`explicit_coriolis`). In the type-1
//! get-up (g_getup_t1) the robot jumps: from row 104 to row 111 it is in
//! the air, its legs swinging at several rad/s, and its torso turns 5–8°
//! per step. Rapier's linearisation of those forces in the coming
//! velocity takes out about a sixth of that turn; cancelled, one step from
//! the reference's recorded states turns the torso as the reference's.

use nalgebra::{Isometry3, Matrix3, Rotation3, UnitQuaternion};
use rcss3d::sim::world::PhysicsConfig;

use rcss3d_tools::replay::{apply, gaits_dir, recorded_states_with_stretch, start, Scenario};

/// The recorded torso pose of `row`.
fn recorded_torso(sc: &Scenario, row: usize) -> UnitQuaternion<f32> {
    let tr = &sc.trace;
    let m = Matrix3::from_fn(|a, b| tr.column(&format!("torso_r{a}{b}"))[row] as f32);
    UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix(&m))
}

/// For each step from rows 105, 106 and 107 of g_getup_t1 (the robot in
/// the air): the angle (°) between our torso after one step from the
/// recorded state and the reference's recorded torso one row later.
fn torso_errors_in_the_air(cfg: &PhysicsConfig) -> Vec<f32> {
    let sc = Scenario::load(&gaits_dir(), "g_getup_t1");
    let (mut w, h) = start(cfg, &sc.script);
    let m = w.robot_model(h).clone();
    // The recorded states (with the joint stretch emulation on, each with
    // the joints' separations the recorded motion built up).
    let states = recorded_states_with_stretch(&mut w, h, &sc, 107, cfg.joints.stretch_erp);
    for step in 0..95 {
        apply(&mut w, h, &sc.script, step);
    }
    // One-step windows from row 95 on, so that the solver's memory (warm
    // start, held angles) is that of a run.
    let mut errors = Vec::new();
    for row in 95..=107 {
        w.set_robot_state(h, &states[row - 1])
            .expect("a recorded state");
        apply(&mut w, h, &sc.script, row + 1);
        w.step();
        if row >= 105 {
            let ours: Isometry3<f32> = w.part_pose(h, m.torso);
            let diff = ours.rotation * recorded_torso(&sc, row + 1).inverse();
            errors.push(diff.angle().to_degrees());
        }
    }
    errors
}

#[test]
fn a_jumping_robot_turns_in_the_air_as_the_reference() {
    let explicit = torso_errors_in_the_air(&PhysicsConfig::default());
    assert!(PhysicsConfig::default().solver.explicit_coriolis);
    for (k, e) in explicit.iter().enumerate() {
        assert!(
            *e < 0.4,
            "step from row {}: torso {e:.3}° off the reference's (errors {explicit:?})",
            105 + k
        );
    }
    // Rapier's own linearisation leaves the torso behind by about a degree
    // in each of these steps.
    let mut linearised = PhysicsConfig::default();
    linearised.solver.explicit_coriolis = false;
    let linearised = torso_errors_in_the_air(&linearised);
    assert!(
        linearised.iter().all(|e| *e > 0.8),
        "rapier's linearised step: {linearised:?}"
    );
}
