//! Ball: drops from 1.0 m and 0.5 m (first rebound apex within ±0.05 m of
//! the reference trace), a roll at 2 m/s (speed within 2 % of the
//! reference at 0.5 s, 1 s and 2 s), a ball flying onto the ground and a
//! ball lofted from it (position within 0.1 m of the reference's over
//! 4 s), and a fast ball's spin.

use nalgebra::Vector3;

use super::util::{trace, world};

/// Highest centre height between the first and the second ground contact.
fn first_apex(z: &[f64]) -> f64 {
    // First local minimum (impact), then the following maximum.
    let mut i = 1;
    while i + 1 < z.len() && !(z[i] <= z[i - 1] && z[i] <= z[i + 1]) {
        i += 1;
    }
    z[i..].iter().cloned().fold(f64::MIN, f64::max).min(
        // the maximum before the next minimum
        {
            let mut j = i + 1;
            while j + 1 < z.len() && !(z[j] >= z[j - 1] && z[j] >= z[j + 1]) {
                j += 1;
            }
            z[j.min(z.len() - 1)]
        },
    )
}

fn drop_from(name: &str, start_z: f32) -> (f64, f64) {
    let trace = trace(name);
    let ref_apex = first_apex(&trace.column("ball_z"));
    let mut w = world();
    w.set_ball_position(Vector3::new(2.0, 3.0, start_z));
    w.set_ball_velocity(Vector3::zeros());
    let mut z = vec![start_z as f64];
    for _ in 0..150 {
        w.step();
        z.push(w.ball_position().z as f64);
    }
    (first_apex(&z), ref_apex)
}

#[test]
fn ball_drop_1m_first_apex() {
    let (apex, ref_apex) = drop_from("a_drop_1m.csv", 1.042);
    eprintln!("drop 1 m: apex centre {apex:.4} (reference {ref_apex:.4})");
    assert!(
        (apex - ref_apex).abs() <= 0.05,
        "apex {apex:.4} vs reference {ref_apex:.4}"
    );
}

#[test]
fn ball_drop_half_metre_first_apex() {
    let (apex, ref_apex) = drop_from("a_drop_0.5m.csv", 0.542);
    eprintln!("drop 0.5 m: apex centre {apex:.4} (reference {ref_apex:.4})");
    assert!(
        (apex - ref_apex).abs() <= 0.05,
        "apex {apex:.4} vs reference {ref_apex:.4}"
    );
}

#[test]
fn ball_roll_decay() {
    let trace = trace("b_roll_2mps.csv");
    let xs = trace.column("ball_x");
    // Reference speed around step k: central difference of positions.
    let ref_speed = |k: usize| (xs[k + 1] - xs[k - 1]) / 0.04;
    let mut w = world();
    w.set_ball_position(Vector3::new(-2.0, -3.0, 0.042));
    w.set_ball_velocity(Vector3::zeros());
    for _ in 0..50 {
        w.step();
    }
    w.set_ball_velocity(Vector3::new(2.0, 0.0, 0.0));
    let mut x = vec![w.ball_position().x as f64];
    for _ in 0..200 {
        w.step();
        x.push(w.ball_position().x as f64);
    }
    let speed = |k: usize| (x[k + 1] - x[k - 1]) / 0.04;
    for (t, k) in [(0.5, 25usize), (1.0, 50), (2.0, 100)] {
        // Trace rows start at step 1 (index 0).
        let r = ref_speed(k - 1);
        let s = speed(k);
        eprintln!("roll t={t}: speed {s:.3} (reference {r:.3})");
        assert!(
            (s - r).abs() <= 0.02 * r,
            "t={t}: speed {s:.3} vs reference {r:.3}"
        );
    }
}

/// The reference's ball rests 1.7 mm deep in the ground (its contacts'
/// 1 mm surface layer and its soft ball-ground row): its centre at z
/// 0.0403 in the roll trace before the push, where rapier's own contact
/// would hold it at 0.0417.
#[test]
fn a_resting_ball_sits_as_deep_in_the_ground_as_the_reference() {
    let trace = trace("b_roll_2mps.csv");
    let ref_z = trace.column("ball_z")[0];
    let mut w = world();
    w.set_ball_position(Vector3::new(2.0, 3.0, 0.042));
    w.set_ball_velocity(Vector3::zeros());
    for _ in 0..100 {
        w.step();
    }
    let z = w.ball_position().z as f64;
    eprintln!("resting ball centre z {z:.5} (reference {ref_z:.5})");
    assert!(
        (z - ref_z).abs() <= 0.0002,
        "resting ball centre at z {z:.5}, reference {ref_z:.5}"
    );
}

/// Replays a ball trace recorded as the reference's `b_*` replays: the
/// ball set at step 0 to `pos` with velocity `vel` and no spin, then one
/// step per row. Returns the largest distance between our ball centre and
/// the reference's over all rows, and both balls' distances from `pos` at
/// the last row.
fn replay_ball(name: &str, pos: Vector3<f32>, vel: Vector3<f32>) -> (f64, f64, f64) {
    let trace = trace(name);
    let reference: Vec<Vector3<f64>> = trace
        .column("ball_x")
        .into_iter()
        .zip(trace.column("ball_y"))
        .zip(trace.column("ball_z"))
        .map(|((x, y), z)| Vector3::new(x, y, z))
        .collect();
    let mut w = world();
    w.set_ball_position(pos);
    w.set_ball_velocity(vel);
    let mut max_err = 0.0f64;
    let mut ours = pos.cast::<f64>();
    for r in &reference {
        w.step();
        ours = w.ball_position().cast::<f64>();
        max_err = max_err.max((ours - r).norm());
    }
    let start = pos.cast::<f64>();
    let last = reference.last().copied().unwrap_or(start);
    (max_err, (ours - start).norm(), (last - start).norm())
}

/// A ball flying level at 5 m/s from 0.5 m up lands and bounces on: the
/// ground's friction turns its slide into spin, so it keeps about 3 m/s
/// (a solid sphere rolls at 5/7 of its sliding speed) and ends 4.88 m
/// from its start at 4 s in the reference.
#[test]
fn a_ball_flying_onto_the_ground_bounces_on_like_the_reference() {
    let (max_err, dist, ref_dist) = replay_ball(
        "b_bounce_5mps_0.5m.csv",
        Vector3::new(-2.0, -3.0, 0.5),
        Vector3::new(5.0, 0.0, 0.0),
    );
    eprintln!(
        "bounce: largest position error {max_err:.4} m; at 4 s {dist:.3} m from the start (reference {ref_dist:.3})"
    );
    assert!(max_err <= 0.1, "position {max_err:.4} m off the reference");
}

/// A ball launched from the ground at (5, 0, 2) m/s: the reference's
/// ground friction has no Coulomb limit, so it brakes the slide in the
/// first step, while the ball is already leaving the ground (3.69 m/s
/// forward after it).
#[test]
fn a_ball_lofted_from_the_ground_flies_like_the_reference() {
    let trace = trace("b_loft_5x_2z.csv");
    let ref_x1 = trace.column("ball_x")[0];
    let mut w = world();
    w.set_ball_position(Vector3::new(-2.0, -3.0, 0.042));
    w.set_ball_velocity(Vector3::new(5.0, 0.0, 2.0));
    w.step();
    let x1 = w.ball_position().x as f64;
    eprintln!("loft: first step to x {x1:.5} (reference {ref_x1:.5})");
    assert!(
        (x1 - ref_x1).abs() <= 0.002,
        "first step to x {x1:.5}, reference {ref_x1:.5}"
    );
    let (max_err, dist, ref_dist) = replay_ball(
        "b_loft_5x_2z.csv",
        Vector3::new(-2.0, -3.0, 0.042),
        Vector3::new(5.0, 0.0, 2.0),
    );
    eprintln!(
        "loft: largest position error {max_err:.4} m; at 4 s {dist:.3} m from the start (reference {ref_dist:.3})"
    );
    assert!(max_err <= 0.1, "position {max_err:.4} m off the reference");
}

/// A ball pushed to 4 m/s along the ground rolls at 2.9 m/s, 68 rad/s or
/// 1.4 rad per step: more than the 45° per step at which rapier caps a
/// body's spin by default, and enough to carry the bottom of the ball 3 cm
/// up within a step, which rapier's own contact tracking would take for
/// the ball lifting off. The ball is exempt from the cap and its ground
/// contact is tracked at its centre, so it rolls without sliding and
/// without hopping, at the reference's resting depth.
#[test]
fn a_fast_ball_rolls_without_sliding_or_hopping() {
    let mut w = world();
    w.set_ball_position(Vector3::new(0.0, 0.0, 0.042));
    w.set_ball_velocity(Vector3::new(4.0, 0.0, 0.0));
    let mut highest = 0.0f32;
    for k in 1..=50 {
        w.step();
        let v = w.ball_velocity().x;
        let rolling = w.ball_angular_velocity().y * 0.042;
        if k >= 5 {
            highest = highest.max(w.ball_position().z);
            assert!(
                (rolling - v).abs() <= 0.02 * v,
                "step {k}: spin × radius {rolling:.3} m/s at speed {v:.3} m/s"
            );
        }
        if k == 5 {
            eprintln!("fast roll: speed {v:.3} m/s, spin × radius {rolling:.3} m/s");
        }
    }
    eprintln!("fast roll: centre at most {highest:.5} m high");
    assert!(highest <= 0.0405, "the ball hopped to z {highest:.5}");
}
