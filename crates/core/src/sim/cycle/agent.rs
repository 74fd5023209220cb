//! One agent connection's protocol state, its arrival and departure, and
//! the thinned log of its bad input.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use nalgebra::Vector3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tracing::debug;

use super::{ConnId, Simulation};
use crate::command::{Beam, Init, Scene};
use crate::limited;
use crate::log_limit::LogLimit;
use crate::perception::accelerometer::Accelerometer;
use crate::perception::hear::HearBudget;
use crate::rules::Side;
use crate::sim::model::RobotModel;
use crate::sim::world::RobotHandle;

/// Bad-input log lines per agent before they are thinned out to one per
/// second of server time.
pub(super) const LOUD_ERRORS: u32 = 20;

/// Messages an agent heard during the read phase, reported in the next
/// frame (self copy, teammate, opponent).
#[derive(Debug, Default, Clone)]
pub(super) struct Heard {
    pub(super) own_copy: Option<String>,
    pub(super) team: Option<(Arc<str>, f32, String)>,
    pub(super) opponent: Option<(Arc<str>, f32, String)>,
}

/// The announcement of an agent's number in its GS, in the order its
/// states are passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Announcement {
    /// No `init` has succeeded: nothing to announce.
    NotJoined,
    /// The next GS carries it, repeated until a frame carrying it has been
    /// handed to the connection (a frame dropped because the agent is not
    /// reading must not take it along: clients wait for it before they
    /// answer).
    Pending,
    /// A frame carrying it has been queued; the agent has sent nothing
    /// since. It may not have read that frame yet: frames sent before it
    /// can still be queued ahead of it.
    Queued,
    /// The agent has sent a message since it was queued.
    Answered,
}

/// One agent connection's protocol state.
#[derive(Debug)]
pub(super) struct Agent {
    pub(super) peer: SocketAddr,
    pub(super) robot: Option<RobotHandle>,
    pub(super) model: Option<Arc<RobotModel>>,
    pub(super) side: Option<Side>,
    pub(super) team: Option<Arc<str>>,
    pub(super) unum: u8,
    /// Where the announcement of the agent's number stands (the GS's
    /// `(unum n) (team side)`, sent once per connection).
    pub(super) identity: Announcement,
    /// The prepared frame carries the identity announcement.
    pub(super) identity_in_outgoing: bool,
    /// Perception builds since the connection was accepted (vision phase).
    pub(super) counter: u64,
    /// Frames actually handed to the connection.
    pub(super) frames_sent: u64,
    /// `(syn)` received since the last prepare phase.
    pub(super) synced: bool,
    /// Any message received since the last prepare phase (answers a frame
    /// before the agent is in lockstep).
    pub(super) got_message: bool,
    /// The agent has answered a frame with `(syn)`, or sent one with its
    /// `scene`: its grace period is over, every later frame waits for its
    /// answer.
    pub(super) in_lockstep: bool,
    /// The sync timeout ran out waiting for this agent: the cycles run
    /// without it until it sends something again.
    pub(super) left_behind: bool,
    /// The connection has gone; the robot leaves in the next step.
    pub(super) closing: bool,
    /// A scene request that failed or was refused; excluded from the sync
    /// barrier (deviation from the reference, which deadlocks).
    pub(super) scene_failed: bool,
    pub(super) pending_scene: Option<Scene>,
    pub(super) pending_init: Option<Init>,
    pub(super) pending_beam: Option<Beam>,
    /// Percept text built in the prepare phase, sent in the next send phase.
    pub(super) outgoing: Option<Bytes>,
    pub(super) heard: Heard,
    pub(super) budget: HearBudget,
    /// Vision calibration offset, drawn once per robot.
    pub(super) calibration: Vector3<f32>,
    /// This agent's noise stream, seeded from the server RNG at connect,
    /// so frames can be built in any order (or in parallel) reproducibly.
    pub(super) rng: ChaCha8Rng,
    /// The ACC perceptor's state.
    pub(super) accelerometer: Accelerometer,
    /// Bad-input events seen.
    pub(super) errors: u64,
    /// Thins this agent's bad-input lines.
    pub(super) error_log: LogLimit,
}

impl Agent {
    pub(super) fn label(&self) -> String {
        match (&self.team, self.side) {
            (Some(t), Some(_)) => format!("{t} {}", self.unum),
            _ => String::new(),
        }
    }

    /// Whether the sync barrier must wait for this agent.
    pub(super) fn in_barrier(&self) -> bool {
        !self.closing
            && !self.scene_failed
            && (self.robot.is_some() || self.pending_scene.is_some())
    }
}

impl Simulation {
    /// A new agent connection (read phase).
    pub fn connect(&mut self, conn: ConnId, peer: SocketAddr) {
        let rng = ChaCha8Rng::seed_from_u64(self.rng.gen());
        self.agents.insert(
            conn,
            Agent {
                peer,
                robot: None,
                model: None,
                side: None,
                team: None,
                unum: 0,
                identity: Announcement::NotJoined,
                identity_in_outgoing: false,
                counter: 0,
                frames_sent: 0,
                synced: false,
                got_message: false,
                in_lockstep: false,
                left_behind: false,
                closing: false,
                scene_failed: false,
                pending_scene: None,
                pending_init: None,
                pending_beam: None,
                outgoing: None,
                heard: Heard::default(),
                budget: HearBudget::new(),
                calibration: Vector3::zeros(),
                rng,
                accelerometer: Accelerometer::default(),
                errors: 0,
                error_log: LogLimit::new(LOUD_ERRORS, Duration::from_secs(1)),
            },
        );
        debug!(conn, %peer, "agent registered");
    }

    /// The connection has gone (read phase); the robot leaves in the next
    /// step, its number is released, nothing else changes.
    pub fn disconnect(&mut self, conn: ConnId, reason: &str) {
        if let Some(a) = self.agents.get_mut(&conn) {
            // Agents that never joined a team share one thinned stream of
            // lines (the network side logs their connection too), so a
            // connection flood cannot flood the log.
            let now = f64::from(self.server_time);
            if a.side.is_some() {
                limited!(
                    self.client_log
                        .admit_at("agent left", now, LogLimit::for_team_changes),
                    info!(conn, peer = %a.peer, team = ?a.team, unum = a.unum, %reason, "agent left")
                );
            } else if a.robot.is_none() {
                debug!(conn, peer = %a.peer, %reason, "agent without a robot left");
            } else {
                limited!(
                    self.robot_log.admit_at(now),
                    info!(conn, peer = %a.peer, %reason, "agent without a team left")
                );
            }
            a.closing = true;
        }
    }

    /// Takes out the robots of connections that have gone: the robot
    /// leaves the world, its number is released, a selection on it cleared.
    pub(in crate::sim::cycle) fn remove_departed(&mut self) {
        let gone: Vec<ConnId> = self
            .agents
            .iter()
            .filter(|(_, a)| a.closing)
            .map(|(c, _)| *c)
            .collect();
        for conn in gone {
            if let Some(a) = self.agents.remove(&conn) {
                if let Some(robot) = a.robot {
                    self.world.remove_robot(robot);
                    self.structure_version += 1;
                }
                if let Some(side) = a.side {
                    self.teams.leave(side, a.unum);
                }
                if self.selected == Some(conn) {
                    self.selected = None;
                }
            }
        }
    }
}

/// Logs one bad command of an agent. The lines are thinned per agent in a
/// team and over all agents without one (on server time `now`), so a
/// flood of bad input cannot flood the log; every
/// line says how many bad commands the agent has sent in all and how many
/// lines were left out before it.
pub(super) fn bad_input(
    now: f32,
    conn: ConnId,
    agent: &mut Agent,
    teamless_log: &mut LogLimit,
    what: std::fmt::Arguments<'_>,
) {
    agent.errors += 1;
    // Agents without a team share one limit: a client opening connection
    // after connection must not get a fresh burst of lines each time.
    let limit = if agent.side.is_some() {
        &mut agent.error_log
    } else {
        teamless_log
    };
    limited!(
        limit.admit_at(f64::from(now)),
        warn!(
            conn,
            peer = %agent.peer,
            team = agent.team.as_deref().unwrap_or("-"),
            unum = agent.unum,
            count = agent.errors,
            "bad input: {what}"
        )
    );
}
