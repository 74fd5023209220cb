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
    let cpu0 = thread_cpu_seconds();
    let t = Instant::now();
    for _ in 0..n {
        w.step();
    }
    let wall = t.elapsed().as_secs_f64() * 1000.0 / n as f64;
    let cpu = (thread_cpu_seconds() - cpu0) * 1000.0 / n as f64;
    eprintln!("{kind:?}: wall {wall:.2} ms/cycle, thread CPU {cpu:.2} ms/cycle");
    cpu
}

/// CPU time of this thread (utime + stime, Linux), seconds.
fn thread_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    // Fields after the command name (which ends with ')').
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    // utime and stime are fields 14 and 15 (1-based) = 11, 12 after ')'.
    (f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0)) / 100.0
}

#[test]
#[ignore]
fn probe_cycle_time() {
    time_22(JointKind::Impulse);
    time_22(JointKind::Multibody);
}
