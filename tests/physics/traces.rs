//! Open-loop replays of the reference falling and kicking traces.

use nalgebra::Vector3;

use super::util::{reference_dir, reference_setup, trace, world};
use rcss3d_tools::replay::{apply, Script};

/// First step at which the torso centre is below `z`.
fn first_below(z: &[f64], below: f64) -> Option<usize> {
    z.iter().position(|&v| v < below).map(|i| i + 1)
}

#[test]
fn falling_forward_matches_the_reference() {
    let trace = trace("e_fall_forward.csv");
    let script = Script::load(
        &reference_dir()
            .join("physics")
            .join("e_fall_forward.sent.txt"),
    );
    let mut w = world();
    let h = reference_setup(&mut w, 0);
    let torso = w.robot_model(h).torso;
    let mut z = Vec::new();
    let mut fwd_z = 0.0;
    for step in 0..200 {
        apply(&mut w, h, &script, step);
        w.step();
        let p = w.part_pose(h, torso);
        z.push(p.translation.z as f64);
        fwd_z = (p.rotation * Vector3::y()).z as f64;
    }
    let ref_z = trace.column("torso_z");
    let ref_down = first_below(&ref_z, 0.2).unwrap_or(usize::MAX);
    let ours = first_below(&z, 0.2).unwrap_or(usize::MAX);
    let ref_fwd = trace.at(200, "torso_r21");
    eprintln!(
        "fall: torso below 0.2 m at step {ours} (reference {ref_down}); forward axis z {fwd_z:.3} (reference {ref_fwd:.3}); final torso z {:.3} (reference {:.3})",
        z[199],
        trace.at(200, "torso_z")
    );
    assert!(
        fwd_z < -0.5,
        "the robot did not fall forward (forward axis z {fwd_z:.3})"
    );
    let dt = (ours as f64 - ref_down as f64).abs() * 0.02;
    assert!(
        dt <= 0.3,
        "torso on the ground at step {ours}, reference {ref_down} ({dt:.2} s apart)"
    );
}

#[test]
fn kicked_ball_travels_like_the_reference() {
    let trace = trace("f_kick.csv");
    let script = Script::load(&reference_dir().join("physics").join("f_kick.sent.txt"));
    let mut w = world();
    let h = reference_setup(&mut w, 0);
    let mut start = None;
    for step in 0..250 {
        apply(&mut w, h, &script, step);
        if step == 0 {
            start = Some(w.ball_position());
        }
        w.step();
    }
    let start = start.unwrap_or_else(Vector3::zeros);
    let dist = (w.ball_position() - start).xy().norm() as f64;
    let rx = trace.column("ball_x");
    let ry = trace.column("ball_y");
    let ref_dist =
        ((rx[rx.len() - 1] - -4.84).powi(2) + (ry[ry.len() - 1] - -0.055).powi(2)).sqrt();
    eprintln!("kick: ball travelled {dist:.3} m (reference {ref_dist:.3} m)");
    assert!(
        (dist - ref_dist).abs() <= 0.25 * ref_dist,
        "ball travelled {dist:.3} m, reference {ref_dist:.3} m"
    );
}

/// A robot lying on the ground is placed upright elsewhere (referee
/// repositioning): it lands on its feet without exploding or sinking.
#[test]
fn placing_a_fallen_robot_does_not_explode() {
    let script = Script::load(
        &reference_dir()
            .join("physics")
            .join("e_fall_forward.sent.txt"),
    );
    let mut w = world();
    let h = reference_setup(&mut w, 0);
    for step in 0..120 {
        apply(&mut w, h, &script, step);
        w.step();
    }
    let m = w.robot_model(h).clone();
    // Joints are kept; zero them first so that it can stand.
    for j in 0..m.joints.len() {
        w.set_joint_speed(h, j, 0.0);
    }
    w.place_robot(h, Vector3::new(3.0, -2.0, 0.6), 90.0);
    // Upright with heading 90° (facing +y): the model's forward axis
    // (local +y) along field +y, its up axis along +z.
    let placed = w.part_pose(h, m.torso);
    assert!((placed.rotation * Vector3::y() - Vector3::y()).norm() < 1e-4);
    assert!((placed.rotation * Vector3::z() - Vector3::z()).norm() < 1e-4);
    assert!((placed.translation.vector - Vector3::new(3.0, -2.0, 0.6)).norm() < 1e-4);
    assert!(w.torso_linvel(h).norm() < 1e-6);
    // The legs stay bent from the fall, so it topples again; it must not
    // explode, fly off or sink into the ground.
    let mut max_speed = 0.0f32;
    for _ in 0..50 {
        w.step();
        max_speed = max_speed.max(w.torso_linvel(h).norm());
    }
    let p = w.part_pose(h, m.torso);
    eprintln!(
        "placed: torso at {:?}, max torso speed {max_speed:.2} m/s",
        p.translation.vector
    );
    assert!(max_speed < 5.0, "torso reached {max_speed:.2} m/s");
    let moved = (p.translation.vector - Vector3::new(3.0, -2.0, 0.0))
        .xy()
        .norm();
    assert!(moved < 0.5, "torso ended {moved:.2} m from the placement");
    assert!(
        p.translation.z > 0.05,
        "torso below the ground: {:?}",
        p.translation
    );
}
