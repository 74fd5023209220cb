//! The referee: game state and the per-cycle rule update (soccer-rules
//! §2-§10). [`Referee::step`] is a function of (state, world facts, time):
//! it never touches sockets or physics and returns [`Decision`]s for the
//! simulation to carry out.
//!
//! # Reference quirks (soccer-rules §14), as decided
//!
//! 1. Goal fallback direction: fixed; the trace back to the goal line is
//!    symmetric for both goals.
//! 2. Touch groups while paused: fixed; groups are rebuilt from the contacts
//!    of every cycle, paused or not, so nothing piles up over BeforeKickOff.
//! 3. Charging goalie flag: fixed; computed for both players independently.
//! 4. Ball out with no touch since the start: improved; the ball is dropped
//!    (§6) at its last on-field position instead of staying out.
//! 5. Per-cycle duplicate foul records: kept (about 26 records per foul).
//! 6. Side swap colours: the referee emits [`Decision::SwapSides`]; the
//!    server swaps the teams and re-assigns the robots' materials.
//! 7. Team-less kick-off later in the same half: kept (coin toss).
//! 8. Explicit `(kickOff Left|Right)` does not update the next-half team:
//!    kept, and logged at info level.
//!
//! Other deliberate differences: the safe-spot search tries candidates
//! nearest to the requested spot first (the reference: nearest to the
//! player); a monitor `(dropBall)` clears the players one cycle later (the
//! command has no robot positions); `(time T)` moves the referee's stored
//! times along with the clock; outside set pieces the set-piece spot keeps
//! tracking the ball in every mode, not only in PlayOn; the mode time is an
//! f64 accumulator so that "more than 15 s" means 751 cycles, not 750.

use std::collections::BTreeMap;

use nalgebra::Vector3;
use rand::Rng;

use super::config::RulesConfig;
use super::facts::{Decision, RobotFacts, RobotId, WorldFacts};
use super::fouls::{self, FoulInputs, FoulRecord, PlayerState};
use super::geometry::clamp;
use super::placement::{team_index, Cycle};
use super::playmode::{PlayMode, Side};

/// Largest game time a trainer may set with `(time T)`, seconds: far
/// beyond any match (two halves of 300 s), and small enough that the f32
/// clock still resolves a millisecond, so it keeps advancing in 0.02 s
/// steps. The reference accepts any value; `(time 1e30)` froze its clock.
pub const MAX_GAME_TIME: f32 = 10_000.0;

/// Touches by the kicker within this long of the kick belong to the kick (§5.3).
const KICK_DURATION: f32 = 0.1;
/// Margin after the set-piece pause before a touch counts (§5.2).
const TOUCH_MARGIN: f32 = 0.03;
/// Slack for comparing accumulated f32 times.
const TIME_EPS: f32 = 1e-4;
/// Slack for comparing the (f64) mode time.
const MODE_EPS: f64 = 1e-6;
/// GameOver lasts this long before `AutomaticQuit` shuts the server down.
const QUIT_DELAY: f32 = 10.0;

/// The last robot that touched the ball.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Touch {
    /// Robot id.
    pub robot: RobotId,
    /// Its team at the time of the touch.
    pub side: Side,
    /// Its uniform number.
    pub unum: u8,
    /// Game time of the touch.
    pub time: f32,
}

/// A recorded set-piece or kick-off kick, watched for the double touch
/// (§5.3) and the goals that are not allowed (§4.2).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Kick {
    kicker: RobotId,
    side: Side,
    time: f32,
    indirect: bool,
}

/// Set-piece kinds (§5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SetPiece {
    KickIn,
    Corner,
    GoalKick,
    FreeKick,
    DirectFreeKick,
}

fn set_piece_of(mode: PlayMode) -> Option<(SetPiece, Side)> {
    use PlayMode as M;
    Some(match mode {
        M::KickInLeft => (SetPiece::KickIn, Side::Left),
        M::KickInRight => (SetPiece::KickIn, Side::Right),
        M::CornerKickLeft => (SetPiece::Corner, Side::Left),
        M::CornerKickRight => (SetPiece::Corner, Side::Right),
        M::GoalKickLeft => (SetPiece::GoalKick, Side::Left),
        M::GoalKickRight => (SetPiece::GoalKick, Side::Right),
        M::FreeKickLeft => (SetPiece::FreeKick, Side::Left),
        M::FreeKickRight => (SetPiece::FreeKick, Side::Right),
        M::DirectFreeKickLeft => (SetPiece::DirectFreeKick, Side::Left),
        M::DirectFreeKickRight => (SetPiece::DirectFreeKick, Side::Right),
        _ => return None,
    })
}

fn by_side(side: Side, left: PlayMode, right: PlayMode) -> PlayMode {
    match side {
        Side::Left => left,
        Side::Right => right,
    }
}

/// The kick-off mode for `side`.
pub fn kick_off_mode(side: Side) -> PlayMode {
    by_side(side, PlayMode::KickOffLeft, PlayMode::KickOffRight)
}

/// The automated referee and the game state it owns.
#[derive(Debug, Clone)]
pub struct Referee {
    cfg: RulesConfig,
    mode: PlayMode,
    game_time: f32,
    /// f64 so that long modes do not drift (f32 sums of 0.02 do).
    mode_time: f64,
    mode_change_time: f32,
    half: u8,
    scores: [u32; 2],
    kick_off_team: Option<Side>,
    next_half_team: Option<Side>,
    half_kicked_off: bool,
    auto_wait: f64,
    last_touch: Option<Touch>,
    /// The set-piece spot: the last on-field ball position (z = r) outside
    /// set pieces, the awarded spot during them.
    spot: Vector3<f32>,
    repel_pending: bool,
    kick: Option<Kick>,
    kick_off_no_score: Option<Side>,
    shootout: bool,
    quit_sent: bool,
    pending_drop_clearance: Option<Vector3<f32>>,
    players: BTreeMap<RobotId, PlayerState>,
    fouls: Vec<FoulRecord>,
}

impl Referee {
    /// A referee in BeforeKickOff, half 1, 0:0, clock at 0.
    pub fn new(cfg: RulesConfig) -> Referee {
        Referee {
            mode: PlayMode::BeforeKickOff,
            game_time: 0.0,
            mode_time: 0.0,
            mode_change_time: 0.0,
            half: 1,
            scores: [0, 0],
            kick_off_team: None,
            next_half_team: if cfg.coin_toss_for_kick_off {
                None
            } else {
                Some(Side::Left)
            },
            half_kicked_off: false,
            auto_wait: 0.0,
            last_touch: None,
            spot: Vector3::new(0.0, 0.0, cfg.ball_radius),
            repel_pending: true,
            kick: None,
            kick_off_no_score: None,
            shootout: cfg.penalty_shootout,
            quit_sent: false,
            pending_drop_clearance: None,
            players: BTreeMap::new(),
            fouls: Vec::new(),
            cfg,
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &RulesConfig {
        &self.cfg
    }

    /// Current play mode.
    pub fn play_mode(&self) -> PlayMode {
        self.mode
    }

    /// Game time in seconds (`GS t`).
    pub fn game_time(&self) -> f32 {
        self.game_time
    }

    /// Time spent in the current play mode (s).
    pub fn mode_time(&self) -> f32 {
        self.mode_time as f32
    }

    /// Current half: 1 or 2.
    pub fn half(&self) -> u8 {
        self.half
    }

    /// Scores as (left, right).
    pub fn scores(&self) -> (u32, u32) {
        (self.scores[0], self.scores[1])
    }

    /// The team of the last kick-off, if any.
    pub fn kick_off_team(&self) -> Option<Side> {
        self.kick_off_team
    }

    /// The last robot that touched the ball since the server started.
    pub fn last_touch(&self) -> Option<Touch> {
        self.last_touch
    }

    /// The current set-piece spot (during set pieces) or the last on-field
    /// ball position (otherwise), with z = ball radius.
    pub fn set_piece_spot(&self) -> Vector3<f32> {
        self.spot
    }

    /// Every foul record so far, oldest first (monitor index = position + 1).
    pub fn fouls(&self) -> &[FoulRecord] {
        &self.fouls
    }

    /// Whether penalty-shootout rules are in effect (§10).
    pub fn penalty_shootout(&self) -> bool {
        self.shootout
    }

    // ------------------------------------------------------------------
    // Commands (monitor protocol §10)
    // ------------------------------------------------------------------

    /// `(kickOff Left|Right|None)`: starts a kick-off for that team, or for
    /// the team chosen as in §3.3 with `None` (see [`Referee::kick_off_team`]
    /// for the result). An explicit team does not update the stored
    /// next-half team (reference quirk §14.8, kept and logged).
    pub fn kick_off(&mut self, side: Option<Side>, rng: &mut impl Rng) {
        let team = match side {
            Some(team) => {
                tracing::debug!(
                    team = team.monitor_name(),
                    "explicit kick-off; the next half's kick-off team is not changed"
                );
                team
            }
            None => self.choose_kick_off_team(rng),
        };
        self.start_kick_off(team);
    }

    /// `(playMode NAME)`: sets the mode; nothing else changes.
    pub fn set_play_mode(&mut self, mode: PlayMode) {
        self.set_mode(mode);
    }

    /// `(dropBall)`: drop ball at `ball` (the current ball position, §6),
    /// ending in PlayOn. Returns the ball placement; the players near the
    /// spot are cleared in the next [`Referee::step`] (one cycle later than
    /// the reference, which has the robots at hand).
    pub fn drop_ball(&mut self, ball: Vector3<f32>) -> Vec<Decision> {
        let spot = self.drop_spot(ball);
        self.pending_drop_clearance = Some(spot);
        self.finish_drop(spot);
        vec![Decision::MoveBall {
            pos: spot,
            vel: Vector3::zeros(),
        }]
    }

    /// The monitor's `(agent)` push for robot `id` (monitor-protocol §10):
    /// pushed `U(2.2, 4.2)` m from its own position by the §8.1 rule, then
    /// the safe-spot search. Returns the move (none for an unknown robot).
    pub fn push_away(
        &mut self,
        facts: &WorldFacts,
        id: RobotId,
        rng: &mut impl Rng,
    ) -> Vec<Decision> {
        self.sync_players(facts);
        let mut cycle = self.new_cycle(facts);
        if let Some(p) = cycle.robot(id).copied() {
            cycle.push_from(&self.cfg, &p, p.torso, self.cfg.free_kick_move_dist, rng);
        }
        self.finish_moves(&cycle);
        cycle.decisions
    }

    /// `(time T)`: sets the game time. Negative or non-finite values are
    /// ignored (logged), as in the reference, and so are values above
    /// [`MAX_GAME_TIME`] (deviation). The times the referee keeps
    /// (last touch, last kick, last mode change) move with the clock, so a
    /// clock set back (RoboViz sends `(time 0)`) does not make an old touch
    /// look like a new one.
    pub fn set_game_time(&mut self, t: f32) {
        if !(0.0..=MAX_GAME_TIME).contains(&t) {
            tracing::warn!(
                t,
                max = MAX_GAME_TIME,
                "ignoring a game time that is negative, non-finite or too large"
            );
            return;
        }
        let delta = t - self.game_time;
        self.game_time = t;
        self.mode_change_time += delta;
        if let Some(touch) = self.last_touch.as_mut() {
            touch.time += delta;
        }
        if let Some(kick) = self.kick.as_mut() {
            kick.time += delta;
        }
    }

    /// The outside position of §8.5 at z = 1.0, for the monitor `repos`
    /// command: on the touchline opposite `ball_y`.
    pub fn outside_position(&self, side: Side, unum: u8, ball_y: f32) -> Vector3<f32> {
        self.cfg.outside_position(side, unum, ball_y, 1.0)
    }

    /// `(score (left A) (right B))`: sets both scores.
    pub fn set_score(&mut self, left: u32, right: u32) {
        self.scores = [left, right];
    }

    /// Beam rules of §9 for an agent of `side` asking for (`x`, `y`, `rot`)
    /// in its team frame. Returns the field-frame torso target
    /// (x, y, heading in degrees, 0 = facing +x), or `None` when beaming is
    /// not allowed in the current mode or an input is not finite. Noise is
    /// drawn from `rng`; unless `StartAnyFieldPosition`, the position is
    /// clamped to the own half. The torso height is `AgentRadius`.
    pub fn beam_target(
        &self,
        side: Side,
        x: f32,
        y: f32,
        rot_deg: f32,
        rng: &mut impl Rng,
    ) -> Option<(f32, f32, f32)> {
        if !self.mode.beam_allowed() || !x.is_finite() || !y.is_finite() || !rot_deg.is_finite() {
            return None;
        }
        let nxy = self.cfg.beam_noise_xy.abs();
        let na = self.cfg.beam_noise_angle.abs();
        let mut noise = |n: f32| {
            if n > 0.0 && n.is_finite() {
                rng.gen_range(-n..=n)
            } else {
                0.0
            }
        };
        let mut x = x + noise(nxy);
        let mut y = y + noise(nxy);
        let rot = rot_deg + noise(na);
        if !self.cfg.start_any_field_position {
            x = clamp(x, -self.cfg.half_length(), 0.0);
            y = clamp(y, -self.cfg.half_width(), self.cfg.half_width());
        }
        let (x, y, rot) = match side {
            Side::Left => (x, y, rot),
            Side::Right => (-x, -y, rot + 180.0),
        };
        Some((x, y, normalize_deg(rot)))
    }

    // ------------------------------------------------------------------
    // The cycle
    // ------------------------------------------------------------------

    /// One referee cycle, called once per cycle after physics with what the
    /// world looks like now. Order (§0, §7.1): clock, ball state, half-time
    /// check, kick-off scoring permission, mode logic, velocity history,
    /// player fouls.
    pub fn step(&mut self, facts: &WorldFacts, rng: &mut impl Rng) -> Vec<Decision> {
        let dt = sanitized_dt(facts.dt);
        if self.mode.clock_runs() {
            self.game_time += dt;
        }
        self.mode_time += f64::from(dt);
        if !self.cfg.referee_enabled {
            return Vec::new();
        }
        self.sync_players(facts);
        self.record_touches(facts);

        let mut cycle = self.new_cycle(facts);
        if let Some(spot) = self.pending_drop_clearance.take() {
            self.drop_clearance(spot, &mut cycle, rng);
        }
        let swapped = self.check_half_time(&mut cycle);
        self.check_kick_off_permission(facts);
        self.check_keepaway(facts);

        let paused = matches!(
            self.mode,
            PlayMode::BeforeKickOff | PlayMode::GoalLeft | PlayMode::GoalRight
        );
        let kicking_off = match self.mode {
            PlayMode::KickOffLeft => Some(Side::Left),
            PlayMode::KickOffRight => Some(Side::Right),
            _ => None,
        };
        // After a side swap the facts still carry the old sides: the
        // BeforeKickOff clearance waits for the next cycle.
        if !swapped {
            self.mode_logic(facts, &mut cycle, dt, rng);
        }

        if self.cfg.automatic_quit
            && self.mode == PlayMode::GameOver
            && self.mode_reached(QUIT_DELAY)
            && !self.quit_sent
        {
            self.quit_sent = true;
            cycle.decisions.push(Decision::Quit);
        }

        for r in facts.robots {
            if let Some(p) = self.players.get_mut(&r.id) {
                if p.velocities.len() == 3 {
                    p.velocities.remove(0);
                }
                p.velocities.push(r.velocity);
            }
        }

        if paused {
            fouls::reset_all(&mut self.players, &self.cfg, dt);
            fouls::note_groups(facts, &mut self.players);
        } else {
            let inputs = FoulInputs {
                cfg: &self.cfg,
                facts,
                kicking_off,
                keepaway: self.cfg.keepaway,
                game_time: self.game_time,
                dt,
            };
            fouls::run(&inputs, &mut self.players, &mut cycle, &mut self.fouls, rng);
            self.check_shootout(facts);
        }
        self.finish_moves(&cycle);
        cycle.decisions
    }

    fn new_cycle(&self, facts: &WorldFacts) -> Cycle {
        let players = &self.players;
        Cycle::new(&self.cfg, facts.robots, |id| {
            players.get(&id).is_some_and(|p| p.enforceable())
        })
    }

    /// Updates the "moved recently" timers after a cycle's moves.
    fn finish_moves(&mut self, cycle: &Cycle) {
        for p in self.players.values_mut() {
            p.since_moved = p.since_moved.saturating_add(1);
        }
        for id in &cycle.moved {
            if let Some(p) = self.players.get_mut(id) {
                p.since_moved = 0;
            }
        }
    }

    /// Keeps one state per robot in the facts; forgets robots that left.
    fn sync_players(&mut self, facts: &WorldFacts) {
        let dt = sanitized_dt(facts.dt);
        self.players
            .retain(|id, _| facts.robots.iter().any(|r| r.id == *id));
        for r in facts.robots {
            let cfg = &self.cfg;
            let p = self
                .players
                .entry(r.id)
                .or_insert_with(|| PlayerState::new(r, cfg, dt));
            p.side = r.side;
            p.unum = r.unum;
        }
    }

    fn robot<'f>(facts: &'f WorldFacts, id: RobotId) -> Option<&'f RobotFacts> {
        facts.robots.iter().find(|r| r.id == id)
    }

    fn record_touches(&mut self, facts: &WorldFacts) {
        if let Some(r) = facts
            .ball_touches
            .iter()
            .rev()
            .find_map(|id| Self::robot(facts, *id))
        {
            self.last_touch = Some(Touch {
                robot: r.id,
                side: r.side,
                unum: r.unum,
                time: self.game_time,
            });
        }
    }

    /// Mode time > `secs`.
    fn mode_over(&self, secs: f32) -> bool {
        self.mode_time > f64::from(secs) + MODE_EPS
    }

    /// Mode time >= `secs`.
    fn mode_reached(&self, secs: f32) -> bool {
        self.mode_time >= f64::from(secs) - MODE_EPS
    }

    fn set_mode(&mut self, mode: PlayMode) {
        if mode == self.mode {
            return;
        }
        tracing::debug!(
            from = self.mode.name(),
            to = mode.name(),
            t = self.game_time,
            "play mode"
        );
        self.mode = mode;
        self.mode_time = 0.0;
        self.mode_change_time = self.game_time;
        self.repel_pending = true;
        if mode == PlayMode::BeforeKickOff {
            self.auto_wait = 0.0;
        }
        if mode == PlayMode::GameOver {
            self.quit_sent = false;
        }
        // §10: the shootout switches itself off once Goal_Left happens.
        if mode == PlayMode::GoalLeft {
            self.shootout = false;
        }
    }

    fn choose_kick_off_team(&mut self, rng: &mut impl Rng) -> Side {
        let first = !self.half_kicked_off;
        let team = match (first, self.next_half_team) {
            (true, Some(team)) => team,
            // Reference quirk §14.7 kept: a later team-less kick-off in the
            // same half is a coin toss.
            _ => {
                if rng.gen_bool(0.5) {
                    Side::Left
                } else {
                    Side::Right
                }
            }
        };
        if first {
            self.half_kicked_off = true;
            self.next_half_team = Some(if self.cfg.change_sides_in_second_half {
                team
            } else {
                team.opponent()
            });
        }
        team
    }

    fn start_kick_off(&mut self, team: Side) {
        self.kick_off_team = Some(team);
        self.set_mode(kick_off_mode(team));
    }

    /// §3.1 half time and game over; returns whether the sides were swapped.
    fn check_half_time(&mut self, cycle: &mut Cycle) -> bool {
        let ht = self.cfg.half_time;
        if self.half == 1 && self.game_time >= ht {
            if self.cfg.single_half_time {
                self.set_mode(PlayMode::GameOver);
                return false;
            }
            self.half = 2;
            self.half_kicked_off = false;
            self.kick = None;
            self.kick_off_no_score = None;
            self.set_mode(PlayMode::BeforeKickOff);
            if self.cfg.change_sides_in_second_half {
                self.scores.swap(0, 1);
                if let Some(t) = self.last_touch.as_mut() {
                    t.side = t.side.opponent();
                }
                for p in self.players.values_mut() {
                    p.side = p.side.opponent();
                    p.was_in_area = false;
                }
                cycle.decisions.push(Decision::SwapSides);
                return true;
            }
        } else if self.half >= 2 && self.game_time >= 2.0 * ht && self.mode != PlayMode::GameOver {
            self.set_mode(PlayMode::GameOver);
        }
        false
    }

    /// §4.2 rule 1: the kick-off team may score again once an opponent
    /// touched the ball or a team-mate touched it outside the centre circle.
    fn check_kick_off_permission(&mut self, facts: &WorldFacts) {
        let Some(team) = self.kick_off_no_score else {
            return;
        };
        let outside = facts.ball.xy().norm() > self.cfg.free_kick_distance;
        let lifted = facts
            .ball_touches
            .iter()
            .filter_map(|id| Self::robot(facts, *id))
            .any(|r| r.side != team || outside);
        if lifted {
            self.kick_off_no_score = None;
        }
    }

    /// §10 keepaway: GameOver when the ball leaves the shrinking box or a
    /// right-team agent touches the ball.
    fn check_keepaway(&mut self, facts: &WorldFacts) {
        if !self.cfg.keepaway || self.game_time <= 0.0 || self.mode == PlayMode::GameOver {
            return;
        }
        let c = &self.cfg;
        let minutes = self.game_time / 60.0;
        let hx = c.keepaway_length / 2.0 - c.keepaway_length_reduction_rate / 2.0 * minutes;
        let hy = c.keepaway_width / 2.0 - c.keepaway_width_reduction_rate / 2.0 * minutes;
        let outside = (facts.ball.x - c.keepaway_center_x).abs() > hx
            || (facts.ball.y - c.keepaway_center_y).abs() > hy;
        let taker_touched = facts
            .ball_touches
            .iter()
            .filter_map(|id| Self::robot(facts, *id))
            .any(|r| r.side == Side::Right);
        if outside || taker_touched {
            self.set_mode(PlayMode::GameOver);
        }
    }

    /// §10 penalty shootout: a right-team player leaving the right penalty
    /// area gives the left team a goal.
    fn check_shootout(&mut self, facts: &WorldFacts) {
        if !self.shootout {
            return;
        }
        let area = self.cfg.penalty_area(Side::Right);
        let left_area = facts.robots.iter().any(|r| {
            r.side == Side::Right && (r.torso.x < area.min_x || r.torso.y.abs() > area.max_y)
        });
        if left_area {
            self.scores[0] += 1;
            self.set_mode(PlayMode::GoalLeft);
        }
    }

    fn mode_logic(&mut self, facts: &WorldFacts, cycle: &mut Cycle, dt: f32, rng: &mut impl Rng) {
        match self.mode {
            PlayMode::BeforeKickOff => self.before_kick_off(facts, cycle, dt, rng),
            PlayMode::KickOffLeft => self.kick_off_mode(Side::Left, facts, cycle, rng),
            PlayMode::KickOffRight => self.kick_off_mode(Side::Right, facts, cycle, rng),
            PlayMode::PlayOn => self.play_on(facts, cycle, rng),
            PlayMode::GoalLeft => self.goal_pause(Side::Left, cycle, rng),
            PlayMode::GoalRight => self.goal_pause(Side::Right, cycle, rng),
            mode => {
                if let Some((kind, side)) = set_piece_of(mode) {
                    self.set_piece(kind, side, facts, cycle, rng);
                }
            }
        }
        // Outside set pieces and PlayOn (which does it itself), keep
        // tracking the ball for set pieces a monitor may start.
        if set_piece_of(self.mode).is_none()
            && self.mode != PlayMode::PlayOn
            && self.cfg.ball_on_field(&facts.ball)
        {
            self.spot = Vector3::new(facts.ball.x, facts.ball.y, self.cfg.ball_radius);
        }
    }

    fn centre_ball(&self, cycle: &mut Cycle) {
        cycle.decisions.push(Decision::MoveBall {
            pos: Vector3::new(0.0, 0.0, self.cfg.ball_radius),
            vel: Vector3::zeros(),
        });
    }

    /// §3.4.
    fn before_kick_off(
        &mut self,
        facts: &WorldFacts,
        cycle: &mut Cycle,
        dt: f32,
        rng: &mut impl Rng,
    ) {
        if facts.connected_agents == 0 {
            return;
        }
        let centre = Vector3::new(0.0, 0.0, self.cfg.ball_radius);
        if (facts.ball - centre).norm() > 1e-4 || facts.ball_velocity.norm() > 1e-4 {
            self.centre_ball(cycle);
        }
        if !self.cfg.start_any_field_position {
            let mut order = [Side::Left, Side::Right];
            if rng.gen_bool(0.5) {
                order.swap(0, 1);
            }
            for side in order {
                let rect = self.cfg.half_box(side.opponent());
                let m = self.cfg.free_kick_move_dist;
                cycle.clear_rect(&self.cfg, side, &rect, m, rng, |_| false);
            }
        }
        self.auto_wait += f64::from(dt);
        if self.cfg.automatic_kick_off
            && self.auto_wait > f64::from(self.cfg.wait_before_kick_off) + MODE_EPS
        {
            let team = self.choose_kick_off_team(rng);
            self.start_kick_off(team);
        }
    }

    /// §8.3 kick-off clearance for the kicking team `k`.
    fn kick_off_clearance(&self, k: Side, cycle: &mut Cycle, rng: &mut impl Rng) {
        if self.cfg.start_any_field_position {
            return;
        }
        let cfg = &self.cfg;
        let m = cfg.free_kick_move_dist;
        let r = cfg.free_kick_distance;
        let opp = k.opponent();
        cycle.clear_rect(cfg, opp, &cfg.half_box(k), m, rng, |_| false);
        cycle.clear_circle(cfg, opp, Vector3::zeros(), r, m, rng);
        let in_circle = |p: &RobotFacts| {
            let corners = [
                (p.bbox_min.x, p.bbox_min.y),
                (p.bbox_min.x, p.bbox_max.y),
                (p.bbox_max.x, p.bbox_min.y),
                (p.bbox_max.x, p.bbox_max.y),
            ];
            corners.iter().all(|(x, y)| x * x + y * y <= r * r)
        };
        cycle.clear_rect(cfg, k, &cfg.half_box(opp), m, rng, in_circle);
    }

    /// §4.3.
    fn goal_pause(&mut self, scorer: Side, cycle: &mut Cycle, rng: &mut impl Rng) {
        let conceding = scorer.opponent();
        self.kick_off_clearance(conceding, cycle, rng);
        if self.mode_reached(self.cfg.goal_pause_time) {
            self.centre_ball(cycle);
            self.start_kick_off(conceding);
        }
    }

    /// §5.4.
    fn kick_off_mode(
        &mut self,
        k: Side,
        facts: &WorldFacts,
        cycle: &mut Cycle,
        rng: &mut impl Rng,
    ) {
        self.kick = None;
        self.kick_off_no_score = None;
        self.kick_off_clearance(k, cycle, rng);
        if self.cfg.drop_ball_time > 0.0 && self.mode_over(self.cfg.drop_ball_time) {
            self.do_drop_ball(facts.ball, cycle, rng);
            return;
        }
        let Some(t) = self.last_touch else {
            return;
        };
        if t.time > self.mode_change_time + TIME_EPS {
            self.set_mode(PlayMode::PlayOn);
            if facts.connected_agents > 2 && !self.shootout {
                self.kick = Some(Kick {
                    kicker: t.robot,
                    side: t.side,
                    time: self.game_time,
                    indirect: true,
                });
                self.kick_off_no_score = Some(k);
            }
        }
    }

    /// §5.2.
    fn set_piece(
        &mut self,
        kind: SetPiece,
        taker: Side,
        facts: &WorldFacts,
        cycle: &mut Cycle,
        rng: &mut impl Rng,
    ) {
        let pause = self.cfg.kick_in_pause_time;
        if !self.mode_reached(pause) {
            self.repel_pending = true;
            return;
        }
        self.kick = None;
        if matches!(kind, SetPiece::FreeKick | SetPiece::DirectFreeKick) {
            self.spot = self.cfg.out_of_penalty_areas(self.spot);
        }
        let cfg = &self.cfg;
        let m = cfg.free_kick_move_dist;
        if kind == SetPiece::GoalKick {
            cycle.clear_rect(
                cfg,
                taker.opponent(),
                &cfg.penalty_area(taker),
                m,
                rng,
                |_| false,
            );
        } else {
            let r = cfg.free_kick_distance;
            cycle.clear_circle(cfg, taker.opponent(), self.spot, r, m, rng);
        }
        if cfg.drop_ball_time > 0.0 && self.mode_over(cfg.drop_ball_time) {
            self.do_drop_ball(self.spot, cycle, rng);
            return;
        }
        let taken = self
            .last_touch
            .filter(|t| t.time > self.mode_change_time + pause + TOUCH_MARGIN);
        match taken {
            Some(t) if !self.repel_pending => {
                let area = self.cfg.penalty_area(taker);
                let left_area = !area.contains(&facts.ball) || !self.cfg.ball_on_field(&facts.ball);
                if kind != SetPiece::GoalKick || left_area {
                    self.kick = Some(Kick {
                        kicker: t.robot,
                        side: t.side,
                        time: self.game_time,
                        indirect: matches!(kind, SetPiece::KickIn | SetPiece::FreeKick),
                    });
                    self.set_mode(PlayMode::PlayOn);
                }
            }
            _ => {
                if self.repel_pending {
                    cycle.repel_kick_takers(&self.cfg, taker, &self.spot);
                    self.repel_pending = false;
                }
                cycle.decisions.push(Decision::MoveBall {
                    pos: self.spot,
                    vel: Vector3::zeros(),
                });
            }
        }
    }

    /// §6 steps 2-3: the drop-ball spot for a start position.
    fn drop_spot(&self, pos: Vector3<f32>) -> Vector3<f32> {
        let cfg = &self.cfg;
        let mut p = cfg.out_of_penalty_areas(pos);
        let hw = cfg.half_width();
        if p.y.abs() >= hw {
            p.y = (hw - cfg.ball_radius).copysign(p.y);
        }
        p.z = cfg.ball_radius;
        p
    }

    /// §6 step 5: clear both teams (random order) from around the spot.
    fn drop_clearance(&self, spot: Vector3<f32>, cycle: &mut Cycle, rng: &mut impl Rng) {
        let cfg = &self.cfg;
        let mut order = [Side::Left, Side::Right];
        if rng.gen_bool(0.5) {
            order.swap(0, 1);
        }
        for side in order {
            cycle.clear_circle(
                cfg,
                side,
                spot,
                cfg.free_kick_distance,
                cfg.free_kick_move_dist,
                rng,
            );
        }
    }

    /// §6 step 6.
    fn finish_drop(&mut self, spot: Vector3<f32>) {
        self.spot = spot;
        self.kick = None;
        self.set_mode(PlayMode::PlayOn);
    }

    /// §6: drop ball at `pos`, within a cycle.
    fn do_drop_ball(&mut self, pos: Vector3<f32>, cycle: &mut Cycle, rng: &mut impl Rng) {
        let p = self.drop_spot(pos);
        cycle.decisions.push(Decision::MoveBall {
            pos: p,
            vel: Vector3::zeros(),
        });
        self.drop_clearance(p, cycle, rng);
        self.finish_drop(p);
    }

    fn award(&mut self, mode: PlayMode, spot: Vector3<f32>) {
        self.spot = spot;
        self.set_mode(mode);
    }

    fn award_goal_kick(&mut self, defender: Side) {
        let spot = self.cfg.goal_kick_spot(defender);
        self.award(
            by_side(defender, PlayMode::GoalKickLeft, PlayMode::GoalKickRight),
            spot,
        );
    }

    fn award_corner(&mut self, attacker: Side, ball_y: f32) {
        let spot = self.cfg.corner_spot(attacker, ball_y);
        self.award(
            by_side(
                attacker,
                PlayMode::CornerKickLeft,
                PlayMode::CornerKickRight,
            ),
            spot,
        );
    }

    /// PlayOn: double touch (§5.3), goals (§4), ball out (§5.1).
    fn play_on(&mut self, facts: &WorldFacts, cycle: &mut Cycle, rng: &mut impl Rng) {
        // §5.3 double touch.
        if let (Some(k), Some(t)) = (self.kick, self.last_touch) {
            let same_kick = t.robot == k.kicker && t.time <= k.time + KICK_DURATION + TIME_EPS;
            if !same_kick {
                self.kick = None;
                if t.robot == k.kicker {
                    let spot = self.spot;
                    self.award(
                        by_side(
                            k.side.opponent(),
                            PlayMode::FreeKickLeft,
                            PlayMode::FreeKickRight,
                        ),
                        spot,
                    );
                    return;
                }
            }
        }

        // §4 goals.
        let cfg = &self.cfg;
        let goal = cfg
            .goal_box_hit(&facts.ball)
            .or_else(|| cfg.goal_traced(&facts.ball, &facts.ball_velocity));
        if let Some(owner) = goal {
            let scorer = owner.opponent();
            if self.kick_off_no_score == Some(scorer) {
                self.kick_off_no_score = None;
                self.award_goal_kick(owner);
                return;
            }
            if let (Some(k), Some(t)) = (self.kick, self.last_touch) {
                let kick_itself = t.robot == k.kicker
                    && t.time <= k.time + KICK_DURATION + TIME_EPS
                    && facts.connected_agents > 2
                    && !self.shootout;
                if kick_itself && owner == k.side {
                    self.kick = None;
                    self.award_corner(owner.opponent(), facts.ball.y);
                    return;
                }
                if kick_itself && k.indirect {
                    self.kick = None;
                    self.award_goal_kick(owner);
                    return;
                }
            }
            self.scores[team_index(scorer)] += 1;
            self.kick = None;
            self.kick_off_no_score = None;
            self.set_mode(by_side(scorer, PlayMode::GoalLeft, PlayMode::GoalRight));
            return;
        }

        // §5.1 ball out.
        let r = cfg.ball_radius;
        if cfg.ball_on_field(&facts.ball) {
            self.spot = Vector3::new(facts.ball.x, facts.ball.y, r);
            return;
        }
        let Some(t) = self.last_touch else {
            // Reference quirk §14.4: the reference does nothing when nobody
            // has touched the ball yet. We drop the ball at its last
            // on-field position instead, so the game cannot get stuck.
            self.do_drop_ball(self.spot, cycle, rng);
            return;
        };
        let (hl, hw) = (cfg.half_length(), cfg.half_width());
        if facts.ball.x.abs() >= hl {
            let owner = if facts.ball.x < 0.0 {
                Side::Left
            } else {
                Side::Right
            };
            if t.side != owner {
                self.award_goal_kick(owner);
            } else {
                self.award_corner(owner.opponent(), facts.ball.y);
            }
        } else if facts.ball.y.abs() >= hw {
            let spot = Vector3::new(self.spot.x, (hw - r).copysign(facts.ball.y), r);
            let to = t.side.opponent();
            self.award(
                by_side(to, PlayMode::KickInLeft, PlayMode::KickInRight),
                spot,
            );
        } else {
            cycle.decisions.push(Decision::MoveBall {
                pos: self.spot,
                vel: Vector3::zeros(),
            });
        }
    }
}

/// The cycle length, or 0 when it is not a finite positive number.
fn sanitized_dt(dt: f32) -> f32 {
    if dt.is_finite() && dt > 0.0 {
        dt
    } else {
        0.0
    }
}

/// Degrees into (-180, 180].
fn normalize_deg(a: f32) -> f32 {
    let mut a = a % 360.0;
    if a > 180.0 {
        a -= 360.0;
    } else if a <= -180.0 {
        a += 360.0;
    }
    a
}
