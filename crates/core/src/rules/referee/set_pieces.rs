//! The stopped-ball modes: before kick-off, kick-off, goal pause, set
//! pieces (kick-in, corner, goal kick, free kicks) and the dropped ball.

use nalgebra::Vector3;
use rand::Rng;

use super::*;

impl Referee {
    pub(super) fn mode_logic(
        &mut self,
        facts: &WorldFacts,
        cycle: &mut Cycle,
        dt: f32,
        rng: &mut impl Rng,
    ) {
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

    pub(super) fn centre_ball(&self, cycle: &mut Cycle) {
        cycle.decisions.push(Decision::MoveBall {
            pos: Vector3::new(0.0, 0.0, self.cfg.ball_radius),
            vel: Vector3::zeros(),
        });
    }

    /// BeforeKickOff (docs/protocol.md#match-structure): ball held on the
    /// centre spot, players put back into their own half, the automatic
    /// kick-off timer.
    pub(super) fn before_kick_off(
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

    /// The kick-off clearance (docs/protocol.md#referee-moves) for the
    /// kicking team `k`.
    pub(super) fn kick_off_clearance(&self, k: Side, cycle: &mut Cycle, rng: &mut impl Rng) {
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

    /// The goal pause (docs/protocol.md#goals): kick-off clearance for the
    /// conceding team, then its kick-off.
    pub(super) fn goal_pause(&mut self, scorer: Side, cycle: &mut Cycle, rng: &mut impl Rng) {
        let conceding = scorer.opponent();
        self.kick_off_clearance(conceding, cycle, rng);
        if self.mode_reached(self.cfg.goal_pause_time) {
            self.centre_ball(cycle);
            self.start_kick_off(conceding);
        }
    }

    /// A kick-off for team `k` (docs/protocol.md#set-pieces).
    pub(super) fn kick_off_mode(
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

    /// One cycle of a set piece (docs/protocol.md#set-pieces).
    pub(super) fn set_piece(
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

    /// The drop-ball spot for a start position (docs/protocol.md#drop-ball):
    /// out of the penalty areas and onto the field.
    pub(super) fn drop_spot(&self, pos: Vector3<f32>) -> Vector3<f32> {
        let cfg = &self.cfg;
        let mut p = cfg.out_of_penalty_areas(pos);
        let hw = cfg.half_width();
        if p.y.abs() >= hw {
            p.y = (hw - cfg.ball_radius).copysign(p.y);
        }
        p.z = cfg.ball_radius;
        p
    }

    /// Drop ball: clear both teams (random order) from around the spot.
    pub(super) fn drop_clearance(&self, spot: Vector3<f32>, cycle: &mut Cycle, rng: &mut impl Rng) {
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

    /// Drop ball: the kick checks end and play goes on.
    pub(super) fn finish_drop(&mut self, spot: Vector3<f32>) {
        self.spot = spot;
        self.kick = None;
        self.set_mode(PlayMode::PlayOn);
    }

    /// Drop ball at `pos`, within a cycle (docs/protocol.md#drop-ball).
    pub(super) fn do_drop_ball(
        &mut self,
        pos: Vector3<f32>,
        cycle: &mut Cycle,
        rng: &mut impl Rng,
    ) {
        let p = self.drop_spot(pos);
        cycle.decisions.push(Decision::MoveBall {
            pos: p,
            vel: Vector3::zeros(),
        });
        self.drop_clearance(p, cycle, rng);
        self.finish_drop(p);
    }

    pub(super) fn award(&mut self, mode: PlayMode, spot: Vector3<f32>) {
        self.spot = spot;
        self.set_mode(mode);
    }

    pub(super) fn award_goal_kick(&mut self, defender: Side) {
        let spot = self.cfg.goal_kick_spot(defender);
        self.award(
            by_side(defender, PlayMode::GoalKickLeft, PlayMode::GoalKickRight),
            spot,
        );
    }

    pub(super) fn award_corner(&mut self, attacker: Side, ball_y: f32) {
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
}
