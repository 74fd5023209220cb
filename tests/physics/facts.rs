//! Model facts: every robot type equals `nao-facts.ron` to 1e-6.

use std::collections::BTreeMap;

use nalgebra::Vector3;
use rcss3d::sim::model::{PerceptorSlot, RobotModel};

use super::util::{library, model, reference_dir};

#[derive(serde::Deserialize)]
struct Facts {
    robot: RobotFacts,
}

#[derive(serde::Deserialize)]
struct RobotFacts {
    total_mass: f64,
    parts: Vec<PartFacts>,
    joints: Vec<JointFacts>,
    types: Vec<TypeFacts>,
}

#[derive(serde::Deserialize, Clone)]
struct PartFacts {
    name: String,
    mass: f64,
    shape: String,
    dims: Vec<f64>,
    collider: bool,
    pos: (f64, f64, f64),
    inertia: (f64, f64, f64),
}

#[derive(serde::Deserialize, Clone)]
struct JointFacts {
    perceptor: String,
    effector: String,
    child: String,
    parent: String,
    anchor: (f64, f64, f64),
    anchor_in_child: (f64, f64, f64),
    anchor_in_parent: (f64, f64, f64),
    axis: (f64, f64, f64),
    min_deg: f64,
    max_deg: f64,
    max_speed: f64,
}

#[derive(serde::Deserialize)]
struct TypeFacts {
    id: u8,
    joint_count: usize,
    changed_parts: Vec<PartFacts>,
    changed_joints: Vec<JointFacts>,
    added_joints: Vec<JointFacts>,
}

fn facts() -> Facts {
    let path = reference_dir().join("nao-facts.ron");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => panic!("{}: {e}", path.display()),
    };
    match ron::Options::default().from_str::<Facts>(&text) {
        Ok(f) => f,
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

fn v(t: (f64, f64, f64)) -> Vector3<f64> {
    Vector3::new(t.0, t.1, t.2)
}

fn close(a: Vector3<f64>, b: Vector3<f64>, tol: f64) -> bool {
    (a - b).amax() <= tol
}

const TOL: f64 = 1e-6;

fn check_type(m: &RobotModel, parts: &[PartFacts], joints: &[JointFacts], total_mass: f64) {
    let t = m.robot_type;
    assert_eq!(m.parts.len(), parts.len(), "type {t}: part count");
    let mass: f64 = m.parts.iter().map(|p| p.mass as f64).sum();
    assert!(
        (mass - total_mass).abs() < TOL,
        "type {t}: total mass {mass} vs {total_mass}"
    );
    for pf in parts {
        let i = m
            .part_by_name(&pf.name)
            .unwrap_or_else(|| panic!("type {t}: no part {}", pf.name));
        let p = &m.parts[i];
        assert!(
            (p.mass as f64 - pf.mass).abs() < TOL,
            "type {t} {}: mass {} vs {}",
            pf.name,
            p.mass,
            pf.mass
        );
        let pos = p.pos.map(|x| x as f64);
        assert!(
            close(pos, v(pf.pos), TOL),
            "type {t} {}: pos {pos:?} vs {:?}",
            pf.name,
            pf.pos
        );
        // Inertia: the facts carry 7 significant digits.
        let inertia = p.inertia.map(|x| x as f64);
        let fi = v(pf.inertia);
        assert!(
            (inertia - fi).amax() <= 1e-6 * fi.amax().max(1e-6) * 10.0 + 1e-10,
            "type {t} {}: inertia {inertia:?} vs {fi:?}",
            pf.name
        );
        assert_eq!(
            p.collider.is_some(),
            pf.collider,
            "type {t} {}: collider",
            pf.name
        );
        let _ = (&pf.shape, &pf.dims);
    }
    assert_eq!(m.joints.len(), joints.len(), "type {t}: joint count");
    for jf in joints {
        let i = m
            .joint_by_effector(&jf.effector)
            .unwrap_or_else(|| panic!("type {t}: no joint {}", jf.effector));
        let j = &m.joints[i];
        let name = &jf.effector;
        assert_eq!(&*j.perceptor, jf.perceptor, "type {t} {name}: perceptor");
        assert_eq!(&*m.parts[j.child].name, jf.child, "type {t} {name}: child");
        assert_eq!(
            &*m.parts[j.parent].name, jf.parent,
            "type {t} {name}: parent"
        );
        let anchor = j.anchor.map(|x| x as f64);
        assert!(
            close(anchor, v(jf.anchor), TOL),
            "type {t} {name}: anchor {anchor:?} vs {:?}",
            jf.anchor
        );
        let aic = j.anchor_in_child(m).map(|x| x as f64);
        assert!(
            close(aic, v(jf.anchor_in_child), TOL),
            "type {t} {name}: anchor in child {aic:?}"
        );
        let aip = j.anchor_in_parent(m).map(|x| x as f64);
        assert!(
            close(aip, v(jf.anchor_in_parent), TOL),
            "type {t} {name}: anchor in parent {aip:?}"
        );
        // ODE normalises the axis (the hip axis is written as 0.7071).
        let axis = j.axis.map(|x| x as f64);
        assert!(
            close(axis, v(jf.axis).normalize(), TOL),
            "type {t} {name}: axis {axis:?}"
        );
        assert!(
            (j.min_deg as f64 - jf.min_deg).abs() < TOL,
            "type {t} {name}: min"
        );
        assert!(
            (j.max_deg as f64 - jf.max_deg).abs() < TOL,
            "type {t} {name}: max"
        );
        assert!(
            (j.max_speed as f64 - jf.max_speed).abs() < 1e-6 * jf.max_speed.max(1.0) * 2.0,
            "type {t} {name}: max speed {} vs {}",
            j.max_speed,
            jf.max_speed
        );
        assert!(
            (j.max_torque - 10.0).abs() < 1e-6,
            "type {t} {name}: torque"
        );
    }
}

#[test]
fn every_type_matches_the_reference_facts() {
    let f = facts();
    for tf in &f.robot.types {
        let mut parts: BTreeMap<String, PartFacts> = f
            .robot
            .parts
            .iter()
            .map(|p| (p.name.clone(), p.clone()))
            .collect();
        for p in &tf.changed_parts {
            parts.insert(p.name.clone(), p.clone());
        }
        let mut joints: BTreeMap<String, JointFacts> = f
            .robot
            .joints
            .iter()
            .map(|j| (j.effector.clone(), j.clone()))
            .collect();
        for j in tf.changed_joints.iter().chain(&tf.added_joints) {
            joints.insert(j.effector.clone(), j.clone());
        }
        let parts: Vec<PartFacts> = parts.into_values().collect();
        let joints: Vec<JointFacts> = joints.into_values().collect();
        let m = model(tf.id);
        assert_eq!(m.robot_type, tf.id);
        assert_eq!(m.joints.len(), tf.joint_count);
        check_type(&m, &parts, &joints, f.robot.total_mass);
    }
}

#[test]
fn nao_rsg_is_type_0_and_bad_types_are_refused() {
    let lib = library();
    let m = lib
        .resolve("rsg/agent/nao/nao.rsg", &[])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.robot_type, 0);
    assert_eq!(m.parts.len(), 23);
    for bad in ["5", "-1", "x", "1.5"] {
        let e = lib.resolve("rsg/agent/nao/nao_hetero.rsg", &[bad.to_string()]);
        assert!(e.is_err(), "type {bad} accepted");
    }
    assert!(lib.resolve("rsg/agent/nao/nao_hetero.rsg", &[]).is_err());
    let e = lib
        .resolve("rsg/agent/soccerbot/soccerbot.rsg", &[])
        .expect_err("unknown");
    assert!(e.to_string().contains("soccerbot"), "{e}");
}

#[test]
fn perceptor_order_is_depth_first() {
    let m = model(4);
    let names: Vec<String> = m
        .perceptor_order
        .iter()
        .map(|s| match s {
            PerceptorSlot::Gyro => "GYR".to_string(),
            PerceptorSlot::Acc => "ACC".to_string(),
            PerceptorSlot::Vision => "See".to_string(),
            PerceptorSlot::Joint(j) => m.joints[*j].perceptor.to_string(),
            PerceptorSlot::Force(f) => m.foot_sensors[*f].name.to_string(),
        })
        .collect();
    let expected = "GYR ACC hj1 hj2 See raj1 raj2 raj3 raj4 laj1 laj2 laj3 laj4 \
                    rlj1 rlj2 rlj3 rlj4 rlj5 rf rlj6 rf1 rlj7 llj1 llj2 llj3 llj4 llj5 lf llj6 lf1 llj7";
    assert_eq!(names.join(" "), expected);
    assert_eq!(&*m.parts[m.torso].name, "torso");
    assert_eq!(&*m.parts[m.head].name, "head");
    let visible: Vec<&str> = m
        .parts
        .iter()
        .filter_map(|p| p.visible_id.as_deref())
        .collect();
    assert_eq!(
        visible,
        ["head", "rlowerarm", "llowerarm", "rfoot", "lfoot"]
    );
}
