//! The read phase: each decoded command of an agent checked and queued
//! (`scene`, `init`, `beam`, `say`, carried out in the step by
//! `super::effectors`) or applied at once (hinge speeds, `syn`).

use tracing::{debug, info};

use super::agent::{bad_input, Announcement};
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
        if agent.identity == Announcement::Queued {
            agent.identity = Announcement::Answered;
        }
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
            let done = match cmd {
                Ok(cmd) => self.command(conn, cmd),
                Err(DecodeError::NotACommand(_)) => continue,
                Err(e) => Err(e.to_string()),
            };
            if let Err(why) = done {
                let Some(agent) = self.agents.get_mut(&conn) else {
                    return;
                };
                bad_input(
                    now,
                    conn,
                    agent,
                    &mut self.teamless_log,
                    format_args!("{why}"),
                );
            }
        }
    }

    /// One command of agent `conn`'s message checked and queued or applied;
    /// `Err` says why it was refused (bad input).
    fn command(&mut self, conn: ConnId, cmd: Command) -> Result<(), String> {
        let Some(agent) = self.agents.get_mut(&conn) else {
            return Ok(());
        };
        match cmd {
            Command::Scene(scene) => {
                if agent.robot.is_some() || agent.pending_scene.is_some() {
                    return Err("second `scene` ignored".into());
                }
                agent.pending_scene = Some(scene);
                self.report.status.push((conn, AgentStatus::SceneReceived));
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
                return Err(format!("command before the robot exists dropped: {cmd:?}"));
            }
            Command::Syn => {
                agent.synced = true;
                agent.in_lockstep |= agent.frames_sent > 0;
            }
            Command::Hinge { effector, speed } => {
                let (Some(robot), Some(model)) = (agent.robot, agent.model.clone()) else {
                    return Ok(());
                };
                if !hinge::set_speed(&mut self.world, robot, &model, effector, speed) {
                    return Err(format!(
                        "unknown effector `{}` for robot type {}",
                        effector.name(),
                        model.robot_type
                    ));
                }
            }
            Command::Init(init) => {
                if agent.side.is_some() {
                    return Err("second `init` ignored".into());
                }
                agent.pending_init = Some(init);
            }
            // A `beam` after an `init` that waits for this step is
            // carried out after it, in the order sent.
            Command::Beam(beam) => {
                if agent.side.is_none() && agent.pending_init.is_none() {
                    return Err("`beam` before a successful `init` ignored".into());
                }
                agent.pending_beam = Some(beam);
            }
            Command::Say(msg) => {
                if agent.side.is_none() {
                    return Err("`say` without a team ignored".into());
                }
                if let Err(e) = hear::validate_say(&msg) {
                    return Err(format!("`say` dropped: {e}"));
                }
                self.says.push((conn, msg));
            }
        }
        Ok(())
    }
}
