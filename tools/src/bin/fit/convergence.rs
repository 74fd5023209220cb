//! How far a physics setting's solve is from converged: replays the
//! reference gaits with each setting and with the same setting solved by
//! many more sweeps (`--sweeps`, default 3000), and prints how far the two
//! replays are apart over the first second and two seconds (joint RMS,
//! torso distance, foot loads). Any difference is solver error, not
//! physics: the tool for finding cheaper ways to converge. `--relaxation
//! N` also gives the converged solve N sweeps of rapier's relaxation
//! pass (`stabilization_iterations`; default: the setting's own).
//!
//! ```text
//! cargo run --release -p rcss3d-tools --bin fit -- convergence [PREFIX] [--sweeps N] [--relaxation N] [RON overrides]...
//! cargo run --release -p rcss3d-tools --bin fit -- convergence g_ '(internal_pgs_iterations: 50)'
//! ```

use crate::overrides;
use rcss3d_tools::replay;

use rcss3d::sim::world::PhysicsConfig;

/// Per window: joint RMS (deg), torso distance at its end (mm), mean
/// absolute foot load difference (N).
fn apart(a: &replay::Run, b: &replay::Run, rows: usize) -> (f64, f64, f64) {
    let rows = rows.min(a.torso.len()).min(b.torso.len());
    let mut sq = 0.0;
    let mut n = 0usize;
    for ((_, ja), (_, jb)) in a.joints.iter().zip(&b.joints) {
        for k in 0..rows {
            sq += (ja[k] - jb[k]).powi(2);
            n += 1;
        }
    }
    let torso = 1000.0 * (a.torso[rows - 1] - b.torso[rows - 1]).norm();
    let load = a.foot_fz[..rows]
        .iter()
        .zip(&b.foot_fz[..rows])
        .map(|(x, y)| ((x.0 - y.0).abs() + (x.1 - y.1).abs()) / 2.0)
        .sum::<f64>()
        / rows as f64;
    ((sq / n.max(1) as f64).sqrt(), torso, load)
}

/// Runs the subcommand with its arguments.
pub fn run(args: Vec<String>) {
    let mut prefix = String::new();
    let mut sweeps = 3000usize;
    let mut relaxation: Option<usize> = None;
    let mut configs: Vec<(String, PhysicsConfig)> = Vec::new();
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        if a == "--sweeps" {
            sweeps = args.next().and_then(|v| v.parse().ok()).unwrap_or(sweeps);
        } else if a == "--relaxation" {
            relaxation = args.next().and_then(|v| v.parse().ok());
        } else if a.starts_with('(') {
            configs.push(overrides::parse(&a));
        } else {
            prefix = a;
        }
    }
    let configs = overrides::or_defaults(configs);
    let scenarios = replay::Scenario::all(&replay::gaits_dir(), &prefix);
    for (label, cfg) in &configs {
        let converged = PhysicsConfig {
            solver: rcss3d::sim::world::SolverConfig {
                internal_pgs_iterations: sweeps,
                stabilization_iterations: relaxation.unwrap_or(cfg.solver.stabilization_iterations),
                ..cfg.solver.clone()
            },
            ..cfg.clone()
        };
        println!(
            "## {label} against {sweeps} sweeps, {} relaxation sweeps",
            converged.solver.stabilization_iterations
        );
        println!("| scenario | joints 1 s ° | torso 1 s mm | feet 1 s N | joints 2 s ° | torso 2 s mm | feet 2 s N |");
        println!("|---|---|---|---|---|---|---|");
        let mut sum = [0.0f64; 6];
        for sc in &scenarios {
            let rows = sc.trace.len();
            let ours = replay::run(cfg, &sc.script, rows);
            let conv = replay::run(&converged, &sc.script, rows);
            let (j1, t1, f1) = apart(&ours, &conv, 50);
            let (j2, t2, f2) = apart(&ours, &conv, 100);
            for (s, v) in sum.iter_mut().zip([j1, t1, f1, j2, t2, f2]) {
                *s += v;
            }
            println!(
                "| {} | {j1:.3} | {t1:.2} | {f1:.2} | {j2:.3} | {t2:.2} | {f2:.2} |",
                sc.name
            );
        }
        let n = scenarios.len().max(1) as f64;
        println!(
            "mean: joints {:.3}° / {:.3}°, torso {:.2} / {:.2} mm, feet {:.2} / {:.2} N (1 s / 2 s)\n",
            sum[0] / n,
            sum[3] / n,
            sum[1] / n,
            sum[4] / n,
            sum[2] / n,
            sum[5] / n
        );
    }
}
