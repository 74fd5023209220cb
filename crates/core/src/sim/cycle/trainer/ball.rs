//! Trainer commands on the ball: `(ball (pos ..) (vel ..))` and
//! `(dropBall)`.

use nalgebra::Vector3;

use crate::sim::cycle::Simulation;

impl Simulation {
    /// `(dropBall)`: the referee's drop ball where the ball is.
    pub(super) fn trainer_drop_ball(&mut self) {
        let facts_ball = self.world.ball_position();
        let d = self.referee.drop_ball(facts_ball);
        self.apply_decisions(d);
    }

    /// `(ball (pos x y z) (vel x y z))`: either part may be missing
    /// (non-finite values are left out by `decide`). The position is clamped into the
    /// trainer's area with the ball resting on the ground at the lowest
    /// (see `bounds`).
    pub(super) fn trainer_ball(&mut self, pos: Option<Vector3<f32>>, vel: Option<Vector3<f32>>) {
        if let Some(p) = pos {
            let at = self.trainer_clamp(p, self.cfg.rules.ball_radius);
            if at != p {
                self.log_trainer_clamp("ball pos", None, p, at);
            }
            self.world.set_ball_position(at);
        }
        if let Some(v) = vel {
            self.world.set_ball_velocity(v);
        }
    }
}
