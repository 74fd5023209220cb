//! S-expression costs on both directions of the agent protocol:
//!
//! * `agent_message/*`: parsing (and decoding into commands) what an
//!   FCPCodebase agent sends every cycle: 24 joint speeds, a `say` and
//!   `(syn)` (what each connection task does per message);
//! * `perception_frame/*`: writing a full perception frame the way the
//!   server's prepare phase does (`push_real` & co.), with and without the
//!   `See` of a vision cycle, and parsing the frame without `See` back
//!   with our parser. The parser is the one for agents' messages, capped
//!   at `MAX_NODES` elements; a frame that sees 21 robots has more, so it
//!   is not parsed (the server never parses its own frames).
//!
//! Inputs are named constants. Run: `cargo bench --bench sexp_parse`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use rcss3d::command::decode_all;
use rcss3d::perception::format::{push_int, push_real};
use rcss3d::perception::hear::write_hear;
use rcss3d::perception::vision::{write_see, FieldGeometry, SeenRobot, VisionConfig, VisionInput};
use rcss3d::rules::Side;
use rcss3d::sexp::{parse, ParseError};

/// One cycle of an FCPCodebase agent with a type 4 robot: 24 joint speed
/// commands (5 decimals, as Python `%.5f`), one `say`, then `(syn)`.
const FCP_MESSAGE: &str = "(he1 0.00000)(he2 -0.51234)\
(lle1 0.00000)(rle1 0.00000)(lle2 0.12500)(rle2 -0.12500)\
(lle3 3.21456)(rle3 -1.87342)(lle4 -6.13950)(rle4 4.02011)\
(lle5 2.75309)(rle5 -2.33210)(lle6 -0.08765)(rle6 0.09876)\
(lae1 -1.50000)(rae1 1.44321)(lae2 0.50000)(rae2 -0.50000)\
(lae3 0.00000)(rae3 0.00000)(lae4 -0.75000)(rae4 0.75000)\
(lle7 1.23456)(rle7 -1.23456)\
(say 7Gx2pQ-3k)(syn)";

/// Names of the hinge perceptors of a type 4 robot, in the order frames
/// carry them.
const HJ_NAMES: [&str; 24] = [
    "hj1", "hj2", "raj1", "raj2", "raj3", "raj4", "laj1", "laj2", "laj3", "laj4", "rlj1", "rlj2",
    "rlj3", "rlj4", "rlj5", "rlj6", "rlj7", "llj1", "llj2", "llj3", "llj4", "llj5", "llj6", "llj7",
];

/// Joint angles in degrees of a robot in a walking stance.
const HJ_ANGLES: [f32; 24] = [
    -0.01, -22.35, -90.12, -10.5, 89.93, 45.2, -89.77, 10.48, -90.04, -45.23, -0.0, 3.11, 28.7,
    -57.9, 29.2, -3.1, 0.12, -0.0, -3.08, 28.65, -58.03, 29.4, 3.07, 0.09,
];

/// Server clock, game time, play mode, scores.
const NOW: f32 = 123.46;
const GAME_TIME: f32 = 87.3;
const PLAY_MODE: &str = "PlayOn";
const SCORE: (i64, i64) = (1, 0);

/// Gyro (deg/s), accelerometer (m/s²), the two foot sensors (point, force)
/// and the toe sensors of a type 4 robot.
const GYR: [f32; 3] = [1.23, -0.45, 0.07];
const ACC: [f32; 3] = [0.12, -0.33, 9.79];
const FRP: [(&str, [f32; 3], [f32; 3]); 4] = [
    ("lf", [0.01, -0.02, -0.01], [0.12, -0.3, 24.5]),
    ("rf", [-0.01, 0.01, -0.01], [-0.1, 0.25, 22.9]),
    ("lf1", [0.0, 0.01, -0.01], [0.0, 0.0, 2.1]),
    ("rf1", [0.0, 0.01, -0.01], [0.0, 0.0, 1.8]),
];

/// One heard message from a team mate.
const HEARD: (&str, f32, &str) = ("FCPortugal", -35.71, "7Gx2pQ-3k");

/// Observer and the 21 other robots for the `See` part: positions (x, y)
/// and headings (degrees) in the field frame.
const OBSERVER: (f32, f32, f32) = (-14.8, 0.0, 0.0);
const OTHERS: [(Side, u8, f32, f32, f32); 21] = [
    (Side::Left, 2, -11.0, -6.0, 0.0),
    (Side::Left, 3, -11.0, -2.0, 0.0),
    (Side::Left, 4, -11.0, 2.0, 0.0),
    (Side::Left, 5, -11.0, 6.0, 0.0),
    (Side::Left, 6, -7.0, -6.0, 0.0),
    (Side::Left, 7, -7.0, -2.0, 0.0),
    (Side::Left, 8, -7.0, 2.0, 0.0),
    (Side::Left, 9, -7.0, 6.0, 0.0),
    (Side::Left, 10, -3.0, -2.5, 0.0),
    (Side::Left, 11, -3.0, 2.5, 0.0),
    (Side::Right, 1, 14.8, 0.0, 180.0),
    (Side::Right, 2, 11.0, 6.0, 180.0),
    (Side::Right, 3, 11.0, 2.0, 180.0),
    (Side::Right, 4, 11.0, -2.0, 180.0),
    (Side::Right, 5, 11.0, -6.0, 180.0),
    (Side::Right, 6, 7.0, 6.0, 180.0),
    (Side::Right, 7, 7.0, 2.0, 180.0),
    (Side::Right, 8, 7.0, -2.0, 180.0),
    (Side::Right, 9, 7.0, -6.0, 180.0),
    (Side::Right, 10, 3.0, 2.5, 180.0),
    (Side::Right, 11, 3.0, -2.5, 180.0),
];
const TEAM_LEFT: &str = "FCPortugal";
const TEAM_RIGHT: &str = "Magmaoffenburg";
const BALL: (f32, f32, f32) = (0.5, 0.3, 0.042);
const SEED: u64 = 7;

fn push_vec(out: &mut String, v: &[f32; 3]) {
    push_real(out, v[0]);
    out.push(' ');
    push_real(out, v[1]);
    out.push(' ');
    push_real(out, v[2]);
}

fn heading_rotation(heading_deg: f32) -> UnitQuaternion<f32> {
    UnitQuaternion::from_axis_angle(&Vector3::z_axis(), (heading_deg - 90.0).to_radians())
}

fn parts_at(x: f32, y: f32, heading_deg: f32) -> [Option<Vector3<f32>>; 5] {
    let rot = heading_rotation(heading_deg);
    [
        (0.0, 0.0, 0.54),
        (0.10, 0.144, 0.47),
        (-0.10, 0.144, 0.47),
        (0.055, 0.01, 0.02),
        (-0.055, 0.01, 0.02),
    ]
    .map(|(px, py, pz)| Some(rot * Vector3::new(px, py, 0.0) + Vector3::new(x, y, pz)))
}

/// Writes one perception frame in the server's order: time, GS, hear, GYR,
/// ACC, HJ..., See (on vision cycles), FRP...
fn write_frame(out: &mut String, see: Option<(&VisionInput<'_>, &VisionConfig, &mut ChaCha8Rng)>) {
    out.push_str("(time (now ");
    push_real(out, NOW);
    out.push_str("))(GS (sl ");
    push_int(out, SCORE.0);
    out.push_str(") (sr ");
    push_int(out, SCORE.1);
    out.push_str(") (t ");
    push_real(out, GAME_TIME);
    out.push_str(") (pm ");
    out.push_str(PLAY_MODE);
    out.push_str("))");
    write_hear(out, Some(HEARD.0), GAME_TIME, Some(HEARD.1), HEARD.2);
    out.push_str("(GYR (n torso) (rt ");
    push_vec(out, &GYR);
    out.push_str("))(ACC (n torso) (a ");
    push_vec(out, &ACC);
    out.push_str("))");
    for (name, angle) in HJ_NAMES.iter().zip(HJ_ANGLES) {
        out.push_str("(HJ (n ");
        out.push_str(name);
        out.push_str(") (ax ");
        push_real(out, angle);
        out.push_str("))");
    }
    if let Some((input, cfg, rng)) = see {
        write_see(out, input, cfg, rng);
    }
    for (name, c, f) in FRP {
        out.push_str("(FRP (n ");
        out.push_str(name);
        out.push_str(") (c ");
        push_vec(out, &c);
        out.push_str(") (f ");
        push_vec(out, &f);
        out.push_str("))");
    }
}

fn bench_agent_message(c: &mut Criterion) {
    let bytes = FCP_MESSAGE.as_bytes();
    let parsed = parse(bytes);
    assert!(parsed.error.is_none(), "bench input must parse");
    let decoded = decode_all(&parsed);
    assert_eq!(decoded.len(), 26);
    assert!(
        decoded.iter().all(|c| c.is_ok()),
        "bench input must decode: {decoded:?}"
    );

    let mut g = c.benchmark_group("agent_message");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("parse_fcp_24_joints_say_syn", |b| {
        b.iter(|| parse(black_box(bytes)))
    });
    g.bench_function("parse_and_decode_fcp_24_joints_say_syn", |b| {
        b.iter(|| {
            let parsed = parse(black_box(bytes));
            decode_all(&parsed)
        })
    });
    g.finish();
}

fn bench_perception_frame(c: &mut Criterion) {
    let mut seen: Vec<SeenRobot<'_>> = vec![SeenRobot {
        team: TEAM_LEFT,
        side: Side::Left,
        unum: 1,
        is_self: true,
        parts: parts_at(OBSERVER.0, OBSERVER.1, OBSERVER.2),
    }];
    seen.extend(OTHERS.iter().map(|&(side, unum, x, y, h)| SeenRobot {
        team: if side == Side::Left {
            TEAM_LEFT
        } else {
            TEAM_RIGHT
        },
        side,
        unum,
        is_self: false,
        parts: parts_at(x, y, h),
    }));
    let input = VisionInput {
        camera: Isometry3::from_parts(
            Vector3::new(OBSERVER.0, OBSERVER.1, 0.54).into(),
            heading_rotation(OBSERVER.2),
        ),
        side: Some(Side::Left),
        calibration: Vector3::new(0.002, -0.003, 0.001),
        ball: Vector3::new(BALL.0, BALL.1, BALL.2),
        robots: &seen,
        field: FieldGeometry::default(),
    };
    let cfg = VisionConfig::default();
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);

    let mut plain = String::with_capacity(8192);
    write_frame(&mut plain, None);
    let mut full = String::with_capacity(8192);
    write_frame(&mut full, Some((&input, &cfg, &mut rng)));
    assert!(
        full.len() <= 8192,
        "a frame must fit FCP's 8 KiB buffer ({} bytes)",
        full.len()
    );
    let parsed = parse(plain.as_bytes());
    assert!(
        parsed.error.is_none(),
        "the frame without See must parse back: {:?}",
        parsed.error
    );
    assert!(
        matches!(
            parse(full.as_bytes()).error,
            Some(ParseError::TooManyNodes { .. })
        ),
        "a frame seeing 21 robots is beyond the agent-message parser's node cap"
    );

    let mut out = String::with_capacity(8192);
    let mut g = c.benchmark_group("perception_frame");
    g.throughput(Throughput::Bytes(plain.len() as u64));
    g.bench_function("write_without_see", |b| {
        b.iter(|| {
            out.clear();
            write_frame(&mut out, None);
            black_box(out.len())
        })
    });
    g.throughput(Throughput::Bytes(full.len() as u64));
    g.bench_function("write_with_see_21_robots", |b| {
        b.iter(|| {
            out.clear();
            write_frame(&mut out, Some((black_box(&input), &cfg, &mut rng)));
            black_box(out.len())
        })
    });
    g.throughput(Throughput::Bytes(plain.len() as u64));
    g.bench_function("parse_without_see", |b| {
        b.iter(|| parse(black_box(plain.as_bytes())))
    });
    g.bench_function("display_parsed_without_see", |b| {
        b.iter(|| {
            out.clear();
            for item in &parsed.items {
                use std::fmt::Write;
                let _ = write!(out, "{item}");
            }
            black_box(out.len())
        })
    });
    g.finish();
}

criterion_group!(benches, bench_agent_message, bench_perception_frame);
criterion_main!(benches);
