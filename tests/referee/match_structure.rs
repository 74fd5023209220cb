//! Match structure (docs/protocol.md#match-structure): kick-off, halves, side
//! swap, automatic kick-off and quit, and a whole short match.

use nalgebra::Vector3;
use rcss3d::rules::{Decision, PlayMode, RulesConfig, Side};

use crate::util::{two_teams, Sim, R};

#[test]
fn half_time_at_300_s_and_the_other_team_kicks_off_the_second_half() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.referee.kick_off(None, &mut s.rng);
    assert_eq!(s.referee.kick_off_team(), Some(Side::Left));
    s.referee.set_play_mode(PlayMode::PlayOn);
    s.referee.set_game_time(299.99);
    s.step();
    assert_eq!(s.mode(), PlayMode::BeforeKickOff);
    assert_eq!(s.referee.half(), 2);
    let t = s.referee.game_time();
    assert!(
        (300.0..300.1).contains(&t),
        "the clock keeps its value: {t}"
    );
    s.run(10);
    assert_eq!(s.referee.game_time(), t, "the clock stops before kick-off");
    s.referee.kick_off(None, &mut s.rng);
    assert_eq!(s.mode(), PlayMode::KickOffRight);
}

#[test]
fn game_over_after_the_second_half() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.referee.set_play_mode(PlayMode::PlayOn);
    s.referee.set_game_time(299.99);
    s.step();
    assert_eq!(s.referee.half(), 2);
    s.referee.kick_off(None, &mut s.rng);
    s.referee.set_play_mode(PlayMode::PlayOn);
    s.referee.set_game_time(599.99);
    s.step();
    assert_eq!(s.mode(), PlayMode::GameOver);
    let t = s.referee.game_time();
    s.run(100);
    assert_eq!(s.mode(), PlayMode::GameOver);
    assert_eq!(s.referee.game_time(), t);
}

#[test]
fn single_half_ends_the_match_at_half_time() {
    let cfg = RulesConfig {
        single_half_time: true,
        ..RulesConfig::default()
    };
    let mut s = Sim::new(cfg);
    two_teams(&mut s);
    s.referee.set_play_mode(PlayMode::PlayOn);
    s.referee.set_game_time(299.99);
    s.step();
    assert_eq!(s.mode(), PlayMode::GameOver);
    assert_eq!(s.referee.half(), 1);
}

#[test]
fn side_swap_moves_the_scores_with_the_teams() {
    let cfg = RulesConfig {
        change_sides_in_second_half: true,
        ..RulesConfig::default()
    };
    let mut s = Sim::new(cfg);
    two_teams(&mut s);
    s.referee.kick_off(None, &mut s.rng);
    s.referee.set_score(2, 1);
    s.referee.set_play_mode(PlayMode::PlayOn);
    s.referee.set_game_time(299.99);
    let d = s.step();
    assert!(d.contains(&Decision::SwapSides));
    assert_eq!(s.referee.scores(), (1, 2));
    // The same team index kicks off again: the other team, now on the left.
    s.referee.kick_off(None, &mut s.rng);
    assert_eq!(s.mode(), PlayMode::KickOffLeft);
}

#[test]
fn explicit_kick_off_does_not_change_the_next_half_team() {
    // A reference quirk, kept (docs/protocol.md#reference-quirks).
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.referee.kick_off(Some(Side::Right), &mut s.rng);
    s.referee.set_play_mode(PlayMode::PlayOn);
    s.referee.set_game_time(299.99);
    s.step();
    s.referee.kick_off(None, &mut s.rng);
    assert_eq!(s.mode(), PlayMode::KickOffLeft);
}

#[test]
fn coin_toss_picks_either_team() {
    let cfg = RulesConfig {
        coin_toss_for_kick_off: true,
        ..RulesConfig::default()
    };
    let mut seen = Vec::new();
    for seed in 0..32 {
        let mut s = Sim::with_seed(cfg.clone(), seed);
        s.referee.kick_off(None, &mut s.rng);
        seen.push(s.referee.kick_off_team());
    }
    assert!(seen.contains(&Some(Side::Left)) && seen.contains(&Some(Side::Right)));
}

#[test]
fn automatic_kick_off_after_the_wait_with_agents_connected() {
    let cfg = RulesConfig {
        automatic_kick_off: true,
        wait_before_kick_off: 2.0,
        ..RulesConfig::default()
    };
    let mut s = Sim::new(cfg);
    s.connected = Some(0);
    s.run(200);
    assert_eq!(s.mode(), PlayMode::BeforeKickOff, "no agent, no kick-off");
    two_teams(&mut s);
    s.connected = None;
    s.run(100);
    assert_eq!(s.mode(), PlayMode::BeforeKickOff);
    s.run(2);
    assert_eq!(s.mode(), PlayMode::KickOffLeft);
}

#[test]
fn automatic_quit_ten_seconds_into_game_over() {
    let cfg = RulesConfig {
        automatic_quit: true,
        ..RulesConfig::default()
    };
    let mut s = Sim::new(cfg);
    two_teams(&mut s);
    s.referee.set_play_mode(PlayMode::GameOver);
    s.run(499);
    assert!(s.log.iter().flatten().all(|d| *d != Decision::Quit));
    s.run(2);
    assert_eq!(
        s.log
            .iter()
            .flatten()
            .filter(|d| **d == Decision::Quit)
            .count(),
        1
    );
}

#[test]
fn before_kick_off_holds_the_ball_and_keeps_teams_in_their_halves() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.place(2, 1.0, 0.5, 0.35);
    s.place(3, 1.0, 0.6, 0.35);
    s.place(12, -4.0, 1.0, 0.35);
    s.ball = Vector3::new(3.0, 3.0, 0.3);
    s.step();
    assert_eq!(s.ball, Vector3::new(0.0, 0.0, R));
    for id in [2, 3] {
        let x = s.robot(id).torso.x;
        assert!(
            (-4.4 - 0.8..=-2.2 + 1e-3).contains(&x),
            "left robot at x = {x}"
        );
    }
    assert!(s.robot(12).torso.x >= 2.2 - 1e-3);
    // The two cleared left robots were not stacked on each other.
    let d = (s.robot(2).torso.xy() - s.robot(3).torso.xy()).norm();
    assert!(d >= 0.8 - 1e-3, "{d}");
}

#[test]
fn nothing_happens_before_kick_off_without_agents() {
    let mut s = Sim::new(RulesConfig::default());
    s.connected = Some(0);
    s.ball = Vector3::new(3.0, 3.0, 0.3);
    let d = s.step();
    assert!(d.is_empty());
    assert_eq!(s.referee.game_time(), 0.0);
}

#[test]
fn a_whole_short_match_runs_from_kick_off_to_game_over() {
    let cfg: RulesConfig = ron::from_str(
        "(RuleHalfTime: 10.0, AutomaticKickOff: true, WaitBeforeKickOff: 1.0, AutomaticQuit: true)",
    )
    .expect("valid");
    let mut s = Sim::new(cfg);
    two_teams(&mut s);
    let mut modes = vec![s.mode()];
    for cycle in 0..2000 {
        // The two teams take turns at the ball; a goal at cycle 200.
        if cycle % 80 == 0 {
            s.touches = vec![2];
        } else if cycle % 80 == 40 {
            s.touches = vec![12];
        }
        if cycle == 200 && s.mode() == PlayMode::PlayOn {
            s.ball = Vector3::new(15.1, 0.0, 0.1);
        }
        s.step();
        if modes.last() != Some(&s.mode()) {
            modes.push(s.mode());
        }
    }
    use PlayMode::*;
    assert_eq!(
        modes,
        vec![
            BeforeKickOff,
            KickOffLeft,
            PlayOn,
            GoalLeft,
            KickOffRight,
            PlayOn,
            BeforeKickOff,
            KickOffRight,
            PlayOn,
            GameOver
        ]
    );
    assert_eq!(s.referee.scores(), (1, 0));
    assert_eq!(s.referee.half(), 2);
    assert!(s.log.iter().flatten().any(|d| *d == Decision::Quit));
}
