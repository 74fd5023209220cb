//! Vision cost: `write_see` for one observer with the 21 other robots of an
//! 11 v 11 match in view, and for all 22 observers of one vision cycle (what
//! the server's prepare phase does every third cycle).
//!
//! The inputs are named constants: a 4-4-2 formation per team, a standing
//! robot's visible parts, the stock vision settings (noise on, 120 x 120
//! view cones, lines on) and a fixed RNG seed.
//!
//! Run: `cargo bench --bench perception`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use rcss3d::perception::vision::{write_see, FieldGeometry, SeenRobot, VisionConfig, VisionInput};
use rcss3d::rules::Side;

/// Team names as long as typical league names.
const TEAM_LEFT: &str = "FCPortugal";
const TEAM_RIGHT: &str = "Magmaoffenburg";

/// Left team positions in the field frame (x, y), uniform numbers 1..11,
/// all facing +x; the right team is the mirror image facing -x.
const FORMATION: [(f32, f32); 11] = [
    (-14.8, 0.0),
    (-11.0, -6.0),
    (-11.0, -2.0),
    (-11.0, 2.0),
    (-11.0, 6.0),
    (-7.0, -6.0),
    (-7.0, -2.0),
    (-7.0, 2.0),
    (-7.0, 6.0),
    (-3.0, -2.5),
    (-3.0, 2.5),
];

/// The observer of the one-observer bench is the left goalkeeper (index 0),
/// behind everybody, facing +x: from there the 21 other robots are inside
/// the 120 degree cone.
const OBSERVER: usize = 0;

/// Parts of a standing Nao relative to its feet midpoint, in the robot
/// frame (x right, y forward, z up), in vision's part order: head, right
/// lower arm, left lower arm, right foot, left foot.
const STANDING_PARTS: [(f32, f32, f32); 5] = [
    (0.0, 0.0, 0.54),
    (0.10, 0.144, 0.47),
    (-0.10, 0.144, 0.47),
    (0.055, 0.01, 0.02),
    (-0.055, 0.01, 0.02),
];

/// Ball position, field frame.
const BALL: (f32, f32, f32) = (0.5, 0.3, 0.042);

/// Head pitch of every robot, degrees (looking slightly down).
const HEAD_PITCH_DEG: f32 = -10.0;

/// Calibration offset of the observer (within the stock 5 mm).
const CALIBRATION: (f32, f32, f32) = (0.002, -0.003, 0.001);

const SEED: u64 = 42;

/// Rotation of a robot facing `heading_deg` (field frame, 0 = +x); the
/// model's forward axis is +y.
fn heading_rotation(heading_deg: f32) -> UnitQuaternion<f32> {
    UnitQuaternion::from_axis_angle(&Vector3::z_axis(), (heading_deg - 90.0).to_radians())
}

fn parts_at(x: f32, y: f32, heading_deg: f32) -> [Option<Vector3<f32>>; 5] {
    let rot = heading_rotation(heading_deg);
    STANDING_PARTS
        .map(|(px, py, pz)| Some(rot * Vector3::new(px, py, 0.0) + Vector3::new(x, y, pz)))
}

fn camera_at(x: f32, y: f32, heading_deg: f32) -> Isometry3<f32> {
    let rot = heading_rotation(heading_deg)
        * UnitQuaternion::from_axis_angle(&Vector3::x_axis(), HEAD_PITCH_DEG.to_radians());
    let (_, _, hz) = STANDING_PARTS[0];
    Isometry3::from_parts(Vector3::new(x, y, hz).into(), rot)
}

/// (position, heading) of all 22 robots: left 1..11, then right 1..11.
fn poses() -> Vec<(Side, u8, f32, f32, f32)> {
    let mut v = Vec::with_capacity(22);
    for (i, (x, y)) in FORMATION.iter().enumerate() {
        v.push((Side::Left, i as u8 + 1, *x, *y, 0.0));
    }
    for (i, (x, y)) in FORMATION.iter().enumerate() {
        v.push((Side::Right, i as u8 + 1, -*x, -*y, 180.0));
    }
    v
}

fn robots<'a>(poses: &[(Side, u8, f32, f32, f32)]) -> Vec<SeenRobot<'a>> {
    poses
        .iter()
        .map(|&(side, unum, x, y, h)| SeenRobot {
            team: if side == Side::Left {
                TEAM_LEFT
            } else {
                TEAM_RIGHT
            },
            side,
            unum,
            is_self: false,
            parts: parts_at(x, y, h),
        })
        .collect()
}

fn bench_vision(c: &mut Criterion) {
    let cfg = VisionConfig::default();
    let field = FieldGeometry::default();
    let ball = Vector3::new(BALL.0, BALL.1, BALL.2);
    let calibration = Vector3::new(CALIBRATION.0, CALIBRATION.1, CALIBRATION.2);
    let poses = poses();
    let mut seen = robots(&poses);

    // One observer (left 1, the goalkeeper) with the other 21 in view.
    let mut one = seen.clone();
    one[OBSERVER].is_self = true;
    let (_, _, ox, oy, oh) = poses[OBSERVER];
    let input = VisionInput {
        camera: camera_at(ox, oy, oh),
        side: Some(Side::Left),
        calibration,
        ball,
        robots: &one,
        field,
    };
    let mut out = String::with_capacity(8192);
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    write_see(&mut out, &input, &cfg, &mut rng);
    for (i, r) in one.iter().enumerate().filter(|(i, _)| *i != OBSERVER) {
        let label = format!("(P (team {}) (id {})", r.team, r.unum);
        assert!(
            out.contains(&label),
            "bench setup: robot {i} must be in view:\n{out}"
        );
    }
    let bytes = out.len();

    let mut g = c.benchmark_group("vision");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("write_see_1_observer_21_in_view", |b| {
        b.iter(|| {
            out.clear();
            write_see(&mut out, black_box(&input), &cfg, &mut rng);
            black_box(out.len())
        })
    });
    g.finish();

    // Every robot observes once, as in a vision cycle of the server.
    let mut g = c.benchmark_group("vision");
    g.throughput(Throughput::Elements(22));
    let mut rngs: Vec<ChaCha8Rng> = (0..22)
        .map(|i| ChaCha8Rng::seed_from_u64(SEED + i))
        .collect();
    g.bench_function("write_see_22_observers", |b| {
        b.iter(|| {
            let mut total = 0;
            for i in 0..poses.len() {
                let (side, _, x, y, h) = poses[i];
                seen[i].is_self = true;
                let input = VisionInput {
                    camera: camera_at(x, y, h),
                    side: Some(side),
                    calibration,
                    ball,
                    robots: &seen,
                    field,
                };
                out.clear();
                write_see(&mut out, black_box(&input), &cfg, &mut rngs[i]);
                seen[i].is_self = false;
                total += out.len();
            }
            black_box(total)
        })
    });
    g.finish();
}

criterion_group!(benches, bench_vision);
criterion_main!(benches);
