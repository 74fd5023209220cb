//! Monitor messages built from a [`WorldSnapshot`]: the full state
//! (`RSG`) and the per-consumer delta (`RDS`) of monitor-protocol.md §2–§9.
//!
//! A [`FrameBuilder`] holds what never changes (environment predicates and
//! the static scene, serialised once). A [`ConsumerState`] remembers what one
//! consumer (one monitor connection, or the log file) last received, so that
//! every consumer gets every change exactly once (§6.3). Building is pure:
//! no I/O, no clock, no hashing, so identical snapshots give identical bytes.

use std::sync::Arc;

use nalgebra::Isometry3;

use super::config::FieldParams;
use super::number::push_g;
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
/// makes a delta carry the `SLT` (§6.1).
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

/// What decides the tree shape and the robot materials. A change of any of
/// it needs a full state (§7).
#[derive(Debug, Clone, PartialEq)]
struct Structure {
    version: u64,
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

    /// Makes the next message a full state (`(reqfullstate)`).
    pub fn request_full_state(&mut self) {
        self.force_full = true;
    }

    /// Messages built for this consumer so far.
    pub fn messages(&self) -> u64 {
        self.messages
    }

    /// Whether the next message for `snap` must be a full state: first
    /// message, requested, or the scene structure changed (a robot joined,
    /// left, was initialised, changed side, or `structure_version` moved).
    pub fn needs_full_state(&self, snap: &WorldSnapshot) -> bool {
        match &self.structure {
            None => true,
            Some(s) => self.force_full || !s.matches(snap),
        }
    }
}

impl Structure {
    fn of(snap: &WorldSnapshot) -> Structure {
        Structure {
            version: snap.structure_version,
            robots: snap.robots.iter().map(RobotKey::of).collect(),
        }
    }

    fn matches(&self, snap: &WorldSnapshot) -> bool {
        self.version == snap.structure_version
            && self.robots.len() == snap.robots.len()
            && self
                .robots
                .iter()
                .zip(&snap.robots)
                .all(|(k, r)| *k == RobotKey::of(r))
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
    /// Serialises the environment predicates and the static scene (§5.1,
    /// nodes 1–35) once for these field values.
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
        {
            let mut e = Emitter::new(out, state, true);
            dynamic_scene(&self.field, snap, &mut e);
            finite &= e.finite;
        }
        out.push(')');
        state.structure = Some(Structure::of(snap));
        state.force_full = false;
        state.messages += 1;
        report_nonfinite(finite, snap);
    }

    /// Appends a delta against what this consumer last received. Falls
    /// back to a full state when the structure no longer matches (a delta
    /// of another shape would move the wrong objects in RoboViz).
    pub fn write_delta(&self, state: &mut ConsumerState, snap: &WorldSnapshot, out: &mut String) {
        if state.needs_full_state(snap) {
            self.write_full(state, snap, "", out);
            return;
        }
        let mut finite = true;
        out.push('(');
        finite &= write_game(state, snap, false, out);
        out.push_str(")(RDS 0 1)(");
        out.push_str(&self.static_delta);
        {
            let mut e = Emitter::new(out, state, false);
            dynamic_scene(&self.field, snap, &mut e);
            finite &= e.finite;
        }
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

/// The 15 numeric environment predicates, `play_modes` and the optional
/// goalie-area values (§3.1).
fn env_predicates(f: &FieldParams, out: &mut String) {
    let items: [(&str, f32); 15] = [
        ("FieldLength", f.field_length),
        ("FieldWidth", f.field_width),
        ("FieldHeight", f.field_height),
        ("GoalWidth", f.goal_width),
        ("GoalDepth", f.goal_depth),
        ("GoalHeight", f.goal_height),
        ("BorderSize", f.border_size),
        ("FreeKickDistance", f.free_kick_distance),
        ("WaitBeforeKickOff", f.wait_before_kick_off),
        ("AgentRadius", f.agent_radius),
        ("BallRadius", f.ball_radius),
        ("BallMass", f.ball_mass),
        ("RuleGoalPauseTime", f.rule_goal_pause_time),
        ("RuleKickInPauseTime", f.rule_kick_in_pause_time),
        ("RuleHalfTime", f.rule_half_time),
    ];
    for (name, value) in items {
        pred_real(out, name, value);
    }
    out.push_str("(play_modes");
    for mode in PlayMode::ALL {
        out.push(' ');
        out.push_str(mode.name());
    }
    out.push(')');
    if let Some(v) = f.goalie_area_length {
        pred_real(out, "GoalieAreaLength", v);
    }
    if let Some(v) = f.goalie_area_width {
        pred_real(out, "GoalieAreaWidth", v);
    }
}

fn pred_real(out: &mut String, name: &str, value: f32) -> bool {
    out.push('(');
    out.push_str(name);
    out.push(' ');
    let ok = push_g(out, value);
    out.push(')');
    ok
}

fn pred_int(out: &mut String, name: &str, value: u64) {
    use std::fmt::Write;
    let _ = write!(out, "({name} {value})");
}

/// Game-state predicates (§3.2): everything in a full state, changes only
/// in a delta; fouls created since this consumer's last message in both.
fn write_game(
    state: &mut ConsumerState,
    snap: &WorldSnapshot,
    full: bool,
    out: &mut String,
) -> bool {
    let g = &snap.game;
    let finite = pred_real(out, "time", g.game_time);
    let sent = &mut state.game;
    // An empty name counts as not yet known (§3.2: not sent while empty).
    if let Some(name) = g.team_left.as_ref().filter(|n| !n.is_empty()) {
        if full || sent.team_left.as_deref() != Some(&**name) {
            push_team(out, "team_left", name);
            sent.team_left = Some(name.clone());
        }
    }
    if let Some(name) = g.team_right.as_ref().filter(|n| !n.is_empty()) {
        if full || sent.team_right.as_deref() != Some(&**name) {
            push_team(out, "team_right", name);
            sent.team_right = Some(name.clone());
        }
    }
    if full || sent.half != g.half {
        pred_int(out, "half", u64::from(g.half));
        sent.half = g.half;
    }
    if full || sent.score_left != g.score_left {
        pred_int(out, "score_left", u64::from(g.score_left));
        sent.score_left = g.score_left;
    }
    if full || sent.score_right != g.score_right {
        pred_int(out, "score_right", u64::from(g.score_right));
        sent.score_right = g.score_right;
    }
    if full || sent.play_mode != Some(g.play_mode) {
        pred_int(out, "play_mode", u64::from(g.play_mode.index()));
        sent.play_mode = Some(g.play_mode);
    }
    // A consumer's foul cursor starts at the fouls that existed when it
    // connected: history is not replayed as fresh fouls.
    if !state.fouls_started {
        state.fouls_started = true;
        state.fouls_sent = g.fouls.len();
    }
    if g.fouls.len() < state.fouls_sent {
        // The record list was reset (new match): start over.
        state.fouls_sent = 0;
    }
    for (i, foul) in g.fouls.iter().enumerate().skip(state.fouls_sent) {
        if foul.kind >= 11 {
            tracing::warn!(kind = foul.kind, "foul type >= 11 not sent to monitors");
            continue;
        }
        use std::fmt::Write;
        let _ = write!(
            out,
            "(foul {} {} {} {})",
            i + 1,
            foul.kind,
            foul.side.monitor_index(),
            foul.unum
        );
    }
    state.fouls_sent = g.fouls.len();
    finite
}

/// Team names are tokens: whitespace, parentheses and non-ASCII would
/// break RoboViz's reader, so they become `_`.
fn push_team(out: &mut String, pred: &str, name: &str) {
    out.push('(');
    out.push_str(pred);
    out.push(' ');
    for c in name.chars() {
        if c.is_ascii_graphic() && c != '(' && c != ')' {
            out.push(c);
        } else {
            out.push('_');
        }
    }
    out.push(')');
}

/// Writes scene nodes in either form, walking dynamic nodes in the same
/// order for a full state and a delta so their indices line up.
struct Emitter<'a> {
    out: &'a mut String,
    state: &'a mut ConsumerState,
    full: bool,
    trf: usize,
    mesh: usize,
    finite: bool,
}

/// Entries of a `resetMaterials` list; team and number are substituted.
#[derive(Clone, Copy)]
enum Material {
    Name(&'static str),
    /// `matNum<N>`, or `matNum` before `init`.
    Num,
    /// `matLeft`/`matRight`, or `matTeam` before `init`.
    Team,
    /// `matType<t>`, absent for type 4.
    Type,
}

struct Identity {
    side: Option<Side>,
    unum: u8,
    robot_type: u8,
}

impl<'a> Emitter<'a> {
    fn new(out: &'a mut String, state: &'a mut ConsumerState, full: bool) -> Self {
        Emitter {
            out,
            state,
            full,
            trf: 0,
            mesh: 0,
            finite: true,
        }
    }

    fn matrix(&mut self, m: &Mat) {
        self.out.push_str("(SLT");
        for v in m {
            self.out.push(' ');
            self.finite &= push_g(self.out, *v);
        }
        self.out.push(')');
    }

    /// Opens a transform node; the caller writes children and `close`s.
    fn open_trf(&mut self, m: &Mat) {
        let i = self.trf;
        self.trf += 1;
        if self.full {
            self.out.push_str("(nd TRF ");
            self.matrix(m);
            self.state.matrices.push(*m);
            return;
        }
        self.out.push_str("(nd");
        let moved = match self.state.matrices.get(i) {
            Some(last) => last
                .iter()
                .zip(m)
                .any(|(a, b)| (a - b).abs() > MOVE_THRESHOLD || !b.is_finite()),
            None => true,
        };
        if moved {
            self.out.push(' ');
            self.matrix(m);
            match self.state.matrices.get_mut(i) {
                Some(slot) => *slot = *m,
                None => self.state.matrices.push(*m),
            }
        }
    }

    fn close(&mut self) {
        self.out.push(')');
    }

    fn light(&mut self, ambient: f32) {
        if self.full {
            self.out
                .push_str("(nd Light (setDiffuse 1 1 1 1) (setAmbient ");
            for _ in 0..3 {
                push_g(self.out, ambient);
                self.out.push(' ');
            }
            self.out.push_str("1) (setSpecular 0.1 0.1 0.1 1))");
        } else {
            self.out.push_str("(nd)");
        }
    }

    /// Writes `(setVisible V)` in a full state, or in a delta when it
    /// changed for this consumer.
    fn visibility(&mut self, visible: bool) {
        let i = self.mesh;
        self.mesh += 1;
        let v = if visible { "1" } else { "0" };
        if self.full {
            self.out.push_str(" (setVisible ");
            self.out.push_str(v);
            self.out.push(')');
            self.state.visible.push(visible);
            return;
        }
        match self.state.visible.get_mut(i) {
            Some(last) if *last == visible => {}
            Some(last) => {
                *last = visible;
                self.out.push_str(" (setVisible ");
                self.out.push_str(v);
                self.out.push(')');
            }
            None => self.state.visible.push(visible),
        }
    }

    fn scale(&mut self, s: [f32; 3]) {
        self.out.push_str(" (sSc");
        for v in s {
            self.out.push(' ');
            self.finite &= push_g(self.out, v);
        }
        self.out.push(')');
    }

    #[allow(clippy::too_many_arguments)]
    fn static_mesh(
        &mut self,
        visible: bool,
        transparent: bool,
        mesh: &str,
        scale: [f32; 3],
        materials: &[Material],
        who: &Identity,
    ) {
        self.out.push_str("(nd StaticMesh");
        self.visibility(visible);
        if self.full {
            if transparent {
                self.out.push_str(" (setTransparent)");
            }
            self.out.push_str(" (load ");
            self.out.push_str(mesh);
            self.out.push(')');
            self.scale(scale);
            self.out.push_str("(resetMaterials");
            for m in materials {
                self.material(*m, who);
            }
            self.out.push(')');
        }
        self.out.push(')');
    }

    fn material(&mut self, m: Material, who: &Identity) {
        use std::fmt::Write;
        match m {
            Material::Name(n) => {
                self.out.push(' ');
                self.out.push_str(n);
            }
            Material::Num => {
                if who.unum == 0 {
                    self.out.push_str(" matNum");
                } else {
                    let _ = write!(self.out, " matNum{}", who.unum);
                }
            }
            Material::Team => self.out.push_str(match who.side {
                None => " matTeam",
                Some(Side::Left) => " matLeft",
                Some(Side::Right) => " matRight",
            }),
            Material::Type => {
                if who.robot_type < 4 {
                    let _ = write!(self.out, " matType{}", who.robot_type);
                }
            }
        }
    }

    /// `load` is the mesh name with its parameters (`StdUnitCylinder 1 1`).
    fn smn(&mut self, visible: bool, transparent: bool, load: &str, scale: [f32; 3], mat: &str) {
        self.out.push_str("(nd SMN");
        self.visibility(visible);
        if self.full {
            if transparent {
                self.out.push_str(" (setTransparent)");
            }
            self.out.push_str(" (load ");
            self.out.push_str(load);
            self.out.push(')');
            self.scale(scale);
            self.out.push_str(" (sMat ");
            self.out.push_str(mat);
            self.out.push(')');
        }
        self.out.push(')');
    }

    /// A transform with a single mesh-less child list (corner flags,
    /// field lines).
    fn empty_trf(&mut self, m: &Mat) {
        self.open_trf(m);
        self.close();
    }
}

const NO_ONE: Identity = Identity {
    side: None,
    unum: 0,
    robot_type: 0,
};

/// Nodes 1–35 of §5.1: lights, field, skybox, goals, walls, flags, lines.
fn static_scene(f: &FieldParams, e: &mut Emitter<'_>) {
    let (l, w) = (f.field_length, f.field_width);
    let (gw, gd, gh) = (f.goal_width, f.goal_depth, f.goal_height);
    e.open_trf(&translation(-10.0, 10.0, 10.0));
    e.light(0.8);
    e.close();
    e.open_trf(&translation(10.0, -10.0, 10.0));
    e.light(0.0);
    e.close();
    e.open_trf(&RM);
    e.static_mesh(
        true,
        false,
        "models/naosoccerfield.obj",
        [l / 12.0, 1.0, w / 8.0],
        &[Material::Name("None_rcs-naofield.png")],
        &NO_ONE,
    );
    e.close();
    e.open_trf(&RM);
    e.static_mesh(
        true,
        false,
        "models/skybox.obj",
        [10.0, 10.0, 10.0],
        &[
            Material::Name("Material_skyrender_0001.tif"),
            Material::Name("Material_skyrender_0002.tif"),
            Material::Name("Material_skyrender_0003.tif"),
            Material::Name("Material_skyrender_0004.tif"),
            Material::Name("Material_skyrender_0005.tif"),
            Material::Name("Material_skyrender_0006.tif"),
        ],
        &NO_ONE,
    );
    e.close();
    let goal_x = l / 2.0 + gd / 2.0;
    let left_goal = translation(-goal_x, 0.0, gh / 2.0);
    let right_goal: Mat = [
        -1.0,
        0.0,
        0.0,
        0.0,
        0.0,
        -1.0,
        0.0,
        0.0,
        0.0,
        0.0,
        1.0,
        0.0,
        goal_x,
        0.0,
        gh / 2.0,
        1.0,
    ];
    for (frame, mesh, mats) in [
        (
            left_goal,
            "models/leftgoal.obj",
            &[
                Material::Name("grey_naogoalnet.png"),
                Material::Name("yellow"),
            ][..],
        ),
        (
            right_goal,
            "models/rightgoal.obj",
            &[
                Material::Name("grey_naogoalnet.png"),
                Material::Name("sky-blue"),
                Material::Name("white"),
            ][..],
        ),
    ] {
        e.open_trf(&frame);
        e.open_trf(&[
            0.0,
            1.0,
            0.0,
            0.0,
            0.0,
            0.0,
            1.0,
            0.0,
            1.0,
            0.0,
            0.0,
            0.0,
            gd / 2.0,
            0.0,
            -gh / 2.0,
            1.0,
        ]);
        e.static_mesh(
            true,
            true,
            mesh,
            [gw + 0.08, gh + 0.08, gd + 0.08],
            mats,
            &NO_ONE,
        );
        e.close();
        e.empty_trf(&translation(0.0, -(gw / 2.0 + 0.02), 0.0));
        e.empty_trf(&translation(0.0, gw / 2.0 + 0.02, 0.0));
        e.empty_trf(&[
            0.866_025_4,
            0.0,
            -0.5,
            0.0,
            0.0,
            1.0,
            0.0,
            0.0,
            0.5,
            0.0,
            0.866_025_4,
            0.0,
            -0.1 * gd,
            0.0,
            0.0,
            1.0,
        ]);
        e.empty_trf(&translation(gd / 2.0, gw / 2.0, gh / 2.0));
        e.empty_trf(&translation(gd / 2.0, -gw / 2.0, gh / 2.0));
        e.close();
    }
    let wall_x = l / 2.0 + 0.333 * l;
    let wall_y = w / 2.0 + 0.75 * w;
    for (m, s) in [
        (translation(-wall_x, 0.0, 0.0), [1.0, 1.0 + 2.5 * w, 1.0]),
        (translation(wall_x, 0.0, 0.0), [1.0, 1.0 + 2.5 * w, 1.0]),
        (translation(0.0, wall_y, 0.0), [1.0 + 1.666 * l, 1.0, 1.0]),
        (translation(0.0, -wall_y, 0.0), [1.0 + 1.666 * l, 1.0, 1.0]),
    ] {
        e.open_trf(&m);
        e.smn(true, false, "StdUnitBox", s, "matGrey");
        e.close();
    }
    for (x, y) in [(-1.0, 1.0), (-1.0, -1.0), (1.0, 1.0), (1.0, -1.0)] {
        e.empty_trf(&translation(x * l / 2.0, y * w / 2.0, 0.0));
    }
    for _ in 0..21 {
        e.empty_trf(&IDENTITY);
    }
}

/// The ball (§5.1 node 36) and one container per robot (§5.2).
fn dynamic_scene(f: &FieldParams, snap: &WorldSnapshot, e: &mut Emitter<'_>) {
    let r = f.ball_radius;
    e.open_trf(&isometry_matrix(&snap.ball));
    e.static_mesh(
        true,
        false,
        "models/soccerball.obj",
        [r, r, r],
        &[Material::Name("soccerball_rcs-soccerball.png")],
        &NO_ONE,
    );
    e.close();
    for robot in &snap.robots {
        robot_nodes(robot, e);
    }
}

/// The Nao's parts in monitor order (§5.2): torso, neck, head, right arm,
/// left arm, right leg, left leg; toes only for robots that have them.
#[cfg_attr(not(test), allow(dead_code))]
const PARTS: [&str; 25] = [
    "torso",
    "neck",
    "head",
    "rshoulder",
    "rupperarm",
    "relbow",
    "rlowerarm",
    "lshoulder",
    "lupperarm",
    "lelbow",
    "llowerarm",
    "rhip1",
    "rhip2",
    "rthigh",
    "rshank",
    "rankle",
    "rfoot",
    "rtoe",
    "lhip1",
    "lhip2",
    "lthigh",
    "lshank",
    "lankle",
    "lfoot",
    "ltoe",
];

fn part_slot(name: &str) -> Option<usize> {
    // A `match` on the bytes compiles to a length switch plus a compare,
    // much cheaper than scanning `PARTS` for every part of every robot.
    Some(match name {
        "torso" | "body" => 0,
        "neck" => 1,
        "head" => 2,
        "rshoulder" => 3,
        "rupperarm" => 4,
        "relbow" => 5,
        "rlowerarm" => 6,
        "lshoulder" => 7,
        "lupperarm" => 8,
        "lelbow" => 9,
        "llowerarm" => 10,
        "rhip1" => 11,
        "rhip2" => 12,
        "rthigh" => 13,
        "rshank" => 14,
        "rankle" => 15,
        "rfoot" => 16,
        "rtoe" => 17,
        "lhip1" => 18,
        "lhip2" => 19,
        "lthigh" => 20,
        "lshank" => 21,
        "lankle" => 22,
        "lfoot" => 23,
        "ltoe" => 24,
        _ => return None,
    })
}

/// For each canonical part, the index of its pose in `robot.parts`, and
/// the bit mask of parts present.
fn part_slots(robot: &RobotSnapshot) -> ([Option<usize>; 25], u32) {
    let mut slots = [None; 25];
    let mut mask = 0u32;
    for (i, p) in robot.parts.iter().enumerate() {
        if let Some(s) = part_slot(&p.name) {
            if slots[s].is_none() {
                slots[s] = Some(i);
                mask |= 1 << s;
            }
        }
    }
    (slots, mask)
}

const BODY: [&str; 5] = [
    "models/naobody0.obj",
    "models/naobody1.obj",
    "models/naobody2.obj",
    "models/naobody3.obj",
    "models/naobody4.obj",
];
const RUPPERARM: [&str; 5] = [
    "models/rupperarm0.obj",
    "models/rupperarm1.obj",
    "models/rupperarm2.obj",
    "models/rupperarm3.obj",
    "models/rupperarm4.obj",
];
const LUPPERARM: [&str; 5] = [
    "models/lupperarm0.obj",
    "models/lupperarm1.obj",
    "models/lupperarm2.obj",
    "models/lupperarm3.obj",
    "models/lupperarm4.obj",
];
const RSHANK: [&str; 5] = [
    "models/rshank0.obj",
    "models/rshank1.obj",
    "models/rshank2.obj",
    "models/rshank3.obj",
    "models/rshank4.obj",
];
const LSHANK: [&str; 5] = [
    "models/lshank0.obj",
    "models/lshank1.obj",
    "models/lshank2.obj",
    "models/lshank3.obj",
    "models/lshank4.obj",
];

/// Visual scales of the type-4 foot and toe: §5.2's formulas with
/// `ToeLength` as the reference's visual files round it (0.035518), which
/// gives exactly the reference's printed `0.062241` and `0.0228259`.
const TOE_FOOT_SCALE: [f32; 3] = [0.08, 0.062_241, 0.08];
const TOE_SCALE: [f32; 3] = [0.08, 0.022_825_9, 0.04];

const TEAM_WHITE: [Material; 2] = [Material::Team, Material::Name("naowhite")];
const TEAM_TYPE_WHITE: [Material; 3] = [Material::Team, Material::Type, Material::Name("naowhite")];
const NUM_TEAM_WHITE: [Material; 3] = [Material::Num, Material::Team, Material::Name("naowhite")];

fn robot_nodes(robot: &RobotSnapshot, e: &mut Emitter<'_>) {
    let (slots, _) = part_slots(robot);
    let t = usize::from(robot.robot_type.min(4));
    let who = Identity {
        side: robot.side,
        unum: robot.unum,
        robot_type: robot.robot_type.min(4),
    };
    let toe = t == 4 && slots[17].is_some();
    let foot_scale = if toe { TOE_FOOT_SCALE } else { [0.08; 3] };
    let toe_scale = TOE_SCALE;
    e.open_trf(&IDENTITY);
    for (slot, pose_index) in slots.iter().enumerate() {
        let Some(pose) = pose_index.and_then(|i| robot.parts.get(i)) else {
            continue;
        };
        e.open_trf(&isometry_matrix(&pose.pose));
        let joint = |e: &mut Emitter<'_>, mat: &str| {
            e.smn(true, false, "StdUnitSphere", [0.01; 3], mat);
        };
        match slot {
            0 => {
                e.open_trf(&RM);
                e.static_mesh(
                    true,
                    false,
                    BODY[t],
                    [0.1; 3],
                    &[
                        Material::Num,
                        Material::Team,
                        Material::Type,
                        Material::Name("naowhite"),
                    ],
                    &who,
                );
                e.close();
                e.open_trf(&IDENTITY);
                // The selection marker.
                e.smn(
                    robot.selected,
                    true,
                    "StdUnitCylinder 1 1",
                    [0.2, 0.2, 0.02],
                    "matSelect",
                );
                e.close();
            }
            1 => e.smn(
                true,
                false,
                "StdCapsule 0.015 0.08",
                [1.0; 3],
                "matDarkGrey",
            ),
            2 => {
                e.open_trf(&RM);
                e.static_mesh(
                    true,
                    false,
                    "models/naohead.obj",
                    [0.1; 3],
                    &[
                        Material::Team,
                        Material::Name("naoblack"),
                        Material::Name("naogrey"),
                        Material::Name("naowhite"),
                    ],
                    &who,
                );
                e.close();
            }
            3 | 5 | 7 | 9 | 11 | 12 | 18 | 19 => joint(e, "matYellow"),
            15 | 22 => joint(e, "matRed"),
            4 => e.static_mesh(true, false, RUPPERARM[t], [0.07; 3], &TEAM_TYPE_WHITE, &who),
            8 => e.static_mesh(true, false, LUPPERARM[t], [0.07; 3], &TEAM_TYPE_WHITE, &who),
            6 => e.static_mesh(
                true,
                false,
                "models/rlowerarm.obj",
                [0.05; 3],
                &TEAM_WHITE,
                &who,
            ),
            10 => e.static_mesh(
                true,
                false,
                "models/llowerarm.obj",
                [0.05; 3],
                &TEAM_WHITE,
                &who,
            ),
            13 => e.static_mesh(
                true,
                false,
                "models/rthigh.obj",
                [0.07; 3],
                &NUM_TEAM_WHITE,
                &who,
            ),
            20 => e.static_mesh(
                true,
                false,
                "models/lthigh.obj",
                [0.07; 3],
                &TEAM_WHITE,
                &who,
            ),
            14 => e.static_mesh(true, false, RSHANK[t], [0.08; 3], &TEAM_TYPE_WHITE, &who),
            21 => e.static_mesh(true, false, LSHANK[t], [0.08; 3], &TEAM_TYPE_WHITE, &who),
            16 => e.static_mesh(
                true,
                false,
                "models/rfoot.obj",
                foot_scale,
                &TEAM_WHITE,
                &who,
            ),
            23 => e.static_mesh(
                true,
                false,
                "models/lfoot.obj",
                foot_scale,
                &TEAM_WHITE,
                &who,
            ),
            17 => e.static_mesh(
                true,
                false,
                "models/rfoot.obj",
                toe_scale,
                &TEAM_WHITE,
                &who,
            ),
            _ => e.static_mesh(
                true,
                false,
                "models/lfoot.obj",
                toe_scale,
                &TEAM_WHITE,
                &who,
            ),
        }
        e.close();
    }
    e.close();
}

#[cfg(test)]
mod tests {
    use super::{part_slot, PARTS};

    #[test]
    fn part_slots_follow_the_monitor_order() {
        for (i, name) in PARTS.iter().enumerate() {
            assert_eq!(part_slot(name), Some(i));
        }
        assert_eq!(part_slot("body"), Some(0));
        assert_eq!(part_slot("tail"), None);
    }
}
