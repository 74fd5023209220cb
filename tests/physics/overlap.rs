//! Robots put inside each other pass through each other until they are
//! apart; robots that meet normally collide.

use nalgebra::Vector3;
use rcss3d::sim::world::{RobotHandle, World};

use super::util::{model, world};

fn torso(w: &World, h: RobotHandle) -> Vector3<f32> {
    w.part_pose(h, w.robot_model(h).torso).translation.vector
}

fn farthest_part(w: &World, h: RobotHandle) -> f32 {
    (0..w.robot_model(h).parts.len())
        .map(|p| w.part_pose(h, p).translation.vector.norm())
        .fold(0.0, f32::max)
}

/// Drops `b` from 1.1 m onto the standing `a` and checks that the two
/// touch and that `b` stays on top (torso above 0.6 m) for 0.3 s.
fn assert_lands_on(w: &mut World, a: RobotHandle, b: RobotHandle, context: &str) {
    let at = torso(w, a);
    w.place_robot(b, Vector3::new(at.x, at.y, 1.1), 0.0);
    let mut touched = false;
    let mut lowest = f32::MAX;
    for _ in 0..15 {
        w.step();
        touched |= w.robot_contacts().contains(&(a.min(b), a.max(b)));
        lowest = lowest.min(torso(w, b).z);
    }
    assert!(
        touched,
        "{context}: the dropped robot never touched the other"
    );
    assert!(
        lowest > 0.6,
        "{context}: the dropped robot went through the standing one (torso down to {lowest} m)"
    );
}

#[test]
fn robots_created_inside_each_other_pass_through_until_apart() {
    let mut w = world();
    let a = w.add_robot(model(0), Vector3::new(0.0, 0.0, 0.4), 0.0);
    let b = w.add_robot(model(1), Vector3::new(0.02, 0.03, 0.4), 90.0);
    for _ in 0..50 {
        w.step();
        assert!(
            !w.robot_contacts().contains(&(a.min(b), a.max(b))),
            "robots created inside each other collided"
        );
    }
    for h in [a, b] {
        let far = farthest_part(&w, h);
        assert!(far < 1.0, "robot {h:?}: a part is {far} m from the centre");
    }

    // Apart, then dropped onto each other: they collide again.
    w.place_robot(b, Vector3::new(3.0, 0.0, 0.4), 0.0);
    for _ in 0..5 {
        w.step();
    }
    assert_lands_on(&mut w, a, b, "after being apart");
}

#[test]
fn robots_placed_apart_collide() {
    let mut w = world();
    let a = w.add_robot(model(0), Vector3::new(0.0, 0.0, 0.4), 0.0);
    let b = w.add_robot(model(0), Vector3::new(4.0, 0.0, 0.4), 0.0);
    for _ in 0..20 {
        w.step();
    }
    assert_lands_on(&mut w, a, b, "placed apart");
}
