//! Diagnostics (ignored).

use rcss3d::sim::world::PhysicsConfig;

use super::util::{model, world_with};

#[test]
#[ignore]
fn probe_stand() {
    let t: u8 = env("PT").unwrap_or(0);
    let cfg = cfg_from_env();
    let mut w = world_with(&cfg);
    let z0: f32 = env("PZ").unwrap_or(0.4);
    let h = w.add_robot(model(t), nalgebra::Vector3::new(-5.0, 0.0, z0), 0.0);
    let m = w.robot_model(h).clone();
    for step in 1..=150 {
        w.step();
        if step % 10 == 0 || step < 6 {
            let p = w.part_pose(h, m.torso);
            let up = p.rotation * nalgebra::Vector3::z();
            let angles: Vec<String> = (0..m.joints.len())
                .filter(|j| w.joint_angle_deg(h, *j).abs() > 0.05)
                .map(|j| format!("{}={:.2}", m.joints[j].perceptor, w.joint_angle_deg(h, j)))
                .collect();
            let ff: Vec<String> = (0..m.foot_sensors.len())
                .map(|s| match w.foot_force(h, s) {
                    Some((c, f)) => format!("{:.2},{:.2},{:.3}/{:.2}", c.x, c.y, c.z, f.z),
                    None => "-".into(),
                })
                .collect();
            eprintln!(
                "{step:4} z={:.5} x={:.4} y={:.4} up=({:.3},{:.3},{:.4}) {} | {}",
                p.translation.z,
                p.translation.x,
                p.translation.y,
                up.x,
                up.y,
                up.z,
                ff.join(" "),
                angles.join(" ")
            );
        }
    }
}

#[test]
#[ignore]
fn probe_motor() {
    let cfg = PhysicsConfig {
        gravity: 0.0,
        ..cfg_from_env()
    };
    let mut w = world_with(&cfg);
    let px: f32 = env("PX").unwrap_or(-5.0);
    let h = w.add_robot(model(0), nalgebra::Vector3::new(px, 0.0, 2.0), 0.0);
    let m = w.robot_model(h).clone();
    let j = m.joint_by_effector("lae1").unwrap_or(0);
    w.set_joint_speed(h, j, 6.1395);
    let mut last = 0.0;
    for step in 1..=25 {
        w.step();
        let a = w.joint_angle_deg(h, j);
        eprintln!("{step} lae1 {a:.3} (+{:.3})", a - last);
        last = a;
    }
}

/// A diagnostic setting from the environment, if set and parseable.
fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|s| s.parse().ok())
}

/// Overrides `field` with the environment variable `name` when set.
fn set<T: std::str::FromStr>(field: &mut T, name: &str) {
    if let Some(v) = env(name) {
        *field = v;
    }
}

/// Physics configuration from P* environment variables (diagnostics).
pub fn cfg_from_env() -> PhysicsConfig {
    let mut cfg = PhysicsConfig::default();
    set(&mut cfg.motor_gain, "PGAIN");
    set(&mut cfg.min_part_inertia, "PMINI");
    set(&mut cfg.robot_friction, "PFRIC");
    set(&mut cfg.stabilization_iterations, "PSTAB");
    set(&mut cfg.warmstart_coefficient, "PWARM");
    set(&mut cfg.max_corrective_velocity, "PMCV");
    set(&mut cfg.solver_iterations, "PIT");
    set(&mut cfg.substeps, "PSUB");
    if std::env::var("PMB").is_ok_and(|v| !v.is_empty()) {
        cfg.joint_kind = rcss3d::sim::world::JointKind::Multibody;
    }
    if std::env::var("PIMP").is_ok_and(|v| !v.is_empty()) {
        cfg.joint_kind = rcss3d::sim::world::JointKind::Impulse;
    }
    set(&mut cfg.motor_anchor_erp, "PERP");
    set(&mut cfg.internal_pgs_iterations, "PPGS");
    cfg
}
