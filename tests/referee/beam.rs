//! Beam (docs/protocol.md#beam): when it is allowed, the own-half clamp and its noise.

use rcss3d::rules::{PlayMode, RulesConfig, Side};

use crate::util::Sim;

#[test]
fn beam_is_refused_outside_its_modes_clamped_to_the_own_half_and_noisy() {
    let mut s = Sim::new(RulesConfig::default());
    let r = &s.referee;
    let mut ys = Vec::new();
    for _ in 0..20 {
        let (x, y, h) = r
            .beam_target(Side::Left, 5.0, 3.0, 0.0, &mut s.rng)
            .expect("allowed before kick-off");
        assert_eq!(x, 0.0, "clamped to the own half");
        assert!((y - 3.0).abs() <= 0.05 + 1e-6);
        assert!(h.abs() <= 10.0 + 1e-4);
        ys.push(y);
    }
    assert!(ys.iter().any(|y| *y != 3.0), "noise is added");
    let (x, y, h) = r
        .beam_target(Side::Right, -3.0, 2.0, 0.0, &mut s.rng)
        .expect("allowed");
    assert!((x - 3.0).abs() <= 0.05 + 1e-6 && (y + 2.0).abs() <= 0.05 + 1e-6);
    assert!(h.abs() >= 170.0 - 1e-4, "the right team faces -x: {h}");
    let (x, y, _) = r
        .beam_target(Side::Left, -40.0, 30.0, 0.0, &mut s.rng)
        .expect("allowed");
    assert_eq!((x, y), (-15.0, 10.0));
    assert!(r
        .beam_target(Side::Left, f32::NAN, 0.0, 0.0, &mut s.rng)
        .is_none());
    assert!(r
        .beam_target(Side::Left, 0.0, 0.0, f32::INFINITY, &mut s.rng)
        .is_none());

    s.referee.set_play_mode(PlayMode::PlayOn);
    assert!(s
        .referee
        .beam_target(Side::Left, -3.0, 0.0, 0.0, &mut s.rng)
        .is_none());
    s.referee.set_play_mode(PlayMode::GoalRight);
    assert!(s
        .referee
        .beam_target(Side::Left, -3.0, 0.0, 0.0, &mut s.rng)
        .is_some());
}

#[test]
fn beam_is_not_clamped_with_start_any_field_position() {
    let cfg = RulesConfig {
        start_any_field_position: true,
        beam_noise_xy: 0.0,
        beam_noise_angle: 0.0,
        ..RulesConfig::default()
    };
    let mut s = Sim::new(cfg);
    let t = s
        .referee
        .beam_target(Side::Left, 5.0, 3.0, 45.0, &mut s.rng);
    assert_eq!(t, Some((5.0, 3.0, 45.0)));
}
