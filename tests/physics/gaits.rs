//! Replays of the reference recordings (walks, kicks and get-ups of all
//! five robot types, and the plain stands) on our world, judged against
//! the reference's own trace. See `replay.rs` for the set-up and the
//! figures; `cargo run --release --example gait_replay` prints the table.

use rcss3d::sim::world::PhysicsConfig;

use super::replay::{acceptance_failures, gaits_dir, physics_dir, replay, table, Scenario};

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
