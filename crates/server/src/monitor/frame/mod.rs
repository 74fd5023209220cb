//! Monitor messages built from a [`WorldSnapshot`]: the full state
//! (`RSG`) and the per-consumer delta (`RDS`) of docs/protocol.md#monitor-message-layout.
//!
//! A [`FrameBuilder`] holds what never changes (environment predicates and the
//! static scene, serialised once). A [`ConsumerState`] remembers what one
//! consumer (one monitor connection, or the log file) last received, so that
//! every consumer gets every change exactly once
//! (docs/protocol.md#game-state-predicates). Building is pure: no I/O, no
//! clock, no hashing, so identical snapshots give identical bytes.
//!
//! A full state is needed when the robots shown change (one arrives or
//! leaves, joins a team, changes side): only then, not on every change of
//! the simulation's own bookkeeping. The log shows only robots in a team
//! ([`ConsumerState::teams_only`]), and may put a full state off with
//! [`FrameBuilder::write_delta_keeping_scene`].

use std::sync::Arc;

use nalgebra::Isometry3;

mod emit;
mod game;
mod graph;
mod robot;

use emit::Emitter;
use game::{env_predicates, write_game};
use graph::{ball_node, dynamic_scene, static_scene};
use robot::{part_slots, robot_nodes};

use super::config::FieldParams;
use crate::rules::{PlayMode, Side};
use crate::sim::snapshot::{RobotSnapshot, WorldSnapshot};

/// Which header a built message carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// `(RSG 0 1)`: environment, all game state, the whole scene.
    Full,
    /// `(RDS 0 1)`: changes since this consumer's last message.
    Delta,
}

/// A transform entry differing by more than this from the last sent value
/// makes a delta carry the `SLT` (docs/protocol.md#scene-nodes-and-deltas).
pub const MOVE_THRESHOLD: f32 = 0.005;

type Mat = [f32; 16];

const IDENTITY: Mat = translation(0.0, 0.0, 0.0);
/// The fixed mesh rotation of the field, skybox, Nao torso and head (`Rm`).
const RM: Mat = [
    -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0,
];

const fn translation(x: f32, y: f32, z: f32) -> Mat {
    [
        1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, x, y, z, 1.0,
    ]
}

fn isometry_matrix(pose: &Isometry3<f32>) -> Mat {
    let h = pose.to_homogeneous();
    let mut m = [0.0; 16];
    m.copy_from_slice(h.as_slice());
    m
}

/// What one consumer last received: the structure it saw in its last full
/// state, the matrices and visibilities of every dynamic node, the
/// game-state values and the number of foul records.
#[derive(Debug, Clone, Default)]
pub struct ConsumerState {
    /// Structure of the last full state; `None` before the first message.
    structure: Option<Structure>,
    /// The robots of the last full state as they were then (the shape of
    /// the scene a delta must fit).
    shown: Vec<RobotSnapshot>,
    /// Robots without a team are left out of the scene.
    teams_only: bool,
    matrices: Vec<Mat>,
    visible: Vec<bool>,
    game: SentGame,
    fouls_sent: usize,
    fouls_started: bool,
    force_full: bool,
    messages: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct SentGame {
    half: u8,
    score_left: u32,
    score_right: u32,
    play_mode: Option<PlayMode>,
    team_left: Option<Arc<str>>,
    team_right: Option<Arc<str>>,
}

/// What decides the tree shape and the robot materials: the robots shown,
/// in order, with their identity. A change of any of it needs a full
/// state (docs/protocol.md#full-states).
#[derive(Debug, Clone, PartialEq)]
struct Structure {
    robots: Vec<RobotKey>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct RobotKey {
    id: u32,
    side: Option<Side>,
    unum: u8,
    robot_type: u8,
    parts: u32,
}

impl ConsumerState {
    /// A consumer that has received nothing yet: its first message will be
    /// a full state.
    pub fn new() -> Self {
        Self::default()
    }

    /// A consumer shown only the robots in a team (the match log): a robot
    /// joins its scene when its agent joins a team, so a robot whose
    /// `init` fails, or that never sends one, never changes it. Such a
    /// robot stands off the field and, as for the players' vision
    /// (docs/protocol.md#players-in-view), is no part of the match.
    pub fn teams_only() -> Self {
        ConsumerState {
            teams_only: true,
            ..Self::default()
        }
    }

    fn shows(&self, r: &RobotSnapshot) -> bool {
        !self.teams_only || r.side.is_some()
    }

    /// Makes the next message a full state (`(reqfullstate)`).
    pub fn request_full_state(&mut self) {
        self.force_full = true;
    }

    /// Messages built for this consumer so far.
    pub fn messages(&self) -> u64 {
        self.messages
    }

    /// Whether the next message for `snap` must be a full state: first
    /// message, requested, or the robots shown changed (one arrived, left,
    /// was initialised or changed side).
    pub fn needs_full_state(&self, snap: &WorldSnapshot) -> bool {
        match &self.structure {
            None => true,
            Some(s) => self.force_full || !s.matches(snap, self.teams_only),
        }
    }
}

impl Structure {
    fn matches(&self, snap: &WorldSnapshot, teams_only: bool) -> bool {
        let mut shown = snap
            .robots
            .iter()
            .filter(|r| !teams_only || r.side.is_some());
        self.robots
            .iter()
            .all(|k| shown.next().is_some_and(|r| *k == RobotKey::of(r)))
            && shown.next().is_none()
    }
}

impl RobotKey {
    fn of(r: &RobotSnapshot) -> RobotKey {
        RobotKey {
            id: r.id,
            side: r.side,
            unum: r.unum,
            robot_type: r.robot_type,
            parts: part_slots(r).1,
        }
    }
}

/// Serialises monitor messages for one field configuration. Cheap to share
/// (`Arc`) between connections; all per-consumer state is in
/// [`ConsumerState`].
#[derive(Debug, Clone)]
pub struct FrameBuilder {
    field: FieldParams,
    env_predicates: String,
    static_full: String,
    static_delta: String,
}

impl FrameBuilder {
    /// Serialises the environment predicates and the static scene (nodes
    /// 1–35, docs/protocol.md#monitor-scene-content) once for these field
    /// values.
    pub fn new(field: &FieldParams) -> Self {
        let mut env = String::with_capacity(1024);
        env_predicates(field, &mut env);
        let mut scratch = ConsumerState::new();
        let mut static_full = String::with_capacity(8 * 1024);
        let mut e = Emitter::new(&mut static_full, &mut scratch, true);
        static_scene(field, &mut e);
        let mut static_delta = String::with_capacity(1024);
        let mut e = Emitter::new(&mut static_delta, &mut scratch, false);
        static_scene(field, &mut e);
        FrameBuilder {
            field: field.clone(),
            env_predicates: env,
            static_full,
            static_delta,
        }
    }

    /// The field values this builder announces.
    pub fn field(&self) -> &FieldParams {
        &self.field
    }

    /// Appends the next message for this consumer to `out` (a full state
    /// when [`ConsumerState::needs_full_state`], else a delta) and records
    /// what was sent. Returns the kind written.
    pub fn write(
        &self,
        state: &mut ConsumerState,
        snap: &WorldSnapshot,
        out: &mut String,
    ) -> FrameKind {
        if state.needs_full_state(snap) {
            self.write_full(state, snap, "", out);
            FrameKind::Full
        } else {
            self.write_delta(state, snap, out);
            FrameKind::Delta
        }
    }

    /// Appends a full state to `out` and resets the consumer to it.
    /// `extra_predicates` is inserted verbatim after `play_modes` (for
    /// example the log's `(seed N)`); it must be empty or a sequence of
    /// well-formed `(name value ...)` items.
    pub fn write_full(
        &self,
        state: &mut ConsumerState,
        snap: &WorldSnapshot,
        extra_predicates: &str,
        out: &mut String,
    ) {
        let mut finite = true;
        out.push('(');
        out.push_str(&self.env_predicates);
        out.push_str(extra_predicates);
        state.game = SentGame::default();
        finite &= write_game(state, snap, true, out);
        out.push_str(")(RSG 0 1)(");
        out.push_str(&self.static_full);
        state.matrices.clear();
        state.visible.clear();
        let mut shown = std::mem::take(&mut state.shown);
        shown.clear();
        shown.extend(snap.robots.iter().filter(|r| state.shows(r)).cloned());
        {
            let mut e = Emitter::new(out, state, true);
            dynamic_scene(&self.field, snap, shown.iter(), &mut e);
            finite &= e.finite;
        }
        out.push(')');
        state.structure = Some(Structure {
            robots: shown.iter().map(RobotKey::of).collect(),
        });
        state.shown = shown;
        state.force_full = false;
        state.messages += 1;
        report_nonfinite(finite, snap);
    }

    /// The start every delta shares: the game state, the scene header and
    /// the unchanged static nodes. Returns whether every number was finite.
    fn begin_delta(
        &self,
        state: &mut ConsumerState,
        snap: &WorldSnapshot,
        out: &mut String,
    ) -> bool {
        out.push('(');
        let finite = write_game(state, snap, false, out);
        out.push_str(")(RDS 0 1)(");
        out.push_str(&self.static_delta);
        finite
    }

    /// Appends a delta against what this consumer last received. Falls
    /// back to a full state when the structure no longer matches (a delta
    /// of another shape would move the wrong objects in RoboViz).
    pub fn write_delta(&self, state: &mut ConsumerState, snap: &WorldSnapshot, out: &mut String) {
        if state.needs_full_state(snap) {
            self.write_full(state, snap, "", out);
            return;
        }
        let mut finite = self.begin_delta(state, snap, out);
        let teams_only = state.teams_only;
        {
            let mut e = Emitter::new(out, state, false);
            let robots = snap
                .robots
                .iter()
                .filter(|r| !teams_only || r.side.is_some());
            dynamic_scene(&self.field, snap, robots, &mut e);
            finite &= e.finite;
        }
        out.push(')');
        state.messages += 1;
        report_nonfinite(finite, snap);
    }

    /// Appends a delta that fits the scene of this consumer's last full
    /// state even when the robots shown have changed since, so a full
    /// state can wait (the log writes them at a bounded rate): robots
    /// still there move as usual, robots gone are hidden
    /// (`setVisible 0`), robots that arrived are left out until the next
    /// full state. Robots whose identity changed keep their old colours
    /// until then. The first message is a full state all the same.
    pub fn write_delta_keeping_scene(
        &self,
        state: &mut ConsumerState,
        snap: &WorldSnapshot,
        out: &mut String,
    ) {
        if state.structure.is_none() || state.force_full {
            self.write_full(state, snap, "", out);
            return;
        }
        let mut finite = self.begin_delta(state, snap, out);
        let shown = std::mem::take(&mut state.shown);
        {
            let mut e = Emitter::new(out, state, false);
            let r = self.field.ball_radius;
            ball_node(r, snap, &mut e);
            for last in &shown {
                let parts = part_slots(last).1;
                let now = snap
                    .robots
                    .iter()
                    .find(|r| r.id == last.id && part_slots(r).1 == parts);
                match now {
                    Some(robot) => robot_nodes(robot, &mut e),
                    None => {
                        e.hidden = true;
                        robot_nodes(last, &mut e);
                        e.hidden = false;
                    }
                }
            }
            finite &= e.finite;
        }
        state.shown = shown;
        out.push(')');
        state.messages += 1;
        report_nonfinite(finite, snap);
    }
}

fn report_nonfinite(finite: bool, snap: &WorldSnapshot) {
    if !finite {
        tracing::error!(
            cycle = snap.cycle,
            "non-finite value in the world snapshot; written as 0 to monitors and the log"
        );
    }
}
