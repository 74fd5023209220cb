//! Where the referee moves robots: the monitor's push-away, the kick-off
//! clearance, and the search for a safe spot.

use nalgebra::Vector3;
use rcss3d::rules::{PlayMode, RulesConfig, Side};

use crate::util::{two_teams, Sim, R};

#[test]
fn monitor_push_away_moves_the_robot_2_2_to_4_2_m() {
    for seed in 0..10 {
        let mut s = Sim::with_seed(RulesConfig::default(), seed);
        two_teams(&mut s);
        let before = s.robot(12).torso;
        let robots = s.robots.clone();
        let facts = s.still_facts(&robots, &[]);
        let d = s.referee.push_away(&facts, 12, &mut s.rng);
        assert_eq!(d.len(), 1);
        s.apply(&d);
        let moved = (s.robot(12).torso - before).norm();
        assert!((2.2 - 1e-3..=4.2 + 0.8).contains(&moved), "{moved}");
        assert!(s.referee.push_away(&facts, 99, &mut s.rng).is_empty());
    }
}

#[test]
fn kick_off_clearance_keeps_the_kicker_in_the_circle_and_clears_the_rest() {
    for seed in 0..8 {
        let mut s = Sim::with_seed(RulesConfig::default(), seed);
        s.add(2, Side::Left, 2, -0.3, 0.0); // kicker, whole box in the circle
        s.add(3, Side::Left, 3, 3.0, 0.0); // in the opponents' half
        s.add(12, Side::Right, 2, -1.0, 4.0); // in the kicking team's half
        s.add(13, Side::Right, 3, 0.8, 0.5); // in the centre circle
        s.referee.kick_off(Some(Side::Left), &mut s.rng);
        s.step();
        assert_eq!(s.robot(2).torso.xy(), nalgebra::Vector2::new(-0.3, 0.0));
        let x3 = s.robot(3).torso.x;
        assert!((-4.4 - 0.8..=-2.2 + 1e-3).contains(&x3), "{x3}");
        for id in [12, 13] {
            let r = s.robot(id);
            assert!(r.bbox_min.x > 0.0 && r.torso.xy().norm() > 2.0, "{r:?}");
        }
        assert_eq!(s.mode(), PlayMode::KickOffLeft);
    }
}

#[test]
fn safe_spot_search_does_not_create_an_illegal_defence() {
    for seed in 0..8 {
        let mut s = Sim::with_seed(RulesConfig::default(), seed);
        s.add(11, Side::Right, 1, 14.5, 0.0);
        s.add(12, Side::Right, 2, 14.0, 1.5);
        s.add(13, Side::Right, 3, 14.0, -1.5);
        s.add(14, Side::Right, 4, 12.0, 2.5);
        s.add(2, Side::Left, 2, 0.0, 0.0);
        s.referee.set_play_mode(PlayMode::PlayOn);
        s.step();
        let d = s.referee.drop_ball(Vector3::new(11.5, 2.5, R));
        s.apply(&d);
        s.run(30);
        let p = s.robot(14).torso;
        let in_area = p.x >= 13.2 && p.y.abs() <= 3.0;
        assert!(!in_area, "moved into a full area: {p:?}");
        assert!((p.xy() - s.ball.xy()).norm() > 2.0, "{p:?}");
        assert!(s.referee.fouls().is_empty(), "{:?}", s.referee.fouls());
    }
}
