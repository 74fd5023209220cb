//! Physics diagnostics, run by hand: print what one robot does, or time a
//! cycle of 22 standing robots for both joint kinds. Nothing is asserted;
//! the acceptance checks live in `tests/physics/`.
//!
//! ```sh
//! cargo bench --bench physics_probe -- cycle-time   # thread CPU per cycle, 22 robots
//! PT=4 cargo bench --bench physics_probe -- stand   # torso, foot forces, joints of one robot
//! cargo bench --bench physics_probe -- motor        # lae1 at full speed without gravity
//! ```
//!
//! `P*` environment variables override the physics configuration (see
//! [`cfg_from_env`]): for example `PIT=4 PPGS=2` to try other solver
//! iteration counts, `PIMP=1` for impulse joints.

use std::sync::Arc;
use std::time::Instant;

use nalgebra::Vector3;
use rcss3d::sim::model::{ModelLibrary, RobotModel};
use rcss3d::sim::world::{JointKind, PhysicsConfig, World};

fn main() {
    // `cargo bench` passes `--bench`; the first other argument is the mode.
    let mode = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_else(|| "cycle-time".to_owned());
    let lib = match ModelLibrary::built_in() {
        Ok(l) => l,
        Err(e) => panic!("models: {e}"),
    };
    match mode.as_str() {
        "stand" => stand(&lib),
        "motor" => motor(&lib),
        "cycle-time" => {
            cycle_time(&lib, JointKind::Impulse);
            cycle_time(&lib, JointKind::Multibody);
        }
        other => {
            eprintln!("unknown mode `{other}`: stand, motor or cycle-time");
            std::process::exit(2);
        }
    }
}

fn model(lib: &ModelLibrary, robot_type: u8) -> Arc<RobotModel> {
    match lib.resolve("rsg/agent/nao/nao_hetero.rsg", &[robot_type.to_string()]) {
        Ok(m) => m,
        Err(e) => panic!("type {robot_type}: {e}"),
    }
}

fn world_with(cfg: &PhysicsConfig) -> World {
    match World::new(cfg) {
        Ok(w) => w,
        Err(e) => panic!("World::new: {e}"),
    }
}

/// One robot of type `PT` dropped from torso height `PZ`: torso pose,
/// foot forces and every joint away from zero, for 150 cycles.
fn stand(lib: &ModelLibrary) {
    let t: u8 = env("PT").unwrap_or(0);
    let mut w = world_with(&cfg_from_env());
    let z0: f32 = env("PZ").unwrap_or(0.4);
    let h = w.add_robot(model(lib, t), Vector3::new(-5.0, 0.0, z0), 0.0);
    let m = w.robot_model(h).clone();
    for step in 1..=150 {
        w.step();
        if step % 10 == 0 || step < 6 {
            let p = w.part_pose(h, m.torso);
            let up = p.rotation * Vector3::z();
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
            println!(
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

/// `lae1` commanded to full speed on a type 0 robot without gravity: the
/// angle and its change in each of 25 cycles.
fn motor(lib: &ModelLibrary) {
    let cfg = PhysicsConfig {
        gravity: 0.0,
        ..cfg_from_env()
    };
    let mut w = world_with(&cfg);
    let px: f32 = env("PX").unwrap_or(-5.0);
    let h = w.add_robot(model(lib, 0), Vector3::new(px, 0.0, 2.0), 0.0);
    let m = w.robot_model(h).clone();
    let j = m.joint_by_effector("lae1").unwrap_or(0);
    w.set_joint_speed(h, j, 6.1395);
    let mut last = 0.0;
    for step in 1..=25 {
        w.step();
        let a = w.joint_angle_deg(h, j);
        println!("{step} lae1 {a:.3} (+{:.3})", a - last);
        last = a;
    }
}

/// 22 robots standing in two rows: wall time and thread CPU per cycle
/// over 100 cycles after 50 cycles of settling.
fn cycle_time(lib: &ModelLibrary, kind: JointKind) {
    let cfg = PhysicsConfig {
        joint_kind: kind,
        ..cfg_from_env()
    };
    let mut w = world_with(&cfg);
    for i in 0..22 {
        let x = -12.0 + (i % 11) as f32 * 2.4;
        let y = if i < 11 { -3.0 } else { 3.0 };
        w.add_robot(model(lib, (i % 5) as u8), Vector3::new(x, y, 0.45), 0.0);
    }
    for _ in 0..50 {
        w.step();
    }
    let n = 100;
    let cpu0 = thread_cpu_seconds();
    let t = Instant::now();
    for _ in 0..n {
        w.step();
    }
    let wall = t.elapsed().as_secs_f64() * 1000.0 / n as f64;
    let cpu = (thread_cpu_seconds() - cpu0) * 1000.0 / n as f64;
    println!("{kind:?}: wall {wall:.2} ms/cycle, thread CPU {cpu:.2} ms/cycle");
}

/// CPU time of this thread (utime + stime, Linux), seconds; 0 elsewhere.
fn thread_cpu_seconds() -> f64 {
    rcss3d::procfs::thread_cpu_time().map_or(0.0, |d| d.as_secs_f64())
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

/// Physics configuration from P* environment variables: `PGAIN`
/// (motor_gain), `PMINI` (min_part_inertia), `PFRIC` (robot_friction),
/// `PSTAB` (stabilization_iterations), `PWARM` (warmstart_coefficient),
/// `PMCV` (max_corrective_velocity), `PIT` (solver_iterations), `PSUB`
/// (substeps), `PERP` (motor_anchor_erp), `PPGS` (internal_pgs_iterations),
/// `PMB=1` / `PIMP=1` (multibody / impulse joints).
fn cfg_from_env() -> PhysicsConfig {
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
        cfg.joint_kind = JointKind::Multibody;
    }
    if std::env::var("PIMP").is_ok_and(|v| !v.is_empty()) {
        cfg.joint_kind = JointKind::Impulse;
    }
    set(&mut cfg.motor_anchor_erp, "PERP");
    set(&mut cfg.internal_pgs_iterations, "PPGS");
    cfg
}
