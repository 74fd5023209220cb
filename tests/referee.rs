//! Scenario tests of the automated referee: the referee is driven
//! with prepared world facts, cycle by cycle, and its decisions are applied
//! to a toy world (no physics, no sockets).

use nalgebra::Vector3;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rcss3d::rules::{
    Decision, FoulKind, PlayMode, Referee, RobotContact, RobotFacts, RobotId, RulesConfig, Side,
    WorldFacts,
};

const DT: f32 = 0.02;
const R: f32 = 0.042;

/// A toy world: robots and ball stay where they are unless a test or a
/// referee decision moves them.
struct Sim {
    referee: Referee,
    rng: ChaCha8Rng,
    ball: Vector3<f32>,
    ball_vel: Vector3<f32>,
    robots: Vec<RobotFacts>,
    /// Touches of the next cycle only.
    touches: Vec<RobotId>,
    /// Contacts, kept until changed.
    contacts: Vec<RobotContact>,
    /// Connected agents; `None` = number of robots.
    connected: Option<usize>,
    /// Every decision so far, by cycle.
    log: Vec<Vec<Decision>>,
}

fn standing(id: RobotId, side: Side, unum: u8, x: f32, y: f32) -> RobotFacts {
    RobotFacts {
        id,
        side,
        unum,
        torso: Vector3::new(x, y, 0.35),
        torso_up: Vector3::z(),
        velocity: Vector3::zeros(),
        bbox_min: Vector3::new(x - 0.1, y - 0.1, 0.0),
        bbox_max: Vector3::new(x + 0.1, y + 0.1, 0.5),
    }
}

impl Sim {
    fn new(cfg: RulesConfig) -> Sim {
        Sim::with_seed(cfg, 7)
    }

    fn with_seed(cfg: RulesConfig, seed: u64) -> Sim {
        Sim {
            referee: Referee::new(cfg),
            rng: ChaCha8Rng::seed_from_u64(seed),
            ball: Vector3::new(0.0, 0.0, R),
            ball_vel: Vector3::zeros(),
            robots: Vec::new(),
            touches: Vec::new(),
            contacts: Vec::new(),
            connected: None,
            log: Vec::new(),
        }
    }

    fn add(&mut self, id: RobotId, side: Side, unum: u8, x: f32, y: f32) {
        self.robots.push(standing(id, side, unum, x, y));
    }

    fn robot(&self, id: RobotId) -> &RobotFacts {
        self.robots
            .iter()
            .find(|r| r.id == id)
            .expect("robot exists")
    }

    fn place(&mut self, id: RobotId, x: f32, y: f32, z: f32) {
        let r = self
            .robots
            .iter_mut()
            .find(|r| r.id == id)
            .expect("robot exists");
        let d = Vector3::new(x, y, z) - r.torso;
        r.torso += d;
        r.bbox_min += d;
        r.bbox_max += d;
    }

    fn contact(&mut self, a: RobotId, b: RobotId) {
        let point = (self.robot(a).torso + self.robot(b).torso) / 2.0;
        self.contacts.push(RobotContact { a, b, point });
    }

    fn apply(&mut self, decisions: &[Decision]) {
        for d in decisions {
            match d {
                Decision::MoveBall { pos, vel } => {
                    self.ball = *pos;
                    self.ball_vel = *vel;
                }
                Decision::MoveRobot { id, pos, .. } => {
                    self.place(*id, pos.x, pos.y, pos.z);
                    if let Some(r) = self.robots.iter_mut().find(|r| r.id == *id) {
                        r.velocity = Vector3::zeros();
                    }
                }
                Decision::SwapSides => {
                    for r in &mut self.robots {
                        r.side = r.side.opponent();
                    }
                }
                Decision::Quit => {}
            }
        }
    }

    fn step(&mut self) -> Vec<Decision> {
        let robots = self.robots.clone();
        let touches = std::mem::take(&mut self.touches);
        let contacts = self.contacts.clone();
        let facts = WorldFacts {
            ball: self.ball,
            ball_velocity: self.ball_vel,
            ball_touches: &touches,
            robots: &robots,
            robot_contacts: &contacts,
            self_collisions: &[],
            connected_agents: self.connected.unwrap_or(robots.len()),
            dt: DT,
        };
        let d = self.referee.step(&facts, &mut self.rng);
        self.apply(&d);
        self.log.push(d.clone());
        d
    }

    fn run(&mut self, cycles: usize) {
        for _ in 0..cycles {
            self.step();
        }
    }

    fn mode(&self) -> PlayMode {
        self.referee.play_mode()
    }

    /// Puts the game into PlayOn with the ball at (x, y), touched by `by`.
    fn play_on_touched(&mut self, by: RobotId, x: f32, y: f32) {
        self.referee.set_play_mode(PlayMode::PlayOn);
        self.ball = Vector3::new(x, y, R);
        self.touches = vec![by];
        self.step();
        assert_eq!(self.mode(), PlayMode::PlayOn);
    }

    fn fouls_of(&self, id: RobotId) -> Vec<u8> {
        let r = self.robot(id);
        self.referee
            .fouls()
            .iter()
            .filter(|f| f.side == r.side && f.unum == r.unum)
            .map(|f| f.kind)
            .collect()
    }
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() < 1e-3
}

fn two_teams(s: &mut Sim) {
    s.add(1, Side::Left, 1, -14.0, 0.0);
    s.add(2, Side::Left, 2, -3.0, 2.0);
    s.add(3, Side::Left, 3, -3.0, -2.0);
    s.add(11, Side::Right, 1, 14.0, 0.0);
    s.add(12, Side::Right, 2, 3.0, 2.0);
    s.add(13, Side::Right, 3, 3.0, -2.0);
}

// ---------------------------------------------------------------------------
// Ball out of play and set pieces (§5)
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Goals (§4)
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Match structure (§2, §3)
// ---------------------------------------------------------------------------

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
    // Reference quirk §14.8, kept.
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

// ---------------------------------------------------------------------------
// Player fouls (§7, §8)
// ---------------------------------------------------------------------------

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
fn no_player_fouls_while_paused() {
    let mut s = Sim::new(RulesConfig::default());
    two_teams(&mut s);
    s.place(2, -5.0, 3.0, 0.1);
    s.run(1000);
    assert!(s.referee.fouls().is_empty());
}

// ---------------------------------------------------------------------------
// Beam (§9)
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Monitor commands, special modes, configuration, determinism
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Reference quirks (§14) as decided, and the remaining rules
// ---------------------------------------------------------------------------

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
        let facts = WorldFacts {
            ball: s.ball,
            ball_velocity: Vector3::zeros(),
            ball_touches: &[],
            robots: &robots,
            robot_contacts: &[],
            self_collisions: &[2],
            connected_agents: 1,
            dt: DT,
        };
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
fn foul_records_carry_monitor_numbers() {
    for n in 0..8 {
        let k = FoulKind::from_number(n).expect("known number");
        assert_eq!(k.number(), n);
    }
    assert_eq!(FoulKind::from_number(8), None);
}

#[test]
fn monitor_push_away_moves_the_robot_2_2_to_4_2_m() {
    for seed in 0..10 {
        let mut s = Sim::with_seed(RulesConfig::default(), seed);
        two_teams(&mut s);
        let before = s.robot(12).torso;
        let robots = s.robots.clone();
        let facts = WorldFacts {
            ball: s.ball,
            ball_velocity: Vector3::zeros(),
            ball_touches: &[],
            robots: &robots,
            robot_contacts: &[],
            self_collisions: &[],
            connected_agents: robots.len(),
            dt: DT,
        };
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
