//! Writes the robot models of types 0–4, as this server builds them from
//! `models/`, to one plain text file per type: the input of the ODE
//! replica of the reference physics (`tools/ode-replica`).
//!
//! ```text
//! cargo run --release -p rcss3d-tools --bin fit -- model-dump OUT_DIR
//! ```
//!
//! One line per part, `P name mass Ixx Iyy Izz x y z COLLIDER MASS_SHAPE`
//! (centre relative to the torso in the zero pose, model frame), then one
//! line per hinge, `J effector parent child axis(3) anchor(3) min° max°
//! max_speed max_torque`; a shape is `b lx ly lz`, `s r 0 0`, `c r len 0`
//! or `n 0 0 0` (none).

use rcss3d_tools::replay;

use rcss3d::sim::model::{RobotModel, ShapeDesc};

fn shape(s: Option<ShapeDesc>) -> String {
    match s {
        None => "n 0 0 0".into(),
        Some(ShapeDesc::Box(l)) => format!("b {} {} {}", l.x, l.y, l.z),
        Some(ShapeDesc::Sphere { radius }) => format!("s {radius} 0 0"),
        Some(ShapeDesc::Capsule { radius, length }) => format!("c {radius} {length} 0"),
    }
}

fn describe(m: &RobotModel) -> String {
    let mut out = String::new();
    for p in &m.parts {
        out += &format!(
            "P {} {} {} {} {} {} {} {} {} {}\n",
            p.name,
            p.mass,
            p.inertia.x,
            p.inertia.y,
            p.inertia.z,
            p.pos.x,
            p.pos.y,
            p.pos.z,
            shape(p.collider),
            shape(Some(p.mass_shape))
        );
    }
    for j in &m.joints {
        out += &format!(
            "J {} {} {} {} {} {} {} {} {} {} {} {} {}\n",
            j.effector,
            j.parent,
            j.child,
            j.axis.x,
            j.axis.y,
            j.axis.z,
            j.anchor.x,
            j.anchor.y,
            j.anchor.z,
            j.min_deg,
            j.max_deg,
            j.max_speed,
            j.max_torque
        );
    }
    out
}

/// Runs the subcommand with its arguments.
pub fn run(args: Vec<String>) {
    let Some(dir) = args.into_iter().next() else {
        eprintln!("usage: model_dump OUT_DIR");
        std::process::exit(2);
    };
    for t in 0..5u8 {
        let path = std::path::Path::new(&dir).join(format!("model_t{t}.txt"));
        if let Err(e) = std::fs::write(&path, describe(&replay::model(t))) {
            eprintln!("{}: {e}", path.display());
            std::process::exit(1);
        }
    }
}
