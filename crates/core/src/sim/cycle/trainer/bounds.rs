//! Where a trainer may put the ball or a robot: inside the field lines
//! plus the rules' `BorderSize` plus [`TRAINER_MARGIN`], no higher than
//! [`TRAINER_MAX_HEIGHT`], and never into the ground (the ball at least its
//! radius up, a robot with its lowest part at ground level or above). A
//! position outside is clamped to the nearest point inside, with a log
//! line: the reference takes any position, and a body put under the floor
//! or far away ends up pushed around by the solver.

use crate::limited;
use nalgebra::Vector3;

use crate::sim::cycle::{ConnId, Simulation};

/// How far beyond the field lines (and the rules' `BorderSize`) the
/// trainer may put a body (m): room for the referee's own places outside
/// the lines (0.5 m past the touch line) and the row where new robots wait
/// (up to 4.5 m past it), well inside the border walls (24.5 m from the
/// centre).
pub const TRAINER_MARGIN: f32 = 5.0;

/// The highest the trainer may put a body (m, ball centre or torso).
pub const TRAINER_MAX_HEIGHT: f32 = 10.0;

impl Simulation {
    /// `p` with x and y clamped into the trainer's area and z into
    /// `[min_z, TRAINER_MAX_HEIGHT]`.
    pub(super) fn trainer_clamp(&self, p: Vector3<f32>, min_z: f32) -> Vector3<f32> {
        let rules = &self.cfg.rules;
        let half_length = rules.field_length / 2.0 + rules.border_size + TRAINER_MARGIN;
        let half_width = rules.field_width / 2.0 + rules.border_size + TRAINER_MARGIN;
        Vector3::new(
            p.x.clamp(-half_length, half_length),
            p.y.clamp(-half_width, half_width),
            p.z.clamp(min_z.min(TRAINER_MAX_HEIGHT), TRAINER_MAX_HEIGHT),
        )
    }

    /// Logs (thinned) that a trainer position was clamped; `robot` names
    /// the robot's connection, `None` for the ball.
    pub(super) fn log_trainer_clamp(
        &mut self,
        what: &'static str,
        robot: Option<ConnId>,
        asked: Vector3<f32>,
        applied: Vector3<f32>,
    ) {
        let agent = robot.and_then(|c| self.agents.get(&c));
        limited!(
            self.trainer_log.admit_at(f64::from(self.server_time)),
            warn!(
                command = what,
                conn = robot,
                team = agent.and_then(|a| a.team.as_deref()).unwrap_or("-"),
                unum = agent.map(|a| a.unum),
                asked = ?(asked.x, asked.y, asked.z),
                applied = ?(applied.x, applied.y, applied.z),
                "trainer position clamped into the field area (field + {TRAINER_MARGIN} m, above the ground, at most {TRAINER_MAX_HEIGHT} m high)"
            )
        );
    }
}
