//! Probes of one robot, printed (nothing asserted; the acceptance checks
//! live in `tests/physics/`):
//!
//! ```text
//! cargo run --release -p rcss3d-tools --bin fit -- probe stand [TYPE] [Z] [RON overrides]
//! cargo run --release -p rcss3d-tools --bin fit -- probe motor [X] [RON overrides]
//! cargo run --release -p rcss3d-tools --bin fit -- probe rise [--trace TYPE:ROW] [RON overrides]
//! ```
//!
//! `rise`: the end of the five recorded get-ups (g_getup_t0..t4), replayed
//! from the reference's states at rows 105–125 of the rise with the
//! recorded commands: per recording and start row the torso's largest
//! tilt from upright after row 140, where every recorded robot stands
//! (the acceptance check is `tests/physics/getup.rs`). With `--trace
//! TYPE:ROW` the replay of g_getup_tTYPE from ROW also prints, per row,
//! the torso's tilt, up vector and height and each foot part's centre
//! with the number of its box corners in the ground (its contact points
//! for the slip law) and its lowest corner's height, to set beside the
//! recorded `parts.csv`. `stand`: a robot of type TYPE (default 0) dropped from torso height Z
//! (default 0.4 m): torso pose, foot forces and every joint away from
//! zero, for 150 cycles. `motor`: `lae1` commanded to full speed on a
//! type 0 robot at x = X (default −5) without gravity: the angle and its
//! change in each of 25 cycles. The physics step time is measured by the
//! `cycle_step` bench.

use std::sync::Arc;

use nalgebra::Vector3;
use rcss3d::sim::model::{ModelLibrary, RobotModel};
use rcss3d::sim::world::{PhysicsConfig, World, DEFAULT_CYCLE_DT};

use crate::overrides;

/// Runs the subcommand with its arguments.
pub fn run(args: Vec<String>) {
    let lib = match ModelLibrary::built_in() {
        Ok(l) => l,
        Err(e) => panic!("models: {e}"),
    };
    let mut trace = None;
    let mut plain: Vec<&String> = Vec::new();
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        if a == "--trace" {
            trace = it.next().and_then(|v| {
                let (t, r) = v.split_once(':')?;
                Some((t.parse::<usize>().ok()?, r.parse::<usize>().ok()?))
            });
            if trace.is_none() {
                eprintln!("probe rise: --trace takes TYPE:ROW, e.g. 4:115");
                std::process::exit(2);
            }
        } else {
            plain.push(a);
        }
    }
    let (numbers, rest): (Vec<&String>, Vec<&String>) =
        plain.into_iter().partition(|a| a.parse::<f32>().is_ok());
    let number = |k: usize| numbers.get(k).and_then(|a| a.parse::<f32>().ok());
    let cfg = rest
        .first()
        .map_or_else(PhysicsConfig::default, |a| overrides::parse(a).1);
    match args.first().map(String::as_str) {
        Some("stand") => stand(
            &lib,
            &cfg,
            number(0).unwrap_or(0.0) as u8,
            number(1).unwrap_or(0.4),
        ),
        Some("motor") => motor(&lib, &cfg, number(0).unwrap_or(-5.0)),
        Some("rise") => rise(&cfg, trace),
        other => {
            eprintln!("probe: `stand`, `motor` or `rise`, not {other:?}");
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
    match World::new(cfg, DEFAULT_CYCLE_DT) {
        Ok(w) => w,
        Err(e) => panic!("World::new: {e}"),
    }
}

/// One robot of type `t` dropped from torso height `z0`: torso pose,
/// foot forces and every joint away from zero, for 150 cycles.
fn stand(lib: &ModelLibrary, cfg: &PhysicsConfig, t: u8, z0: f32) {
    let mut w = world_with(cfg);
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
fn motor(lib: &ModelLibrary, cfg: &PhysicsConfig, px: f32) {
    let cfg = PhysicsConfig {
        gravity: 0.0,
        ..cfg.clone()
    };
    let mut w = world_with(&cfg);
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

/// The end of the recorded get-ups replayed from the reference's states
/// in the rise: per recording and start row, the torso's largest tilt
/// (°) from upright after row 140.
fn rise(cfg: &PhysicsConfig, trace: Option<(usize, usize)>) {
    use rcss3d_tools::replay::{apply, gaits_dir, recorded_states_with_stretch, start, Scenario};
    const STARTS: [usize; 5] = [105, 110, 115, 120, 125];
    let mut upright = 0;
    let mut all = 0;
    for t in 0..5 {
        let name = format!("g_getup_t{t}");
        let sc = Scenario::load(&gaits_dir(), &name);
        let mut tilts = Vec::new();
        for from in STARTS {
            let (mut w, h) = start(cfg, &sc.script);
            let torso = w.robot_model(h).torso;
            let states = recorded_states_with_stretch(&mut w, h, &sc, from, cfg.joints.stretch_erp);
            for step in 0..from - 10 {
                apply(&mut w, h, &sc.script, step);
            }
            for row in from - 10..from {
                if w.set_robot_state(h, &states[row - 1]).is_err() {
                    return;
                }
                apply(&mut w, h, &sc.script, row + 1);
                w.step();
            }
            if w.set_robot_state(h, &states[from - 1]).is_err() {
                return;
            }
            let mut worst: f32 = 0.0;
            for row in from..sc.trace.len() - 1 {
                apply(&mut w, h, &sc.script, row + 1);
                w.step();
                if trace == Some((t, from)) {
                    print_rise_row(&w, h, row);
                }
                if row >= 140 {
                    let up = w.part_pose(h, torso).rotation * Vector3::z();
                    worst = worst.max(up.z.clamp(-1.0, 1.0).acos().to_degrees());
                }
            }
            all += 1;
            if worst <= 10.0 {
                upright += 1;
            }
            tilts.push(format!("{worst:.1}"));
        }
        println!(
            "{name}: largest tilt after the rise from rows {STARTS:?}: {}",
            tilts.join(", ")
        );
    }
    println!("within 10° of upright: {upright} of {all}");
}

/// One row of a traced rise: the torso's tilt from upright, its up
/// vector's x and y and its height, then per foot part its centre and how
/// many corners of its box are in the ground and how deep its lowest
/// corner is (negative: in the ground).
fn print_rise_row(w: &World, h: rcss3d::sim::world::RobotHandle, row: usize) {
    let m = w.robot_model(h);
    let torso = w.part_pose(h, m.torso);
    let up = torso.rotation * Vector3::z();
    let feet: Vec<String> = m
        .foot_sensors
        .iter()
        .map(|s| {
            let pose = w.part_pose(h, s.part);
            let c = pose.translation.vector;
            let corners = rcss3d_tools::replay::box_corner_heights(w, h, s.part);
            let touching = corners.iter().filter(|z| **z <= 0.0).count();
            let lowest = corners.iter().copied().fold(f32::INFINITY, f32::min);
            format!(
                "{}:{:.4},{:.4},{:.4}/{touching}/{:.2}mm",
                m.parts[s.part].name,
                c.x,
                c.y,
                c.z,
                lowest * 1000.0
            )
        })
        .collect();
    println!(
        "row {row} tilt {:.1} up ({:.3},{:.3}) z {:.3} {}",
        up.z.clamp(-1.0, 1.0).acos().to_degrees(),
        up.x,
        up.y,
        torso.translation.z,
        feet.join(" ")
    );
}
