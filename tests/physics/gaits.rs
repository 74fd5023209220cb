//! Replays of the reference recordings (walks, kicks and get-ups of all
//! five robot types, and the plain stands) on our world, judged against
//! the reference's own trace. See `tools/src/replay.rs` for the set-up and the
//! figures; `cargo run --release -p rcss3d-tools --bin fit -- gaits` prints the table.

use rcss3d::sim::world::PhysicsConfig;

use rcss3d_tools::replay::{acceptance_failures, gaits_dir, physics_dir, replay, table, Scenario};

/// Standing with zero commands: every joint of every robot type sits
/// within 0.2° of the reference's angle after 1 s.
#[test]
fn standing_robots_hold_their_joints_like_the_reference() {
    let cfg = PhysicsConfig::default();
    for sc in Scenario::all(&physics_dir(), "c_stand") {
        let c = replay(&cfg, &sc);
        eprintln!(
            "{}: largest joint error at 1 s {:.3}°",
            c.name, c.hold_err_1s
        );
        assert!(
            c.hold_err_1s <= 0.2,
            "{}: a joint is {:.3}° off the reference at 1 s",
            c.name,
            c.hold_err_1s
        );
    }
}

/// The acceptance of the physics fit on real gaits: no walk falls and each
/// walks at least 85 % of the reference's distance, every get-up ends
/// upright, every kick moves the ball at least half as far, the joint RMS
/// error over 2 s is at most 1°, and standing feet carry the reference's
/// load within 1 N. Not met yet (see README "Physics"): run it with
/// `cargo test --release --test physics -- --ignored gait`.
#[test]
#[ignore = "the gait fit is not reached yet; README Physics has the table"]
fn gaits_play_out_like_on_the_reference() {
    let cfg = PhysicsConfig::default();
    let mut rows: Vec<_> = Scenario::all(&physics_dir(), "c_stand")
        .iter()
        .map(|s| replay(&cfg, s))
        .collect();
    rows.extend(
        Scenario::all(&gaits_dir(), "g_")
            .iter()
            .map(|s| replay(&cfg, s)),
    );
    eprintln!("{}", table(&rows));
    let failures = acceptance_failures(&rows);
    assert!(
        failures.is_empty(),
        "{} misses:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The first second of every recorded gait (the beam, the standing
/// phase, a walk's first steps, a kick's approach, a get-up's crouch),
/// before any outcome can hinge on the smallest difference, follows the
/// reference: every joint within 0.1° RMS, the torso and feet within
/// 4 mm on average in every gait and within 1.5 mm over all gaits.
/// Each of these breaks it: Coulomb friction instead of the slip law, no
/// parts' drag, contacts at half the spring frequency, two rapier steps
/// per cycle, 30 solver sweeps, a motor gain of 1000.
#[test]
fn every_gait_follows_the_reference_through_its_first_second() {
    let cfg = PhysicsConfig::default();
    let rows: Vec<_> = Scenario::all(&gaits_dir(), "g_")
        .iter()
        .map(|s| replay(&cfg, s))
        .collect();
    eprintln!("{}", table(&rows));
    let mut part_sum = 0.0;
    for c in &rows {
        let part = c
            .part_err_1s
            .expect("every gait recording has part positions");
        assert!(
            c.hj_rms_1s <= 0.1,
            "{}: joint RMS error {:.3}° over the first second",
            c.name,
            c.hj_rms_1s
        );
        assert!(
            part <= 0.004,
            "{}: torso and feet {:.2} mm from the reference's over the first second",
            c.name,
            part * 1000.0
        );
        part_sum += part;
    }
    let mean = part_sum / rows.len() as f64;
    assert!(
        mean <= 0.0015,
        "torso and feet {:.2} mm from the reference's over the first second, mean of all gaits",
        mean * 1000.0
    );
}
