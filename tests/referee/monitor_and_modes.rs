//! Monitor commands (drop ball, time and score, clock reset), the special
//! modes (penalty shoot-out, keepaway), configuration from RON, and
//! determinism.

use nalgebra::Vector3;
use rcss3d::rules::{PlayMode, RulesConfig, Side};

use crate::util::{close, two_teams, Sim, R};

#[test]
fn monitor_drop_ball_places_the_ball_and_clears_players() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.place(12, 14.6, 0.5, 0.35);
    let d = s.referee.drop_ball(Vector3::new(14.5, 0.5, 0.3));
    s.apply(&d);
    assert_eq!(s.mode(), PlayMode::PlayOn);
    // Inside the right area: moved to its front corner.
    assert!(close(s.ball.x, 13.2) && close(s.ball.y, 3.0) && close(s.ball.z, R));
    s.step();
    for r in &s.robots {
        assert!((r.torso.xy() - s.ball.xy()).norm() > 2.0, "{r:?}");
    }
}

#[test]
fn monitor_time_and_score() {
    let mut s = Sim::new(RulesConfig::default());
    s.referee.set_game_time(12.5);
    s.referee.set_game_time(-1.0);
    s.referee.set_game_time(f32::NAN);
    assert_eq!(s.referee.game_time(), 12.5);
    s.referee.set_score(3, 4);
    assert_eq!(s.referee.scores(), (3, 4));
    s.referee.set_play_mode(PlayMode::OffsideLeft);
    s.run(100);
    assert_eq!(s.mode(), PlayMode::OffsideLeft, "offside modes are inert");
}

#[test]
fn monitor_clock_reset_does_not_turn_an_old_touch_into_a_kick() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.referee.set_game_time(250.0);
    s.play_on_touched(2, 3.0, 3.0);
    s.referee.set_game_time(0.0);
    s.referee.set_play_mode(PlayMode::KickInLeft);
    s.run(60);
    assert_eq!(s.mode(), PlayMode::KickInLeft);
}

#[test]
fn penalty_shootout_goalie_leaving_the_area_concedes() {
    let cfg = RulesConfig {
        penalty_shootout: true,
        ..RulesConfig::default()
    };
    let mut s = Sim::new(cfg);
    s.add(1, Side::Right, 1, 14.5, 0.0);
    s.add(2, Side::Left, 2, 10.0, 0.0);
    s.add(3, Side::Left, 3, -10.0, 0.0);
    s.referee.set_play_mode(PlayMode::PlayOn);
    s.run(5);
    assert_eq!(s.mode(), PlayMode::PlayOn);
    s.place(1, 13.0, 0.0, 0.35);
    s.step();
    assert_eq!(s.mode(), PlayMode::GoalLeft);
    assert_eq!(s.referee.scores(), (1, 0));
    assert!(!s.referee.penalty_shootout());
}

#[test]
fn keepaway_ends_when_a_taker_touches_the_ball() {
    let cfg = RulesConfig {
        keepaway: true,
        ..RulesConfig::default()
    };
    let mut s = Sim::new(cfg);
    s.add(2, Side::Left, 2, 0.0, 0.0);
    s.add(12, Side::Right, 2, 1.0, 0.0);
    s.referee.set_play_mode(PlayMode::PlayOn);
    s.ball = Vector3::new(0.5, 0.0, R);
    s.touches = vec![2];
    s.run(10);
    assert_eq!(s.mode(), PlayMode::PlayOn);
    s.touches = vec![12];
    s.step();
    assert_eq!(s.mode(), PlayMode::GameOver);
}

#[test]
fn rules_config_from_ron_takes_effect() {
    let cfg: RulesConfig =
        ron::from_str("(RuleHalfTime: 4.0, RuleGoalPauseTime: 1.0, GroundMaxTime: 1)")
            .expect("valid rules section");
    assert_eq!(cfg.validate(), Ok(()));
    let mut s = Sim::new(cfg);
    two_teams(&mut s);
    // Goal pause of 1 s.
    s.play_on_touched(2, 14.0, 0.0);
    s.ball = Vector3::new(15.1, 0.0, 0.1);
    s.step();
    assert_eq!(s.mode(), PlayMode::GoalLeft);
    s.run(50);
    assert_eq!(s.mode(), PlayMode::KickOffRight);
    // A fallen player is fouled after 1 s instead of 15 s.
    s.referee.set_play_mode(PlayMode::PlayOn);
    s.place(3, -5.0, -3.0, 0.1);
    s.run(51);
    assert_eq!(s.fouls_of(3), vec![4]);
    // The half ends at 4 s.
    s.run(100);
    assert_eq!(s.referee.half(), 2);
    assert_eq!(s.mode(), PlayMode::BeforeKickOff);
}

#[test]
fn same_seed_same_decisions() {
    let run = |seed| {
        let mut s = Sim::with_seed(RulesConfig::default(), seed);
        two_teams(&mut s);
        for id in [2, 3, 12, 13] {
            let r = s.robot(id).torso;
            s.place(id, -r.x * 0.2, r.y * 0.3, 0.35);
        }
        s.run(3);
        s.referee.kick_off(None, &mut s.rng);
        s.run(3);
        format!("{:?}", s.log)
    };
    assert_eq!(run(5), run(5));
}
