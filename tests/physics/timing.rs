//! Timing probe (ignored: run by hand with `--ignored --nocapture`).

use std::time::Instant;

use nalgebra::Vector3;
use rcss3d::sim::world::{JointKind, PhysicsConfig};

use super::util::{model, world_with};

fn time_22(kind: JointKind) -> f64 {
    let cfg = PhysicsConfig {
        joint_kind: kind,
        ..super::probe::cfg_from_env()
    };
    let mut w = world_with(&cfg);
    for i in 0..22 {
        let x = -12.0 + (i % 11) as f32 * 2.4;
        let y = if i < 11 { -3.0 } else { 3.0 };
        w.add_robot(model((i % 5) as u8), Vector3::new(x, y, 0.45), 0.0);
    }
    for _ in 0..50 {
        w.step();
    }
    let n = 100;
    let t = Instant::now();
    for _ in 0..n {
        w.step();
    }
    t.elapsed().as_secs_f64() * 1000.0 / n as f64
}

#[test]
#[ignore]
fn probe_cycle_time() {
    eprintln!("impulse: {:.3} ms/cycle", time_22(JointKind::Impulse));
    eprintln!("multibody: {:.3} ms/cycle", time_22(JointKind::Multibody));
}
