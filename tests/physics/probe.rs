//! Diagnostics (ignored).

use rcss3d::sim::world::PhysicsConfig;

use super::util::{model, world_with};

#[test]
#[ignore]
fn probe_stand() {
    let t: u8 = std::env::var("PT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let cfg = cfg_from_env();
    let mut w = world_with(&cfg);
    let z0: f32 = std::env::var("PZ")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.4);
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
    let px: f32 = std::env::var("PX")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(-5.0);
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

/// Physics configuration from P* environment variables (diagnostics).
pub fn cfg_from_env() -> PhysicsConfig {
    let mut cfg = PhysicsConfig::default();
    if let Some(v) = std::env::var("PGAIN").ok().and_then(|s| s.parse().ok()) {
        cfg.motor_gain = v;
    }
    if let Some(v) = std::env::var("PMINI").ok().and_then(|s| s.parse().ok()) {
        cfg.min_part_inertia = v;
    }
    if let Some(v) = std::env::var("PFRIC").ok().and_then(|s| s.parse().ok()) {
        cfg.robot_friction = v;
    }
    if let Some(v) = std::env::var("PSTAB").ok().and_then(|s| s.parse().ok()) {
        cfg.stabilization_iterations = v;
    }
    if let Some(v) = std::env::var("PWARM").ok().and_then(|s| s.parse().ok()) {
        cfg.warmstart_coefficient = v;
    }
    if let Some(v) = std::env::var("PMCV").ok().and_then(|s| s.parse().ok()) {
        cfg.max_corrective_velocity = v;
    }
    if let Some(v) = std::env::var("PIT").ok().and_then(|s| s.parse().ok()) {
        cfg.solver_iterations = v;
    }
    if let Some(v) = std::env::var("PSUB").ok().and_then(|s| s.parse().ok()) {
        cfg.substeps = v;
    }
    if std::env::var("PMB").is_ok_and(|v| !v.is_empty()) {
        cfg.joint_kind = rcss3d::sim::world::JointKind::Multibody;
    }
    if std::env::var("PIMP").is_ok_and(|v| !v.is_empty()) {
        cfg.joint_kind = rcss3d::sim::world::JointKind::Impulse;
    }
    if let Some(v) = std::env::var("PERP").ok().and_then(|s| s.parse().ok()) {
        cfg.motor_anchor_erp = v;
    }
    if let Some(v) = std::env::var("PPGS").ok().and_then(|s| s.parse().ok()) {
        cfg.internal_pgs_iterations = v;
    }
    cfg
}
