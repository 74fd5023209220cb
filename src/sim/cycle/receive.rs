//! The read phase: each decoded command of an agent checked and queued
//! (`scene`, `init`, `beam`, `say`, carried out in the step by
//! `super::effectors`) or applied at once (hinge speeds, `syn`).

use tracing::{debug, info};

use super::agent::bad_input;
use super::effectors::hinge;
use super::{AgentStatus, ConnId, Simulation};
use crate::command::{Command, DecodeError};
use crate::perception::hear;
use crate::sexp::ParseError;

impl Simulation {
    /// One decoded message of an agent (read phase). Hinge speeds are set
    /// at once, `say` is queued for this cycle's broadcast, `syn` marks the
    /// agent synced, `scene`/`init`/`beam` wait for the physics step.
    pub fn receive(
        &mut self,
        conn: ConnId,
        commands: Vec<Result<Command, DecodeError>>,
        parse_error: Option<ParseError>,
    ) {
        let now = self.server_time;
        let Some(agent) = self.agents.get_mut(&conn) else {
            return;
        };
        if agent.closing {
            return;
        }
        agent.got_message = true;
        if agent.left_behind {
            info!(
                conn,
                team = agent.team.as_deref().unwrap_or("-"),
                unum = agent.unum,
                "agent answers again; back in the sync lockstep"
            );
            agent.left_behind = false;
        }
        if let Some(e) = parse_error {
            bad_input(
                now,
                conn,
                agent,
                &mut self.teamless_log,
                format_args!("malformed S-expression: {e} (rest of message dropped)"),
            );
        }
        for cmd in commands {
            let cmd = match cmd {
                Ok(c) => c,
                Err(DecodeError::NotACommand(_)) => continue,
                Err(e) => {
                    bad_input(
                        now,
                        conn,
                        agent,
                        &mut self.teamless_log,
                        format_args!("{e}"),
                    );
                    continue;
                }
            };
            match cmd {
                Command::Scene(scene) => {
                    if agent.robot.is_some() || agent.pending_scene.is_some() {
                        bad_input(
                            now,
                            conn,
                            agent,
                            &mut self.teamless_log,
                            format_args!("second `scene` ignored"),
                        );
                    } else {
                        agent.pending_scene = Some(scene);
                        self.report.status.push((conn, AgentStatus::SceneReceived));
                    }
                }
                // Every other command needs a robot. A `(syn)` sent with `scene` (RoboNewbie and replay tools
                // do) counts for no frame, but says the agent runs in
                // lockstep: its first frame is waited for.
                Command::Syn if agent.robot.is_none() => {
                    debug!(
                        conn,
                        "(syn) before the robot exists: lockstep from the first frame"
                    );
                    agent.in_lockstep = true;
                }
                _ if agent.robot.is_none() => {
                    bad_input(
                        now,
                        conn,
                        agent,
                        &mut self.teamless_log,
                        format_args!("command before the robot exists dropped: {cmd:?}"),
                    );
                }
                Command::Syn => {
                    agent.synced = true;
                    agent.in_lockstep |= agent.frames_sent > 0;
                }
                Command::Hinge { effector, speed } => {
                    let (Some(robot), Some(model)) = (agent.robot, agent.model.clone()) else {
                        continue;
                    };
                    if !hinge::set_speed(&mut self.world, robot, &model, effector, speed) {
                        bad_input(
                            now,
                            conn,
                            agent,
                            &mut self.teamless_log,
                            format_args!(
                                "unknown effector `{}` for robot type {}",
                                effector.name(),
                                model.robot_type
                            ),
                        );
                    }
                }
                Command::Init(init) => {
                    if agent.side.is_some() {
                        bad_input(
                            now,
                            conn,
                            agent,
                            &mut self.teamless_log,
                            format_args!("second `init` ignored"),
                        );
                    } else {
                        agent.pending_init = Some(init);
                    }
                }
                // A `beam` after an `init` that waits for this step is
                // carried out after it, in the order sent.
                Command::Beam(beam) => {
                    if agent.side.is_none() && agent.pending_init.is_none() {
                        bad_input(
                            now,
                            conn,
                            agent,
                            &mut self.teamless_log,
                            format_args!("`beam` before a successful `init` ignored"),
                        );
                    } else {
                        agent.pending_beam = Some(beam);
                    }
                }
                Command::Say(msg) => {
                    if agent.side.is_none() {
                        bad_input(
                            now,
                            conn,
                            agent,
                            &mut self.teamless_log,
                            format_args!("`say` without a team ignored"),
                        );
                    } else if let Err(e) = hear::validate_say(&msg) {
                        bad_input(
                            now,
                            conn,
                            agent,
                            &mut self.teamless_log,
                            format_args!("`say` dropped: {e}"),
                        );
                    } else {
                        self.says.push((conn, msg));
                    }
                }
            }
        }
    }
}
