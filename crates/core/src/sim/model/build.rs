//! Reading a robot model from an expanded scene tree: the parts (one per
//! `RigidBody`), then the hinges, sensors and perceptor order, then
//! everything expressed relative to the torso centre.

use std::collections::BTreeMap;
use std::sync::Arc;

use nalgebra::{Unit, Vector3};

use super::{
    FootSensorDesc, JointDesc, PartDesc, PerceptorSlot, RobotModel, ShapeDesc, SurfaceDesc,
};
use crate::command::HINGE_EFFECTORS;
use crate::sim::scene::{Call, SceneError, SceneTree};

fn f(x: f64) -> f32 {
    x as f32
}

fn v3(v: Vector3<f64>) -> Vector3<f32> {
    v.map(f)
}

/// ODE's inertia helpers for a solid of total mass `m`.
pub fn inertia_of(shape: ShapeDesc, m: f32) -> Vector3<f32> {
    let m = m as f64;
    match shape {
        ShapeDesc::Box(l) => {
            let (x, y, z) = (l.x as f64, l.y as f64, l.z as f64);
            v3(Vector3::new(
                m / 12.0 * (y * y + z * z),
                m / 12.0 * (x * x + z * z),
                m / 12.0 * (x * x + y * y),
            ))
        }
        ShapeDesc::Sphere { radius } => {
            let r = radius as f64;
            v3(Vector3::repeat(0.4 * m * r * r))
        }
        ShapeDesc::Capsule { radius, length } => {
            let (r, l) = (radius as f64, length as f64);
            let vc = std::f64::consts::PI * r * r * l;
            let vs = 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
            let m1 = m * vc / (vc + vs);
            let m2 = m * vs / (vc + vs);
            let izz = m1 * r * r / 2.0 + m2 * 0.4 * r * r;
            let ixx = m1 * (0.25 * r * r + l * l / 12.0)
                + m2 * (0.4 * r * r + 0.375 * r * l + 0.25 * l * l);
            v3(Vector3::new(ixx, ixx, izz))
        }
    }
}

fn shape_from_mass_call(c: &Call) -> Result<(f32, ShapeDesc), SceneError> {
    match c.method.as_str() {
        "setBoxTotal" => {
            c.expect_args(4)?;
            Ok((f(c.num(0)?), ShapeDesc::Box(v3(c.vec3(1)?))))
        }
        "setSphereTotal" => {
            c.expect_args(2)?;
            Ok((
                f(c.num(0)?),
                ShapeDesc::Sphere {
                    radius: f(c.num(1)?),
                },
            ))
        }
        "setCapsuleTotal" => {
            c.expect_args(3)?;
            Ok((
                f(c.num(0)?),
                ShapeDesc::Capsule {
                    radius: f(c.num(1)?),
                    length: f(c.num(2)?),
                },
            ))
        }
        _ => Err(c.error("not a mass call")),
    }
}

/// Reads a collider node's shape.
pub fn collider_shape(tree: &SceneTree, node: usize) -> Result<Option<ShapeDesc>, SceneError> {
    let n = &tree.nodes[node];
    let shape = match n.class.as_str() {
        "BoxCollider" => match n.last_call("setBoxLengths") {
            Some(c) => {
                c.expect_args(3)?;
                Some(ShapeDesc::Box(v3(c.vec3(0)?)))
            }
            None => return Err(n.error("missing setBoxLengths")),
        },
        "SphereCollider" => match n.last_call("setRadius") {
            Some(c) => {
                c.expect_args(1)?;
                Some(ShapeDesc::Sphere {
                    radius: f(c.num(0)?),
                })
            }
            None => return Err(n.error("missing setRadius")),
        },
        "CapsuleCollider" => match n.last_call("setParams") {
            Some(c) => {
                c.expect_args(2)?;
                Some(ShapeDesc::Capsule {
                    radius: f(c.num(0)?),
                    length: f(c.num(1)?),
                })
            }
            None => return Err(n.error("missing setParams")),
        },
        _ => None,
    };
    if let Some(s) = shape {
        let ok = match s {
            ShapeDesc::Box(l) => l.iter().all(|x| *x > 0.0),
            ShapeDesc::Sphere { radius } => radius > 0.0,
            ShapeDesc::Capsule { radius, length } => radius > 0.0 && length >= 0.0,
        };
        if !ok {
            return Err(n.error("shape dimensions must be positive"));
        }
    }
    Ok(shape)
}

/// Reads the contact parameters of the handlers below a collider.
pub fn collider_surface(tree: &SceneTree, node: usize) -> Result<SurfaceDesc, SceneError> {
    let mut s = SurfaceDesc::default();
    for &h in &tree.nodes[node].children {
        let hn = &tree.nodes[h];
        if !matches!(
            hn.class.as_str(),
            "ContactJointHandler" | "TouchPerceptorHandler"
        ) {
            continue;
        }
        let mut bounce_on = false;
        let mut erp_on = false;
        let mut cfm_on = false;
        let mut slip_on = false;
        let (mut bounce, mut minv, mut erp, mut cfm, mut slip) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for c in &hn.calls {
            match c.method.as_str() {
                "setContactBounceMode" => bounce_on = c.boolean(0)?,
                "setContactSoftERPMode" => erp_on = c.boolean(0)?,
                "setContactSoftCFMMode" => cfm_on = c.boolean(0)?,
                "setContactSlipMode" => slip_on = c.boolean(0)?,
                "setContactBounceValue" => bounce = f(c.num(0)?),
                "setMinBounceVel" => minv = f(c.num(0)?),
                "setContactSoftERP" => erp = f(c.num(0)?),
                "setContactSoftCFM" => cfm = f(c.num(0)?),
                "setContactSlip" => slip = f(c.num(0)?),
                _ => {}
            }
        }
        s = SurfaceDesc {
            bounce: bounce_on.then_some(bounce),
            min_bounce_speed: bounce_on.then_some(minv),
            soft_erp: erp_on.then_some(erp),
            soft_cfm: cfm_on.then_some(cfm),
            slip: slip_on.then_some(slip),
        };
    }
    Ok(s)
}

fn invalid(scene: &str, message: impl Into<String>) -> SceneError {
    SceneError::Invalid {
        scene: scene.to_string(),
        message: message.into(),
    }
}

/// The parts of pass 1, with where each came from.
struct Parts {
    parts: Vec<PartDesc>,
    /// RigidBody node -> part.
    body_part: BTreeMap<usize, usize>,
    /// Transform node -> part.
    transform_part: BTreeMap<usize, usize>,
    /// Each part's position in the scene's frame.
    positions: Vec<Vector3<f64>>,
}

/// What pass 2 finds: the hinges, the sensors and the perceptor order.
#[derive(Default)]
struct Wiring {
    joints: Vec<JointDesc>,
    /// Each joint's anchor in the scene's frame.
    joint_world_anchor: Vec<Vector3<f64>>,
    /// HingeJoint node -> joint.
    joint_node: BTreeMap<usize, usize>,
    foot_sensors: Vec<FootSensorDesc>,
    perceptor_order: Vec<PerceptorSlot>,
    torso: Option<usize>,
    head: Option<usize>,
    robot_type: Option<u8>,
}

/// Interprets an expanded robot scene.
pub(super) fn build_model(scene: &str, tree: &SceneTree) -> Result<RobotModel, SceneError> {
    let order = tree.depth_first();
    let parts = read_parts(scene, tree, &order)?;
    let wiring = read_wiring(tree, &order, &parts)?;
    relative_to_torso(scene, parts, wiring)
}

/// Pass 1: parts (one per RigidBody, owned by its enclosing transform).
fn read_parts(scene: &str, tree: &SceneTree, order: &[usize]) -> Result<Parts, SceneError> {
    let mut p = Parts {
        parts: Vec::new(),
        body_part: BTreeMap::new(),
        transform_part: BTreeMap::new(),
        positions: Vec::new(),
    };
    for &i in order {
        let n = &tree.nodes[i];
        if n.class != "RigidBody" {
            continue;
        }
        let tr = tree
            .enclosing_transform(i)
            .ok_or_else(|| n.error("a RigidBody must be inside a Transform"))?;
        if p.transform_part.contains_key(&tr) {
            return Err(n.error("a second RigidBody in the same Transform"));
        }
        let part = read_part(tree, i, tr, &p.parts)?;
        let idx = p.parts.len();
        p.body_part.insert(i, idx);
        p.transform_part.insert(tr, idx);
        p.positions.push(tree.nodes[tr].world.translation.vector);
        p.parts.push(part);
    }
    if p.parts.is_empty() {
        return Err(invalid(scene, "no RigidBody: not a robot model"));
    }
    Ok(p)
}

/// One part: the RigidBody node `i`'s mass, the name of its Transform
/// `tr`, and the collider and visible id beside it.
fn read_part(
    tree: &SceneTree,
    i: usize,
    tr: usize,
    parts: &[PartDesc],
) -> Result<PartDesc, SceneError> {
    let n = &tree.nodes[i];
    let mass_call = n
        .calls
        .iter()
        .rev()
        .find(|c| {
            matches!(
                c.method.as_str(),
                "setBoxTotal" | "setSphereTotal" | "setCapsuleTotal"
            )
        })
        .ok_or_else(|| n.error("missing setBoxTotal/setSphereTotal/setCapsuleTotal"))?;
    let (mass, mass_shape) = shape_from_mass_call(mass_call)?;
    if mass <= 0.0 {
        return Err(mass_call.error("mass must be positive"));
    }
    let tn = &tree.nodes[tr];
    let name: Arc<str> = match (tn.class.as_str(), tn.name.as_deref()) {
        ("AgentAspect", _) => Arc::from("torso"),
        (_, Some(nm)) => Arc::from(nm),
        _ => return Err(tn.error("a robot part's Transform needs setName")),
    };
    if parts.iter().any(|p| p.name == name) {
        return Err(tn.error(format!("duplicate part name '{name}'")));
    }
    // Collider: a sibling collider in the same transform.
    let mut collider = None;
    let mut collider_name = None;
    let mut surface = SurfaceDesc::default();
    let mut visible_id = None;
    for &c in &tn.children {
        let cn = &tree.nodes[c];
        if let Some(s) = collider_shape(tree, c)? {
            if collider.is_some() {
                return Err(cn.error("a part may carry one collider only"));
            }
            collider = Some(s);
            collider_name = cn.name.as_deref().map(Arc::from);
            surface = collider_surface(tree, c)?;
        }
        if cn.class == "ObjectState" {
            if let Some(call) = cn.last_call("setID") {
                call.expect_args(1)?;
                visible_id = Some(Arc::from(call.args[0].as_str()));
            }
        }
    }
    Ok(PartDesc {
        name,
        mass,
        inertia: inertia_of(mass_shape, mass),
        mass_shape,
        pos: Vector3::zeros(),
        collider,
        collider_name,
        surface,
        visible_id,
    })
}

/// Pass 2: joints, sensors and the perceptor order.
fn read_wiring(tree: &SceneTree, order: &[usize], parts: &Parts) -> Result<Wiring, SceneError> {
    let part_of = |node: usize| -> Option<usize> {
        tree.enclosing_transform(node)
            .and_then(|t| parts.transform_part.get(&t).copied())
    };
    let mut w = Wiring::default();
    for &i in order {
        let n = &tree.nodes[i];
        match n.class.as_str() {
            "HingeJoint" => {
                let (joint, anchor) = read_hinge(tree, i, &parts.body_part)?;
                if w.joints
                    .iter()
                    .any(|j| j.effector == joint.effector || j.perceptor == joint.perceptor)
                {
                    return Err(n.error(format!(
                        "duplicate joint name {}/{}",
                        joint.perceptor, joint.effector
                    )));
                }
                w.joint_node.insert(i, w.joints.len());
                w.joint_world_anchor.push(anchor);
                w.joints.push(joint);
            }
            "HingePerceptor" => {
                let j = n
                    .parent
                    .and_then(|p| w.joint_node.get(&p).copied())
                    .ok_or_else(|| n.error("a HingePerceptor must be inside a HingeJoint"))?;
                w.perceptor_order.push(PerceptorSlot::Joint(j));
            }
            "GyroRatePerceptor" => {
                w.torso = part_of(i);
                w.perceptor_order.push(PerceptorSlot::Gyro);
            }
            "Accelerometer" => w.perceptor_order.push(PerceptorSlot::Acc),
            "RestrictedVisionPerceptor" | "VisionPerceptor" => {
                w.head = part_of(i);
                w.perceptor_order.push(PerceptorSlot::Vision);
            }
            "ForceResistancePerceptor" => {
                let part = part_of(i).ok_or_else(|| {
                    n.error("a ForceResistancePerceptor must be in a part's Transform")
                })?;
                let name = n.name.clone().ok_or_else(|| n.error("missing setName"))?;
                w.perceptor_order
                    .push(PerceptorSlot::Force(w.foot_sensors.len()));
                w.foot_sensors.push(FootSensorDesc {
                    name: Arc::from(name.as_str()),
                    part,
                });
            }
            "AgentState" => {
                if let Some(c) = n.last_call("setRobotType") {
                    c.expect_args(1)?;
                    let t = c.num(0)?;
                    if !(0.0..=255.0).contains(&t) || t.fract() != 0.0 {
                        return Err(c.error(format!("robot type {t} is not an integer 0-255")));
                    }
                    w.robot_type = Some(t as u8);
                }
            }
            _ => {}
        }
    }
    Ok(w)
}

/// A HingeJoint node: the joint (anchor still zero) and its anchor in the
/// scene's frame.
fn read_hinge(
    tree: &SceneTree,
    i: usize,
    body_part: &BTreeMap<usize, usize>,
) -> Result<(JointDesc, Vector3<f64>), SceneError> {
    let n = &tree.nodes[i];
    let tr = tree
        .enclosing_transform(i)
        .ok_or_else(|| n.error("a HingeJoint must be inside a Transform"))?;
    let frame = tree.nodes[tr].world;
    let attach = n
        .last_call("attach")
        .ok_or_else(|| n.error("missing attach"))?;
    attach.expect_args(2)?;
    let mut ends = [0usize; 2];
    for (k, end) in ends.iter_mut().enumerate() {
        let path = &attach.args[k];
        let target = tree
            .resolve_path(i, path)
            .ok_or_else(|| attach.error(format!("no node at '{path}'")))?;
        *end = *body_part
            .get(&target)
            .ok_or_else(|| attach.error(format!("'{path}' is not a RigidBody")))?;
    }
    let [child, parent] = ends;
    if child == parent {
        return Err(attach.error("a joint needs two different bodies"));
    }
    let anchor_local = match n.last_call("setAnchor") {
        Some(c) => {
            c.expect_args(3)?;
            c.vec3(0)?
        }
        None => Vector3::zeros(),
    };
    let axis_call = n
        .last_call("setAxis")
        .ok_or_else(|| n.error("missing setAxis"))?;
    let axis_local = match axis_call.args.len() {
        1 => match axis_call.text(0)? {
            "0" => Vector3::x(),
            "1" => Vector3::y(),
            "2" => Vector3::z(),
            other => return Err(axis_call.error(format!("axis index '{other}' is not 0, 1 or 2"))),
        },
        3 => axis_call.vec3(0)?,
        k => return Err(axis_call.error(format!("expected 1 or 3 arguments, got {k}"))),
    };
    let axis_world = frame.rotation * axis_local;
    let axis = Unit::try_new(axis_world, 1e-9)
        .ok_or_else(|| axis_call.error("the axis has zero length"))?;
    let stop = |m: &str| -> Result<Option<f64>, SceneError> {
        match n.last_call(m) {
            Some(c) => {
                c.expect_args(2)?;
                Ok(Some(c.num(1)?))
            }
            None => Ok(None),
        }
    };
    let min_deg = stop("setLowStopDeg")?.unwrap_or(-180.0);
    let max_deg = stop("setHighStopDeg")?.unwrap_or(180.0);
    if min_deg > max_deg {
        return Err(n.error(format!(
            "low stop {min_deg} is above high stop {max_deg} (would make an unlimited joint)"
        )));
    }
    let max_torque = stop("setMaxMotorForce")?.unwrap_or(0.0);
    let max_speed = match n.last_call("setJointMaxSpeed1") {
        Some(c) => {
            c.expect_args(1)?;
            c.num(0)?
        }
        None => return Err(n.error("missing setJointMaxSpeed1")),
    };
    if max_speed < 0.0 || max_torque < 0.0 {
        return Err(n.error("max speed and max motor force must not be negative"));
    }
    let mut perceptor = None;
    let mut effector = None;
    for &c in &n.children {
        let cn = &tree.nodes[c];
        match cn.class.as_str() {
            "HingePerceptor" => perceptor = cn.name.clone(),
            "HingeEffector" => effector = cn.name.clone(),
            _ => {}
        }
    }
    let perceptor = perceptor.ok_or_else(|| n.error("missing a named HingePerceptor"))?;
    let effector = effector.ok_or_else(|| n.error("missing a named HingeEffector"))?;
    let anchor = (frame * nalgebra::Point3::from(anchor_local)).coords;
    let joint = JointDesc {
        perceptor: Arc::from(perceptor.as_str()),
        effector: Arc::from(effector.as_str()),
        parent,
        child,
        anchor: Vector3::zeros(),
        axis: Unit::new_normalize(v3(axis.into_inner())),
        min_deg: f(min_deg),
        max_deg: f(max_deg),
        max_speed: f(max_speed),
        max_torque: f(max_torque),
    };
    Ok((joint, anchor))
}

/// The model with every position relative to the torso centre.
fn relative_to_torso(scene: &str, parts: Parts, w: Wiring) -> Result<RobotModel, SceneError> {
    let Parts {
        mut parts,
        positions,
        ..
    } = parts;
    let Wiring {
        mut joints,
        joint_world_anchor,
        foot_sensors,
        perceptor_order,
        torso,
        head,
        robot_type,
        ..
    } = w;
    let torso = torso
        .or_else(|| parts.iter().position(|p| &*p.name == "torso"))
        .ok_or_else(|| invalid(scene, "no torso (GyroRatePerceptor or AgentAspect part)"))?;
    let head = head.unwrap_or(torso);
    // Express everything relative to the torso centre.
    let origin = positions[torso];
    for (p, w) in parts.iter_mut().zip(&positions) {
        p.pos = v3(w - origin);
    }
    for (j, w) in joints.iter_mut().zip(&joint_world_anchor) {
        j.anchor = v3(w - origin);
    }
    let effector_joints = HINGE_EFFECTORS.map(|e| joints.iter().position(|j| &*j.effector == e));
    Ok(RobotModel {
        scene: Arc::from(scene),
        robot_type: robot_type.unwrap_or(0),
        parts,
        joints,
        foot_sensors,
        perceptor_order,
        torso,
        head,
        effector_joints,
    })
}
