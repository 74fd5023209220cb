//! The prepare phase: every agent's perceptions collected from the world
//! and written, in the model's perceptor order, by the perceptor modules
//! of `crate::perception`; and the send phase that hands the percepts out.
//! A percept is the S-expression text of one message; the driver frames it
//! for the wire.

use std::sync::Arc;

use bytes::Bytes;
use nalgebra::Vector3;

use super::agent::{Agent, Announcement};
use super::{ConnId, Simulation};
use crate::limited;
use crate::log_limit::LogLimit;
use crate::perception::game_state::{self, GameState};
use crate::perception::hear;
use crate::perception::vision::{self, SeenRobot, VisionInput};
use crate::perception::{foot_force, gyro, hinge_joint, time};
use crate::rules::Side;
use crate::sim::model::PerceptorSlot;

/// The robot body parts vision reports, in `P` order.
const VISIBLE_PARTS: [&str; 5] = vision::PART_NAMES;

/// A robot vision can see, copied out of the agent table for one cycle.
struct VisibleRobot {
    conn: ConnId,
    side: Side,
    team: Arc<str>,
    unum: u8,
    parts: [Option<Vector3<f32>>; 5],
}

impl Simulation {
    /// The percepts built in the previous prepare phase, in connection
    /// order: each the text of one message, never empty, without the
    /// length prefix. The driver reports back which were delivered with
    /// [`Simulation::frame_delivered`].
    pub fn take_outgoing(&mut self) -> Vec<(ConnId, Bytes)> {
        self.agents
            .iter_mut()
            .filter_map(|(c, a)| a.outgoing.take().map(|f| (*c, f)))
            .collect()
    }

    /// A percept was queued for the connection. (One that was not, the
    /// driver drops; an identity announcement it carried is repeated.)
    pub fn frame_delivered(&mut self, conn: ConnId) {
        if let Some(a) = self.agents.get_mut(&conn) {
            a.frames_sent += 1;
            if std::mem::take(&mut a.identity_in_outgoing) {
                a.identity = Announcement::Queued;
            }
        }
    }

    /// Feeds every robot's accelerometer the state after the physics step.
    pub(in crate::sim::cycle) fn update_accelerometers(&mut self) {
        let dt = self.cfg.step;
        for (conn, a) in self.agents.iter_mut() {
            let (Some(robot), Some(model)) = (a.robot, a.model.as_ref()) else {
                continue;
            };
            // A robot the run-away guard rebuilt has lost its velocities.
            if self.world.was_recovered(robot) {
                a.accelerometer.forget_history();
                let now = f64::from(self.server_time);
                limited!(
                    self.client_log
                        .admit_at("robot flung away", now, LogLimit::for_clients),
                    warn!(conn, team = %a.label(), peer = %a.peer, "robot flung away by the solver; rebuilt where it last stood")
                );
            }
            let torso = self.world.part_pose(robot, model.torso);
            a.accelerometer
                .update(&torso.rotation, self.world.torso_linvel(robot), dt);
        }
    }

    /// Builds every agent's next frame: time, GS and hear, then the
    /// model's perceptors in its order (GYR, ACC, HJ, See, FRP).
    pub(in crate::sim::cycle) fn prepare_frames(&mut self) {
        let names = self.visible_robots();
        let owners: Vec<ConnId> = names.iter().map(|n| n.conn).collect();
        let mut seen: Vec<SeenRobot<'_>> = names
            .iter()
            .map(|n| SeenRobot {
                team: &n.team,
                side: n.side,
                unum: n.unum,
                is_self: false,
                parts: n.parts,
            })
            .collect();
        let ball = self.world.ball_position();
        let game_time = self.referee.game_time();
        let mode = self.referee.play_mode();
        let (sl, sr) = self.referee.scores();
        let text = &mut self.text;
        for (conn, a) in self.agents.iter_mut() {
            a.counter += 1;
            a.synced = false;
            a.got_message = false;
            let (Some(robot), Some(model)) = (a.robot, a.model.clone()) else {
                continue;
            };
            if a.closing {
                continue;
            }
            let heading = Heading {
                server_time: self.server_time,
                game_time,
                play_mode: mode.name(),
                score: self.cfg.rules.report_score.then_some((sl, sr)),
                label_messages: self.cfg.rules.label_messages,
            };
            write_heading(text, a, &heading);
            a.budget.tick();
            for slot in &model.perceptor_order {
                match *slot {
                    PerceptorSlot::Gyro => {
                        gyro::write_gyro(text, self.world.torso_angvel_local(robot));
                    }
                    PerceptorSlot::Acc => a.accelerometer.write(text),
                    PerceptorSlot::Joint(j) => hinge_joint::write_hinge_joint(
                        text,
                        &model.joints[j].perceptor,
                        self.world.joint_angle_deg(robot, j),
                    ),
                    PerceptorSlot::Vision => {
                        if self.cfg.vision.is_vision_cycle(a.counter) {
                            let me = owners.iter().position(|c| c == conn);
                            if let Some(i) = me {
                                seen[i].is_self = true;
                            }
                            let input = VisionInput {
                                camera: self.world.part_pose(robot, model.head),
                                side: a.side,
                                calibration: a.calibration,
                                ball,
                                robots: &seen,
                                field: self.cfg.field_geometry(),
                            };
                            vision::write_see(text, &input, &self.cfg.vision, &mut a.rng);
                            if let Some(i) = me {
                                seen[i].is_self = false;
                            }
                        }
                    }
                    PerceptorSlot::Force(s) => {
                        if let Some((c, f)) = self.world.foot_force(robot, s) {
                            foot_force::write_foot_force(text, &model.foot_sensors[s].name, c, f);
                        }
                    }
                }
            }
            a.outgoing = (!text.is_empty()).then(|| Bytes::copy_from_slice(text.as_bytes()));
        }
    }

    /// The robots vision can see: those with a team. The names are
    /// cloned out so the agents can be updated while they are seen.
    fn visible_robots(&self) -> Vec<VisibleRobot> {
        let mut names: Vec<VisibleRobot> = Vec::new();
        for (conn, a) in &self.agents {
            let (Some(side), Some(team), Some(robot), Some(model)) =
                (a.side, a.team.clone(), a.robot, a.model.as_ref())
            else {
                continue;
            };
            if a.closing {
                continue;
            }
            let mut parts = [None; 5];
            for (slot, name) in parts.iter_mut().zip(VISIBLE_PARTS) {
                *slot = model
                    .part_by_name(name)
                    .map(|p| self.world.part_pose(robot, p).translation.vector);
            }
            names.push(VisibleRobot {
                conn: *conn,
                side,
                team,
                unum: a.unum,
                parts,
            });
        }
        names
    }
}

/// What every frame of a cycle starts with.
struct Heading {
    server_time: f32,
    game_time: f32,
    play_mode: &'static str,
    /// The score, when `report_score` is on.
    score: Option<(u32, u32)>,
    /// `label_messages`: heard messages carry the sender's team.
    label_messages: bool,
}

/// A frame's time, game state and what the agent heard (`text` cleared
/// first).
fn write_heading(text: &mut String, a: &mut Agent, h: &Heading) {
    text.clear();
    time::write_time(text, h.server_time);
    let identity = if a.identity == Announcement::Pending {
        a.side.map(|side| (a.unum, side))
    } else {
        None
    };
    a.identity_in_outgoing = identity.is_some();
    let state = GameState {
        identity,
        score: h.score,
        game_time: h.game_time,
        play_mode: h.play_mode,
    };
    game_state::write_game_state(text, &state);
    let heard = std::mem::take(&mut a.heard);
    let label = |t: &Arc<str>| -> Option<Arc<str>> { h.label_messages.then(|| t.clone()) };
    if let Some(msg) = &heard.own_copy {
        let own = a.team.as_ref().and_then(label);
        hear::write_hear(text, own.as_deref(), h.game_time, None, msg);
    }
    for (team, dir, msg) in [&heard.team, &heard.opponent].into_iter().flatten() {
        hear::write_hear(text, label(team).as_deref(), h.game_time, Some(*dir), msg);
    }
}
