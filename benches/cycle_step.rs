//! One physics cycle (`World::step`, 20 ms of simulated time) with 22
//! standing robots (the five types in turn) and the ball, for each joint
//! kind. The robots stand on the field in two rows and have settled for
//! one second before measuring.

use criterion::{criterion_group, criterion_main, Criterion};
use nalgebra::Vector3;
use rcss3d::sim::model::ModelLibrary;
use rcss3d::sim::world::{JointKind, PhysicsConfig, World};

/// Robots on the field (two full teams).
const ROBOTS: usize = 22;
/// Cycles simulated before measuring (the beam drop settles).
const SETTLE_CYCLES: usize = 50;

fn standing_world(kind: JointKind) -> World {
    let lib = match ModelLibrary::built_in() {
        Ok(l) => l,
        Err(e) => panic!("models: {e}"),
    };
    let cfg = PhysicsConfig {
        joint_kind: kind,
        ..PhysicsConfig::default()
    };
    let mut w = match World::new(&cfg) {
        Ok(w) => w,
        Err(e) => panic!("world: {e}"),
    };
    for i in 0..ROBOTS {
        let t = (i % 5).to_string();
        let m = match lib.resolve("rsg/agent/nao/nao_hetero.rsg", &[t]) {
            Ok(m) => m,
            Err(e) => panic!("model: {e}"),
        };
        let x = -12.0 + (i % 11) as f32 * 2.4;
        let y = if i < 11 { -3.0 } else { 3.0 };
        let heading = if i < 11 { 0.0 } else { 180.0 };
        w.add_robot(m, Vector3::new(x, y, 0.4), heading);
    }
    for _ in 0..SETTLE_CYCLES {
        w.step();
    }
    w
}

fn cycle_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("cycle_step_22_standing");
    group.sample_size(20);
    for (name, kind) in [
        ("multibody", JointKind::Multibody),
        ("impulse", JointKind::Impulse),
    ] {
        let mut world = standing_world(kind);
        // Stepping on from the settled state: the robots keep standing.
        group.bench_function(name, |b| b.iter(|| world.step()));
    }
    group.finish();
}

criterion_group!(benches, cycle_step);
criterion_main!(benches);
