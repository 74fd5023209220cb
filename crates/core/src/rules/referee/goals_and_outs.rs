//! Play on: goals, the ball leaving the field, and who is awarded what.

use nalgebra::Vector3;
use rand::Rng;

use super::*;

impl Referee {
    /// PlayOn: double touch (docs/protocol.md#set-pieces), goals
    /// (docs/protocol.md#goals), ball out (docs/protocol.md#ball-out-of-play).
    pub(super) fn play_on(&mut self, facts: &WorldFacts, cycle: &mut Cycle, rng: &mut impl Rng) {
        // Double touch.
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

        // Goals.
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

        // Ball out.
        let r = cfg.ball_radius;
        if cfg.ball_on_field(&facts.ball) {
            self.spot = Vector3::new(facts.ball.x, facts.ball.y, r);
            return;
        }
        let Some(t) = self.last_touch else {
            // Reference quirk (docs/protocol.md#reference-quirks): the
            // reference does nothing when nobody has touched the ball yet.
            // We drop the ball at its last on-field position instead, so
            // the game cannot get stuck.
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
