//! Diagnostics for the physics fit: replays one reference scenario and
//! writes our per-row figures beside the reference's as CSV (stdout):
//! torso position and up-axis z, foot loads, ball, foot positions,
//! heading, joint angles.
//!
//! ```text
//! cargo run --release -p rcss3d-tools --bin fit -- joints g_walk_t0 '(physics overrides)' > ours.csv
//! ```
use crate::overrides;
use rcss3d::sim::world::PhysicsConfig;
use rcss3d_tools::replay;
/// Runs the subcommand with its arguments.
pub fn run(args: Vec<String>) {
    let name = args.first().cloned().unwrap_or_else(|| "g_walk_t0".into());
    let cfg: PhysicsConfig = args
        .get(1)
        .map_or_else(PhysicsConfig::default, |a| overrides::parse(a).1);
    let dir = if name.starts_with("c_") {
        replay::physics_dir()
    } else {
        replay::gaits_dir()
    };
    let sc = replay::Scenario::load(&dir, &name);
    let ours = replay::run(&cfg, &sc.script, sc.trace.len());
    let names: Vec<&String> = ours.joints.iter().map(|(n, _)| n).collect();
    let mut head = String::from("step,torso_x,torso_y,torso_z,up_z,lf_fz,rf_fz,ball_x,ball_y,lfoot_x,lfoot_y,lfoot_z,rfoot_x,rfoot_y,rfoot_z,heading");
    for n in &names {
        head.push_str(&format!(",hj_{n}"));
    }
    println!("{head}");
    for i in 0..ours.torso.len() {
        let t = ours.torso[i];
        let mut line = format!(
            "{},{:.5},{:.5},{:.5},{:.5},{:.2},{:.2},{:.4},{:.4}",
            i + 1,
            t.x,
            t.y,
            t.z,
            ours.torso_up[i],
            ours.foot_fz[i].0,
            ours.foot_fz[i].1,
            ours.ball[i].x,
            ours.ball[i].y
        );
        for p in &ours.parts[i][1..] {
            line.push_str(&format!(",{:.5},{:.5},{:.5}", p.x, p.y, p.z));
        }
        line.push_str(&format!(",{:.4}", ours.torso_heading[i].to_degrees()));
        for (_, v) in &ours.joints {
            line.push_str(&format!(",{:.3}", v[i]));
        }
        println!("{line}");
    }
}
