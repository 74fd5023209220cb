//! One physics cycle (`World::step`, 20 ms of simulated time) with 22
//! robots (the five types in turn) and the ball: the one measurement of
//! the physics step time. The robots stand on the field in two rows and
//! have settled for one second before measuring; in the second case they
//! have been pushed over and lie on the ground (many more contacts).
//!
//! ```sh
//! cargo bench --bench cycle_step
//! ```

use criterion::{criterion_group, criterion_main, Criterion};
use nalgebra::Vector3;
use rcss3d::sim::model::ModelLibrary;
use rcss3d::sim::world::{PhysicsConfig, World, DEFAULT_CYCLE_DT};

/// Robots on the field (two full teams).
const ROBOTS: usize = 22;
/// Cycles simulated before measuring (the beam drop settles).
const SETTLE_CYCLES: usize = 50;

fn standing_world() -> World {
    let lib = match ModelLibrary::built_in() {
        Ok(l) => l,
        Err(e) => panic!("models: {e}"),
    };
    let mut w = match World::new(&PhysicsConfig::default(), DEFAULT_CYCLE_DT) {
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

/// Pushes every torso forward (backward for every other robot) for half
/// a second and lets the robots come to rest on the ground.
fn push_over(w: &mut World) {
    let robots = w.robots();
    for (i, h) in robots.iter().enumerate() {
        let torso = w.robot_model(*h).torso;
        let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
        w.set_part_force(*h, torso, Vector3::new(sign * 30.0, 0.0, 0.0));
    }
    for _ in 0..25 {
        w.step();
    }
    for h in &robots {
        let torso = w.robot_model(*h).torso;
        w.set_part_force(*h, torso, Vector3::zeros());
    }
    for _ in 0..100 {
        w.step();
    }
}

fn cycle_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("cycle_step_22");
    group.sample_size(20);
    // Stepping on from the settled state: the robots keep standing (or
    // lying).
    let mut world = standing_world();
    group.bench_function("standing", |b| b.iter(|| world.step()));
    push_over(&mut world);
    group.bench_function("lying", |b| b.iter(|| world.step()));
    group.finish();
}

criterion_group!(benches, cycle_step);
criterion_main!(benches);
