//! A match log (docs/protocol.md#match-log) read for the page: every line applied in
//! order to a [`TrackedScene`] (the monitor client's reading of the scene
//! graph), and the result turned into a [`WorldView`] and encoded once.
//! Seeking is then picking a frame: a delta is never applied to the wrong
//! picture, unlike RoboViz's jumps (docs/protocol.md#how-roboviz-reads-a-log).
//!
//! Plain and gzip logs are both read, through the match log's own reader
//! ([`LogReader`]: gzip recognised by its magic bytes whatever the name,
//! any number of members, a tail cut off by a crash left out). Lines that
//! do not parse are skipped and counted; a delta that does not fit the
//! last full state is skipped too, and the picture resumes at the next
//! full state.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use nalgebra::{Matrix3, Rotation3, UnitQuaternion, Vector3};
use thiserror::Error;

use super::shapes::{FieldView, RobotShapes};
use super::view::{PartView, RobotView, WorldView, UNKNOWN_MODE, UNKNOWN_PART};
use crate::monitor::follow::{NodeKind, SceneNode, TrackedScene};
use crate::monitor::log::{LogReader, LogTail};
use crate::rules::Side;

/// Why a log could not be played.
#[derive(Debug, Error)]
pub enum ReplayError {
    /// The file could not be opened or read.
    #[error("cannot read match log {path}: {source}")]
    Io {
        /// The log's path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// No line of the file is a usable full state.
    #[error("match log {0} has no readable frame (the first frame must be a full state)")]
    Empty(PathBuf),
}

/// One frame of the log, ready to send.
#[derive(Debug, Clone)]
pub struct ReplayFrame {
    /// Game time of the frame (`(time T)`).
    pub game_time: f32,
    /// The encoded [`WorldView`].
    pub bytes: Bytes,
}

/// A whole log, decoded.
#[derive(Debug, Clone)]
pub struct ReplayLog {
    /// The field the log announces.
    pub field: FieldView,
    /// Every usable frame, in file order.
    pub frames: Vec<ReplayFrame>,
    /// Seconds of game time between two frames while the clock runs (the
    /// most common step; 0.2 s when the clock never ran).
    pub period: f32,
    /// Lines skipped (unparsable, or deltas without a fitting full state).
    pub skipped: usize,
}

/// Bytes of frames the player holds at most, counted as their encoded
/// size and `FRAME_OVERHEAD` (128 bytes) each: a longer log is played up to there,
/// with a warning.
pub const MAX_FRAME_BYTES: usize = 160 << 20;

/// What a frame costs beyond its encoded bytes while the log is read:
/// its entries in the two frame lists and the allocator's rounding.
const FRAME_OVERHEAD: usize = 128;

/// Reads a log file (plain or gzip).
pub fn load(
    path: &Path,
    shapes: &RobotShapes,
    fallback: FieldView,
) -> Result<ReplayLog, ReplayError> {
    let io = |source| ReplayError::Io {
        path: path.to_owned(),
        source,
    };
    let mut reader = LogReader::open(path).map_err(io)?;
    let log = read(&mut reader, shapes, fallback).map_err(io)?;
    if let Some(tail @ (LogTail::PartialLine { .. } | LogTail::TruncatedGzip { .. })) =
        reader.tail()
    {
        tracing::warn!(
            ?tail,
            "match log ends in an incomplete line or gzip member (its server stopped \
             abruptly): played up to its last complete line"
        );
    }
    if log.frames.is_empty() {
        return Err(ReplayError::Empty(path.to_owned()));
    }
    Ok(log)
}

/// Reads log lines from any reader. A read error that is not at the very
/// end (a log cut off mid-write decompresses with an error at its end) is
/// reported; an incomplete last gzip block ends the log quietly.
pub fn read(
    mut reader: impl BufRead,
    shapes: &RobotShapes,
    fallback: FieldView,
) -> std::io::Result<ReplayLog> {
    let mut scene = TrackedScene::default();
    let mut in_sync = false;
    let mut field = None;
    let mut frames = Vec::new();
    let mut skipped = 0;
    let mut raw = Vec::with_capacity(256 * 1024);
    let mut held = 0usize;
    let mut lines = 0usize;
    loop {
        if held > MAX_FRAME_BYTES {
            tracing::warn!(
                frames = frames.len(),
                lines,
                limit_mib = MAX_FRAME_BYTES >> 20,
                "match log longer than the player holds: played up to this line, the rest \
                 left out"
            );
            break;
        }
        raw.clear();
        match reader.read_until(b'\n', &mut raw) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) if !frames.is_empty() && e.kind() == std::io::ErrorKind::InvalidInput => {
                // A gzip stream cut short: keep what decompressed.
                tracing::warn!(cause = %e, "match log ends in a damaged block");
                break;
            }
            Err(e) => {
                return Err(std::io::Error::new(
                    e.kind(),
                    format!("line {}: {e}", lines + 1),
                ))
            }
        }
        lines += 1;
        let Ok(line) = std::str::from_utf8(&raw) else {
            skipped += 1;
            continue;
        };
        let line = strip_drawing_prefix(line.trim_end_matches(['\n', '\r']));
        if line.is_empty() {
            continue;
        }
        let was = scene.full_states;
        match scene.apply(line) {
            Ok(_) => {
                if scene.full_states != was {
                    in_sync = true;
                    if field.is_none() {
                        field = Some(FieldView::from_scene(&scene, fallback));
                    }
                }
            }
            Err(_) => {
                // A bad full state leaves nothing to apply deltas to.
                if line.contains("(RSG") {
                    in_sync = false;
                }
                skipped += 1;
                continue;
            }
        }
        if !in_sync {
            skipped += 1;
            continue;
        }
        let seq = u32::try_from(frames.len()).unwrap_or(u32::MAX);
        let view = scene_view(&scene, shapes, seq);
        let bytes = view.to_bytes();
        held += bytes.len() + FRAME_OVERHEAD;
        frames.push((scene.game.time, bytes));
    }
    let count = u32::try_from(frames.len()).unwrap_or(u32::MAX);
    let times: Vec<f32> = frames.iter().map(|(t, _)| *t).collect();
    let frames = frames
        .into_iter()
        .map(|(game_time, mut bytes)| {
            // The frame count is known only now: patch it in (offset 8).
            bytes[8..12].copy_from_slice(&count.to_le_bytes());
            ReplayFrame {
                game_time,
                bytes: Bytes::from(bytes),
            }
        })
        .collect();
    Ok(ReplayLog {
        field: field.unwrap_or(fallback),
        frames,
        period: period_of(&times),
        skipped,
    })
}

/// RoboViz's own recordings may start a line with `[...]` drawing data.
fn strip_drawing_prefix(mut line: &str) -> &str {
    while line.starts_with('[') {
        match line.find(']') {
            Some(end) => line = &line[end + 1..],
            None => return "",
        }
    }
    line
}

/// The most common positive step of the game clock (median), within
/// [0.01, 1] s; 0.2 s (the reference's log step) when the clock never ran.
fn period_of(times: &[f32]) -> f32 {
    let mut steps: Vec<f32> = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 1e-4 && d.is_finite())
        .collect();
    if steps.is_empty() {
        return 0.2;
    }
    steps.sort_by(f32::total_cmp);
    steps[steps.len() / 2].clamp(0.01, 1.0)
}

type Mat = [f32; 16];

const IDENTITY: Mat = [
    1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
];

fn mul(a: &Mat, b: &Mat) -> Mat {
    let mut m = [0.0; 16];
    for col in 0..4 {
        for row in 0..4 {
            m[col * 4 + row] = (0..4).map(|k| a[k * 4 + row] * b[col * 4 + k]).sum();
        }
    }
    m
}

fn pose_of(m: &Mat) -> (Vector3<f32>, UnitQuaternion<f32>) {
    let r = Matrix3::new(m[0], m[4], m[8], m[1], m[5], m[9], m[2], m[6], m[10]);
    let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(r));
    // Logged values have 6 significant digits: renormalise.
    let q = UnitQuaternion::new_normalize(q.into_inner());
    (Vector3::new(m[12], m[13], m[14]), q)
}

/// What a part's meshes say it is (see [`crate::monitor::frame`]'s robot
/// nodes): the body and head meshes, the neck capsule, yellow and red
/// joint spheres, and the limb meshes by file name without type digit.
fn signature(node: &SceneNode) -> Option<String> {
    let mesh = first_mesh(node)?;
    let load = mesh.mesh.as_deref()?;
    if mesh.kind == NodeKind::SingleMaterialMesh {
        let shape = load.split_whitespace().next().unwrap_or("");
        return Some(match shape {
            "StdCapsule" => "neck".to_owned(),
            "StdUnitSphere" if mesh.materials.iter().any(|m| m == "matRed") => "red".to_owned(),
            "StdUnitSphere" => "yellow".to_owned(),
            other => other.to_owned(),
        });
    }
    let file = load.rsplit('/').next().unwrap_or(load);
    let stem = file.strip_suffix(".obj").unwrap_or(file);
    Some(
        stem.trim_end_matches(|c: char| c.is_ascii_digit())
            .to_owned(),
    )
}

fn first_mesh(node: &SceneNode) -> Option<&SceneNode> {
    if node.mesh.is_some() {
        return Some(node);
    }
    node.children.iter().find_map(first_mesh)
}

/// The monitor order of a Nao's parts with the signature of each.
const MONITOR_PARTS: [(&str, &str); 25] = [
    ("torso", "naobody"),
    ("neck", "neck"),
    ("head", "naohead"),
    ("rshoulder", "yellow"),
    ("rupperarm", "rupperarm"),
    ("relbow", "yellow"),
    ("rlowerarm", "rlowerarm"),
    ("lshoulder", "yellow"),
    ("lupperarm", "lupperarm"),
    ("lelbow", "yellow"),
    ("llowerarm", "llowerarm"),
    ("rhip1", "yellow"),
    ("rhip2", "yellow"),
    ("rthigh", "rthigh"),
    ("rshank", "rshank"),
    ("rankle", "red"),
    ("rfoot", "rfoot"),
    ("rtoe", "rfoot"),
    ("lhip1", "yellow"),
    ("lhip2", "yellow"),
    ("lthigh", "lthigh"),
    ("lshank", "lshank"),
    ("lankle", "red"),
    ("lfoot", "lfoot"),
    ("ltoe", "lfoot"),
];

/// The page's picture of a tracked scene: the ball (the node holding
/// `soccerball.obj`) and every top-level node holding a Nao body.
pub fn scene_view(scene: &TrackedScene, shapes: &RobotShapes, seq: u32) -> WorldView {
    let g = &scene.game;
    let mut view = WorldView {
        seq,
        frames: 0,
        server_time: g.time,
        game_time: g.time,
        play_mode: u8::try_from(g.play_mode)
            .ok()
            .filter(|m| usize::from(*m) < crate::rules::PlayMode::ALL.len())
            .unwrap_or(UNKNOWN_MODE),
        half: u8::try_from(g.half).unwrap_or(0),
        score_left: u16::try_from(g.score_left).unwrap_or(u16::MAX),
        score_right: u16::try_from(g.score_right).unwrap_or(u16::MAX),
        team_left: g.team_left.clone().unwrap_or_default(),
        team_right: g.team_right.clone().unwrap_or_default(),
        ball: Vector3::zeros(),
        ball_rot: UnitQuaternion::identity(),
        robots: Vec::new(),
    };
    let mut next_id = 0u32;
    for top in &scene.nodes {
        let top_m = if top.kind == NodeKind::Transform {
            top.matrix
        } else {
            IDENTITY
        };
        let sig = signature(top);
        if sig.as_deref() == Some("soccerball") {
            let (p, q) = pose_of(&top_m);
            view.ball = p;
            view.ball_rot = q;
            continue;
        }
        if sig.as_deref() != Some("naobody") {
            continue;
        }
        view.robots.push(robot_view(top, &top_m, shapes, next_id));
        next_id += 1;
    }
    view
}

fn robot_view(top: &SceneNode, top_m: &Mat, shapes: &RobotShapes, id: u32) -> RobotView {
    let mut robot = RobotView {
        id,
        side: None,
        unum: 0,
        robot_type: 0,
        selected: false,
        parts: Vec::with_capacity(top.children.len()),
    };
    let mut slot = 0usize;
    for child in &top.children {
        if child.kind != NodeKind::Transform {
            continue;
        }
        let Some(sig) = signature(child) else {
            continue;
        };
        while slot < MONITOR_PARTS.len() && MONITOR_PARTS[slot].1 != sig {
            slot += 1;
        }
        let name = match MONITOR_PARTS.get(slot) {
            Some((name, _)) => {
                slot += 1;
                shapes.part_index(name)
            }
            None => UNKNOWN_PART,
        };
        if sig == "naobody" {
            identify(child, &mut robot);
        }
        let (pos, rot) = pose_of(&mul(top_m, &child.matrix));
        robot.parts.push(PartView { name, pos, rot });
    }
    robot
}

/// Side, number, type and selection from the torso's nodes.
fn identify(torso: &SceneNode, robot: &mut RobotView) {
    if let Some(body) = first_mesh(torso) {
        for m in &body.materials {
            match m.as_str() {
                "matLeft" => robot.side = Some(Side::Left),
                "matRight" => robot.side = Some(Side::Right),
                _ => {
                    if let Some(n) = m.strip_prefix("matNum").and_then(|n| n.parse().ok()) {
                        robot.unum = n;
                    }
                }
            }
        }
        let file = body.mesh.as_deref().unwrap_or("");
        let digit = file
            .trim_end_matches(".obj")
            .chars()
            .last()
            .and_then(|c| c.to_digit(10));
        robot.robot_type = digit.map_or(0, |d| d as u8);
    }
    // The selection marker is the torso's transparent cylinder.
    robot.selected = torso.children.iter().any(|c| {
        first_mesh(c).is_some_and(|m| m.materials.iter().any(|x| x == "matSelect") && m.visible)
    });
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::monitor::log::LogWriter;
    use crate::monitor::{FieldParams, MonitorConfig};
    use crate::rules::{PlayMode, Side};
    use crate::sim::assets::ModelSource;
    use crate::sim::snapshot::{GameSnapshot, PartPose, RobotSnapshot, WorldSnapshot};
    use nalgebra::{Isometry3, Translation3};

    fn shapes() -> RobotShapes {
        RobotShapes::load(&ModelSource::BuiltIn).expect("models")
    }

    fn robot(
        id: u32,
        side: Side,
        unum: u8,
        robot_type: u8,
        x: f32,
        names: &[&str],
    ) -> RobotSnapshot {
        let rot = UnitQuaternion::from_euler_angles(0.1, 0.0, 0.5);
        RobotSnapshot {
            id,
            side: Some(side),
            team: Some(Arc::from("T")),
            unum,
            robot_type,
            parts: names
                .iter()
                .enumerate()
                .map(|(i, n)| PartPose {
                    name: Arc::from(*n),
                    pose: Isometry3::from_parts(Translation3::new(x, i as f32 * 0.01, 0.3), rot),
                })
                .collect(),
            selected: unum == 2,
        }
    }

    fn snapshot(cycle: u64, ball_x: f32, robots: Vec<RobotSnapshot>) -> WorldSnapshot {
        WorldSnapshot {
            cycle,
            server_time: cycle as f32 * 0.02,
            game: GameSnapshot {
                game_time: cycle as f32 * 0.02,
                play_mode: PlayMode::PlayOn,
                half: 1,
                score_left: 1,
                score_right: 2,
                team_left: Some(Arc::from("Alpha")),
                team_right: Some(Arc::from("Beta")),
                fouls: Vec::new(),
            },
            ball: Isometry3::translation(ball_x, 1.0, 0.042),
            ball_velocity: Vector3::zeros(),
            robots,
            structure_version: 1,
        }
    }

    /// The model order of the scene files (not the monitor order).
    const MODEL_ORDER: [&str; 25] = [
        "torso",
        "neck",
        "head",
        "lshoulder",
        "lupperarm",
        "lelbow",
        "llowerarm",
        "rshoulder",
        "rupperarm",
        "relbow",
        "rlowerarm",
        "lhip1",
        "lhip2",
        "lthigh",
        "lshank",
        "lankle",
        "lfoot",
        "ltoe",
        "rhip1",
        "rhip2",
        "rthigh",
        "rshank",
        "rankle",
        "rfoot",
        "rtoe",
    ];

    fn write_log(gzip: bool, dir: &Path) -> (PathBuf, Vec<WorldSnapshot>) {
        let no_toes: Vec<&str> = MODEL_ORDER
            .iter()
            .copied()
            .filter(|n| !n.ends_with("toe"))
            .collect();
        let snaps: Vec<WorldSnapshot> = (0..12u64)
            .map(|k| {
                snapshot(
                    k * 10,
                    k as f32 * 0.5,
                    vec![
                        robot(1, Side::Left, 2, 4, -3.0 + k as f32 * 0.1, &MODEL_ORDER),
                        robot(2, Side::Right, 7, 1, 3.0, &no_toes),
                    ],
                )
            })
            .collect();
        let cfg = MonitorConfig {
            log_compress: gzip,
            ..MonitorConfig::default()
        };
        let path = dir.join(if gzip { "m.log.gz" } else { "m.log" });
        let mut w = LogWriter::create(&path, &cfg, &FieldParams::default(), 5).expect("create log");
        for s in &snaps {
            w.write_frame(s).expect("write");
        }
        let path = w.path().to_owned();
        w.finish(snaps.last()).expect("finish");
        (path, snaps)
    }

    fn decode_check(log: &ReplayLog, snaps: &[WorldSnapshot]) {
        // One frame per written line: the snapshots, then the final state.
        assert_eq!(log.frames.len(), snaps.len() + 1);
        assert_eq!(log.skipped, 0);
        assert!((log.period - 0.2).abs() < 1e-3, "period {}", log.period);
        for (k, snap) in snaps.iter().enumerate() {
            let got = super::super::view::decode(&log.frames[k].bytes).expect("frame decodes");
            assert_eq!(got.seq as usize, k);
            assert_eq!(got.frames as usize, log.frames.len());
            assert!((got.game_time - snap.game.game_time).abs() < 1e-4);
            assert!((got.ball - snap.ball.translation.vector).norm() < 1e-4);
            assert_eq!(got.robots.len(), snap.robots.len());
            for (g, w) in got.robots.iter().zip(&snap.robots) {
                assert_eq!((g.side, g.unum), (w.side, w.unum));
                let torso = w.part("torso").expect("torso");
                assert!((g.parts[0].pos - torso.translation.vector).norm() < 1e-4);
            }
        }
    }

    #[test]
    fn plain_and_gzip_logs_give_the_written_frames() {
        let dir = std::env::temp_dir().join(format!("rcss3d-replay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let shapes = shapes();
        let field = FieldView::from_config(&crate::config::Config::default());
        for gzip in [false, true] {
            let (path, snaps) = write_log(gzip, &dir);
            let log = load(&path, &shapes, field).expect("log loads");
            decode_check(&log, &snaps);
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn scene_view_recovers_robots_parts_and_ball_from_monitor_frames() {
        let shapes = shapes();
        let no_toes: Vec<&str> = MODEL_ORDER
            .iter()
            .copied()
            .filter(|n| !n.ends_with("toe"))
            .collect();
        let snap = snapshot(
            50,
            2.5,
            vec![
                robot(1, Side::Left, 2, 4, -3.0, &MODEL_ORDER),
                robot(2, Side::Right, 7, 1, 3.0, &no_toes),
            ],
        );
        let mut text = String::new();
        let builder = crate::monitor::FrameBuilder::new(&FieldParams::default());
        builder.write(&mut crate::monitor::ConsumerState::new(), &snap, &mut text);
        let mut scene = TrackedScene::default();
        scene.apply(&text).expect("valid frame");
        let got = scene_view(&scene, &shapes, 0);
        let want = WorldView::from_snapshot(&snap, &shapes);
        assert!((got.ball - want.ball).norm() < 1e-4);
        assert_eq!(got.play_mode, PlayMode::PlayOn.index());
        assert_eq!((got.score_left, got.score_right), (1, 2));
        assert_eq!(
            (got.team_left.as_str(), got.team_right.as_str()),
            ("Alpha", "Beta")
        );
        assert_eq!(got.robots.len(), 2);
        for (g, w) in got.robots.iter().zip(&want.robots) {
            assert_eq!(
                (g.side, g.unum, g.robot_type),
                (w.side, w.unum, w.robot_type)
            );
            assert_eq!(g.selected, w.selected);
            assert_eq!(g.parts.len(), w.parts.len());
            // Same parts (by name) at the same poses, whatever the order.
            for wp in &w.parts {
                let gp = g
                    .parts
                    .iter()
                    .find(|p| p.name == wp.name)
                    .unwrap_or_else(|| panic!("part {} missing", wp.name));
                assert_ne!(gp.name, UNKNOWN_PART);
                assert!((gp.pos - wp.pos).norm() < 1e-4);
                assert!(gp.rot.angle_to(&wp.rot) < 1e-3);
            }
        }
    }

    #[test]
    fn damaged_lines_are_skipped_and_drawing_prefixes_removed() {
        assert_eq!(strip_drawing_prefix("[1,2][3]((time 0))"), "((time 0))");
        assert_eq!(strip_drawing_prefix("[1,2"), "");
        let shapes = shapes();
        let field = FieldView::from_config(&crate::config::Config::default());
        let snap = snapshot(0, 0.0, Vec::new());
        let mut full = String::new();
        let builder = crate::monitor::FrameBuilder::new(&FieldParams::default());
        let mut state = crate::monitor::ConsumerState::new();
        builder.write(&mut state, &snap, &mut full);
        let mut delta = String::new();
        builder.write(&mut state, &snapshot(10, 1.0, Vec::new()), &mut delta);
        let text = format!("((time 0))(RDS 0 1)(nd)\n{full}\n(garbage\n\n{delta}\n");
        let log = read(text.as_bytes(), &shapes, field).expect("reads");
        assert_eq!(log.frames.len(), 2);
        assert_eq!(log.skipped, 2);
        assert!(read(&b"(nothing)\n"[..], &shapes, field)
            .expect("reads")
            .frames
            .is_empty());
    }

    #[test]
    fn period_is_the_median_clock_step() {
        assert_eq!(period_of(&[0.0, 0.0, 0.0]), 0.2);
        assert!((period_of(&[0.0, 0.0, 0.04, 0.08, 0.12, 3.0]) - 0.04).abs() < 1e-6);
    }
}
