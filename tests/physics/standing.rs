//! Standing: each robot type beamed onto the field with zero commands stays
//! upright for 10 s, settles at the reference torso height (±5 mm) and its
//! feet slide less than 1 cm.

use super::util::{reference_setup, trace, world};

fn stand(robot_type: u8) {
    let trace = trace(&format!("c_stand_t{robot_type}.csv"));
    let ref_z = trace.at(500, "torso_z");
    let mut w = world();
    let h = reference_setup(&mut w, robot_type);
    let m = w.robot_model(h).clone();
    let feet: Vec<usize> = m.foot_sensors.iter().map(|s| s.part).collect();
    // Feet positions once settled (after 0.5 s) vs. at the end.
    let mut settled = Vec::new();
    let mut min_up = 1.0f32;
    for step in 1..=500 {
        w.step();
        let torso = w.part_pose(h, m.torso);
        let up = torso.rotation * nalgebra::Vector3::z();
        min_up = min_up.min(up.z);
        if step == 25 {
            settled = feet
                .iter()
                .map(|&f| w.part_pose(h, f).translation.vector)
                .collect();
        }
    }
    let z = w.part_pose(h, m.torso).translation.z as f64;
    assert!(
        min_up > 0.99,
        "type {robot_type}: tilted (up.z min {min_up})"
    );
    assert!(
        (z - ref_z).abs() < 0.005,
        "type {robot_type}: torso z {z:.5} vs reference {ref_z:.5}"
    );
    for (i, &f) in feet.iter().enumerate() {
        let p = w.part_pose(h, f).translation.vector;
        let slide = (p - settled[i]).xy().norm();
        assert!(
            slide < 0.01,
            "type {robot_type}: foot {} slid {slide:.4} m",
            m.parts[f].name
        );
    }
    eprintln!("type {robot_type}: torso z {z:.5} (reference {ref_z:.5}), min up.z {min_up:.5}");
}

#[test]
fn type0_stands() {
    stand(0);
}

#[test]
fn type1_stands() {
    stand(1);
}

#[test]
fn type2_stands() {
    stand(2);
}

#[test]
fn type3_stands() {
    stand(3);
}

#[test]
fn type4_stands() {
    stand(4);
}

/// The FRP of both feet sums to the robot's weight (±5 %) and the ACC the
/// server computes from the torso velocity reads (0, 0, 9.81).
#[test]
fn foot_forces_carry_the_weight_and_acc_reads_gravity() {
    let mut w = world();
    let h = reference_setup(&mut w, 0);
    let m = w.robot_model(h).clone();
    for _ in 0..100 {
        w.step();
    }
    let weight = m.total_mass() * 9.81;
    let mut v_prev = w.torso_linvel(h);
    let mut last = (0.0, 0.0);
    let mut last_acc = nalgebra::Vector3::zeros();
    for _ in 0..50 {
        w.step();
        let mut fz = 0.0;
        for (s, sensor) in m.foot_sensors.iter().enumerate() {
            let (c, f) = w
                .foot_force(h, s)
                .unwrap_or_else(|| panic!("{} reports no contact", sensor.name));
            // A flat sole: the centre of pressure lies on the sole, 1 cm
            // below the foot centre.
            assert!((c.z + 0.01).abs() < 0.003, "{}: c {c:?}", sensor.name);
            fz += f.z;
        }
        assert!(
            (fz - weight).abs() <= 0.05 * weight,
            "FRP sum {fz:.2} N vs weight {weight:.2} N"
        );
        last = (fz, weight);
        let v = w.torso_linvel(h);
        let r = w.part_pose(h, m.torso).rotation;
        let acc = r.inverse() * ((v - v_prev) / 0.02 - nalgebra::Vector3::new(0.0, 0.0, -9.81));
        v_prev = v;
        last_acc = acc;
        // 0.25 m/s² ≈ gravity seen through a 1.5° tilt.
        assert!(
            (acc - nalgebra::Vector3::new(0.0, 0.0, 9.81)).norm() < 0.25,
            "ACC {acc:?}"
        );
    }
    eprintln!(
        "FRP sum {:.2} N (weight {:.2} N), ACC {last_acc:.3?}",
        last.0, last.1
    );
}

/// The reference's robots rest about 1 mm deep in the ground: its 1 mm
/// surface layer, within which a contact does not push back, plus a stiff
/// contact. With the same layer (`contacts.robot_ground_layer`, default
/// 0.001) and the default stiff contact, the feet of types 0–3 rest within
/// 0.05 mm of the reference's; without the layer, rapier corrects every
/// penetration and they rest at least 0.3 mm higher. The torso stands
/// 0.09–0.10 mm above the reference's (within 0.15 mm): the reference's
/// joints give that much under the robot's weight (their rows' CFM),
/// ours are rigid.
#[test]
fn with_the_surface_layer_the_feet_rest_as_deep_as_the_references() {
    for robot_type in 0..4u8 {
        let parts = super::util::trace(&format!("c_stand_t{robot_type}.parts.csv"));
        let stand = trace(&format!("c_stand_t{robot_type}.csv"));
        let rest = |layer: f32| {
            let mut cfg = rcss3d::sim::world::PhysicsConfig::default();
            cfg.contacts.robot_ground_layer = layer;
            let mut w = super::util::world_with(&cfg);
            let h = reference_setup(&mut w, robot_type);
            for _ in 0..100 {
                w.step();
            }
            let m = w.robot_model(h).clone();
            let feet: Vec<(String, f64)> = m
                .foot_sensors
                .iter()
                .map(|s| {
                    let name = m.parts[s.part].name.to_string();
                    (name, w.part_pose(h, s.part).translation.z as f64)
                })
                .collect();
            (feet, w.part_pose(h, m.torso).translation.z as f64)
        };
        let ref_torso = stand.at(500, "torso_z");
        let (without, _) = rest(0.0);
        let default_layer = rcss3d::sim::world::PhysicsConfig::default()
            .contacts
            .robot_ground_layer;
        assert_eq!(default_layer, 0.001, "the reference's surface layer");
        let (with, torso) = rest(default_layer);
        for ((name, z0), (_, z)) in without.iter().zip(&with) {
            let reference = parts.at(500, &format!("{name}_z"));
            eprintln!(
                "type {robot_type}: {name} rests at z {z:.5} with the layer, {z0:.5} without, the reference's {reference:.5}"
            );
            assert!(
                z0 - reference > 0.0003,
                "type {robot_type}: {name} already rests as deep without the layer"
            );
            assert!(
                (z - reference).abs() < 0.00005,
                "type {robot_type}: {name} rests at z {z:.5}, the reference's at {reference:.5}"
            );
        }
        eprintln!("type {robot_type}: torso at z {torso:.6}, the reference's at {ref_torso:.6}");
        assert!(
            (torso - ref_torso).abs() < 0.00015,
            "type {robot_type}: torso at z {torso:.6}, the reference's at {ref_torso:.6}"
        );
    }
}

/// The reference's robot–ground rows push a part back out of the ground
/// by 0.4 of its penetration beyond the 1 mm surface layer per step
/// (their ERP). A standing robot pressed 5 mm into the ground is pushed
/// out at that rate here too: one step removes 0.35–0.45 of the excess
/// depth (rapier's earlier default contact, 30 Hz with damping ratio 5,
/// removes less than 0.3).
#[test]
fn a_robot_pressed_into_the_ground_is_pushed_out_at_the_references_rate() {
    let excess_removed = |cfg: &rcss3d::sim::world::PhysicsConfig| {
        let mut w = super::util::world_with(cfg);
        let h = reference_setup(&mut w, 0);
        for _ in 0..100 {
            w.step();
        }
        let m = w.robot_model(h).clone();
        let foot = m.foot_sensors[0].part;
        // A flat foot's sole is 10 mm below its centre.
        let depth = |w: &rcss3d::sim::world::World| 0.01 - w.part_pose(h, foot).translation.z;
        let mut s = w.robot_state(h).expect("a robot");
        s.torso.translation.z -= 0.005;
        s.linvel = nalgebra::Vector3::zeros();
        s.angvel = nalgebra::Vector3::zeros();
        s.joint_rates.iter_mut().for_each(|r| *r = 0.0);
        w.set_robot_state(h, &s).expect("a state");
        // The contacts a step starts from were found at the end of the
        // step before: the first step after moving the robot by hand
        // still sees it 1 mm deep, and holds it.
        w.step();
        let before = depth(&w);
        w.step();
        let after = depth(&w);
        let layer = cfg.contacts.robot_ground_layer;
        eprintln!(
            "pressed {:.2} mm deep, {:.2} mm after one step (layer {:.1} mm)",
            before * 1000.0,
            after * 1000.0,
            layer * 1000.0
        );
        (before - after) / (before - layer)
    };
    let ours = excess_removed(&rcss3d::sim::world::PhysicsConfig::default());
    assert!(
        (0.35..=0.45).contains(&ours),
        "one step removed {ours:.3} of the excess depth, the reference's 0.4"
    );
    let mut soft = rcss3d::sim::world::PhysicsConfig::default();
    soft.contacts.natural_frequency = 30.0;
    soft.contacts.damping_ratio = 5.0;
    let soft = excess_removed(&soft);
    assert!(
        soft < 0.3,
        "the softer contact removed {soft:.3} of the excess depth"
    );
}
