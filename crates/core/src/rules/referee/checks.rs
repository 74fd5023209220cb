//! Checks made every cycle: half time and the end of the game, kick-off
//! permission, keep-away and the penalty shoot-out.

use super::*;

impl Referee {
    /// Half time and game over (docs/protocol.md#match-structure); returns
    /// whether the sides were swapped.
    pub(super) fn check_half_time(&mut self, cycle: &mut Cycle) -> bool {
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

    /// The kick-off rule of docs/protocol.md#goals: the kick-off team may score
    /// again once an opponent touched the ball or a team-mate touched it
    /// outside the centre circle.
    pub(super) fn check_kick_off_permission(&mut self, facts: &WorldFacts) {
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

    /// Keepaway (docs/protocol.md#penalty-shootout-and-keepaway): GameOver when
    /// the ball leaves the shrinking box or a right-team agent touches the
    /// ball.
    pub(super) fn check_keepaway(&mut self, facts: &WorldFacts) {
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

    /// Penalty shootout (docs/protocol.md#penalty-shootout-and-keepaway): a
    /// right-team player leaving the right penalty area gives the left team a
    /// goal.
    pub(super) fn check_shootout(&mut self, facts: &WorldFacts) {
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
}
