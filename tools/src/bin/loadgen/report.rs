//! Printing a run, the summary table and the A/B comparison.

use std::collections::BTreeMap;

use anyhow::Result;

use crate::run::{one_run, RunResult};
use crate::server::StageRow;
use crate::{Cli, LATE_FACTOR, STEP};

/// (key, median, mean, p99, max) in microseconds over the measuring window.
pub(crate) fn summarise_stages(rows: &[StageRow]) -> Vec<(String, f64, f64, f64, f64)> {
    let mut by_key: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (in_window, fields) in rows {
        if !in_window {
            continue;
        }
        for (k, v) in fields {
            by_key.entry(k.clone()).or_default().push(*v);
        }
    }
    by_key
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_unstable();
            let mean = v.iter().sum::<u64>() as f64 / v.len().max(1) as f64;
            let med = v[v.len() / 2] as f64;
            let p99 = v[(v.len() * 99 / 100).min(v.len() - 1)] as f64;
            let max = v.last().copied().unwrap_or(0) as f64;
            (k, med, mean, p99, max)
        })
        .collect()
}

pub(crate) fn mode_name(cli: &Cli) -> &'static str {
    match (cli.sync, cli.realtime || !cli.sync) {
        (true, true) => "sync+realtime",
        (true, false) => "sync",
        (false, _) => "realtime",
    }
}

/// Whether the server paces cycles by the wall clock (late cycles count).
pub(crate) fn paced(cli: &Cli) -> bool {
    cli.realtime || !cli.sync
}

pub(crate) fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}"))
        .unwrap_or_else(|| "n/a".into())
}

pub(crate) fn print_run(cli: &Cli, r: &RunResult, run: usize) {
    println!(
        "-- {} agents, {} mode, run {}: {} frames in {:.2} s",
        r.agents,
        mode_name(cli),
        run + 1,
        r.cycles,
        r.wall
    );
    println!(
        "   cycles/s          {:.1} (frames at agent 0; server clock: {} cycles/s)",
        r.cps,
        opt(r.sim_cps, 1)
    );
    println!(
        "   server CPU        {} ms/cycle, {} % of one core",
        opt(r.cpu_ms_per_cycle, 3),
        opt(r.cpu_pct, 1)
    );
    if !r.threads.is_empty() {
        let parts: Vec<String> = r
            .threads
            .iter()
            .filter(|(_, ms)| *ms > 0.0)
            .map(|(n, ms)| format!("{n} {ms:.3}"))
            .collect();
        println!("   by thread         {} (ms/cycle)", parts.join(", "));
    }
    println!(
        "   server memory     peak RSS {} MB, RSS {} -> {} MB over the window",
        opt(r.hwm_kb.map(|k| k as f64 / 1024.0), 1),
        opt(r.rss_start_kb.map(|k| k as f64 / 1024.0), 1),
        opt(r.rss_end_kb.map(|k| k as f64 / 1024.0), 1)
    );
    println!(
        "   on the field      {:.3} s after the first connection (connections spread over {:.3} s)",
        r.on_field_s, r.connect_spread_s
    );
    if paced(cli) {
        println!(
            "   late cycles       {} frame gaps > {:.0} ms in {} agent(s), max gap {:.1} ms, {} skipped server cycles",
            r.late_gaps,
            STEP * LATE_FACTOR * 1000.0,
            r.agents_late,
            r.max_gap_ms,
            r.skipped_cycles
        );
        if !r.late_at.is_empty() {
            let times: Vec<String> = r.late_at.iter().map(|t| format!("{t:.2}")).collect();
            println!("   late frames at    game time {} s", times.join(", "));
        }
    } else {
        println!(
            "   frame gaps        max {:.1} ms (sync mode without the real-time timer: gaps are not late cycles)",
            r.max_gap_ms
        );
    }
    println!(
        "   loadgen           {:.1} % of one core; largest frame {} bytes",
        r.loadgen_cpu_pct, r.max_frame_bytes
    );
    for (k, med, mean, p99, max) in &r.stages {
        println!(
            "   stage {k:<12} median {med:.0} us, mean {mean:.0} us, p99 {p99:.0} us, max {max:.0} us"
        );
    }
    println!(
        "RESULT agents={} mode={} cycles={} wall_s={:.3} cps={:.1} cpu_ms_per_cycle={} cpu_pct={} peak_rss_mb={} on_field_s={:.3} late={} max_gap_ms={:.1} skipped={} loadgen_cpu_pct={:.1}",
        r.agents,
        mode_name(cli),
        r.cycles,
        r.wall,
        r.cps,
        opt(r.cpu_ms_per_cycle, 3),
        opt(r.cpu_pct, 1),
        opt(r.hwm_kb.map(|k| k as f64 / 1024.0), 1),
        r.on_field_s,
        if paced(cli) { r.late_gaps.to_string() } else { "-".into() },
        r.max_gap_ms,
        r.skipped_cycles,
        r.loadgen_cpu_pct
    );
}

pub(crate) fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The B variant of an A/B comparison, if one was asked for.
pub(crate) fn variant_b(cli: &Cli) -> Option<Cli> {
    if cli.b_server_bin.is_none() && cli.b_server_args.is_empty() {
        return None;
    }
    let mut b = cli.clone();
    if let Some(bin) = &cli.b_server_bin {
        b.server_bin = Some(bin.clone());
    }
    b.server_args.extend(cli.b_server_args.iter().cloned());
    Some(b)
}

/// Ratio B/A of each side-by-side pair of runs, for one figure.
pub(crate) fn pair_ratios(
    a: &[RunResult],
    b: &[RunResult],
    f: &dyn Fn(&RunResult) -> Option<f64>,
) -> Vec<f64> {
    a.iter()
        .zip(b)
        .filter_map(|(x, y)| Some(f(y)? / f(x)?))
        .collect()
}

/// Runs A and B alternately and prints the comparison table.
pub(crate) fn compare(cli: &Cli, b: &Cli) -> Result<()> {
    let mut rows = Vec::new();
    for &n in &cli.agents {
        let (mut ra, mut rb) = (Vec::new(), Vec::new());
        for run in 0..cli.runs.max(1) {
            println!("== A, run {}", run + 1);
            ra.push(one_run(cli, n, run)?);
            println!("== B, run {}", run + 1);
            rb.push(one_run(b, n, run)?);
        }
        rows.push((n, ra, rb));
    }
    println!();
    println!(
        "A/B ({} mode, {} alternating pair(s) each; B/A = median of the pairs' ratios)",
        mode_name(cli),
        cli.runs.max(1)
    );
    println!("| agents | A cycles/s | B cycles/s | B/A cycles/s | A CPU ms/cycle | B CPU ms/cycle | B/A CPU |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for (n, ra, rb) in &rows {
        let cps = |r: &RunResult| Some(r.cps);
        let cpu = |r: &RunResult| r.cpu_ms_per_cycle;
        let med = |v: &[RunResult], f: &dyn Fn(&RunResult) -> Option<f64>| {
            median(v.iter().filter_map(f).collect())
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            n,
            opt(med(ra, &cps), 0),
            opt(med(rb, &cps), 0),
            opt(median(pair_ratios(ra, rb, &cps)), 3),
            opt(med(ra, &cpu), 3),
            opt(med(rb, &cpu), 3),
            opt(median(pair_ratios(ra, rb, &cpu)), 3),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cli;
    use clap::Parser;
    use std::path::PathBuf;

    fn run(cps: f64, cpu: Option<f64>) -> RunResult {
        RunResult {
            cps,
            cpu_ms_per_cycle: cpu,
            ..RunResult::default()
        }
    }

    #[test]
    fn ab_ratios_pair_runs_side_by_side() {
        // The machine slows down 2x between the pairs; each pair's ratio
        // stays 0.5, which the median of the ratios keeps and a ratio of
        // medians would not.
        let a = [
            run(100.0, Some(10.0)),
            run(50.0, Some(20.0)),
            run(100.0, None),
        ];
        let b = [
            run(200.0, Some(5.0)),
            run(100.0, Some(10.0)),
            run(150.0, Some(9.0)),
        ];
        let cps = pair_ratios(&a, &b, &|r| Some(r.cps));
        assert_eq!(cps, vec![2.0, 2.0, 1.5]);
        assert_eq!(median(cps), Some(2.0));
        // A pair with a missing figure is left out.
        let cpu = pair_ratios(&a, &b, &|r| r.cpu_ms_per_cycle);
        assert_eq!(cpu, vec![0.5, 0.5]);
        assert_eq!(median(cpu), Some(0.5));
    }

    #[test]
    fn variant_b_replaces_the_binary_and_appends_arguments() {
        let plain = Cli::parse_from(["loadgen", "--spawn-server", "--server-arg=--sync"]);
        assert!(variant_b(&plain).is_none());
        let cli = Cli::parse_from([
            "loadgen",
            "--spawn-server",
            "--server-arg=--sync",
            "--b-server-bin",
            "/tmp/other",
            "--b-server-arg=--config",
            "--b-server-arg=b.ron",
        ]);
        let b = variant_b(&cli).expect("a B variant");
        assert_eq!(b.server_bin, Some(PathBuf::from("/tmp/other")));
        assert_eq!(b.server_args, ["--sync", "--config", "b.ron"]);
        assert_eq!(cli.server_args, ["--sync"]);
    }

    #[test]
    fn stage_summary_keeps_the_worst_cycle_of_the_window() {
        let row = |in_window: bool, us: u64| (in_window, vec![("physics_us".to_owned(), us)]);
        let mut rows: Vec<StageRow> = (1..=100).map(|i| row(true, i * 10)).collect();
        // Outside the measuring window: ignored, however slow.
        rows.push(row(false, 1_000_000));
        rows.push(row(true, 25_000));
        let s = summarise_stages(&rows);
        assert_eq!(s.len(), 1);
        let (key, median, _mean, p99, max) = &s[0];
        assert_eq!(key, "physics_us");
        assert_eq!(*median, 510.0);
        assert_eq!(*p99, 1000.0);
        assert_eq!(*max, 25_000.0);
    }
}
