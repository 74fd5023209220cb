//! The end of a get-up: the robot rises from a crouch, its torso turning
//! back towards upright at 150–250°/s, and the reference's stops turning
//! within one step when it comes upright (its feet land flat) and stays
//! there. Started from the reference's recorded states in the rise of the
//! five recorded get-ups (g_getup_t0..t4) and replayed with the recorded
//! commands, our robot must do the same.
//!
//! The joint stretch emulation (`joints.stretch_erp`) fails this: with it,
//! over the last six rows of g_getup_t1's rise the torso turned back at
//! 205–220°/s (the reference's 160–185°/s, rigid joints 145–175°/s), kept
//! turning once upright and sat down 25° (t1 from row 110, t0 from row
//! 120), as FC Portugal's type-1 robot did in closed loop. That is why it
//! is off by default.

use nalgebra::Vector3;
use rcss3d::sim::world::{PhysicsConfig, RobotHandle, World};

use rcss3d_tools::replay::{
    apply, box_corner_heights, gaits_dir, recorded_states_with_stretch, start, Scenario,
};

/// The rows (of every recorded get-up) the replays start from: the rise,
/// before the torso is upright at about row 130.
const STARTS: [usize; 3] = [110, 115, 120];

/// Replays `name` from the reference's recorded state at row `from` to the
/// end of the recording with `cfg`, calling `visit` with the world, the
/// robot and the row after each step.
fn replay_from(
    cfg: &PhysicsConfig,
    name: &str,
    from: usize,
    mut visit: impl FnMut(&World, RobotHandle, usize),
) {
    let sc = Scenario::load(&gaits_dir(), name);
    let (mut w, h) = start(cfg, &sc.script);
    let states = recorded_states_with_stretch(&mut w, h, &sc, from, cfg.joints.stretch_erp);
    // Ten one-step windows before the start, so that the solver's memory
    // (warm start, held angles, contacts) is that of a run.
    for step in 0..from - 10 {
        apply(&mut w, h, &sc.script, step);
    }
    for row in from - 10..from {
        w.set_robot_state(h, &states[row - 1])
            .expect("a recorded state");
        apply(&mut w, h, &sc.script, row + 1);
        w.step();
    }
    w.set_robot_state(h, &states[from - 1])
        .expect("a recorded state");
    for row in from..sc.trace.len() - 1 {
        apply(&mut w, h, &sc.script, row + 1);
        w.step();
        visit(&w, h, row);
    }
}

/// Replays `name` from the reference's recorded state at row `from` to the
/// end of the recording with `cfg`; returns per row after the start the
/// torso's tilt from upright (°).
fn tilt_from(cfg: &PhysicsConfig, name: &str, from: usize) -> Vec<f32> {
    let mut tilts = Vec::new();
    replay_from(cfg, name, from, |w, h, _| {
        let torso = w.robot_model(h).torso;
        let up = w.part_pose(h, torso).rotation * Vector3::z();
        tilts.push(up.z.clamp(-1.0, 1.0).acos().to_degrees());
    });
    tilts
}

/// The largest tilt (°) of the torso from row 140 (upright in every
/// recording) to the end, replayed from each start row.
fn tilt_after_the_rise(cfg: &PhysicsConfig, name: &str) -> Vec<f32> {
    STARTS
        .iter()
        .map(|&from| {
            tilt_from(cfg, name, from)
                .iter()
                .skip(140 - from)
                .copied()
                .fold(0.0, f32::max)
        })
        .collect()
}

/// The reference's largest torso tilt (°) from row 140 to the end.
fn recorded_tilt_after_the_rise(name: &str) -> f64 {
    let sc = Scenario::load(&gaits_dir(), name);
    sc.trace
        .column("torso_r22")
        .iter()
        .skip(140)
        .map(|c| c.clamp(-1.0, 1.0).acos().to_degrees())
        .fold(0.0, f64::max)
}

#[test]
fn a_robot_rising_from_a_get_up_stays_upright_as_the_references() {
    let cfg = PhysicsConfig::default();
    let mut failures = Vec::new();
    for t in 0..5 {
        let name = format!("g_getup_t{t}");
        let reference = recorded_tilt_after_the_rise(&name);
        let ours = tilt_after_the_rise(&cfg, &name);
        eprintln!("{name}: largest tilt after the rise, ours from rows {STARTS:?}: {ours:.1?}°, the reference's {reference:.1}°");
        assert!(reference < 3.0, "{name}: the reference stands upright");
        for (from, tilt) in STARTS.iter().zip(&ours) {
            if *tilt > 10.0 {
                failures.push(format!("{name} from row {from}: {tilt:.1}°"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "the robot did not stay upright after the rise: {failures:?}"
    );
}

#[test]
fn with_the_joint_stretch_emulation_a_rising_robot_sits_down() {
    let mut cfg = PhysicsConfig::default();
    cfg.joints.stretch_erp = Some(0.2);
    let ours = tilt_after_the_rise(&cfg, "g_getup_t1");
    eprintln!("g_getup_t1 with the joint stretch: largest tilt after the rise from rows {STARTS:?}: {ours:.1?}°");
    assert!(
        ours[0] > 15.0,
        "from row 110 the stretched robot stayed within {:.1}° of upright",
        ours[0]
    );
}

/// Rows 125–175 of every recorded rise: the robot closes its legs standing
/// on the feet's edges, and the reference's feet stay in the ground,
/// 1.1–1.3 mm deep (one step from its recorded states). Ours must not
/// leave it for a single step: a foot out of the ground has no slip
/// contact points and slides 10–20 mm inwards in that step. Counted over
/// the replays from every start row; with the stiff contact but without
/// the surface layer 238 foot-steps were in the air, with a layer that
/// only stops further sinking 63, with the earlier softer contact 24.
#[test]
fn a_rising_robot_keeps_its_feet_in_the_ground_as_the_references() {
    let cfg = PhysicsConfig::default();
    let mut lifted = Vec::new();
    for t in 0..5 {
        let name = format!("g_getup_t{t}");
        for from in STARTS {
            replay_from(&cfg, &name, from, |w, h, row| {
                if !(125..=175).contains(&row) {
                    return;
                }
                let m = w.robot_model(h);
                for s in &m.foot_sensors {
                    let corners = box_corner_heights(w, h, s.part);
                    let lowest = corners.iter().copied().fold(f32::INFINITY, f32::min);
                    if lowest > 0.0 {
                        let part = &m.parts[s.part].name;
                        lifted.push(format!(
                            "{name} from {from}, row {row}: {part} {:.2} mm up",
                            lowest * 1000.0
                        ));
                    }
                }
            });
        }
    }
    assert!(
        lifted.is_empty(),
        "{} foot-steps out of the ground: {lifted:?}",
        lifted.len()
    );
}
