//! The hinge damping without its brake (`joints.damping_brakes: false`):
//! the damping's torque is given back, so a joint overpowered by its load
//! yields faster than with the brake; what remains of the damping is the
//! inertia it adds to the hinge (damping × step), so it yields slower
//! than with no damping at all.

use nalgebra::Vector3;
use rcss3d::sim::world::PhysicsConfig;

use super::util::{model, world_with};

/// The left hip pitch's travel (°) over 5 steps of a type-0 robot
/// floating without gravity, its motor driving at full speed against a
/// push on the foot whose torque about the hip pitch is twice the
/// motor's maximum, with hinge damping `damping` that brakes or not.
fn yield_under_push(damping: f32, brakes: bool) -> f32 {
    let mut cfg = PhysicsConfig {
        gravity: 0.0,
        ..PhysicsConfig::default()
    };
    cfg.joints.damping = damping;
    cfg.joints.damping_brakes = brakes;
    let mut w = world_with(&cfg);
    let h = w.add_robot(model(0), Vector3::new(-5.0, 0.0, 2.0), 0.0);
    w.step();
    let m = w.robot_model(h).clone();
    let j = m.joint_by_effector("lle3").expect("left hip pitch");
    let foot = m
        .parts
        .iter()
        .position(|p| &*p.name == "lfoot")
        .expect("left foot");
    let jd = &m.joints[j];
    // The hinge's axis and anchor in the field, from the parent's pose.
    let parent = w.part_pose(h, jd.parent);
    let axis = parent.rotation * jd.axis.into_inner();
    let anchor = parent * nalgebra::Point3::from(jd.anchor - m.parts[jd.parent].pos);
    let lever = w.part_pose(h, foot).translation.vector - anchor.coords;
    let across = axis.cross(&lever);
    let torque = 2.0 * jd.max_torque;
    // Force perpendicular to the axis and the lever: torque = |lever| × F
    // about +axis.
    let push = across.normalize() * (torque / across.norm() * lever.norm() / lever.norm());
    w.set_part_force(h, foot, push);
    w.set_joint_speed(h, j, -100.0);
    let start = w.joint_angle_deg(h, j);
    for _ in 0..5 {
        w.step();
    }
    w.joint_angle_deg(h, j) - start
}

#[test]
fn without_its_brake_the_hinge_damping_lets_an_overpowered_joint_yield_faster() {
    let free = yield_under_push(0.0, true);
    let given_back = yield_under_push(0.1, false);
    let braked = yield_under_push(0.1, true);
    eprintln!("hip pitch yield over 5 steps: no damping {free:.2}°, damping 0.1 without its brake {given_back:.2}°, with it {braked:.2}°");
    assert!(
        free > 1.0,
        "the push should overpower the motor ({free:.2}°)"
    );
    assert!(
        given_back > braked + 0.5,
        "without the brake the joint yields {given_back:.2}°, with it {braked:.2}°"
    );
    assert!(
        given_back < free,
        "the damping's inertia remains: {given_back:.2}° against {free:.2}° without damping"
    );
}
