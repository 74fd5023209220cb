//! The figures of many comparisons as text: a markdown table, the
//! acceptance checks and a one-paragraph summary.

use super::Comparison;

fn opt(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into())
}

/// A markdown table of comparisons.
pub fn table(rows: &[Comparison]) -> String {
    let mut s = String::from(
        "| scenario | walked m (ref) | fall s (ref) | end z (ref) | ball m (ref) | HJ RMS 2 s ° | torso err 2 s / 4 s m | feet 1 s N L/R (ref) | hold err 1 s ° | part err 2 s cm | HJ RMS 1 s ° | part err 1 s cm |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for c in rows {
        s.push_str(&format!(
            "| {} | {:.2} ({:.2}) | {} ({}) | {:.3} ({:.3}) | {:.2} ({:.2}) | {:.2} | {} / {} | {:.1}/{:.1} ({:.1}/{:.1}) | {:.2} | {} | {:.3} | {} |\n",
            c.name,
            c.walked.0,
            c.walked.1,
            opt(c.fall.0),
            opt(c.fall.1),
            c.end_z.0,
            c.end_z.1,
            c.ball_moved.0,
            c.ball_moved.1,
            c.hj_rms_2s,
            opt(c.torso_err.0),
            opt(c.torso_err.1),
            c.stand_load.0 .0,
            c.stand_load.0 .1,
            c.stand_load.1 .0,
            c.stand_load.1 .1,
            c.hold_err_1s,
            opt(c.part_err_2s.map(|e| e * 100.0)),
            c.hj_rms_1s,
            opt(c.part_err_1s.map(|e| e * 100.0)),
        ));
    }
    s
}

/// Whether the torso ends upright and standing (get-up success): centre
/// above 0.3 m and the up axis within ~30° of vertical.
pub fn ends_upright(c: &Comparison) -> bool {
    c.end_z.0 > 0.3 && c.end_up.0 > 0.85
}

/// Every way the comparisons miss the gait acceptance criteria: no walk
/// falls and each walks at least 85 % of the reference's distance; every
/// get-up ends upright; every kick moves the ball at least half the
/// reference's distance; joint-angle RMS error over the first 2 s at most
/// 1°; standing feet loads within 1 N and held joints within 0.2° of the
/// reference at 1 s.
pub fn acceptance_failures(rows: &[Comparison]) -> Vec<String> {
    let mut out = Vec::new();
    for c in rows {
        let n = &c.name;
        if n.starts_with("g_walk") {
            if let Some(t) = c.fall.0 {
                out.push(format!("{n}: fell at {t:.2} s"));
            }
            if c.walked.0 < 0.85 * c.walked.1 {
                out.push(format!(
                    "{n}: walked {:.2} m, reference {:.2} m",
                    c.walked.0, c.walked.1
                ));
            }
        }
        if n.starts_with("g_getup") && !ends_upright(c) {
            out.push(format!(
                "{n}: ends lying (torso z {:.3}, up {:.2})",
                c.end_z.0, c.end_up.0
            ));
        }
        if n.starts_with("g_kick") && c.ball_moved.0 < 0.5 * c.ball_moved.1 {
            out.push(format!(
                "{n}: ball moved {:.2} m, reference {:.2} m",
                c.ball_moved.0, c.ball_moved.1
            ));
        }
        if c.hj_rms_2s > 1.0 {
            out.push(format!("{n}: joint RMS error {:.2}° over 2 s", c.hj_rms_2s));
        }
        let ((l, r), (rl, rr)) = c.stand_load;
        if (l - rl).abs() > 1.0 || (r - rr).abs() > 1.0 {
            out.push(format!(
                "{n}: feet carry {l:.1}/{r:.1} N in the first second, reference {rl:.1}/{rr:.1} N"
            ));
        }
        if c.hold_err_1s > 0.2 {
            out.push(format!("{n}: a joint is {:.2}° off at 1 s", c.hold_err_1s));
        }
    }
    out
}

/// One line: walks kept up and their distance ratio, get-ups upright, kick
/// ratios, worst joint RMS, worst foot-load error.
pub fn summary(rows: &[Comparison]) -> String {
    let walks: Vec<&Comparison> = rows
        .iter()
        .filter(|c| c.name.starts_with("g_walk"))
        .collect();
    let up = walks.iter().filter(|c| c.fall.0.is_none()).count();
    let ratio: Vec<String> = walks
        .iter()
        .map(|c| format!("{:.2}", c.walked.0 / c.walked.1))
        .collect();
    let getups = rows.iter().filter(|c| c.name.starts_with("g_getup"));
    let (mut gu, mut gn) = (0, 0);
    for c in getups {
        gn += 1;
        if ends_upright(c) {
            gu += 1;
        }
    }
    let kicks: Vec<String> = rows
        .iter()
        .filter(|c| c.name.starts_with("g_kick"))
        .map(|c| format!("{:.2}", c.ball_moved.0 / c.ball_moved.1))
        .collect();
    let hj = rows.iter().map(|c| c.hj_rms_2s).fold(0.0, f64::max);
    let hj_mean = rows.iter().map(|c| c.hj_rms_2s).sum::<f64>() / rows.len().max(1) as f64;
    let load = rows
        .iter()
        .map(|c| {
            let ((l, r), (rl, rr)) = c.stand_load;
            (l - rl).abs().max((r - rr).abs())
        })
        .fold(0.0, f64::max);
    let t2: Vec<f64> = rows.iter().filter_map(|c| c.torso_err.0).collect();
    let t2m = t2.iter().sum::<f64>() / t2.len().max(1) as f64;
    let part_err = |prefix: &str| {
        let e: Vec<f64> = rows
            .iter()
            .filter(|c| c.name.starts_with(prefix))
            .filter_map(|c| c.part_err_2s)
            .collect();
        format!(
            "{:.2}",
            100.0 * e.iter().sum::<f64>() / e.len().max(1) as f64
        )
    };
    format!(
        "walks up {up}/{} ratio [{}]; get-ups upright {gu}/{gn}; kicks ratio [{}]; HJ RMS max {hj:.2} mean {hj_mean:.2}; torso err 2 s mean {t2m:.3}; part err 2 s cm walks/kicks/get-ups {}/{}/{}; worst foot load err {load:.1} N; failures {}",
        walks.len(),
        ratio.join(" "),
        kicks.join(" "),
        part_err("g_walk"),
        part_err("g_kick"),
        part_err("g_getup"),
        acceptance_failures(rows).len()
    )
}
