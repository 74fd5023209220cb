//! Drag on robot parts (docs/physics.md#drag): every part, the light
//! link bodies included, gets −0.01·v N and −0.01·ω N·m before each step,
//! and nothing else brakes a robot's motion through the air. On a whole
//! robot turning about its vertical axis that is a braking torque of
//! Σ (angular drag + linear drag × r²) per rad/s, against the robot's
//! moment of inertia about that axis: a robot spinning in the air slows
//! down by exactly that fraction per step.

use nalgebra::{Isometry3, Vector3};
use rcss3d::sim::world::{PhysicsConfig, World, DEFAULT_CYCLE_DT};

use super::util::{model, world_with};
use rcss3d_tools::replay::{apply, gaits_dir, start, Scenario};

/// A type-0 robot high in the air in its zero pose, spinning about the
/// vertical at `spin` rad/s. Returns the yaw rate after each of `steps`
/// steps.
fn spin_down(cfg: &PhysicsConfig, spin: f32, steps: usize) -> Vec<f32> {
    let m = model(0);
    let mut w: World = world_with(cfg);
    let h = w.add_robot(m.clone(), Vector3::new(0.0, 0.0, 5.0), 0.0);
    let mut state = w.robot_state(h).expect("an articulated robot");
    state.torso = Isometry3::translation(0.0, 0.0, 5.0);
    state.linvel = Vector3::zeros();
    state.angvel = Vector3::new(0.0, 0.0, spin);
    state.joint_angles.iter_mut().for_each(|q| *q = 0.0);
    state.joint_rates.iter_mut().for_each(|q| *q = 0.0);
    w.set_robot_state(h, &state)
        .expect("set the spinning state");
    (0..steps)
        .map(|_| {
            w.step();
            let t = w.part_pose(h, m.torso).rotation;
            (t * w.torso_angvel_local(h)).z
        })
        .collect()
}

#[test]
fn a_robot_spinning_in_the_air_slows_at_its_parts_drag() {
    // The reference's model (the default): the parts' drag as forces, no
    // damping of the free root.
    let cfg = PhysicsConfig::default();
    let m = model(0);
    // The robot in its zero pose (every joint held there): its mass
    // centre, its moment of inertia about the vertical axis through it,
    // and the drag's braking torque per rad/s about that axis.
    let mass: f32 = m.parts.iter().map(|p| p.mass).sum();
    let com: Vector3<f32> = m.parts.iter().map(|p| p.pos * p.mass).sum::<Vector3<f32>>() / mass;
    let r2 = |p: &Vector3<f32>| (p - com).xy().norm_squared();
    let inertia: f32 = m
        .parts
        .iter()
        .map(|p| p.inertia.z + p.mass * r2(&p.pos))
        .sum();
    let braking: f32 = m
        .parts
        .iter()
        .map(|p| cfg.drag.part_angular + cfg.drag.part_linear * r2(&p.pos))
        .sum();
    // The drag is explicit (from the velocity each step starts with).
    let per_step = 1.0 - DEFAULT_CYCLE_DT * braking / inertia;
    let steps = 5;
    let expected = per_step.powi(steps as i32);

    let rates = spin_down(&cfg, 2.0, steps + 1);
    let ratio = rates[steps] / rates[0];
    assert!(rates[0] > 1.0, "the robot does not spin: {rates:?}");
    assert!(
        (ratio - expected).abs() < 0.05 * (1.0 - expected),
        "yaw rate kept {ratio:.4} of itself over {steps} steps ({rates:?}); the parts' \
         drag ({braking:.4} N·m·s against {inertia:.4} kg·m²) gives {expected:.4}"
    );

    // Without drag a spinning robot keeps its spin: nothing else brakes
    // it (rapier's own damping of the free root, 0.1 N·m·s/rad, would: 7 %
    // per step).
    let mut free = cfg;
    free.drag.part_angular = 0.0;
    free.drag.part_linear = 0.0;
    let rates = spin_down(&free, 2.0, steps + 1);
    let kept = rates[steps] / rates[0];
    assert!(
        kept > 0.99,
        "without drag the robot kept only {kept:.4} of its spin over {steps} steps: {rates:?}"
    );
}

/// In the first rows of the recorded gaits a type-0 robot, beamed 14 mm
/// above the ground, swings its arms at full speed and bends its knees
/// before its feet touch down. Its torso's turn in the air is set by the
/// drag on the swinging parts (the light link bodies carry the full
/// −0.01·ω each): the reference's torso turns at 11.5, 12.2 and 13.0°/s
/// over the first three steps, where without that drag it would slow
/// down (11.5, 8.4, 5.5°/s).
#[test]
fn a_robot_turns_in_the_air_as_the_references_drag_says() {
    let sc = Scenario::load(&gaits_dir(), "g_walk_t0");
    let (mut w, h) = start(&PhysicsConfig::default(), &sc.script);
    let torso = w.robot_model(h).torso;
    let reference = sc.trace.column("gyr_x");
    for (step, &theirs) in reference.iter().enumerate().take(3) {
        let before = w.part_pose(h, torso).rotation;
        apply(&mut w, h, &sc.script, step);
        w.step();
        let turn = (before.inverse() * w.part_pose(h, torso).rotation).scaled_axis() / 0.02;
        let ours = turn.x.to_degrees() as f64;
        eprintln!(
            "row {}: torso turns {ours:.2}°/s, reference {theirs:.2}°/s",
            step + 1
        );
        assert!(
            (ours - theirs).abs() <= 0.05 * theirs.abs(),
            "row {}: the torso turns at {ours:.2}°/s in the air, the reference's at {theirs:.2}°/s",
            step + 1
        );
    }
}
