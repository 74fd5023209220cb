//! Replays the reference gait and standing recordings on our physical
//! world and prints how far each is from the reference: the tool for
//! fitting the physics settings.
//!
//! ```text
//! cargo run --release --example gait_replay -- [PREFIX] [RON overrides of the physics section]...
//! cargo run --release --example gait_replay -- g_walk '(motor_gain: 1e5)' '(substeps: 1)'
//! ```
//!
//! Each RON argument is a `physics:` section (fields not given keep their
//! defaults); with none, the defaults are replayed.

#[path = "../tests/physics/replay.rs"]
mod replay;

use rcss3d::sim::world::PhysicsConfig;

fn main() {
    let mut prefix = String::from("");
    let mut configs: Vec<(String, PhysicsConfig)> = Vec::new();
    for a in std::env::args().skip(1) {
        if a.starts_with('(') {
            match ron::from_str::<PhysicsConfig>(&a) {
                Ok(c) => configs.push((a, c)),
                Err(e) => {
                    eprintln!("{a}: {e}");
                    std::process::exit(2);
                }
            }
        } else {
            prefix = a;
        }
    }
    if configs.is_empty() {
        configs.push(("defaults".into(), PhysicsConfig::default()));
    }
    let mut scenarios = Vec::new();
    if prefix.is_empty() {
        scenarios.extend(replay::Scenario::all(&replay::physics_dir(), "c_stand"));
    } else if !prefix.starts_with("g_") {
        scenarios.extend(replay::Scenario::all(&replay::physics_dir(), &prefix));
    }
    if prefix.is_empty() || prefix.starts_with("g_") {
        scenarios.extend(replay::Scenario::all(&replay::gaits_dir(), &prefix));
    }
    for (label, cfg) in &configs {
        let t0 = std::time::Instant::now();
        let rows: Vec<replay::Comparison> =
            scenarios.iter().map(|s| replay::replay(cfg, s)).collect();
        println!("## {label}  ({:.1} s)\n", t0.elapsed().as_secs_f64());
        println!("{}", replay::table(&rows));
        println!("{}\n", replay::summary(&rows));
    }
}
