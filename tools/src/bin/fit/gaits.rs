//! Replays the reference gait and standing recordings on our physical
//! world and prints how far each is from the reference: the tool for
//! fitting the physics settings.
//!
//! ```text
//! cargo run --release -p rcss3d-tools --bin fit -- gaits [PREFIX] [RON overrides of the physics section]...
//! cargo run --release -p rcss3d-tools --bin fit -- gaits g_walk '(motor_gain: 1e5)' '(substeps: 1)'
//! ```
//!
//! Each RON argument is a `physics:` section (fields not given keep their
//! defaults); with none, the defaults are replayed.
//!
//! `--shifts N` replays every scenario N times, the beam moved 1 mm
//! further along x each time: physically the same start on the flat
//! field, numerically another (rounding), so the outcome of a replay that
//! hinges on the smallest disturbance shows as a rate. It prints per
//! scenario the share of replays that pass and the mean walked distance
//! or ball travel against the reference's.
//!
//! `--nudges N` replays every scenario N times, each with one physical
//! disturbance in the standing phase before the motion starts: one leg
//! joint's command raised by `--nudge-speed` rad/s (default 0.05, i.e. the
//! joint ends 0.057° off) for one step. The outcome of a replay is then a
//! draw from the distribution the physics gives this motion, and the
//! pass rate compares settings where single replays flip.

use crate::overrides;
use rcss3d_tools::replay;

use rcss3d::sim::world::PhysicsConfig;

/// Runs the subcommand with its arguments.
pub fn run(args: Vec<String>) {
    let mut prefix = String::from("");
    let mut configs: Vec<(String, PhysicsConfig)> = Vec::new();
    let mut shifts = 0usize;
    let mut nudges = 0usize;
    let mut nudge_speed = 0.05f32;
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        if a == "--shifts" {
            shifts = args.next().and_then(|v| v.parse().ok()).unwrap_or(0);
        } else if a == "--nudges" {
            nudges = args.next().and_then(|v| v.parse().ok()).unwrap_or(0);
        } else if a == "--nudge-speed" {
            nudge_speed = args.next().and_then(|v| v.parse().ok()).unwrap_or(0.05);
        } else if a.starts_with('(') {
            configs.push(overrides::parse(&a));
        } else {
            prefix = a;
        }
    }
    let configs = overrides::or_defaults(configs);
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
        if shifts > 0 {
            println!("## {label}, {shifts} shifted replays each\n");
            print_rates(&scenarios, shifts, |sc, k| {
                replay::replay_shifted(cfg, sc, 0.001 * k as f32)
            });
            println!("({:.1} s)\n", t0.elapsed().as_secs_f64());
            continue;
        }
        if nudges > 0 {
            println!(
                "## {label}, {nudges} nudged replays each ({nudge_speed} rad/s for one step)\n"
            );
            print_rates(&scenarios, nudges, |sc, k| {
                let n = nudge(sc, k, nudge_speed);
                let ours = replay::run_disturbed(cfg, &sc.script, sc.trace.len(), 0.0, Some(n));
                replay::compare(sc, &ours)
            });
            println!("({:.1} s)\n", t0.elapsed().as_secs_f64());
            continue;
        }
        let rows: Vec<replay::Comparison> =
            scenarios.iter().map(|s| replay::replay(cfg, s)).collect();
        println!("## {label}  ({:.1} s)\n", t0.elapsed().as_secs_f64());
        println!("{}", replay::table(&rows));
        println!("{}\n", replay::summary(&rows));
    }
}

/// Whether a replay ends as the reference's: a walk up after at least
/// 85 % of its distance, a get-up upright, a kick's ball at least half as
/// far (the acceptance's outcome criteria; a stand always holds).
fn outcome_holds(c: &replay::Comparison) -> bool {
    let n = &c.name;
    if n.starts_with("g_walk") {
        c.fall.0.is_none() && c.walked.0 >= 0.85 * c.walked.1
    } else if n.starts_with("g_getup") {
        replay::ends_upright(c)
    } else if n.starts_with("g_kick") {
        c.ball_moved.0 >= 0.5 * c.ball_moved.1
    } else {
        true
    }
}

/// The `k`-th nudge of `--nudges`: in the standing phase before any gait
/// starts (step 40), one of the twelve leg joints (the k-th, then the
/// next with the other sign) gets `speed` rad/s more for one step.
fn nudge(sc: &replay::Scenario, k: usize, speed: f32) -> replay::Nudge {
    const LEGS: [&str; 12] = [
        "llj1", "llj2", "llj3", "llj4", "llj5", "llj6", "rlj1", "rlj2", "rlj3", "rlj4", "rlj5",
        "rlj6",
    ];
    let model = replay::model(sc.script.robot_type);
    let joint = match model.joint_by_perceptor(LEGS[k % 12]) {
        Some(j) => j,
        None => panic!("the model has no joint {}", LEGS[k % 12]),
    };
    let sign = if (k / 12).is_multiple_of(2) {
        1.0
    } else {
        -1.0
    };
    replay::Nudge {
        step: 40,
        joint,
        speed: sign * speed,
    }
}

/// Replays every scenario `n` times (the `k`-th replay made by `replay`)
/// and prints the outcome's pass rate per scenario and kind.
fn print_rates(
    scenarios: &[replay::Scenario],
    n: usize,
    replay: impl Fn(&replay::Scenario, usize) -> replay::Comparison,
) {
    println!(
        "| scenario | passed | mean ratio to the reference | range, m | torso err 2 s, cm: median (max) |\n|---|---|---|---|---|"
    );
    let mut kinds: Vec<(String, usize, usize, f64)> = Vec::new();
    for sc in scenarios {
        let rows: Vec<replay::Comparison> = (0..n).map(|k| replay(sc, k)).collect();
        let passed = rows.iter().filter(|c| outcome_holds(c)).count();
        let ratio = rows
            .iter()
            .map(|c| {
                if c.name.starts_with("g_kick") {
                    c.ball_moved.0 / c.ball_moved.1
                } else {
                    c.walked.0 / c.walked.1
                }
            })
            .sum::<f64>()
            / n as f64;
        let kick = sc.name.starts_with("g_kick");
        let spread = rows
            .iter()
            .map(|c| if kick { c.ball_moved.0 } else { c.walked.0 })
            .fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
        let mut at_2s: Vec<f64> = rows.iter().filter_map(|c| c.torso_err.0).collect();
        at_2s.sort_by(f64::total_cmp);
        let torso = match (at_2s.get(at_2s.len() / 2), at_2s.last()) {
            (Some(median), Some(max)) => format!("{:.1} ({:.1})", median * 100.0, max * 100.0),
            _ => "-".into(),
        };
        println!(
            "| {} | {passed}/{n} | {ratio:.2} | {:.2}–{:.2} | {torso} |",
            sc.name, spread.0, spread.1
        );
        let kind = sc.name.split('_').take(2).collect::<Vec<_>>().join("_");
        match kinds.iter_mut().find(|(k, _, _, _)| *k == kind) {
            Some((_, p, t, r)) => {
                *p += passed;
                *t += n;
                *r += ratio * n as f64;
            }
            None => kinds.push((kind, passed, n, ratio * n as f64)),
        }
    }
    let total: Vec<String> = kinds
        .iter()
        .map(|(k, p, t, r)| format!("{k} {p}/{t} (mean ratio {:.3})", r / *t as f64))
        .collect();
    println!("\npassed: {}", total.join(", "));
}
