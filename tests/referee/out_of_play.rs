//! Ball out of play and set pieces (docs/protocol.md#ball-out-of-play,
//! docs/protocol.md#set-pieces): kick-ins, goal and corner kicks,
//! the repel distance, untaken set pieces, double touches.

use nalgebra::Vector3;
use rcss3d::rules::{PlayMode, RulesConfig, Side};

use crate::util::{close, two_teams, Sim, R};

#[test]
fn ball_over_the_sideline_gives_a_kick_in_to_the_opponents_at_the_spot() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.place(2, 3.0, 8.5, 0.35);
    s.play_on_touched(2, 3.0, 9.8);
    s.ball = Vector3::new(3.4, 10.1, R);
    s.step();
    assert_eq!(s.mode(), PlayMode::KickInRight);
    let spot = s.referee.set_piece_spot();
    assert!(
        close(spot.x, 3.0) && close(spot.y, 10.0 - R) && close(spot.z, R),
        "{spot:?}"
    );

    // Nothing happens during the 1 s pause: the ball stays out.
    s.run(45);
    assert!(close(s.ball.y, 10.1));
    // After it: the ball is put on the spot and the left player (an
    // opponent of the taker) is cleared from the 2 m circle.
    s.run(10);
    assert_eq!(s.ball, spot);
    let p = s.robot(2).torso;
    assert!((p.xy() - spot.xy()).norm() >= 2.2 - 1e-3, "{p:?}");
    assert_eq!(s.mode(), PlayMode::KickInRight);

    // The taker touches the ball: PlayOn.
    s.touches = vec![12];
    s.step();
    assert_eq!(s.mode(), PlayMode::PlayOn);
}

#[test]
fn ball_over_the_goal_line_by_an_attacker_gives_a_goal_kick() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    // Left attacks +x; a left player last touched the ball.
    s.play_on_touched(2, 14.0, 4.0);
    s.ball = Vector3::new(15.1, 4.0, R);
    s.step();
    assert_eq!(s.mode(), PlayMode::GoalKickRight);
    let spot = s.referee.set_piece_spot();
    assert!(close(spot.x, 14.0) && close(spot.y, 0.0), "{spot:?}");
}

#[test]
fn ball_over_the_goal_line_by_a_defender_gives_a_corner_kick() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.play_on_touched(12, 14.0, -4.0);
    s.ball = Vector3::new(15.1, -4.0, R);
    s.step();
    assert_eq!(s.mode(), PlayMode::CornerKickLeft);
    let spot = s.referee.set_piece_spot();
    let y = (20.0 + 2.1) / 4.0 - R;
    assert!(close(spot.x, 15.0 - R) && close(spot.y, -y), "{spot:?}");

    // The same on the left goal line: a left defender -> corner for right.
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.play_on_touched(2, -14.0, 3.0);
    s.ball = Vector3::new(-15.1, 3.0, R);
    s.step();
    assert_eq!(s.mode(), PlayMode::CornerKickRight);
    let spot = s.referee.set_piece_spot();
    assert!(close(spot.x, -15.0 + R) && close(spot.y, y), "{spot:?}");
}

#[test]
fn goal_kick_resumes_only_once_the_ball_has_left_the_area() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.play_on_touched(12, -14.0, 4.0);
    s.ball = Vector3::new(-15.1, 4.0, R);
    s.step();
    assert_eq!(s.mode(), PlayMode::GoalKickLeft);
    s.place(12, -14.0, 1.0, 0.35); // an opponent inside the area
    s.run(52);
    assert!(close(s.ball.x, -14.0) && close(s.ball.y, 0.0));
    // The opponent was cleared out of the left area, to x >= -13.2 + 2.2.
    assert!(s.robot(12).torso.x >= -13.2 + 2.2 - 1e-3);
    s.touches = vec![1];
    s.ball = Vector3::new(-13.5, 0.0, R);
    s.step();
    assert_eq!(s.mode(), PlayMode::GoalKickLeft, "still inside the area");
    s.ball = Vector3::new(-12.5, 0.0, R);
    s.step();
    assert_eq!(s.mode(), PlayMode::PlayOn);
}

#[test]
fn kick_takers_are_repelled_once_to_the_repel_distance() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.place(12, 3.1, 9.9, 0.35);
    s.play_on_touched(2, 3.0, 9.8);
    s.ball = Vector3::new(3.0, 10.2, R);
    s.step();
    assert_eq!(s.mode(), PlayMode::KickInRight);
    s.run(51);
    let spot = s.referee.set_piece_spot();
    let d = (s.robot(12).torso.xy() - spot.xy()).norm();
    assert!(d >= 0.5 - 1e-3, "taker at {d} m from the spot");
}

#[test]
fn untaken_set_piece_ends_in_a_drop_ball_after_15_s() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.ball = Vector3::new(2.0, 3.0, R);
    s.step(); // BeforeKickOff holds the ball at the centre ...
    s.referee.set_play_mode(PlayMode::PlayOn);
    s.ball = Vector3::new(2.0, 3.0, R);
    s.step(); // ... PlayOn tracks it.
    s.referee.set_play_mode(PlayMode::FreeKickLeft);
    s.run(750);
    assert_eq!(s.mode(), PlayMode::FreeKickLeft, "15.00 s is not yet over");
    s.step();
    assert_eq!(s.mode(), PlayMode::PlayOn);
    assert!(close(s.ball.x, 2.0) && close(s.ball.y, 3.0));
    // Both teams are cleared from the 2 m circle around the drop spot.
    for r in &s.robots {
        assert!((r.torso.xy() - s.ball.xy()).norm() > 2.0, "{r:?}");
    }
}

#[test]
fn untouched_kick_off_ends_in_a_drop_ball_after_15_s() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.referee.kick_off(Some(Side::Right), &mut s.rng);
    s.run(751);
    assert_eq!(s.mode(), PlayMode::PlayOn);
}

#[test]
fn double_touch_by_the_kicker_gives_an_indirect_free_kick_to_the_opponents() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.play_on_touched(12, 3.0, 9.8);
    s.ball = Vector3::new(3.0, 10.2, R);
    s.step();
    assert_eq!(s.mode(), PlayMode::KickInLeft);
    s.run(52);
    s.touches = vec![2];
    s.step();
    assert_eq!(s.mode(), PlayMode::PlayOn);
    // The kicker's touches within 0.1 s belong to the kick.
    s.ball = Vector3::new(2.0, 9.0, R);
    s.touches = vec![2];
    s.step();
    s.run(10);
    assert_eq!(s.mode(), PlayMode::PlayOn);
    s.ball = Vector3::new(1.5, 8.0, R);
    s.touches = vec![2];
    s.step();
    assert_eq!(s.mode(), PlayMode::FreeKickRight);
    let spot = s.referee.set_piece_spot();
    assert!(
        close(spot.x, 2.0) && close(spot.y, 9.0),
        "previous on-field position: {spot:?}"
    );
    assert!(
        s.referee.fouls().is_empty(),
        "no foul record for a double touch"
    );
}

#[test]
fn touch_by_someone_else_ends_the_double_touch_check() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.play_on_touched(12, 3.0, 9.8);
    s.ball = Vector3::new(3.0, 10.2, R);
    s.step();
    s.run(52);
    s.touches = vec![2];
    s.step();
    s.run(10);
    s.touches = vec![3];
    s.step();
    s.run(5);
    s.touches = vec![2];
    s.step();
    assert_eq!(s.mode(), PlayMode::PlayOn);
}

#[test]
fn quirk_4_ball_out_without_any_touch_is_dropped_at_its_last_on_field_position() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.referee.set_play_mode(PlayMode::PlayOn);
    s.ball = Vector3::new(5.0, 9.0, R);
    s.step();
    s.ball = Vector3::new(5.0, 10.5, R);
    s.step();
    assert_eq!(s.mode(), PlayMode::PlayOn);
    assert!(close(s.ball.x, 5.0) && close(s.ball.y, 9.0), "{:?}", s.ball);
}
