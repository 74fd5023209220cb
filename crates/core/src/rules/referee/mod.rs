//! The referee: game state and the per-cycle rule update
//! (docs/protocol.md#rules). [`Referee::step`] is a function of (state, world facts, time):
//! it never touches sockets or physics and returns [`Decision`]s for the
//! simulation to carry out.
//!
//! # Reference quirks (docs/protocol.md#reference-quirks), as decided
//!
//! 1. Goal fallback direction: fixed; the trace back to the goal line is
//!    symmetric for both goals.
//! 2. Touch groups while paused: fixed; groups are rebuilt from the contacts
//!    of every cycle, paused or not, so nothing piles up over BeforeKickOff.
//! 3. Charging goalie flag: fixed; computed for both players independently.
//! 4. Ball out with no touch since the start: improved; the ball is dropped
//!    (docs/protocol.md#drop-ball) at its last on-field position instead of
//!    staying out.
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
use crate::playmode::{PlayMode, Side};

mod checks;
mod goals_and_outs;
mod set_pieces;
mod state;

/// Largest game time a trainer may set with `(time T)`, seconds: far
/// beyond any match (two halves of 300 s), and small enough that the f32
/// clock still resolves a millisecond, so it keeps advancing in 0.02 s
/// steps. The reference accepts any value; `(time 1e30)` froze its clock.
pub const MAX_GAME_TIME: f32 = 10_000.0;

/// Touches by the kicker within this long of the kick belong to the kick
/// (docs/protocol.md#set-pieces).
const KICK_DURATION: f32 = 0.1;
/// Margin after the set-piece pause before a touch counts
/// (docs/protocol.md#set-pieces).
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
/// (docs/protocol.md#set-pieces) and the goals that are not allowed
/// (docs/protocol.md#goals).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Kick {
    kicker: RobotId,
    side: Side,
    time: f32,
    indirect: bool,
}

/// Set-piece kinds (docs/protocol.md#set-pieces).
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

    /// Whether penalty-shootout rules are in effect
    /// (docs/protocol.md#penalty-shootout-and-keepaway).
    pub fn penalty_shootout(&self) -> bool {
        self.shootout
    }

    // ------------------------------------------------------------------
    // Commands (docs/protocol.md#monitor-commands)
    // ------------------------------------------------------------------

    /// `(kickOff Left|Right|None)`: starts a kick-off for that team, or for
    /// the team chosen by the kick-off rule of docs/protocol.md#match-structure
    /// with `None` (see [`Referee::kick_off_team`] for the result). An
    /// explicit team does not update the stored next-half team (a reference
    /// quirk, kept and logged: docs/protocol.md#reference-quirks).
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

    /// `(dropBall)`: drop ball at `ball` (the current ball position,
    /// docs/protocol.md#drop-ball), ending in PlayOn. Returns the ball
    /// placement; the players near the spot are cleared in the next
    /// [`Referee::step`] (one cycle later than the reference, which has the
    /// robots at hand).
    pub fn drop_ball(&mut self, ball: Vector3<f32>) -> Vec<Decision> {
        let spot = self.drop_spot(ball);
        self.pending_drop_clearance = Some(spot);
        self.finish_drop(spot);
        vec![Decision::MoveBall {
            pos: spot,
            vel: Vector3::zeros(),
        }]
    }

    /// The monitor's `(agent)` push for robot `id`
    /// (docs/protocol.md#monitor-commands): pushed `U(2.2, 4.2)` m from its own
    /// position by the circle clearance of docs/protocol.md#referee-moves, then
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

    /// The outside position (docs/protocol.md#referee-moves) at z = 1.0, for
    /// the monitor `repos` command: on the touchline opposite `ball_y`.
    pub fn outside_position(&self, side: Side, unum: u8, ball_y: f32) -> Vector3<f32> {
        self.cfg.outside_position(side, unum, ball_y, 1.0)
    }

    /// `(score (left A) (right B))`: sets both scores.
    pub fn set_score(&mut self, left: u32, right: u32) {
        self.scores = [left, right];
    }

    /// Beam rules (docs/protocol.md#beam) for an agent of `side` asking for
    /// (`x`, `y`, `rot`) in its team frame. Returns the field-frame torso target
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
    /// world looks like now. Order (docs/protocol.md#match-structure): clock,
    /// ball state, half-time check, kick-off scoring permission, mode logic,
    /// velocity history, player fouls.
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
