//! Times `World::step` (one 20 ms cycle) with 22 standing robots of the
//! five types in turn and the ball: wall-clock time inside the steps and
//! process CPU per cycle, after one second of settling.
//!
//! ```text
//! cargo run --release --example step_timing -- [CYCLES] [ROBOTS] [RON physics overrides]
//! cargo run --release --example step_timing -- 500 22 '(internal_pgs_iterations: 200)'
//! ```
//!
//! Defaults: 500 cycles, 22 robots, the default physics. Prints one line
//! per run; a quick A/B tool next to the `cycle_step` criterion bench.
//! With `STEP_TIMING_FALLEN=1` in the environment every robot is pushed
//! over first and timed lying (many more ground contacts); the line also
//! gives the slowest single step. With
//! `STEP_TIMING_PACE_MS=N` the loop sleeps N ms after every step, as the
//! real-time server idles between its steps; `STEP_TIMING_SPIN=1` makes
//! that pause a busy wait (compare the wall time inside the steps: the
//! CPU figure then counts the spinning too).

use std::time::Instant;

use nalgebra::Vector3;
use rcss3d::sim::model::ModelLibrary;
use rcss3d::sim::world::{PhysicsConfig, World};

/// Cycles simulated before timing (the beam drop settles).
const SETTLE_CYCLES: usize = 50;

/// Process CPU time (user + system) in seconds, from getrusage.
fn cpu_seconds() -> f64 {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage fills the struct it is given.
    let r = unsafe { libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr()) };
    if r != 0 {
        return 0.0;
    }
    // SAFETY: initialised by the successful call above.
    let u = unsafe { u.assume_init() };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let cycles: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(500);
    let robots: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(22);
    let lib = match ModelLibrary::built_in() {
        Ok(l) => l,
        Err(e) => panic!("models: {e}"),
    };
    let cfg = match args.next() {
        Some(ron_text) => match ron::from_str::<PhysicsConfig>(&ron_text) {
            Ok(c) => c,
            Err(e) => panic!("{ron_text}: {e}"),
        },
        None => PhysicsConfig::default(),
    };
    let mut w = match World::new(&cfg) {
        Ok(w) => w,
        Err(e) => panic!("world: {e}"),
    };
    for i in 0..robots {
        let t = (i % 5).to_string();
        let m = match lib.resolve("rsg/agent/nao/nao_hetero.rsg", &[t]) {
            Ok(m) => m,
            Err(e) => panic!("model: {e}"),
        };
        let x = -12.0 + (i % 11) as f32 * 2.4;
        let y = if i % 22 < 11 { -3.0 } else { 3.0 } + (i / 22) as f32 * 1.5;
        let heading = if i % 22 < 11 { 0.0 } else { 180.0 };
        w.add_robot(m, Vector3::new(x, y, 0.4), heading);
    }
    for _ in 0..SETTLE_CYCLES {
        w.step();
    }
    if std::env::var_os("STEP_TIMING_FALLEN").is_some() {
        push_over(&mut w);
    }
    let c0 = cpu_seconds();
    let mut slowest = 0.0f64;
    let mut stepping = 0.0f64;
    let pace = std::env::var("STEP_TIMING_PACE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(std::time::Duration::from_millis);
    let spin = std::env::var_os("STEP_TIMING_SPIN").is_some();
    for _ in 0..cycles {
        let s = Instant::now();
        w.step();
        let took = s.elapsed().as_secs_f64();
        slowest = slowest.max(took);
        stepping += took;
        if let Some(p) = pace {
            if spin {
                let until = Instant::now() + p;
                while Instant::now() < until {
                    std::hint::spin_loop();
                }
            } else {
                std::thread::sleep(p);
            }
        }
    }
    let cpu = cpu_seconds() - c0;
    let upright = w
        .robots()
        .iter()
        .filter(|h| {
            let torso = w.robot_model(**h).torso;
            w.part_pose(**h, torso).translation.vector.z > 0.25
        })
        .count();
    println!(
        "{robots} robots, {cycles} cycles: {:.3} ms wall / cycle, {:.3} ms CPU / cycle, slowest step {:.3} ms, {upright}/{robots} torsos above 0.25 m",
        stepping * 1e3 / cycles as f64,
        cpu * 1e3 / cycles as f64,
        slowest * 1e3,
    );
}

/// Pushes every torso forward (then backward for every other robot) for
/// half a second and lets the robots come to rest on the ground.
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
