//! Goals (docs/protocol.md#goals): scoring, the kick-off team's restrictions,
//! set pieces kicked straight into a goal.

use nalgebra::Vector3;
use rcss3d::rules::{PlayMode, RulesConfig, Side};

use crate::util::{close, two_teams, Sim, R};

#[test]
fn ball_in_the_goal_scores_and_the_other_team_kicks_off_after_3_s() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.play_on_touched(2, 14.0, 0.0);
    s.ball = Vector3::new(15.1, 0.2, 0.1);
    s.step();
    assert_eq!(s.mode(), PlayMode::GoalLeft);
    assert_eq!(s.referee.scores(), (1, 0));
    let t0 = s.referee.game_time();
    s.run(149);
    assert_eq!(s.mode(), PlayMode::GoalLeft);
    s.step();
    assert_eq!(s.mode(), PlayMode::KickOffRight);
    assert!(
        s.referee.game_time() - t0 > 2.99,
        "the clock runs in the goal pause"
    );
    assert!(close(s.ball.x, 0.0) && close(s.ball.y, 0.0) && close(s.ball.z, R));
    // Kick-off clearance: the left team is out of the right half and the circle.
    for r in s.robots.iter().filter(|r| r.side == Side::Left) {
        assert!(r.bbox_max.x < 0.0 && r.torso.xy().norm() > 2.0, "{r:?}");
    }
}

#[test]
fn goal_in_the_left_goal_scores_for_the_right_team() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.play_on_touched(12, -14.0, 0.0);
    // Tunnelled through the goal: only the traced-back test sees it.
    s.ball = Vector3::new(-16.0, 0.1, 0.1);
    s.ball_vel = Vector3::new(-3.0, 0.3, 0.0);
    s.step();
    assert_eq!(s.mode(), PlayMode::GoalRight);
    assert_eq!(s.referee.scores(), (0, 1));
}

#[test]
fn kick_off_team_cannot_score_directly() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.referee.kick_off(Some(Side::Left), &mut s.rng);
    s.place(2, -0.3, 0.0, 0.35);
    s.step();
    s.touches = vec![2];
    s.step();
    assert_eq!(s.mode(), PlayMode::PlayOn);
    // Kicked straight into the right goal.
    s.ball = Vector3::new(15.1, 0.0, 0.1);
    s.step();
    assert_eq!(s.mode(), PlayMode::GoalKickRight);
    assert_eq!(s.referee.scores(), (0, 0));
}

#[test]
fn kick_off_team_may_score_after_a_touch_outside_the_centre_circle() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.referee.kick_off(Some(Side::Left), &mut s.rng);
    s.place(2, -0.3, 0.0, 0.35);
    s.step();
    s.touches = vec![2];
    s.step();
    s.run(10);
    s.ball = Vector3::new(-3.0, 0.0, R);
    s.touches = vec![3];
    s.step();
    s.ball = Vector3::new(15.1, 0.0, 0.1);
    s.step();
    assert_eq!(s.mode(), PlayMode::GoalLeft);
    assert_eq!(s.referee.scores(), (1, 0));
}

#[test]
fn kick_off_goals_count_with_two_agents_or_fewer() {
    let mut s = Sim::new(RulesConfig::default());
    s.add(2, Side::Left, 2, -0.3, 0.0);
    s.add(12, Side::Right, 2, 5.0, 0.0);
    s.referee.kick_off(Some(Side::Left), &mut s.rng);
    s.step();
    s.touches = vec![2];
    s.step();
    s.ball = Vector3::new(15.1, 0.0, 0.1);
    s.step();
    assert_eq!(s.mode(), PlayMode::GoalLeft);
}

/// Runs a set piece for the left team and has robot 2 take it.
fn take_set_piece(s: &mut Sim, mode: PlayMode, x: f32, y: f32) {
    s.referee.set_play_mode(PlayMode::PlayOn);
    s.ball = Vector3::new(x, y, R);
    s.step();
    s.referee.set_play_mode(mode);
    s.run(52);
    s.touches = vec![2];
    s.step();
    assert_eq!(s.mode(), PlayMode::PlayOn);
}

#[test]
fn indirect_set_piece_straight_into_the_goal_gives_a_goal_kick() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    take_set_piece(&mut s, PlayMode::FreeKickLeft, 8.0, 0.0);
    s.ball = Vector3::new(15.1, 0.0, 0.1);
    s.step();
    assert_eq!(s.mode(), PlayMode::GoalKickRight);
    assert_eq!(s.referee.scores(), (0, 0));
}

#[test]
fn direct_free_kick_straight_into_the_goal_counts() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    take_set_piece(&mut s, PlayMode::DirectFreeKickLeft, 8.0, 0.0);
    s.ball = Vector3::new(15.1, 0.0, 0.1);
    s.step();
    assert_eq!(s.mode(), PlayMode::GoalLeft);
    assert_eq!(s.referee.scores(), (1, 0));
}

#[test]
fn set_piece_kick_straight_into_the_own_goal_gives_a_corner() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    take_set_piece(&mut s, PlayMode::DirectFreeKickLeft, -8.0, 1.0);
    s.ball = Vector3::new(-15.1, 0.5, 0.1);
    s.step();
    assert_eq!(s.mode(), PlayMode::CornerKickRight);
    assert_eq!(s.referee.scores(), (0, 0));
}
