//! Snapshots built by hand, a real `serve` on loopback, and text helpers.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use rcss3d::monitor::{serve, FieldParams, MonitorConfig, MonitorRequest};
use rcss3d::rules::{PlayMode, Side};
use rcss3d::sim::snapshot::{GameSnapshot, PartPose, RobotSnapshot, WorldSnapshot};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

/// Part centres relative to the torso in the zero pose (docs/physics.md#robot-model),
/// in the model order of the scene files (not the monitor order).
pub const NAO_PARTS: [(&str, [f32; 3]); 23] = [
    ("torso", [0.0, 0.0, 0.0]),
    ("neck", [0.0, 0.0, 0.09]),
    ("head", [0.0, 0.0, 0.155]),
    ("lshoulder", [-0.098, 0.0, 0.075]),
    ("lupperarm", [-0.108, 0.02, 0.075]),
    ("lelbow", [-0.098, 0.09, 0.084]),
    ("llowerarm", [-0.098, 0.14, 0.084]),
    ("rshoulder", [0.098, 0.0, 0.075]),
    ("rupperarm", [0.108, 0.02, 0.075]),
    ("relbow", [0.098, 0.09, 0.084]),
    ("rlowerarm", [0.098, 0.14, 0.084]),
    ("lhip1", [-0.055, -0.01, -0.115]),
    ("lhip2", [-0.055, -0.01, -0.115]),
    ("lthigh", [-0.055, 0.0, -0.155]),
    ("lshank", [-0.055, 0.005, -0.28]),
    ("lankle", [-0.055, -0.005, -0.335]),
    ("lfoot", [-0.055, 0.025, -0.375]),
    ("rhip1", [0.055, -0.01, -0.115]),
    ("rhip2", [0.055, -0.01, -0.115]),
    ("rthigh", [0.055, 0.0, -0.155]),
    ("rshank", [0.055, 0.005, -0.28]),
    ("rankle", [0.055, -0.005, -0.335]),
    ("rfoot", [0.055, 0.025, -0.375]),
];

/// A standing Nao with its torso at (x, y, 0.385), facing `yaw` (rad; 0 =
/// torso +y along field +y). Type 4 gets toes.
pub fn robot(
    id: u32,
    side: Option<Side>,
    unum: u8,
    robot_type: u8,
    x: f32,
    y: f32,
    yaw: f32,
) -> RobotSnapshot {
    let rot = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), yaw);
    let torso = Vector3::new(x, y, 0.385);
    let mut parts: Vec<(&str, [f32; 3])> = NAO_PARTS.to_vec();
    if robot_type == 4 {
        parts.push(("ltoe", [-0.055, 0.087, -0.38]));
        parts.push(("rtoe", [0.055, 0.087, -0.38]));
    }
    let parts = parts
        .into_iter()
        .map(|(name, off)| {
            let p = torso + rot * Vector3::from(off);
            PartPose {
                name: Arc::from(name),
                pose: Isometry3::from_parts(Translation3::from(p), rot),
            }
        })
        .collect();
    RobotSnapshot {
        id,
        side,
        team: side.map(|s| Arc::from(if s == Side::Left { "Alpha" } else { "Beta" })),
        unum,
        robot_type,
        parts,
        selected: false,
    }
}

/// A snapshot at `cycle` (50 Hz) with the ball at rest at `ball`.
pub fn snapshot(cycle: u64, ball: [f32; 2], robots: Vec<RobotSnapshot>) -> WorldSnapshot {
    let t = cycle as f32 * 0.02;
    let has_left = robots.iter().any(|r| r.side == Some(Side::Left));
    let has_right = robots.iter().any(|r| r.side == Some(Side::Right));
    WorldSnapshot {
        cycle,
        server_time: t,
        game: GameSnapshot {
            game_time: 0.0,
            play_mode: PlayMode::BeforeKickOff,
            half: 1,
            score_left: 0,
            score_right: 0,
            team_left: has_left.then(|| Arc::from("Alpha")),
            team_right: has_right.then(|| Arc::from("Beta")),
            fouls: Vec::new(),
        },
        ball: Isometry3::translation(ball[0], ball[1], 0.042),
        ball_velocity: Vector3::zeros(),
        structure_version: robots.len() as u64,
        robots,
    }
}

/// 11 robots a side, types 0-4 mixed, spread over the field.
pub fn full_match_robots(shift: f32) -> Vec<RobotSnapshot> {
    let mut out = Vec::new();
    for (k, side) in [Side::Left, Side::Right].into_iter().enumerate() {
        for unum in 1..=11u8 {
            let sign = if side == Side::Left { -1.0 } else { 1.0 };
            let x = sign * (1.0 + f32::from(unum)) + shift;
            let y = f32::from(unum % 5) * 2.0 - 4.0 + shift * 0.5;
            out.push(robot(
                (k as u32) * 100 + u32::from(unum),
                Some(side),
                unum,
                unum % 5,
                x,
                y,
                shift + f32::from(unum) * 0.3,
            ));
        }
    }
    out
}

/// The monitor server alone (`monitor::serve`) on an ephemeral loopback
/// port, fed hand-built snapshots instead of a simulation, with the
/// monitor commands it forwards collected in `commands`. (The whole server
/// for end-to-end tests is `tests/util`'s `TestServer`.)
pub struct MonitorFeed {
    pub addr: SocketAddr,
    pub snapshots: watch::Sender<Option<Arc<WorldSnapshot>>>,
    pub commands: mpsc::Receiver<MonitorRequest>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl MonitorFeed {
    pub async fn start(cfg: MonitorConfig) -> MonitorFeed {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (snap_tx, snap_rx) = watch::channel(None);
        let (cmd_tx, cmd_rx) = mpsc::channel(64);
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let task = tokio::spawn(serve(
            listener,
            snap_rx,
            cmd_tx,
            Arc::new(cfg),
            FieldParams::default(),
            async move {
                let _ = stop_rx.await;
            },
        ));
        MonitorFeed {
            addr,
            snapshots: snap_tx,
            commands: cmd_rx,
            stop: Some(stop_tx),
            task: Some(task),
        }
    }

    pub fn publish(&self, snap: WorldSnapshot) {
        self.snapshots.send_replace(Some(Arc::new(snap)));
    }

    /// Triggers shutdown and waits for `serve` to return.
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            tokio::time::timeout(std::time::Duration::from_secs(5), t)
                .await
                .expect("serve did not stop")
                .unwrap();
        }
    }
}

/// Replaces every number with `#`, so two messages can be compared by
/// shape (predicates, node kinds, order, spacing) without their values.
pub fn shape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut token = String::new();
    let flush = |token: &mut String, out: &mut String| {
        if !token.is_empty() {
            if token.parse::<f64>().is_ok() {
                out.push('#');
            } else {
                out.push_str(token);
            }
            token.clear();
        }
    };
    for c in text.chars() {
        if c == '(' || c == ')' || c.is_whitespace() {
            flush(&mut token, &mut out);
            out.push(c);
        } else {
            token.push(c);
        }
    }
    flush(&mut token, &mut out);
    out
}

/// Splits a list's text `(A B C)` into its top-level items' texts.
pub fn items(list: &str) -> Vec<&str> {
    let inner = &list[1..list.len() - 1];
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, None);
    for (i, c) in inner.char_indices() {
        match c {
            '(' => {
                if depth == 0 {
                    start = Some(i);
                }
                depth += 1;
            }
            ')' => {
                depth -= 1;
                if depth == 0 {
                    if let Some(s) = start.take() {
                        out.push(&inner[s..=i]);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The three top-level parts of a message.
pub fn parts(msg: &str) -> [&str; 3] {
    let wrapped = format!("({msg})");
    let v = items(&wrapped);
    assert_eq!(v.len(), 3, "three parts in {msg:.200}");
    // Map back into `msg` (offsets shift by the added `(`).
    let mut res = [""; 3];
    let mut from = 0;
    for (k, p) in v.iter().enumerate() {
        let at = msg[from..].find(p).unwrap() + from;
        res[k] = &msg[at..at + p.len()];
        from = at + p.len();
    }
    res
}

/// Reads a transcript file of the reference (one message per line).
pub fn transcript(name: &str) -> Vec<String> {
    let path = format!(
        "{}/tests/data/reference/transcripts/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Prints both in full when they differ (like ripgrep's `eqnice!`).
#[macro_export]
macro_rules! eqnice {
    ($expected:expr, $got:expr) => {{
        let expected = &$expected;
        let got = &$got;
        if expected != got {
            panic!(
                "\n===== expected =====\n{}\n===== got =====\n{}\n====================\n",
                expected, got
            );
        }
    }};
}
