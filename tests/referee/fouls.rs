//! Player fouls (docs/protocol.md#player-fouls and
//! docs/protocol.md#referee-moves): illegal defence, touch groups, lying and
//! incapable robots, charging, crowding, self-collision, the foul numbers.

use nalgebra::Vector3;
use rcss3d::rules::{FoulKind, PlayMode, RulesConfig, Side};

use crate::util::{close, two_teams, Sim, R};

#[test]
fn fourth_defender_in_the_own_area_is_fouled_and_repositioned() {
    let mut s = Sim::new(RulesConfig::default());
    s.add(1, Side::Left, 1, -14.5, 0.0);
    s.add(2, Side::Left, 2, -14.0, 1.0);
    s.add(3, Side::Left, 3, -14.0, -1.0);
    s.add(4, Side::Left, 4, -12.0, 0.0);
    s.add(12, Side::Right, 2, 5.0, 0.0);
    s.play_on_touched(12, 5.0, 1.0);
    s.run(5);
    assert!(s.referee.fouls().is_empty());
    s.place(4, -13.5, 0.5, 0.35);
    s.step();
    assert_eq!(s.fouls_of(4), vec![FoulKind::IllegalDefence.number()]);
    assert!(s.robot(4).torso.z > 1.0, "held in the air");
    for id in [1, 2, 3] {
        assert!(s.fouls_of(id).is_empty());
    }
    s.run(24);
    assert!(s.robot(4).torso.z > 1.0);
    s.step();
    let p = s.robot(4).torso;
    // Outside position: x = -0.6 * (7 - 4), on the touchline opposite the ball (y > 0).
    assert!(
        close(p.x, -1.8) && close(p.y, -10.5) && close(p.z, 0.4),
        "{p:?}"
    );
    // One record per enforcement cycle, as in the reference.
    assert_eq!(s.fouls_of(4).len(), 26);
    s.run(5);
    assert_eq!(s.fouls_of(4).len(), 26, "counters reset after the move");
}

#[test]
fn goalie_entering_a_full_area_fouls_the_player_farthest_from_goal() {
    let mut s = Sim::new(RulesConfig::default());
    s.add(1, Side::Right, 1, 12.0, 0.0);
    s.add(2, Side::Right, 2, 14.8, 1.0);
    s.add(3, Side::Right, 3, 14.5, -1.0);
    s.add(4, Side::Right, 4, 13.4, 2.5);
    s.add(12, Side::Left, 2, -5.0, 0.0);
    s.play_on_touched(12, -5.0, 1.0);
    s.run(3);
    assert!(s.referee.fouls().is_empty());
    s.place(1, 14.0, 0.0, 0.35);
    s.step();
    assert_eq!(s.fouls_of(4), vec![2]);
    assert!(s.fouls_of(1).is_empty() && s.fouls_of(2).is_empty() && s.fouls_of(3).is_empty());
}

#[test]
fn touch_group_of_three_fouls_the_newcomer_of_the_majority_team() {
    let mut s = Sim::new(RulesConfig::default());
    s.add(2, Side::Left, 2, 0.0, 5.0);
    s.add(12, Side::Right, 2, 0.3, 5.0);
    s.add(3, Side::Left, 3, 0.0, 5.3);
    s.play_on_touched(12, -5.0, -5.0);
    s.contact(2, 12);
    s.run(3);
    assert!(s.referee.fouls().is_empty(), "a group of two is allowed");
    s.contact(3, 2);
    s.step();
    assert_eq!(s.fouls_of(3), vec![FoulKind::Touching.number()]);
    assert!(s.fouls_of(2).is_empty() && s.fouls_of(12).is_empty());
}

#[test]
fn touch_group_of_three_fouls_an_opponent_when_the_newcomer_is_outnumbered() {
    let mut s = Sim::new(RulesConfig::default());
    s.add(2, Side::Left, 2, 0.0, 5.0);
    s.add(3, Side::Left, 3, 0.0, 5.3);
    s.add(12, Side::Right, 2, 0.3, 5.0);
    s.play_on_touched(12, -5.0, -5.0);
    s.contact(2, 3);
    s.run(3);
    s.contact(12, 2);
    s.step();
    assert!(s.fouls_of(12).is_empty());
    let fouled: Vec<_> = [2, 3]
        .into_iter()
        .filter(|&id| !s.fouls_of(id).is_empty())
        .collect();
    assert_eq!(fouled.len(), 1, "exactly one opponent is fouled");
}

#[test]
fn goalie_joining_a_touch_group_gets_a_teammate_fouled() {
    let mut s = Sim::new(RulesConfig::default());
    s.add(2, Side::Left, 2, 0.0, 5.0);
    s.add(12, Side::Right, 2, 0.3, 5.0);
    s.add(1, Side::Left, 1, 0.0, 5.3);
    s.play_on_touched(12, -5.0, -5.0);
    s.contact(2, 12);
    s.run(3);
    s.contact(1, 2);
    s.step();
    assert!(s.fouls_of(1).is_empty());
    assert_eq!(s.fouls_of(2), vec![1]);
}

#[test]
fn quirk_2_touch_groups_do_not_pile_up_while_paused() {
    let mut s = Sim::new(RulesConfig::default());
    s.add(2, Side::Left, 2, -3.0, 5.0);
    s.add(3, Side::Left, 3, -3.0, 5.3);
    s.add(12, Side::Right, 2, 3.0, 5.0);
    s.add(4, Side::Left, 4, -3.3, 5.0);
    s.contact(2, 3);
    s.run(10);
    s.contacts.clear();
    s.contact(3, 4);
    s.run(10);
    s.referee.set_play_mode(PlayMode::PlayOn);
    s.run(10);
    assert!(s.referee.fouls().is_empty());
    // A real newcomer after the pause is still fouled.
    s.contact(2, 3);
    s.step();
    let fouled: Vec<_> = [2, 3, 4]
        .into_iter()
        .filter(|&id| !s.fouls_of(id).is_empty())
        .collect();
    assert_eq!(fouled, vec![2]);
}

#[test]
fn robot_lying_15_s_is_repositioned_and_a_goalie_after_30_s() {
    let mut s = Sim::new(RulesConfig::default());
    s.add(1, Side::Left, 1, -14.0, 0.0);
    s.add(2, Side::Left, 2, -5.0, 3.0);
    s.add(12, Side::Right, 2, 5.0, 0.0);
    s.play_on_touched(12, 5.0, 1.0);
    s.place(1, -14.0, 0.0, 0.1);
    s.place(2, -5.0, 3.0, 0.1);
    s.run(750);
    assert!(s.referee.fouls().is_empty(), "15.00 s is not yet over");
    s.step();
    assert_eq!(s.fouls_of(2), vec![FoulKind::Incapable.number()]);
    assert!(s.fouls_of(1).is_empty());
    s.run(26);
    let p = s.robot(2).torso;
    assert!(close(p.x, -3.0) && close(p.y.abs(), 10.5), "{p:?}");
    s.run(750 - 27);
    assert!(s.fouls_of(1).is_empty(), "goalie: 30 s");
    s.step();
    assert_eq!(s.fouls_of(1), vec![4]);
}

#[test]
fn robot_standing_up_in_time_is_not_fouled() {
    let mut s = Sim::new(RulesConfig::default());
    s.add(2, Side::Left, 2, -5.0, 3.0);
    s.add(12, Side::Right, 2, 5.0, 0.0);
    s.play_on_touched(12, 5.0, 1.0);
    s.place(2, -5.0, 3.0, 0.1);
    s.run(700);
    s.place(2, -5.0, 3.0, 0.35);
    s.run(30);
    s.place(2, -5.0, 3.0, 0.1);
    s.run(700);
    assert!(s.referee.fouls().is_empty());
}

#[test]
fn not_standing_for_30_s_is_incapable() {
    let mut s = Sim::new(RulesConfig::default());
    s.add(2, Side::Left, 2, -5.0, 3.0);
    s.add(12, Side::Right, 2, 5.0, 0.0);
    s.play_on_touched(12, 5.0, 1.0);
    s.place(2, -5.0, 3.0, 0.2); // sitting: not standing, not on the ground
    s.run(1500);
    assert!(s.fouls_of(2).is_empty());
    s.step();
    assert_eq!(s.fouls_of(2), vec![4]);
}

#[test]
fn charge_at_speed_fouls_the_charger() {
    let mut s = Sim::new(RulesConfig::default());
    s.add(2, Side::Left, 2, 0.0, 5.0);
    s.add(12, Side::Right, 2, 0.3, 5.0);
    s.play_on_touched(12, -5.0, -5.0);
    s.robots[0].velocity = Vector3::new(1.0, 0.0, 0.0);
    s.run(60);
    s.contact(2, 12);
    s.step();
    assert_eq!(s.fouls_of(2), vec![FoulKind::Charging.number()]);
    assert!(s.fouls_of(12).is_empty());
}

#[test]
fn slow_contact_is_not_charging() {
    let mut s = Sim::new(RulesConfig::default());
    s.add(2, Side::Left, 2, 0.0, 5.0);
    s.add(12, Side::Right, 2, 0.3, 5.0);
    s.play_on_touched(12, -5.0, -5.0);
    s.robots[0].velocity = Vector3::new(0.3, 0.0, 0.0);
    s.run(60);
    s.contact(2, 12);
    s.run(20);
    assert!(s.referee.fouls().is_empty());
}

#[test]
fn charging_near_the_ball_follows_the_ball_rules() {
    // The charger runs at the opponent, away from the ball direction: foul.
    let mut s = Sim::new(RulesConfig::default());
    s.add(2, Side::Left, 2, 0.0, 5.0);
    s.add(12, Side::Right, 2, 0.3, 5.0);
    s.play_on_touched(12, -5.0, -5.0);
    s.ball = Vector3::new(0.1, 4.3, R);
    s.robots[0].velocity = Vector3::new(1.0, 0.0, 0.0);
    s.run(60);
    s.contact(2, 12);
    s.step();
    assert_eq!(s.fouls_of(2), vec![6]);

    // Both running for the ball: nobody is fouled.
    let mut s = Sim::new(RulesConfig::default());
    s.add(2, Side::Left, 2, 0.0, 5.0);
    s.add(12, Side::Right, 2, 0.3, 5.0);
    s.play_on_touched(12, -5.0, -5.0);
    s.ball = Vector3::new(0.15, 4.2, R);
    s.robots[0].velocity = Vector3::new(0.1, -1.0, 0.0);
    s.robots[1].velocity = Vector3::new(-0.1, -1.0, 0.0);
    s.run(60);
    s.contact(2, 12);
    s.run(5);
    assert!(s.referee.fouls().is_empty());
}

#[test]
fn quirk_3_a_goalie_in_its_area_is_immune_to_charging_as_the_second_player() {
    let run = |unum: u8| {
        let mut s = Sim::new(RulesConfig::default());
        s.add(2, Side::Left, 2, 13.5, 2.0);
        s.add(11, Side::Right, unum, 13.8, 2.0);
        s.play_on_touched(2, -5.0, -5.0);
        s.robots[1].velocity = Vector3::new(-1.0, 0.0, 0.0);
        s.run(60);
        s.contact(2, 11);
        s.step();
        (s.fouls_of(11), s.fouls_of(2))
    };
    assert_eq!(run(1), (vec![], vec![]), "goalie in its own area");
    assert_eq!(run(2).0, vec![6], "a field player at the same place");
}

#[test]
fn crowding_when_configured() {
    let cfg = RulesConfig {
        min_opp_distance: 0.8,
        min_2pl_distance: 0.4,
        min_3pl_distance: 1.0,
        ..RulesConfig::default()
    };
    let mut s = Sim::new(cfg);
    s.add(2, Side::Left, 2, 0.2, 0.0);
    s.add(3, Side::Left, 3, 0.0, 0.3);
    s.add(12, Side::Right, 2, 0.5, 0.0);
    s.referee.set_play_mode(PlayMode::PlayOn);
    s.ball = Vector3::new(0.0, 0.0, R);
    s.step();
    assert_eq!(s.fouls_of(3), vec![FoulKind::Crowding.number()]);
    assert!(s.fouls_of(2).is_empty() && s.fouls_of(12).is_empty());

    // Off by default.
    let mut s = Sim::new(RulesConfig::default());
    s.add(2, Side::Left, 2, 0.2, 0.0);
    s.add(3, Side::Left, 3, 0.0, 0.3);
    s.add(12, Side::Right, 2, 0.5, 0.0);
    s.referee.set_play_mode(PlayMode::PlayOn);
    s.run(10);
    assert!(s.referee.fouls().is_empty());
}

#[test]
fn self_collision_foul_only_when_enabled() {
    for enabled in [false, true] {
        let cfg = RulesConfig {
            self_collision_foul: enabled,
            ..RulesConfig::default()
        };
        let mut s = Sim::new(cfg);
        s.add(2, Side::Left, 2, -5.0, 3.0);
        s.referee.set_play_mode(PlayMode::PlayOn);
        let robots = s.robots.clone();
        let facts = s.still_facts(&robots, &[2]);
        s.referee.step(&facts, &mut s.rng);
        let kinds: Vec<u8> = s.referee.fouls().iter().map(|f| f.kind).collect();
        let expected = if enabled {
            vec![FoulKind::SelfCollision.number()]
        } else {
            vec![]
        };
        assert_eq!(kinds, expected);
    }
}

#[test]
fn no_player_fouls_while_paused() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.place(2, -5.0, 3.0, 0.1);
    s.run(1000);
    assert!(s.referee.fouls().is_empty());
}

#[test]
fn foul_records_carry_monitor_numbers() {
    for n in 0..8 {
        let k = FoulKind::from_number(n).expect("known number");
        assert_eq!(k.number(), n);
    }
    assert_eq!(FoulKind::from_number(8), None);
}
