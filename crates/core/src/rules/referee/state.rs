//! Per-cycle bookkeeping: the cycle's moves, players, touches, mode
//! changes and the kick-off team.

use rand::Rng;

use super::*;

impl Referee {
    pub(super) fn new_cycle(&self, facts: &WorldFacts) -> Cycle {
        let players = &self.players;
        Cycle::new(&self.cfg, facts.robots, |id| {
            players.get(&id).is_some_and(|p| p.enforceable())
        })
    }

    /// Updates the "moved recently" timers after a cycle's moves.
    pub(super) fn finish_moves(&mut self, cycle: &Cycle) {
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
    pub(super) fn sync_players(&mut self, facts: &WorldFacts) {
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

    pub(super) fn robot<'f>(facts: &'f WorldFacts, id: RobotId) -> Option<&'f RobotFacts> {
        facts.robots.iter().find(|r| r.id == id)
    }

    pub(super) fn record_touches(&mut self, facts: &WorldFacts) {
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
    pub(super) fn mode_over(&self, secs: f32) -> bool {
        self.mode_time > f64::from(secs) + MODE_EPS
    }

    /// Mode time >= `secs`.
    pub(super) fn mode_reached(&self, secs: f32) -> bool {
        self.mode_time >= f64::from(secs) - MODE_EPS
    }

    pub(super) fn set_mode(&mut self, mode: PlayMode) {
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
        // The shootout switches itself off once Goal_Left happens.
        if mode == PlayMode::GoalLeft {
            self.shootout = false;
        }
    }

    pub(super) fn choose_kick_off_team(&mut self, rng: &mut impl Rng) -> Side {
        let first = !self.half_kicked_off;
        let team = match (first, self.next_half_team) {
            (true, Some(team)) => team,
            // Reference quirk kept (docs/protocol.md#reference-quirks): a later
            // team-less kick-off in the same half is a coin toss.
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

    pub(super) fn start_kick_off(&mut self, team: Side) {
        self.kick_off_team = Some(team);
        self.set_mode(kick_off_mode(team));
    }
}
