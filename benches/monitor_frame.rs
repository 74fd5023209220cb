//! Building monitor messages for a full 11-vs-11 match: one full state and
//! one delta in which every robot moved.

use std::sync::Arc;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use rcss3d::monitor::{ConsumerState, FieldParams, FrameBuilder};
use rcss3d::rules::{PlayMode, Side};
use rcss3d::sim::snapshot::{GameSnapshot, PartPose, RobotSnapshot, WorldSnapshot};

/// Robots per team.
const TEAM_SIZE: u8 = 11;
/// Metres every robot moves between the two snapshots of the delta.
const STEP: f32 = 0.05;
/// Parts of a type-0 Nao, in model order, with zero-pose offsets.
const PARTS: [(&str, [f32; 3]); 23] = [
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

fn world(shift: f32) -> WorldSnapshot {
    let mut robots = Vec::new();
    for side in [Side::Left, Side::Right] {
        for unum in 1..=TEAM_SIZE {
            let rot =
                UnitQuaternion::from_axis_angle(&Vector3::z_axis(), 0.3 * f32::from(unum) + shift);
            let torso = Vector3::new(
                side.sign() * -f32::from(unum) + shift,
                f32::from(unum % 5) - 2.0,
                0.385,
            );
            let parts = PARTS
                .iter()
                .map(|(name, off)| PartPose {
                    name: Arc::from(*name),
                    pose: Isometry3::from_parts(
                        Translation3::from(torso + rot * Vector3::from(*off)),
                        rot,
                    ),
                })
                .collect();
            robots.push(RobotSnapshot {
                id: u32::from(unum) + if side == Side::Left { 0 } else { 100 },
                side: Some(side),
                team: None,
                unum,
                robot_type: unum % 4,
                parts,
                selected: false,
            });
        }
    }
    WorldSnapshot {
        cycle: 0,
        server_time: 0.0,
        game: GameSnapshot {
            game_time: 12.34,
            play_mode: PlayMode::PlayOn,
            half: 1,
            score_left: 0,
            score_right: 0,
            team_left: Some(Arc::from("Alpha")),
            team_right: Some(Arc::from("Beta")),
            fouls: Vec::new(),
        },
        ball: Isometry3::translation(shift, 0.0, 0.042),
        ball_velocity: Vector3::zeros(),
        robots,
        structure_version: 22,
    }
}

fn bench(c: &mut Criterion) {
    let builder = FrameBuilder::new(&FieldParams::default());
    let (a, b) = (world(0.0), world(STEP));
    let mut out = String::with_capacity(256 * 1024);
    c.bench_function("monitor_full_state_22_robots", |bench| {
        bench.iter(|| {
            let mut st = ConsumerState::new();
            out.clear();
            builder.write_full(&mut st, black_box(&a), "", &mut out);
            black_box(out.len())
        })
    });
    let mut st = ConsumerState::new();
    builder.write_full(&mut st, &a, "", &mut out);
    c.bench_function("monitor_delta_22_robots_all_moving", |bench| {
        bench.iter(|| {
            // Same starting point every iteration: a clone of the state
            // after the full state, then the delta to the moved world.
            let mut s = st.clone();
            out.clear();
            builder.write_delta(&mut s, black_box(&b), &mut out);
            black_box(out.len())
        })
    });
    let mut still = st.clone();
    builder.write_delta(&mut still, &a, &mut out);
    c.bench_function("monitor_delta_22_robots_still", |bench| {
        bench.iter(|| {
            out.clear();
            builder.write_delta(&mut still, black_box(&a), &mut out);
            black_box(out.len())
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
