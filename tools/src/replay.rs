//! Open-loop replay of a reference recording (`NAME.sent.txt` beside its
//! trace `NAME.csv`) on our physical world, and the figures that compare
//! the two: distance walked, falls, ball travel, joint-angle error, torso
//! error and the load on each foot.
//!
//! One copy for both users: the physics tests (`tests/physics/`: the gait
//! acceptance test and the tests that start from the reference's
//! recorded states) and the fitting kit (`tools/src/bin/fit/`: its sweeps
//! of beam shifts and nudges, its tables and summaries), so both measure
//! the same thing.
//!
//! The set-up is the reference's: the robot appears at its init spot, 10
//! warm-up cycles, then a noise-free beam to (−5, 0) facing +x with the
//! torso at z = 0.4 (step 0); row k of the trace is the state after k
//! steps from there.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use nalgebra::{Isometry3, Matrix3, Rotation3, UnitQuaternion, Vector3};
use rcss3d::sim::model::{ModelLibrary, RobotModel};
use rcss3d::sim::world::{
    joint_drift, PhysicsConfig, RobotHandle, RobotState, World, DEFAULT_CYCLE_DT,
};

mod report;

pub use report::{acceptance_failures, ends_upright, summary, table};

/// Torso below this height (m) counts as fallen (as in the compare tool).
pub const FALL_Z: f64 = 0.25;

/// The built-in robot models, loaded once.
pub fn library() -> &'static ModelLibrary {
    static LIB: OnceLock<ModelLibrary> = OnceLock::new();
    LIB.get_or_init(|| match ModelLibrary::built_in() {
        Ok(l) => l,
        Err(e) => panic!("loading models/: {e}"),
    })
}

pub fn model(robot_type: u8) -> Arc<RobotModel> {
    match library().resolve("rsg/agent/nao/nao_hetero.rsg", &[robot_type.to_string()]) {
        Ok(m) => m,
        Err(e) => panic!("type {robot_type}: {e}"),
    }
}

/// A reference trace: header and rows keyed by step.
pub struct Trace {
    header: Vec<String>,
    rows: Vec<Vec<Option<f64>>>,
}

impl Trace {
    pub fn load(path: &Path) -> Trace {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => panic!("{}: {e}", path.display()),
        };
        let mut lines = text.lines();
        let header: Vec<String> = lines
            .next()
            .unwrap_or_default()
            .split(',')
            .map(str::to_string)
            .collect();
        // The `cmd` column holds commas only inside no field (the effector
        // list uses spaces), so a plain split keeps the columns aligned.
        let rows = lines
            .filter(|l| !l.is_empty())
            .map(|l| l.split(',').map(|f| f.parse::<f64>().ok()).collect())
            .collect();
        Trace { header, rows }
    }

    pub fn has(&self, name: &str) -> bool {
        self.header.iter().any(|h| h == name)
    }

    /// The index of a column (panics naming it if the trace has none).
    pub fn col(&self, name: &str) -> usize {
        match self.header.iter().position(|h| h == name) {
            Some(i) => i,
            None => panic!("no column {name}"),
        }
    }

    /// A column's value at a step (the row whose `step` column holds it;
    /// NaN where there is none or the field is empty).
    pub fn at(&self, step: usize, name: &str) -> f64 {
        let c = self.col(name);
        let s = self.col("step");
        self.rows
            .iter()
            .find(|r| r.get(s).copied().flatten() == Some(step as f64))
            .and_then(|r| r.get(c).copied().flatten())
            .unwrap_or(f64::NAN)
    }

    /// The column as values per row (NaN where empty); row i is step i + 1.
    pub fn column(&self, name: &str) -> Vec<f64> {
        let c = self.col(name);
        self.rows
            .iter()
            .map(|r| r.get(c).copied().flatten().unwrap_or(f64::NAN))
            .collect()
    }

    /// The number of rows (steps recorded).
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the trace has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// A monitor ball command: step, position, velocity.
pub type BallCommand = (usize, Option<Vector3<f32>>, Option<Vector3<f32>>);

/// What the agent and the monitor sent, from step 0 on.
pub struct Script {
    pub robot_type: u8,
    /// Per step: (effector, rad/s).
    pub effectors: Vec<Vec<(String, f32)>>,
    /// Per step: ball position and velocity set by the monitor.
    pub ball: Vec<BallCommand>,
}

fn numbers_after(payload: &str, key: &str) -> Option<Vector3<f32>> {
    let i = payload.find(&format!("({key} "))?;
    let rest = &payload[i + key.len() + 2..];
    let end = rest.find(')')?;
    let v: Vec<f32> = rest[..end]
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect();
    (v.len() == 3).then(|| Vector3::new(v[0], v[1], v[2]))
}

impl Script {
    pub fn load(path: &Path) -> Script {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => panic!("{}: {e}", path.display()),
        };
        let mut s = Script {
            robot_type: 0,
            effectors: Vec::new(),
            ball: Vec::new(),
        };
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.splitn(3, '\t').collect();
            if f.len() != 3 {
                continue;
            }
            let Ok(step) = f[0].parse::<i64>() else {
                continue;
            };
            if let Some(rest) = f[2].strip_prefix("(scene ") {
                if let Some(t) = rest
                    .split(')')
                    .next()
                    .and_then(|s| s.split_whitespace().nth(1))
                    .and_then(|t| t.parse().ok())
                {
                    s.robot_type = t;
                }
            }
            if step < 0 {
                continue;
            }
            let step = step as usize;
            match f[1] {
                "agent" => {
                    if s.effectors.len() <= step {
                        s.effectors.resize(step + 1, Vec::new());
                    }
                    for cmd in f[2].split(')').map(|c| c.trim_start_matches('(')) {
                        let mut it = cmd.split_whitespace();
                        if let (Some(name), Some(v)) = (it.next(), it.next()) {
                            if let Ok(v) = v.parse::<f32>() {
                                s.effectors[step].push((name.to_string(), v));
                            }
                        }
                    }
                }
                "monitor" if f[2].starts_with("(ball") => {
                    s.ball
                        .push((step, numbers_after(f[2], "pos"), numbers_after(f[2], "vel")));
                }
                _ => {}
            }
        }
        s
    }
}

/// Our run of a script: per row (after step k+1), in the trace's units.
pub struct Run {
    pub torso: Vec<Vector3<f64>>,
    /// z component of the torso's up axis (torso_r22).
    pub torso_up: Vec<f64>,
    /// Heading of the torso (rad): the direction of its local y axis, the
    /// way the robot faces, in the ground plane.
    pub torso_heading: Vec<f64>,
    /// Orientation of the torso.
    pub torso_rot: Vec<UnitQuaternion<f32>>,
    pub ball: Vec<Vector3<f64>>,
    /// Joint angles (deg) by perceptor name, per row.
    pub joints: Vec<(String, Vec<f64>)>,
    /// Vertical force on the left and right foot (N; 0 without contact),
    /// per row.
    pub foot_fz: Vec<(f64, f64)>,
    /// Positions of the parts in [`TRACKED_PARTS`], per row.
    pub parts: Vec<[Vector3<f64>; 3]>,
    /// The model's indices of the parts in [`TRACKED_PARTS`].
    tracked: [usize; 3],
}

/// The parts whose trajectories are compared with the reference's: the
/// torso and the two feet (the feet show slipping and short steps, the
/// torso the body's motion).
pub const TRACKED_PARTS: [&str; 3] = ["torso", "lfoot", "rfoot"];

/// A world with the script's robot after the reference set-up (init
/// spot, 10 warm-up cycles, beam to (−5, 0) facing +x); the next step
/// produces row 1.
pub fn start(cfg: &PhysicsConfig, script: &Script) -> (World, RobotHandle) {
    start_shifted(cfg, script, 0.0)
}

/// As [`start`], with the beam `shift` metres further along the field's
/// x axis: the same physics on the flat field, with other rounding, so a
/// replay's sensitivity to the smallest disturbance can be measured.
pub fn start_shifted(cfg: &PhysicsConfig, script: &Script, shift: f32) -> (World, RobotHandle) {
    let mut w = match World::new(cfg, DEFAULT_CYCLE_DT) {
        Ok(w) => w,
        Err(e) => panic!("World::new: {e}"),
    };
    let h = w.add_robot(model(script.robot_type), Vector3::new(-14.2, 9.2, 0.4), 0.0);
    for _ in 0..10 {
        w.step();
    }
    w.place_robot(h, Vector3::new(-5.0 + shift, 0.0, 0.4), 0.0);
    (w, h)
}

/// Applies the script's commands of `step` (they act on the step from row
/// `step` to row `step + 1`).
pub fn apply(w: &mut World, h: RobotHandle, script: &Script, step: usize) {
    let m = w.robot_model(h).clone();
    if let Some(cmds) = script.effectors.get(step) {
        for (name, v) in cmds {
            if let Some(j) = m.joint_by_effector(name) {
                w.set_joint_speed(h, j, *v);
            }
        }
    }
    for (s, pos, vel) in &script.ball {
        if *s == step {
            if let Some(p) = pos {
                w.set_ball_position(*p);
            }
            if let Some(v) = vel {
                w.set_ball_velocity(*v);
            }
        }
    }
}

/// Replays `script` on a fresh world with `cfg` for `rows` steps.
pub fn run(cfg: &PhysicsConfig, script: &Script, rows: usize) -> Run {
    run_shifted(cfg, script, rows, 0.0)
}

/// As [`run`], from a beam `shift` metres further along x (see
/// [`start_shifted`]); the recorded positions are moved back by it.
pub fn run_shifted(cfg: &PhysicsConfig, script: &Script, rows: usize, shift: f32) -> Run {
    run_disturbed(cfg, script, rows, shift, None)
}

/// A physical disturbance of a replay: at step `step`, joint `joint`'s
/// command is raised by `speed` rad/s for that one step, so the joint
/// ends `speed` × 0.02 rad away from where the script puts it for the
/// rest of the replay (the commands are speeds).
#[derive(Clone, Copy, Debug)]
pub struct Nudge {
    pub step: usize,
    pub joint: usize,
    pub speed: f32,
}

/// As [`run_shifted`], with an optional [`Nudge`].
pub fn run_disturbed(
    cfg: &PhysicsConfig,
    script: &Script,
    rows: usize,
    shift: f32,
    nudge: Option<Nudge>,
) -> Run {
    let (mut w, h) = start_shifted(cfg, script, shift);
    let mut out = Run::new(w.robot_model(h), rows);
    let back = Vector3::new(shift as f64, 0.0, 0.0);
    let mut nudged: Option<(f32, f32)> = None;
    for step in 0..rows {
        apply(&mut w, h, script, step);
        if let Some(n) = nudge {
            // The script may leave a joint's command standing: the nudge
            // is taken back after its step unless a new command came.
            if step == n.step {
                let before = w.joint_target(h, n.joint);
                w.set_joint_speed(h, n.joint, before + n.speed);
                nudged = Some((before, w.joint_target(h, n.joint)));
            } else if let Some((before, during)) = nudged.take() {
                if w.joint_target(h, n.joint) == during {
                    w.set_joint_speed(h, n.joint, before);
                }
            }
        }
        for (s, pos, _) in &script.ball {
            if let (true, Some(p)) = (*s == step, pos) {
                w.set_ball_position(p + Vector3::new(shift, 0.0, 0.0));
            }
        }
        w.step();
        out.record(&w, h, back);
    }
    out
}

impl Run {
    /// An empty run of a robot of model `m`, with room for `rows` rows.
    pub fn new(m: &RobotModel, rows: usize) -> Run {
        let tracked =
            TRACKED_PARTS.map(|name| match m.parts.iter().position(|p| &*p.name == name) {
                Some(i) => i,
                None => panic!("the model has no part {name}"),
            });
        Run {
            torso: Vec::with_capacity(rows),
            torso_up: Vec::with_capacity(rows),
            torso_heading: Vec::with_capacity(rows),
            torso_rot: Vec::with_capacity(rows),
            ball: Vec::with_capacity(rows),
            joints: m
                .joints
                .iter()
                .map(|j| (j.perceptor.to_string(), Vec::with_capacity(rows)))
                .collect(),
            foot_fz: Vec::with_capacity(rows),
            parts: Vec::with_capacity(rows),
            tracked,
        }
    }

    /// Appends the row of robot `h`'s state in `w` (after a step), its
    /// positions and the ball's moved back by `back`.
    pub fn record(&mut self, w: &World, h: RobotHandle, back: Vector3<f64>) {
        let t = w.part_pose(h, w.robot_model(h).torso);
        self.torso.push(t.translation.vector.cast() - back);
        self.torso_up.push((t.rotation * Vector3::z()).z as f64);
        let facing = t.rotation * Vector3::y();
        self.torso_heading.push(facing.y.atan2(facing.x) as f64);
        self.torso_rot.push(t.rotation);
        self.ball.push(w.ball_position().cast() - back);
        for (j, (_, v)) in self.joints.iter_mut().enumerate() {
            v.push(w.joint_angle_deg(h, j) as f64);
        }
        let (l, r) = foot_loads(w, h);
        self.foot_fz.push((l as f64, r as f64));
        self.parts.push(
            self.tracked
                .map(|i| w.part_pose(h, i).translation.vector.cast() - back),
        );
    }
}

/// Vertical force (N) on the left and right foot sensors of robot `h`
/// (the toe's added to its foot for type 4); 0 without contact.
pub fn foot_loads(w: &World, h: RobotHandle) -> (f32, f32) {
    let m = w.robot_model(h);
    let side = |name: &str| -> f32 {
        m.foot_sensors
            .iter()
            .enumerate()
            .filter(|(_, s)| s.name.starts_with(name))
            .filter_map(|(i, _)| w.foot_force(h, i))
            .map(|(_, f)| f.z)
            .sum()
    };
    (side("lf"), side("rf"))
}

/// One scenario: its script and the reference trace.
pub struct Scenario {
    pub name: String,
    pub script: Script,
    pub trace: Trace,
    /// The reference's part positions (`NAME.parts.csv`), where recorded.
    pub parts: Option<Trace>,
}

impl Scenario {
    pub fn load(dir: &Path, name: &str) -> Scenario {
        Scenario {
            name: name.to_string(),
            script: Script::load(&dir.join(format!("{name}.sent.txt"))),
            trace: Trace::load(&dir.join(format!("{name}.csv"))),
            parts: {
                let p = dir.join(format!("{name}.parts.csv"));
                p.exists().then(|| Trace::load(&p))
            },
        }
    }

    /// Every scenario in `dir` whose name starts with `prefix`, sorted.
    pub fn all(dir: &Path, prefix: &str) -> Vec<Scenario> {
        let mut names: Vec<String> = match std::fs::read_dir(dir) {
            Ok(rd) => rd
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter_map(|n| n.strip_suffix(".sent.txt").map(str::to_string))
                .filter(|n| n.starts_with(prefix))
                .collect(),
            Err(e) => panic!("{}: {e}", dir.display()),
        };
        names.sort();
        names.iter().map(|n| Scenario::load(dir, n)).collect()
    }
}

/// The figures of one replay against the reference.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub name: String,
    /// |torso_xy(end) − torso_xy(first row)|, ours and reference.
    pub walked: (f64, f64),
    /// First time (s) the torso is below [`FALL_Z`], ours and reference.
    pub fall: (Option<f64>, Option<f64>),
    /// Torso height and up-axis z at the end, ours and reference.
    pub end_z: (f64, f64),
    pub end_up: (f64, f64),
    /// |ball_xy(end) − ball_xy(first row)|, ours and reference.
    pub ball_moved: (f64, f64),
    /// RMS joint-angle error (deg) over 0 < t ≤ 1 s and 0 < t ≤ 2 s.
    pub hj_rms_1s: f64,
    pub hj_rms_2s: f64,
    /// Torso position error (m) at 2 s and 4 s (None beyond the trace).
    pub torso_err: (Option<f64>, Option<f64>),
    /// Mean vertical load (N) on the left and right foot over 0 < t ≤ 1 s,
    /// ours and reference.
    pub stand_load: ((f64, f64), (f64, f64)),
    /// Largest |ours − reference| joint angle (deg) at t = 1 s.
    pub hold_err_1s: f64,
    /// Mean distance (m) between our and the reference's torso and feet
    /// over 0 < t ≤ 2 s, where the reference recorded part positions. A
    /// smooth measure of how far the motion drifts, for fitting settings
    /// (falls and distances walked jump with small changes).
    pub part_err_2s: Option<f64>,
    /// The same over 0 < t ≤ 1 s.
    pub part_err_1s: Option<f64>,
}

fn first_below(z: impl Iterator<Item = f64>, limit: f64) -> Option<f64> {
    z.enumerate()
        .find(|(_, z)| *z < limit)
        .map(|(i, _)| (i + 1) as f64 * 0.02)
}

fn xy_dist(a: Vector3<f64>, b: Vector3<f64>) -> f64 {
    (a - b).xy().norm()
}

/// Sum of the reference's vertical foot force columns of one side (the
/// toe's sensor added to its foot for type 4); 0 where empty.
pub fn ref_foot_fz(tr: &Trace, side: &str) -> Vec<f64> {
    let mut sum = vec![0.0; tr.len()];
    for c in [format!("frp_{side}_fz"), format!("frp_{side}1_fz")] {
        if tr.has(&c) {
            for (s, v) in sum.iter_mut().zip(tr.column(&c)) {
                if v.is_finite() {
                    *s += v;
                }
            }
        }
    }
    sum
}

/// Compares our replay with the reference over the rows both have.
pub fn compare(sc: &Scenario, ours: &Run) -> Comparison {
    let tr = &sc.trace;
    let n = tr.len().min(ours.torso.len());
    let rt: Vec<Vector3<f64>> = {
        let (x, y, z) = (
            tr.column("torso_x"),
            tr.column("torso_y"),
            tr.column("torso_z"),
        );
        (0..n).map(|i| Vector3::new(x[i], y[i], z[i])).collect()
    };
    let rb: Vec<Vector3<f64>> = {
        let (x, y, z) = (
            tr.column("ball_x"),
            tr.column("ball_y"),
            tr.column("ball_z"),
        );
        (0..n).map(|i| Vector3::new(x[i], y[i], z[i])).collect()
    };
    let r_up = tr.column("torso_r22");
    let rows_1s = n.min(50);
    let rows_2s = n.min(100);
    let (mut sq, mut sq_1s) = (0.0, 0.0);
    let (mut count, mut count_1s) = (0usize, 0usize);
    let mut hold_err: f64 = 0.0;
    for (name, vals) in &ours.joints {
        let col = format!("hj_{name}");
        if !tr.has(&col) {
            continue;
        }
        let r = tr.column(&col);
        for i in 0..rows_2s {
            if r[i].is_finite() {
                let e2 = (vals[i] - r[i]).powi(2);
                sq += e2;
                count += 1;
                if i < rows_1s {
                    sq_1s += e2;
                    count_1s += 1;
                }
            }
        }
        if n >= 50 && r[49].is_finite() {
            hold_err = hold_err.max((vals[49] - r[49]).abs());
        }
    }
    let at = |row: usize| (row <= n).then(|| (ours.torso[row - 1] - rt[row - 1]).norm());
    let (rl, rr) = (ref_foot_fz(tr, "lf"), ref_foot_fz(tr, "rf"));
    let mean = |v: &mut dyn Iterator<Item = f64>| v.sum::<f64>() / rows_1s.max(1) as f64;
    Comparison {
        name: sc.name.clone(),
        walked: (
            xy_dist(ours.torso[n - 1], ours.torso[0]),
            xy_dist(rt[n - 1], rt[0]),
        ),
        fall: (
            first_below(ours.torso[..n].iter().map(|t| t.z), FALL_Z),
            first_below(rt.iter().map(|t| t.z), FALL_Z),
        ),
        end_z: (ours.torso[n - 1].z, rt[n - 1].z),
        end_up: (ours.torso_up[n - 1], r_up[n - 1]),
        ball_moved: (
            xy_dist(ours.ball[n - 1], ours.ball[0]),
            xy_dist(rb[n - 1], rb[0]),
        ),
        hj_rms_1s: (sq_1s / count_1s.max(1) as f64).sqrt(),
        hj_rms_2s: (sq / count.max(1) as f64).sqrt(),
        torso_err: (at(100), at(200)),
        stand_load: (
            (
                mean(&mut ours.foot_fz[..rows_1s].iter().map(|f| f.0)),
                mean(&mut ours.foot_fz[..rows_1s].iter().map(|f| f.1)),
            ),
            (
                mean(&mut rl[..rows_1s].iter().copied()),
                mean(&mut rr[..rows_1s].iter().copied()),
            ),
        ),
        hold_err_1s: hold_err,
        part_err_2s: sc.parts.as_ref().map(|p| part_error(p, ours, rows_2s)),
        part_err_1s: sc.parts.as_ref().map(|p| part_error(p, ours, rows_1s)),
    }
}

/// Mean distance between our tracked parts and the reference's over the
/// first `rows` rows (rows without a reference position are skipped).
fn part_error(reference: &Trace, ours: &Run, rows: usize) -> f64 {
    let (mut sum, mut count) = (0.0, 0usize);
    for (k, name) in TRACKED_PARTS.iter().enumerate() {
        let (x, y, z) = (
            reference.column(&format!("{name}_x")),
            reference.column(&format!("{name}_y")),
            reference.column(&format!("{name}_z")),
        );
        for i in 0..rows.min(ours.parts.len()).min(x.len()) {
            let r = Vector3::new(x[i], y[i], z[i]);
            if r.iter().all(|v| v.is_finite()) {
                sum += (ours.parts[i][k] - r).norm();
                count += 1;
            }
        }
    }
    sum / count.max(1) as f64
}

/// Replays and compares one scenario.
pub fn replay(cfg: &PhysicsConfig, sc: &Scenario) -> Comparison {
    replay_shifted(cfg, sc, 0.0)
}

/// As [`replay`], from a beam `shift` metres further along x.
pub fn replay_shifted(cfg: &PhysicsConfig, sc: &Scenario, shift: f32) -> Comparison {
    let ours = run_shifted(cfg, &sc.script, sc.trace.len(), shift);
    compare(sc, &ours)
}

/// The repository's copy of the reference gait recordings.
pub fn gaits_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/reference/gaits"
    ))
}

/// The repository's copy of the reference physics recordings.
pub fn physics_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/reference/physics"
    ))
}

/// Per joint: (name, ours, reference) angle in degrees at `row` (1-based).
pub fn joints_at(sc: &Scenario, ours: &Run, row: usize) -> Vec<(String, f64, f64)> {
    ours.joints
        .iter()
        .filter(|(n, _)| sc.trace.has(&format!("hj_{n}")))
        .map(|(n, v)| {
            (
                n.clone(),
                v[row - 1],
                sc.trace.column(&format!("hj_{n}"))[row - 1],
            )
        })
        .collect()
}

/// The names the traces give a model's joints (`hj_<name>` columns), in
/// the model's joint order: the order `recorded_state` takes them in.
pub fn joint_names(m: &RobotModel) -> Vec<String> {
    m.joints.iter().map(|j| j.perceptor.to_string()).collect()
}

/// The reference's recorded state at row `i` (> 0) of a gait scenario:
/// torso pose from its rotation matrix, joint angles (in the order of
/// `joint_names`), and the velocities of the step that ended at the row
/// (the reference integrates positions with the new velocity, so the
/// difference of two rows is that velocity).
pub fn recorded_state(sc: &Scenario, joint_names: &[String], i: usize) -> RobotState {
    let tr = &sc.trace;
    let pose = |k: usize| {
        let m = Matrix3::from_fn(|a, b| tr.column(&format!("torso_r{a}{b}"))[k] as f32);
        let p = Vector3::new(
            tr.column("torso_x")[k],
            tr.column("torso_y")[k],
            tr.column("torso_z")[k],
        )
        .cast::<f32>();
        Isometry3::from_parts(
            p.into(),
            UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix(&m)),
        )
    };
    let angles = |k: usize| -> Vec<f32> {
        joint_names
            .iter()
            .map(|n| (tr.column(&format!("hj_{n}"))[k] as f32).to_radians())
            .collect()
    };
    let (now, before) = (pose(i), pose(i - 1));
    let (q, q0) = (angles(i), angles(i - 1));
    RobotState {
        torso: now,
        linvel: (now.translation.vector - before.translation.vector) / 0.02,
        angvel: (now.rotation * before.rotation.inverse()).scaled_axis() / 0.02,
        joint_rates: q.iter().zip(&q0).map(|(a, b)| (a - b) / 0.02).collect(),
        joint_angles: q,
        joint_separations: Vec::new(),
        held_angles: Vec::new(),
    }
}

/// The recorded states of rows 1..=`last` of `sc`. With the joint
/// stretch emulation on (`erp`: the fraction of a separation removed per
/// step), each carries the joints' separations the recorded motion built
/// up, so that a robot put into one has its parts where the reference's
/// were; with it off (`None`) they carry none. Leaves the robot `h` of
/// `w` in the last state.
pub fn recorded_states_with_stretch(
    w: &mut World,
    h: RobotHandle,
    sc: &Scenario,
    last: usize,
    erp: Option<f32>,
) -> Vec<RobotState> {
    let m = w.robot_model(h).clone();
    let names = joint_names(&m);
    let mut states: Vec<RobotState> = (1..=last).map(|i| recorded_state(sc, &names, i)).collect();
    let poses = part_poses(w, h, &states);
    let Some(erp) = erp else {
        return states;
    };
    let mut e = vec![Vector3::zeros(); m.joints.len()];
    for i in 1..states.len() {
        for (e, d) in e
            .iter_mut()
            .zip(joint_drift(&m, &poses[i - 1], &poses[i], 0.02))
        {
            *e = *e * (1.0 - erp) + d;
        }
        states[i].joint_separations = e.clone();
    }
    states
}

/// Every part's pose (forward kinematics) in each of `states`, for the
/// robot `h` of `w` (left in the last state).
pub fn part_poses(
    w: &mut World,
    h: RobotHandle,
    states: &[RobotState],
) -> Vec<Vec<Isometry3<f32>>> {
    let parts = w.robot_model(h).parts.len();
    states
        .iter()
        .map(|s| {
            w.set_robot_state(h, s).expect("a recorded state");
            (0..parts).map(|p| w.part_pose(h, p)).collect()
        })
        .collect()
}

/// The heights above the ground (m) of the eight corners of a part's box
/// collider, as the part stands now; empty for a part whose collider is
/// not a box (the rise replays and `fit probe rise` count a foot's
/// corners in the ground and its lowest one with it).
pub fn box_corner_heights(w: &World, h: RobotHandle, part: usize) -> Vec<f32> {
    use rcss3d::sim::model::ShapeDesc;
    let Some(ShapeDesc::Box(size)) = w.robot_model(h).parts.get(part).and_then(|p| p.collider)
    else {
        return Vec::new();
    };
    let pose = w.part_pose(h, part);
    (0..8)
        .map(|i| {
            let sign = |bit: usize| if i & bit == 0 { -0.5 } else { 0.5 };
            let corner =
                nalgebra::Point3::new(sign(1) * size.x, sign(2) * size.y, sign(4) * size.z);
            (pose * corner).z
        })
        .collect()
}
