//! The player-foul referee of docs/protocol.md#player-fouls: per-player
//! counters, the per-cycle pipeline (rankings and posture, charging, crowding,
//! illegal defence, incapable, touch groups) and enforcement (hold in the air,
//! then off to the touchline).

use std::collections::BTreeMap;

use nalgebra::{Vector2, Vector3};
use rand::seq::SliceRandom;
use rand::Rng;

use super::config::RulesConfig;
use super::facts::{RobotFacts, RobotId, WorldFacts};
use super::geometry::{angle_deg, dist_xy};
use super::placement::{team_index, Cycle};
use crate::playmode::Side;

/// Foul types with the reference's numbers, which monitors use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FoulKind {
    /// 0: crowding (off by default).
    Crowding,
    /// 1: touching: a touch group larger than allowed.
    Touching,
    /// 2: illegal defence: too many players in the own penalty area.
    IllegalDefence,
    /// 3: illegal attack (declared, never raised by 0.7.1).
    IllegalAttack,
    /// 4: incapable, lying or not standing for too long.
    Incapable,
    /// 5: kick-off (declared, never raised by 0.7.1).
    KickOff,
    /// 6: charging.
    Charging,
    /// 7: self collision (later servers; only with `SelfCollisionFoul`).
    SelfCollision,
}

impl FoulKind {
    /// The kind with monitor number `n`, if any.
    pub fn from_number(n: u8) -> Option<FoulKind> {
        [
            FoulKind::Crowding,
            FoulKind::Touching,
            FoulKind::IllegalDefence,
            FoulKind::IllegalAttack,
            FoulKind::Incapable,
            FoulKind::KickOff,
            FoulKind::Charging,
            FoulKind::SelfCollision,
        ]
        .into_iter()
        .find(|k| k.number() == n)
    }

    /// The number reported to monitors in `(foul IDX TYPE TEAM UNUM)`.
    pub fn number(self) -> u8 {
        match self {
            FoulKind::Crowding => 0,
            FoulKind::Touching => 1,
            FoulKind::IllegalDefence => 2,
            FoulKind::IllegalAttack => 3,
            FoulKind::Incapable => 4,
            FoulKind::KickOff => 5,
            FoulKind::Charging => 6,
            FoulKind::SelfCollision => 7,
        }
    }
}

/// One foul record. As in the reference, a record is appended in
/// every enforcement cycle, so one foul yields about 26 consecutive records;
/// the monitor index of a record is its position in the list + 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FoulRecord {
    /// Foul type number (see [`FoulKind::number`]), as monitors get it.
    pub kind: u8,
    /// Team of the offender.
    pub side: Side,
    /// Uniform number of the offender.
    pub unum: u8,
    /// Robot id of the offender.
    pub robot: RobotId,
    /// Game time of the record.
    pub game_time: f32,
}

/// Per-player referee state. Counters are in cycles.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlayerState {
    pub side: Side,
    pub unum: u8,
    pub foul: Option<FoulKind>,
    pub foul_counter: u32,
    pub not_standing: u32,
    pub on_ground: u32,
    pub standing: u32,
    pub since_ball_touch: u32,
    pub charging_timer: u32,
    pub since_moved: u32,
    pub velocities: Vec<Vector3<f32>>,
    pub was_in_area: bool,
    pub was_alone: bool,
}

/// Seconds to whole cycles of length `dt` (the reference's 0.02 s when `dt`
/// is not a positive number).
pub(crate) fn cycles(secs: f32, dt: f32) -> u32 {
    let dt = if dt.is_finite() && dt > 0.0 { dt } else { 0.02 };
    if secs > 0.0 {
        (secs / dt).round() as u32
    } else {
        0
    }
}

impl PlayerState {
    pub fn new(r: &RobotFacts, cfg: &RulesConfig, dt: f32) -> PlayerState {
        let mut s = PlayerState {
            side: r.side,
            unum: r.unum,
            foul: None,
            foul_counter: 0,
            not_standing: 0,
            on_ground: 0,
            standing: 0,
            since_ball_touch: 0,
            charging_timer: 0,
            since_moved: u32::MAX / 2,
            velocities: Vec::with_capacity(3),
            was_in_area: false,
            was_alone: true,
        };
        s.reset(cfg, dt);
        s
    }

    /// A foul is enforceable when set and (counter > 0 or charging/touching).
    pub fn enforceable(&self) -> bool {
        match self.foul {
            None => false,
            Some(k) => {
                self.foul_counter > 0 || matches!(k, FoulKind::Charging | FoulKind::Touching)
            }
        }
    }

    /// Resets every foul, posture and charging counter (at creation, after an
    /// enforced foul, and every cycle while the game is paused).
    pub fn reset(&mut self, cfg: &RulesConfig, dt: f32) {
        self.foul = None;
        self.foul_counter = 0;
        self.not_standing = 0;
        self.on_ground = 0;
        self.standing = 0;
        self.since_ball_touch = cycles(cfg.charging_immunity_time as f32, dt);
        self.charging_timer = cycles(cfg.charging_collision_min_time, dt);
    }

    fn mean_velocity(&self) -> Vector2<f32> {
        if self.velocities.is_empty() {
            return Vector2::zeros();
        }
        let sum: Vector3<f32> = self.velocities.iter().sum();
        sum.xy() / self.velocities.len() as f32
    }

    fn is_goalie(&self) -> bool {
        self.unum == 1
    }

    fn set_foul(&mut self, kind: FoulKind) {
        self.foul = Some(kind);
        // The reference's threshold is 0: any detected foul is enforced at once.
        self.foul_counter = self.foul_counter.max(1);
    }
}

/// Inputs of one pipeline run besides the players and the cycle.
pub(crate) struct FoulInputs<'f, 'a> {
    pub cfg: &'f RulesConfig,
    pub facts: &'f WorldFacts<'a>,
    /// Team kicking off in the current KickOff_X mode (crowding exemption).
    pub kicking_off: Option<Side>,
    pub keepaway: bool,
    pub game_time: f32,
    /// The cycle length, sanitized (finite, >= 0).
    pub dt: f32,
}

/// The touch groups of this cycle: a group index per robot (in `robots` order).
fn touch_groups(robots: &[RobotFacts], contacts: &[super::facts::RobotContact]) -> Vec<usize> {
    let n = robots.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let index = |id: RobotId| robots.iter().position(|r| r.id == id);
    for c in contacts {
        if let (Some(a), Some(b)) = (index(c.a), index(c.b)) {
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            if ra != rb {
                parent[ra.max(rb)] = ra.min(rb);
            }
        }
    }
    (0..n).map(|i| find(&mut parent, i)).collect()
}

/// Goalie inside its own area, behind the goal line included (the charging
/// rule's goalie flag).
fn goalie_in_own_area(cfg: &RulesConfig, r: &RobotFacts) -> bool {
    if r.unum != 1 {
        return false;
    }
    let area = cfg.penalty_area(r.side);
    let front = match r.side {
        Side::Left => r.torso.x <= area.max_x,
        Side::Right => r.torso.x >= area.min_x,
    };
    front && r.torso.y >= area.min_y && r.torso.y <= area.max_y
}

/// Runs the paused branch: every player's counters are reset.
pub(crate) fn reset_all(players: &mut BTreeMap<RobotId, PlayerState>, cfg: &RulesConfig, dt: f32) {
    for p in players.values_mut() {
        p.reset(cfg, dt);
    }
}

/// The rankings of step 1: each player's rank by distance to the ball and
/// to its own goal (within its team, fouled players left out), and each
/// team's closest distance to the ball.
struct Rankings {
    ball_rank: BTreeMap<RobotId, usize>,
    goal_rank: BTreeMap<RobotId, usize>,
    closest: [f32; 2],
}

/// Whether `id`'s foul is being enforced.
fn fouled(players: &BTreeMap<RobotId, PlayerState>, id: RobotId) -> bool {
    players.get(&id).is_some_and(|p| p.enforceable())
}

/// One unpaused run of the per-cycle foul pipeline. Appends records and moves.
pub(crate) fn run(
    inp: &FoulInputs,
    players: &mut BTreeMap<RobotId, PlayerState>,
    cycle: &mut Cycle,
    records: &mut Vec<FoulRecord>,
    rng: &mut impl Rng,
) {
    // The robots as this cycle's earlier referee moves left them.
    let robots_now = cycle.robots.clone();
    let robots = &robots_now[..];

    for p in players.values_mut() {
        p.since_ball_touch = p.since_ball_touch.saturating_add(1);
        p.charging_timer = p.charging_timer.saturating_add(1);
    }

    // 1. Rankings, closest players, area counts, posture.
    let rankings = rank(inp, robots, players);
    update_posture(inp, robots, players);

    // 2. Ball touches.
    for id in inp.facts.ball_touches {
        if let Some(p) = players.get_mut(id) {
            p.since_ball_touch = 0;
        }
    }

    // 3. Charging.
    let groups = touch_groups(robots, inp.facts.robot_contacts);
    if inp.cfg.use_charging {
        charging(inp, robots, players, &groups);
    }

    // 4. Positional fouls, each team with its players in random order.
    let mut team_order = [Side::Left, Side::Right];
    for side in team_order {
        positional_fouls(inp, robots, players, &rankings, side, rng);
    }
    for r in robots {
        if let Some(p) = players.get_mut(&r.id) {
            p.was_in_area = inp.cfg.penalty_area(r.side).contains(&r.torso);
        }
    }

    // 5. Touch groups.
    if inp.cfg.max_touch_group_size > 0 {
        for side in team_order {
            let mut idx: Vec<usize> = (0..robots.len())
                .filter(|&i| robots[i].side == side)
                .collect();
            idx.shuffle(rng);
            for i in idx {
                touching(inp, robots, players, &groups, i);
            }
        }
    }

    // 6. Enforcement, teams in random order.
    team_order.shuffle(rng);
    for side in team_order {
        enforce(inp, robots, players, cycle, records, side);
    }

    // 7. Start new touch groups: remember who was alone.
    for (i, r) in robots.iter().enumerate() {
        if let Some(p) = players.get_mut(&r.id) {
            p.was_alone = groups.iter().filter(|&&g| g == groups[i]).count() == 1;
        }
    }
}

/// Step 1: ranks each team's players (not fouled) by distance to the ball
/// and to their own goal (a goalie in its area counts as at the goal).
fn rank(
    inp: &FoulInputs,
    robots: &[RobotFacts],
    players: &BTreeMap<RobotId, PlayerState>,
) -> Rankings {
    let cfg = inp.cfg;
    let ball = inp.facts.ball;
    let mut rankings = Rankings {
        ball_rank: BTreeMap::new(),
        goal_rank: BTreeMap::new(),
        closest: [f32::INFINITY; 2],
    };
    for side in [Side::Left, Side::Right] {
        let area = cfg.penalty_area(side);
        let goal = cfg.own_goal_centre(side);
        let mut by_ball: Vec<(f32, RobotId)> = Vec::new();
        let mut by_goal: Vec<(f32, RobotId)> = Vec::new();
        for r in robots
            .iter()
            .filter(|r| r.side == side && !fouled(players, r.id))
        {
            let db = dist_xy(&r.torso, &ball);
            let dg = if r.unum == 1 && area.contains(&r.torso) {
                0.0
            } else {
                dist_xy(&r.torso, &goal)
            };
            by_ball.push((db, r.id));
            by_goal.push((dg, r.id));
        }
        by_ball.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        by_goal.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        if let Some((d, _)) = by_ball.first() {
            rankings.closest[team_index(side)] = *d;
        }
        for (i, (_, id)) in by_ball.iter().enumerate() {
            rankings.ball_rank.insert(*id, i + 1);
        }
        for (i, (_, id)) in by_goal.iter().enumerate() {
            rankings.goal_rank.insert(*id, i + 1);
        }
    }
    rankings
}

/// Step 1, posture: the not-standing, on-ground and standing counters from
/// the torso height (lying outside the field's width is not counted).
fn update_posture(
    inp: &FoulInputs,
    robots: &[RobotFacts],
    players: &mut BTreeMap<RobotId, PlayerState>,
) {
    let standing_reset = cycles(0.5, inp.dt);
    for r in robots {
        let Some(p) = players.get_mut(&r.id) else {
            continue;
        };
        let z = r.torso.z;
        if r.torso.y.abs() < inp.cfg.half_width() + 0.1 {
            if z < 0.25 {
                p.not_standing += 1;
                p.standing = 0;
            }
            if z < 0.15 {
                p.on_ground += 1;
            }
        }
        if z >= 0.25 {
            p.standing += 1;
            p.on_ground = 0;
        }
        if p.standing > standing_reset {
            p.not_standing = 0;
        }
    }
}

/// Step 4 for one team: crowding, illegal defence, incapable and self
/// collision, its players in random order.
fn positional_fouls(
    inp: &FoulInputs,
    robots: &[RobotFacts],
    players: &mut BTreeMap<RobotId, PlayerState>,
    rankings: &Rankings,
    side: Side,
    rng: &mut impl Rng,
) {
    let cfg = inp.cfg;
    let dt = inp.dt;
    let ball = inp.facts.ball;
    let mut ids: Vec<RobotId> = robots
        .iter()
        .filter(|r| r.side == side)
        .map(|r| r.id)
        .collect();
    ids.shuffle(rng);
    let area = cfg.penalty_area(side);
    let mut inside = robots
        .iter()
        .filter(|r| r.side == side && !fouled(players, r.id) && area.contains(&r.torso))
        .count() as u32;
    let goalie_entered = robots.iter().any(|r| {
        r.side == side
            && r.unum == 1
            && !fouled(players, r.id)
            && area.contains(&r.torso)
            && players.get(&r.id).is_some_and(|p| !p.was_in_area)
    });
    let max_inside = cfg.max_players_inside_own_area;
    let opp_closest = rankings.closest[team_index(side.opponent())];
    for id in ids {
        let Some(r) = robots.iter().find(|r| r.id == id) else {
            continue;
        };
        let Some(p) = players.get_mut(&id) else {
            continue;
        };
        if p.enforceable() {
            continue;
        }
        let db = dist_xy(&r.torso, &ball);
        let rank = rankings.ball_rank.get(&id).copied().unwrap_or(usize::MAX);
        let crowding = inp.kicking_off != Some(side)
            && !p.is_goalie()
            && opp_closest < cfg.min_opp_distance
            && ((rank == 3 && db <= cfg.min_3pl_distance + 0.01)
                || (rank == 2 && db <= cfg.min_2pl_distance + 0.01));
        let in_area = area.contains(&r.torso);
        let illegal_defence = !crowding
            && !p.is_goalie()
            && in_area
            && inside > max_inside
            && (!p.was_in_area
                || (goalie_entered
                    && rankings.goal_rank.get(&id).copied() == Some(max_inside as usize + 1)));
        let (ground_max, ns_max) = if p.is_goalie() {
            (cfg.goalie_ground_max_time, cfg.goalie_not_standing_max_time)
        } else {
            (cfg.ground_max_time, cfg.not_standing_max_time)
        };
        let incapable = p.on_ground > cycles(ground_max as f32, dt)
            || p.not_standing > cycles(ns_max as f32, dt);
        let self_collision = cfg.self_collision_foul && inp.facts.self_collisions.contains(&id);
        if crowding {
            p.set_foul(FoulKind::Crowding);
        } else if illegal_defence {
            p.set_foul(FoulKind::IllegalDefence);
            inside -= 1;
        } else if incapable {
            p.set_foul(FoulKind::Incapable);
        } else if self_collision {
            p.set_foul(FoulKind::SelfCollision);
        } else {
            p.foul = None;
            p.foul_counter = 0;
        }
    }
}

/// Step 6 for one team: a record per enforced foul; the offender held in
/// the air, then put beside the field.
fn enforce(
    inp: &FoulInputs,
    robots: &[RobotFacts],
    players: &mut BTreeMap<RobotId, PlayerState>,
    cycle: &mut Cycle,
    records: &mut Vec<FoulRecord>,
    side: Side,
) {
    let cfg = inp.cfg;
    let hold = cycles(cfg.foul_hold_time, inp.dt);
    for r in robots.iter().filter(|r| r.side == side) {
        let Some(p) = players.get_mut(&r.id) else {
            continue;
        };
        let Some(kind) = p.foul.filter(|_| p.enforceable()) else {
            continue;
        };
        records.push(FoulRecord {
            kind: kind.number(),
            side,
            unum: r.unum,
            robot: r.id,
            game_time: inp.game_time,
        });
        let here = cycle.robot(r.id).map_or(r.torso, |w| w.torso);
        if p.foul_counter <= hold {
            p.foul_counter += 1;
            let z = 1.0 + 0.01 * p.foul_counter as f32;
            cycle.move_raw(r.id, Vector3::new(here.x, here.y, z), None);
            cycle.moved.push(r.id);
        } else {
            let z = if cfg.foul_hold_time > 0.0 {
                cfg.agent_radius
            } else {
                1.0
            };
            let target = cfg.outside_position(side, r.unum, inp.facts.ball.y, z);
            cycle.move_safely(cfg, r.id, target, true);
            p.reset(cfg, inp.dt);
        }
    }
}

/// Remembers who is alone this cycle, for cycles where the pipeline is
/// paused (a reference quirk fixed, docs/protocol.md#reference-quirks:
/// groups never pile up).
pub(crate) fn note_groups(facts: &WorldFacts, players: &mut BTreeMap<RobotId, PlayerState>) {
    let groups = touch_groups(facts.robots, facts.robot_contacts);
    for (i, r) in facts.robots.iter().enumerate() {
        if let Some(p) = players.get_mut(&r.id) {
            p.was_alone = groups.iter().filter(|&&g| g == groups[i]).count() == 1;
        }
    }
}

/// The touching rule for robot `i` (facts order).
fn touching(
    inp: &FoulInputs,
    robots: &[RobotFacts],
    players: &mut BTreeMap<RobotId, PlayerState>,
    groups: &[usize],
    i: usize,
) {
    let max = inp.cfg.max_touch_group_size as usize;
    let me = &robots[i];
    let Some(p) = players.get(&me.id) else {
        return;
    };
    if !p.was_alone || p.enforceable() {
        return;
    }
    let members: Vec<&RobotFacts> = (0..robots.len())
        .filter(|&j| groups[j] == groups[i])
        .map(|j| &robots[j])
        .filter(|r| players.get(&r.id).is_some_and(|s| !s.enforceable()))
        .collect();
    if members.len() <= max {
        return;
    }
    let own = members.iter().filter(|r| r.side == me.side).count();
    let offender = if 2 * own >= members.len() {
        if me.unum == 1 && max >= 2 {
            members
                .iter()
                .find(|r| r.side == me.side && r.unum != 1)
                .map(|r| r.id)
        } else {
            Some(me.id)
        }
    } else {
        members
            .iter()
            .find(|r| r.side != me.side && r.unum != 1)
            .map(|r| r.id)
    };
    if let Some(p) = offender.and_then(|id| players.get_mut(&id)) {
        p.set_foul(FoulKind::Touching);
    }
}

/// The charging rule over every two-player touch group of opposite teams.
fn charging(
    inp: &FoulInputs,
    robots: &[RobotFacts],
    players: &mut BTreeMap<RobotId, PlayerState>,
    groups: &[usize],
) {
    let facts = inp.facts;
    let dt = inp.dt;
    let moved_window = cycles(1.0, dt);
    for i in 0..robots.len() {
        let members: Vec<usize> = (0..robots.len())
            .filter(|&j| groups[j] == groups[i])
            .collect();
        // Each pair once, from its first member.
        if members.len() != 2 || members[0] != i {
            continue;
        }
        let (a, b) = (&robots[members[0]], &robots[members[1]]);
        if a.side == b.side {
            continue;
        }
        let (Some(sa), Some(sb)) = (players.get(&a.id), players.get(&b.id)) else {
            continue;
        };
        let skip = |s: &PlayerState| {
            s.not_standing != 0 || s.since_moved < moved_window || s.enforceable()
        };
        if skip(sa) || skip(sb) {
            continue;
        }
        let Some(contact) = facts
            .robot_contacts
            .iter()
            .find(|c| (c.a == a.id && c.b == b.id) || (c.a == b.id && c.b == a.id))
        else {
            continue;
        };
        let pr = [a, b];
        let st = [sa.clone(), sb.clone()];
        let charging = who_charges(inp, pr, &st, contact.point);
        settle_charging(inp, players, pr, &st, contact.point, charging);
    }
}

/// Which of two touching opponents charges the other, from their mean
/// velocities, their distances and angles to the ball and to each other,
/// and the contact point `c` (before the immunity hand-over).
fn who_charges(
    inp: &FoulInputs,
    pr: [&RobotFacts; 2],
    st: &[PlayerState; 2],
    c: Vector3<f32>,
) -> [bool; 2] {
    let cfg = inp.cfg;
    let facts = inp.facts;
    let (a, b) = (pr[0], pr[1]);
    let v = [st[0].mean_velocity(), st[1].mean_velocity()];
    let s = [v[0].norm(), v[1].norm()];
    let d = [
        dist_xy(&a.torso, &facts.ball),
        dist_xy(&b.torso, &facts.ball),
    ];
    let to_ball = |k: usize| facts.ball.xy() - pr[k].torso.xy();
    let to_other = |k: usize| pr[1 - k].torso.xy() - pr[k].torso.xy();
    let avb = [angle_deg(&v[0], &to_ball(0)), angle_deg(&v[1], &to_ball(1))];
    let avo = [
        angle_deg(&v[0], &to_other(0)),
        angle_deg(&v[1], &to_other(1)),
    ];
    let mut charging = [true, true];
    if d[0] < cfg.charging_max_ball_rules_dist || d[1] < cfg.charging_max_ball_rules_dist {
        for k in 0..2 {
            charging[k] = avb[k] >= avo[k]
                && avb[k] >= cfg.charging_min_ball_speed_angle
                && s[k] >= cfg.charging_min_speed;
        }
        if !charging[0] && !charging[1] && (d[0] - d[1]).abs() > cfg.charging_min_delta_dist {
            let far = if d[0] > d[1] { 0 } else { 1 };
            charging[far] = (avo[0] - avo[1]).abs() > cfg.charging_min_delta_ang
                || s[1 - far] < cfg.charging_min_speed;
        }
    }
    for k in 0..2 {
        let mid = (c.xy() + pr[1 - k].torso.xy()) / 2.0;
        let dir = mid - pr[k].torso.xy();
        let u = if dir.norm() > 1e-6 {
            dir / dir.norm()
        } else {
            Vector2::zeros()
        };
        charging[k] = charging[k]
            && s[k] >= cfg.charging_min_speed
            && v[k].dot(&u) >= cfg.charging_min_collision_speed;
    }
    charging
}

/// The charging decision for a pair carried out: the immunity handed over,
/// the charging timers kept or cleared, the foul set on a charger that
/// has no immunity.
fn settle_charging(
    inp: &FoulInputs,
    players: &mut BTreeMap<RobotId, PlayerState>,
    pr: [&RobotFacts; 2],
    st: &[PlayerState; 2],
    c: Vector3<f32>,
    mut charging: [bool; 2],
) {
    let cfg = inp.cfg;
    let facts = inp.facts;
    let immunity = cycles(cfg.charging_immunity_time as f32, inp.dt);
    let min_time = cycles(cfg.charging_collision_min_time, inp.dt);
    let goalie = [
        goalie_in_own_area(cfg, pr[0]),
        goalie_in_own_area(cfg, pr[1]),
    ];
    // Immunity hand-over.
    let mut tsbt = [st[0].since_ball_touch, st[1].since_ball_touch];
    let mut timer = [st[0].charging_timer, st[1].charging_timer];
    for k in 0..2 {
        if !charging[k] {
            continue;
        }
        let o = 1 - k;
        if goalie[k] {
            tsbt[o] = 0;
            timer[o] = timer[0].min(timer[1]);
        } else if st[k].since_ball_touch < immunity {
            tsbt[o] = tsbt[0].min(tsbt[1]);
            timer[o] = timer[0].min(timer[1]);
        }
    }
    if (charging[0] && charging[1]) || dist_xy(&c, &facts.ball) < cfg.charging_min_coll_ball_dist {
        charging = [false, false];
    }
    for k in 0..2 {
        let Some(p) = players.get_mut(&pr[k].id) else {
            continue;
        };
        p.since_ball_touch = tsbt[k];
        p.charging_timer = if charging[0] || charging[1] {
            timer[k]
        } else {
            0
        };
        if charging[k]
            && !goalie[k]
            && timer[k] >= min_time
            && tsbt[k] >= immunity
            && !(inp.keepaway && pr[k].side == Side::Right)
        {
            p.set_foul(FoulKind::Charging);
        }
    }
}
