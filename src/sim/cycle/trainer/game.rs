//! Trainer commands on the game: kick-off, play mode, game time, score,
//! `killsim`.

use tracing::info;

use crate::rules::{PlayMode, Side};
use crate::sim::cycle::Simulation;

impl Simulation {
    /// `(kickOff Left|Right|None)`.
    pub(super) fn trainer_kick_off(&mut self, side: Option<Side>) {
        self.referee.kick_off(side, &mut self.rng);
    }

    /// `(playMode NAME)`.
    pub(super) fn trainer_play_mode(&mut self, mode: PlayMode) {
        self.referee.set_play_mode(mode);
    }

    /// `(time T)`: sets the game time (finite, not negative).
    pub(super) fn trainer_time(&mut self, t: f32) {
        if t.is_finite() && t >= 0.0 {
            self.referee.set_game_time(t);
        }
    }

    /// `(score L R)`.
    pub(super) fn trainer_score(&mut self, left: u32, right: u32) {
        self.referee.set_score(left, right);
    }

    /// `(killsim)`: the server stops after this read phase.
    pub(super) fn trainer_kill_sim(&mut self) {
        info!("killsim from a monitor: shutting down");
        self.report.quit = true;
    }
}
