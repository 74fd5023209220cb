//! Tests of the vision perceptor.
//!
//! Expected values are computed here independently of the implementation:
//! in f64, with the head axes written out by hand (no nalgebra rotation),
//! the line table typed in from the spec, and line clipping found by
//! sampling plus bisection instead of plane clipping.

use super::*;
use nalgebra::UnitQuaternion;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

// ---------------------------------------------------------------- helpers

/// A tiny S-expression tree for reading messages back (test only).
#[derive(Clone, Debug, PartialEq)]
enum Sx {
    A(String),
    L(Vec<Sx>),
}

/// Parses a sequence of top-level S-expressions (no strings, no escapes).
fn parse_all(s: &str) -> Vec<Sx> {
    fn list(b: &[u8], i: &mut usize) -> Sx {
        assert_eq!(b[*i], b'(');
        *i += 1;
        let mut items = Vec::new();
        loop {
            match b[*i] {
                b' ' => *i += 1,
                b')' => {
                    *i += 1;
                    return Sx::L(items);
                }
                b'(' => items.push(list(b, i)),
                _ => {
                    let start = *i;
                    while !matches!(b[*i], b' ' | b'(' | b')') {
                        *i += 1;
                    }
                    items.push(Sx::A(String::from_utf8(b[start..*i].to_vec()).unwrap()));
                }
            }
        }
    }
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        out.push(list(b, &mut i));
    }
    out
}

/// Prints a tree in the server's canonical form (§1.9).
fn print(x: &Sx) -> String {
    match x {
        Sx::A(a) => a.clone(),
        Sx::L(items) => {
            let inner: Vec<String> = items.iter().map(print).collect();
            if items.len() == 1 {
                format!("({} )", inner[0])
            } else {
                format!("({})", inner.join(" "))
            }
        }
    }
}

fn head(x: &Sx) -> &str {
    match x {
        Sx::L(items) => match items.first() {
            Some(Sx::A(a)) => a,
            _ => "",
        },
        Sx::A(a) => a,
    }
}

fn items(x: &Sx) -> &[Sx] {
    match x {
        Sx::L(items) => items,
        Sx::A(_) => &[],
    }
}

fn num(x: &Sx) -> f64 {
    match x {
        Sx::A(a) => a.parse().unwrap(),
        Sx::L(_) => panic!("not a number: {x:?}"),
    }
}

fn pol(x: &Sx) -> [f64; 3] {
    assert_eq!(head(x), "pol", "{x:?}");
    let it = items(x);
    assert_eq!(it.len(), 4);
    [num(&it[1]), num(&it[2]), num(&it[3])]
}

/// The elements of a `(See ...)` string.
fn see_elements(see: &str) -> Vec<Sx> {
    let top = parse_all(see);
    assert_eq!(top.len(), 1, "{see}");
    assert_eq!(head(&top[0]), "See");
    items(&top[0])[1..].to_vec()
}

/// The `(pol ..)` of a static element by name.
fn static_pol(els: &[Sx], name: &str) -> Option<[f64; 3]> {
    els.iter()
        .find(|e| head(e) == name)
        .map(|e| pol(&items(e)[1]))
}

/// The `(pol ..)` of a robot part.
fn part_pol(els: &[Sx], team: &str, id: u8, part: &str) -> Option<[f64; 3]> {
    let p = els.iter().find(|e| {
        head(e) == "P"
            && print(&items(e)[1]) == format!("(team {team})")
            && print(&items(e)[2]) == format!("(id {id})")
    })?;
    items(p)[3..]
        .iter()
        .find(|x| head(x) == part)
        .map(|x| pol(&items(x)[1]))
}

fn lines_of(els: &[Sx]) -> Vec<[[f64; 3]; 2]> {
    els.iter()
        .filter(|e| head(e) == "L")
        .map(|e| [pol(&items(e)[1]), pol(&items(e)[2])])
        .collect()
}

/// Head orientation from the heading of its forward axis (field frame,
/// degrees, 0 = +x) and its pitch (degrees, positive = looking up).
fn head_rotation(heading: f32, pitch: f32) -> UnitQuaternion<f32> {
    UnitQuaternion::from_axis_angle(&Vector3::z_axis(), (heading - 90.0).to_radians())
        * UnitQuaternion::from_axis_angle(&Vector3::x_axis(), pitch.to_radians())
}

fn camera(pos: [f32; 3], heading: f32, pitch: f32) -> Isometry3<f32> {
    Isometry3::from_parts(
        Vector3::new(pos[0], pos[1], pos[2]).into(),
        head_rotation(heading, pitch),
    )
}

/// Independent camera model in f64: head axes written out for
/// R = Rz(heading - 90) * Rx(pitch).
struct RefCam {
    o: [f64; 3],
    x: [f64; 3],
    y: [f64; 3],
    z: [f64; 3],
}

impl RefCam {
    fn new(pos: [f32; 3], heading: f32, pitch: f32) -> Self {
        let psi = (heading as f64 - 90.0).to_radians();
        let th = (pitch as f64).to_radians();
        let (sp, cp) = psi.sin_cos();
        let (st, ct) = th.sin_cos();
        RefCam {
            o: pos.map(f64::from),
            x: [cp, sp, 0.0],
            y: [-sp * ct, cp * ct, st],
            z: [sp * st, -cp * st, ct],
        }
    }

    fn local(&self, p: [f64; 3]) -> [f64; 3] {
        let r = [p[0] - self.o[0], p[1] - self.o[1], p[2] - self.o[2]];
        let dot = |a: [f64; 3]| a[0] * r[0] + a[1] * r[1] + a[2] * r[2];
        [dot(self.x), dot(self.y), dot(self.z)]
    }
}

/// (d, h, v) of a head-local vector per §3.10.1.
fn ref_polar(r: [f64; 3]) -> [f64; 3] {
    let d = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
    let mut h = r[1].atan2(r[0]).to_degrees() - 90.0;
    if h <= -180.0 {
        h += 360.0;
    }
    let v = r[2].atan2((r[0] * r[0] + r[1] * r[1]).sqrt()).to_degrees();
    [d, h, v]
}

fn ref_visible(p: [f64; 3]) -> bool {
    p[0] > 0.1 && p[1].abs() <= 60.0 && p[2].abs() <= 60.0
}

fn assert_pol_close(got: [f64; 3], want: [f64; 3], what: &str) {
    for k in 0..3 {
        assert!(
            (got[k] - want[k]).abs() <= 0.01,
            "{what}: got {got:?}, want {want:?}"
        );
    }
}

fn v3(p: [f64; 3]) -> Vector3<f32> {
    Vector3::new(p[0] as f32, p[1] as f32, p[2] as f32)
}

fn exact() -> VisionConfig {
    VisionConfig {
        add_noise: false,
        ..VisionConfig::default()
    }
}

fn see(input: &VisionInput<'_>, cfg: &VisionConfig, seed: u64) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = String::new();
    write_see(&mut out, input, cfg, &mut rng);
    out
}

/// Parts of a standing robot at (x, y) facing `heading` (degrees, field).
fn standing_parts(x: f32, y: f32, heading: f32) -> [Option<Vector3<f32>>; 5] {
    let rot = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), (heading - 90.0).to_radians());
    let at =
        |lx: f32, ly: f32, z: f32| Some(rot * Vector3::new(lx, ly, 0.0) + Vector3::new(x, y, z));
    [
        at(0.0, 0.0, 0.54),
        // Zero pose: lower arms ~0.19 m from the head at +-35 deg
        // horizontal, -22 deg vertical (agent-protocol.md §3.10.4).
        at(0.10, 0.144, 0.47),
        at(-0.10, 0.144, 0.47),
        at(0.055, 0.01, 0.02),
        at(-0.055, 0.01, 0.02),
    ]
}

/// The spec's line table (field-and-physics.md §1.4), typed in again.
fn spec_lines() -> Vec<([f64; 3], [f64; 3])> {
    let p = |x: f64, y: f64| [x, y, 0.0];
    let mut v = vec![
        (p(0.0, -10.0), p(0.0, 10.0)),
        (p(15.0, -10.0), p(15.0, 10.0)),
        (p(-15.0, -10.0), p(-15.0, 10.0)),
        (p(15.0, 10.0), p(-15.0, 10.0)),
        (p(15.0, -10.0), p(-15.0, -10.0)),
        (p(13.2, 3.0), p(13.2, -3.0)),
        (p(13.2, 3.0), p(15.0, 3.0)),
        (p(13.2, -3.0), p(15.0, -3.0)),
        (p(-13.2, 3.0), p(-13.2, -3.0)),
        (p(-13.2, 3.0), p(-15.0, 3.0)),
        (p(-13.2, -3.0), p(-15.0, -3.0)),
    ];
    for k in 0..10 {
        let a = (36.0 * k as f64).to_radians();
        let b = (36.0 * (k + 1) as f64).to_radians();
        v.push((
            p(2.0 * a.cos(), 2.0 * a.sin()),
            p(2.0 * b.cos(), 2.0 * b.sin()),
        ));
    }
    v
}

/// Expected reported line in head coordinates, per the procedure of
/// §3.10.6 as the reference implements it (whole line if both ends pass
/// the point test; else near-plane cut, crossings with the image
/// rectangle's edges in the order top, bottom, left, right found by
/// bisection, at most two). Returns the end points and whether each was
/// replaced.
fn ref_line(cam: &RefCam, a: [f64; 3], b: [f64; 3]) -> Option<([f64; 3], [f64; 3], bool, bool)> {
    let t60 = 60f64.to_radians().tan();
    let la = cam.local(a);
    let lb = cam.local(b);
    let (see_a, see_b) = (ref_visible(ref_polar(la)), ref_visible(ref_polar(lb)));
    if see_a && see_b {
        return Some((la, lb, false, false));
    }
    let lerp = |p: [f64; 3], q: [f64; 3], t: f64| [0, 1, 2].map(|k| p[k] + t * (q[k] - p[k]));
    let (mut ca, mut cb) = (la, lb);
    if ca[1] < 0.1 && cb[1] >= 0.1 {
        ca = lerp(cb, ca, (0.1 - cb[1]) / (ca[1] - cb[1]));
    } else if cb[1] < 0.1 && ca[1] >= 0.1 {
        cb = lerp(ca, cb, (0.1 - ca[1]) / (cb[1] - ca[1]));
    }
    if !(ca[1] > 0.0 && cb[1] > 0.0) {
        return None;
    }
    // (coordinate crossing the edge, sign, coordinate along the edge)
    let edges = [(2, 1.0, 0), (2, -1.0, 0), (0, -1.0, 2), (0, 1.0, 2)];
    let mut hits = Vec::new();
    for (k, sign, along) in edges {
        if hits.len() == 2 {
            break;
        }
        let g = |t: f64| {
            let p = lerp(ca, cb, t);
            p[k] - sign * t60 * p[1]
        };
        let (g0, g1) = (g(0.0), g(1.0));
        if g0 * g1 > 0.0 || (g0 == 0.0 && g1 == 0.0) {
            continue;
        }
        let (mut lo, mut hi) = (0.0, 1.0);
        for _ in 0..80 {
            let m = 0.5 * (lo + hi);
            if (g(m) > 0.0) == (g0 > 0.0) {
                lo = m;
            } else {
                hi = m;
            }
        }
        let p = lerp(ca, cb, 0.5 * (lo + hi));
        if p[along].abs() <= t60 * p[1] + 1e-9 {
            hits.push(p);
        }
    }
    match hits.len() {
        2 => Some((hits[0], hits[1], true, true)),
        1 if !see_a => see_b.then_some((hits[0], lb, true, false)),
        1 => Some((la, hits[0], false, true)),
        _ => None,
    }
}

// ------------------------------------------------------------------ tests

#[test]
fn defaults_are_stock() {
    let c = VisionConfig::default();
    assert_eq!((c.h_view_cone, c.v_view_cone), (120, 120));
    assert!(c.add_noise && c.sense_lines);
    assert!(!c.sense_my_pos && !c.sense_my_orien && !c.sense_ball_pos);
    assert_eq!(c.calibration_error, 0.005);
    assert_eq!(
        (c.sigma_distance, c.sigma_horizontal, c.sigma_vertical),
        (0.0965, 0.1480, 0.1225)
    );
    assert_eq!((c.interval, c.min_distance), (3, 0.1));
    assert!(c.is_vision_cycle(0) && !c.is_vision_cycle(1) && c.is_vision_cycle(3));
    let off = VisionConfig { interval: 0, ..c };
    assert!(!off.is_vision_cycle(0));
    // The config section deserialises from RON, partially.
    let parsed: VisionConfig = ron::from_str("(h_view_cone: 360, v_view_cone: 360)").unwrap();
    assert_eq!(parsed.h_view_cone, 360);
    assert!(parsed.add_noise);
    assert!(ron::from_str::<VisionConfig>("(no_such_knob: 1)").is_err());
}

#[test]
fn landmark_positions_match_spec() {
    let f = FieldGeometry::default();
    let want = [
        [-15.0, 1.05, 0.8],
        [-15.0, -1.05, 0.8],
        [15.0, -1.05, 0.8],
        [15.0, 1.05, 0.8],
        [-15.0, 10.0, 0.0],
        [-15.0, -10.0, 0.0],
        [15.0, 10.0, 0.0],
        [15.0, -10.0, 0.0],
    ];
    for (got, want) in f.landmarks().iter().zip(want) {
        assert!((got - v3(want)).norm() < 1e-6);
    }
    for ((a, b), (wa, wb)) in f.lines().iter().zip(spec_lines()) {
        assert!((a - v3(wa)).norm() < 1e-5 && (b - v3(wb)).norm() < 1e-5);
    }
}

/// Observer Left/1 at (-1.5, -1), head 0.54 m up, panned 20 deg left,
/// pitched 15 deg down; noise off. Every landmark, the ball and the parts
/// of three other robots are checked against the independent model:
/// present iff in the cone, and at the right (d, h, v).
#[test]
fn geometry_without_noise() {
    let pos = [-1.5f32, -1.0, 0.54];
    let (heading, pitch) = (20.0, -15.0);
    let cam = RefCam::new(pos, heading, pitch);
    let ball = [0.5, 0.3, 0.042];
    let mut me = SeenRobot {
        team: "Alpha",
        side: Side::Left,
        unum: 1,
        is_self: true,
        parts: standing_parts(-1.5, -1.0, 0.0),
    };
    me.parts[0] = Some(Vector3::from(pos));
    let robots = [
        // Right/1 at (3, 0) facing us: in view.
        SeenRobot {
            team: "Beta",
            side: Side::Right,
            unum: 1,
            is_self: false,
            parts: standing_parts(3.0, 0.0, 180.0),
        },
        me,
        // Left/2 far to the left (h > 60): absent.
        SeenRobot {
            team: "Alpha",
            side: Side::Left,
            unum: 2,
            is_self: false,
            parts: standing_parts(-1.5, 4.0, 0.0),
        },
        // Right/2 with its head high above the camera (v > 60), its feet
        // in view.
        SeenRobot {
            team: "Beta",
            side: Side::Right,
            unum: 2,
            is_self: false,
            parts: [
                Some(Vector3::new(-1.2, -1.0, 3.0)),
                None,
                None,
                Some(Vector3::new(0.5, -1.5, 0.02)),
                Some(Vector3::new(0.5, -1.6, 0.02)),
            ],
        },
    ];
    let input = VisionInput {
        camera: camera(pos, heading, pitch),
        side: Some(Side::Left),
        // Ignored with noise off.
        calibration: Vector3::new(0.005, -0.005, 0.005),
        ball: v3(ball),
        robots: &robots,
        field: FieldGeometry::default(),
    };
    let text = see(&input, &exact(), 1);
    let els = see_elements(&text);

    let names = ["G1L", "G2L", "G2R", "G1R", "F1L", "F2L", "F1R", "F2R"];
    let spots = [
        [-15.0, 1.05, 0.8],
        [-15.0, -1.05, 0.8],
        [15.0, -1.05, 0.8],
        [15.0, 1.05, 0.8],
        [-15.0, 10.0, 0.0],
        [-15.0, -10.0, 0.0],
        [15.0, 10.0, 0.0],
        [15.0, -10.0, 0.0],
    ];
    let (mut shown, mut hidden) = (0, 0);
    for (name, p) in names.iter().zip(spots).chain([(&"B", ball)]) {
        let want = ref_polar(cam.local(p));
        match static_pol(&els, name) {
            Some(got) => {
                assert!(ref_visible(want), "{name} should be hidden: {text}");
                assert_pol_close(got, want, name);
                shown += 1;
            }
            None => {
                assert!(!ref_visible(want), "{name} missing: {text}");
                hidden += 1;
            }
        }
    }
    assert!(shown >= 4 && hidden >= 4, "{text}");

    // Robots: every part checked, the own head never reported.
    let (mut by_h, mut by_v) = (false, false);
    for r in &robots {
        for (k, part) in PART_NAMES.iter().enumerate() {
            let got = part_pol(&els, r.team, r.unum, part);
            let Some(p) = r.parts[k] else {
                assert!(got.is_none());
                continue;
            };
            let want = ref_polar(cam.local([p.x as f64, p.y as f64, p.z as f64]));
            if r.is_self && k == 0 {
                assert!(got.is_none(), "own head reported: {text}");
                continue;
            }
            match got {
                Some(got) => {
                    assert!(
                        ref_visible(want),
                        "{} {} {part} should be hidden",
                        r.team,
                        r.unum
                    );
                    assert_pol_close(got, want, part);
                }
                None => {
                    assert!(
                        !ref_visible(want),
                        "{} {} {part} missing: {text}",
                        r.team,
                        r.unum
                    );
                    by_h |= want[1].abs() > 60.0;
                    by_v |= want[2].abs() > 60.0;
                }
            }
        }
    }
    assert!(by_h && by_v, "the scene must hide parts both ways");
    // Left/2 is entirely out of view: no P element at all.
    assert!(!text.contains("(team Alpha) (id 2)"), "{text}");
    // The observer sees its own lower arms or feet.
    assert!(text.contains("(P (team Alpha) (id 1) ("), "{text}");
    // Order: static group, Alpha/1, Beta/1, Beta/2, then lines.
    let order: Vec<String> = els
        .iter()
        .filter(|e| head(e) == "P")
        .map(|e| format!("{} {}", print(&items(e)[1]), print(&items(e)[2])))
        .collect();
    assert_eq!(
        order,
        [
            "(team Alpha) (id 1)",
            "(team Beta) (id 1)",
            "(team Beta) (id 2)"
        ]
    );
    let kinds: Vec<&str> = els.iter().map(head).collect();
    let first_p = kinds.iter().position(|k| *k == "P").unwrap();
    let first_l = kinds.iter().position(|k| *k == "L").unwrap();
    assert!(kinds[..first_p].iter().all(|k| *k != "P" && *k != "L"));
    assert!(kinds[first_l..].iter().all(|k| *k == "L"));
}

/// Lines with noise off, for five chosen poses and 600 random ones: the
/// same lines as the independent model, with the same (clipped) end points
/// in the same order. Every branch of the procedure must occur.
#[test]
fn lines_clipped_to_the_view() {
    use rand::Rng;
    let mut poses = vec![
        ([-1.5f32, -1.0, 0.54], 20.0f32, -15.0f32),
        ([-8.0, 3.0, 0.54], 30.0, 0.0),
        ([0.3, 0.2, 0.54], -100.0, -40.0),
        ([12.0, -2.0, 0.50], 10.0, -25.0),
        ([5.0, 9.5, 0.54], 160.0, 5.0),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    for _ in 0..600 {
        poses.push((
            [
                rng.gen_range(-16.0..16.0),
                rng.gen_range(-11.0..11.0),
                rng.gen_range(0.2..0.6),
            ],
            rng.gen_range(-180.0..180.0),
            rng.gen_range(-70.0..40.0),
        ));
    }
    // whole, two crossings (both replaced), one crossing (start), one
    // crossing (end), and the start-first order broken by two crossings.
    let mut seen = [0usize; 5];
    for (pos, heading, pitch) in poses {
        let cam = RefCam::new(pos, heading, pitch);
        let input = VisionInput {
            camera: camera(pos, heading, pitch),
            side: Some(Side::Left),
            calibration: Vector3::zeros(),
            ball: Vector3::new(100.0, 0.0, 0.0),
            robots: &[],
            field: FieldGeometry::default(),
        };
        let text = see(&input, &exact(), 1);
        let got = lines_of(&see_elements(&text));
        let want: Vec<_> = spec_lines()
            .into_iter()
            .filter_map(|(a, b)| ref_line(&cam, a, b).map(|w| (w, a, b)))
            .collect();
        assert_eq!(
            got.len(),
            want.len(),
            "pose {pos:?} {heading} {pitch}: {text}"
        );
        for (g, ((a, b, ra, rb), fa, fb)) in got.iter().zip(&want) {
            let (pa, pb) = (ref_polar(*a), ref_polar(*b));
            assert_pol_close(g[0], pa, "line start");
            assert_pol_close(g[1], pb, "line end");
            for (p, r) in [(pa, ra), (pb, rb)] {
                if *r {
                    // A replaced point is on the image rectangle: at
                    // h = +-60, or on its top/bottom edge (|v| <= 60).
                    let on_side = (p[1].abs() - 60.0).abs() <= 0.01;
                    assert!(on_side || p[2].abs() <= 60.01, "{p:?}");
                }
            }
            let k = match (ra, rb) {
                (false, false) => 0,
                (true, true) => 1,
                (true, false) => 2,
                (false, true) => 3,
            };
            seen[k] += 1;
            // Both replaced, and the start is nearer the true end point.
            let (la, lb) = (cam.local(*fa), cam.local(*fb));
            let dist =
                |p: [f64; 3], q: [f64; 3]| (0..3).map(|i| (p[i] - q[i]).powi(2)).sum::<f64>();
            if k == 1 && dist(*a, lb) < dist(*a, la) && dist(*b, la) < dist(*b, lb) {
                seen[4] += 1;
            }
        }
    }
    eprintln!("line cases (whole, both, start, end, swapped): {seen:?}");
    assert!(seen.iter().all(|&n| n >= 3), "cases seen: {seen:?}");
}

/// A level head far from every line: every replaced end point lies on the
/// +-60 degree boundary (and only the side planes cut).
#[test]
fn clip_points_lie_on_the_cone_edge() {
    let pos = [-8.0f32, 3.0, 0.54];
    let input = VisionInput {
        camera: camera(pos, 30.0, 0.0),
        side: None,
        calibration: Vector3::zeros(),
        ball: Vector3::new(100.0, 0.0, 0.0),
        robots: &[],
        field: FieldGeometry::default(),
    };
    let text = see(&input, &exact(), 1);
    let lines = lines_of(&see_elements(&text));
    let cam = RefCam::new(pos, 30.0, 0.0);
    let want: Vec<_> = spec_lines()
        .into_iter()
        .filter_map(|(a, b)| ref_line(&cam, a, b))
        .collect();
    assert_eq!(want.len(), lines.len());
    let (mut shown, mut on_edge) = (0, 0);
    for (l, (_, _, ra, rb)) in lines.iter().zip(&want) {
        shown += 1;
        for (p, replaced) in [(l[0], ra), (l[1], rb)] {
            if *replaced {
                assert!((p[1].abs() - 60.0).abs() <= 0.01, "{p:?} in {text}");
                on_edge += 1;
            } else {
                assert!(p[1].abs() < 60.0, "{p:?} in {text}");
            }
        }
    }
    assert!(shown >= 3 && on_edge >= 3, "{text}");
}

/// The recorded Left/1 (sync_agent_after_kickoff_first10.txt, first See):
/// at (-1.5, -1) looking about 8.5 degrees left of +x, the halfway line
/// crosses the whole view and is reported as
/// `(L (pol 4.07 59.93 -7.70) (pol 2.44 -59.85 -12.88))`: left end first,
/// although the line runs from -y to +y.
#[test]
fn line_across_the_view_starts_at_the_left_edge() {
    let input = VisionInput {
        camera: camera([-1.5, -1.0, 0.54], 8.5, 0.0),
        side: Some(Side::Left),
        calibration: Vector3::zeros(),
        ball: Vector3::new(0.0, 0.0, 0.042),
        robots: &[],
        field: FieldGeometry::default(),
    };
    let text = see(&input, &exact(), 1);
    let lines = lines_of(&see_elements(&text));
    let recorded = [[4.07, 59.93, -7.70], [2.44, -59.85, -12.88]];
    for (got, want) in lines[0].iter().zip(recorded) {
        assert!((got[0] - want[0]).abs() < 0.1, "{got:?} vs {want:?}");
        assert!((got[1] - want[1]).abs() < 0.3, "{got:?} vs {want:?}");
        assert!((got[2] - want[2]).abs() < 0.5, "{got:?} vs {want:?}");
    }
}

#[test]
fn nothing_visible_gives_empty_see() {
    let input = VisionInput {
        camera: camera([0.0, 0.0, 0.54], 0.0, 90.0),
        side: Some(Side::Left),
        calibration: Vector3::zeros(),
        ball: Vector3::new(0.5, 0.3, 0.042),
        robots: &[],
        field: FieldGeometry::default(),
    };
    assert_eq!(see(&input, &exact(), 1), "(See )");
    assert_eq!(see(&input, &VisionConfig::default(), 1), "(See )");
}

/// Non-finite input never reaches the text.
#[test]
fn never_nan() {
    let robots = [SeenRobot {
        team: "A",
        side: Side::Left,
        unum: 3,
        is_self: false,
        parts: [
            Some(Vector3::new(f32::NAN, 0.0, 0.0)),
            None,
            None,
            None,
            None,
        ],
    }];
    let mut input = VisionInput {
        camera: camera([-1.0, 0.0, 0.54], 0.0, 0.0),
        side: Some(Side::Left),
        calibration: Vector3::zeros(),
        ball: Vector3::new(f32::INFINITY, 0.0, 0.0),
        robots: &robots,
        field: FieldGeometry::default(),
    };
    let cfg = VisionConfig {
        sense_my_pos: false,
        sense_my_orien: true,
        sense_ball_pos: false,
        ..VisionConfig::default()
    };
    let text = see(&input, &cfg, 1);
    assert!(!text.contains("nan") && !text.contains("inf"), "{text}");
    assert!(!text.contains("(P "), "{text}");
    input.camera = Isometry3::translation(f32::NAN, 0.0, 0.5);
    assert_eq!(see(&input, &exact(), 1), "(See )");
    let text = see(&input, &cfg, 1);
    assert_eq!(text, "(See (myorien 90.00))");
    // Sweep head poses: no clip point may ever come out as NaN.
    let mut out = String::new();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for i in 0..2000 {
        let f = i as f32;
        let input = VisionInput {
            camera: camera(
                [
                    (f * 0.37) % 30.0 - 15.0,
                    (f * 0.73) % 20.0 - 10.0,
                    0.3 + (f * 0.01) % 0.3,
                ],
                f * 7.3,
                (f * 1.7) % 120.0 - 60.0,
            ),
            side: Some(Side::Right),
            calibration: draw_calibration(&cfg, &mut rng),
            ball: Vector3::new(0.0, 0.0, 0.042),
            robots: &[],
            field: FieldGeometry::default(),
        };
        out.clear();
        write_see(&mut out, &input, &cfg, &mut rng);
        assert!(!out.contains("nan") && !out.contains("inf"), "{out}");
    }
}

/// 10,000 draws of the noise: mean within 2 % of sigma of zero, standard
/// deviation within 5 % of sigma, for d (in percent of d), h and v.
#[test]
fn noise_statistics() {
    let cfg = VisionConfig::default();
    let eye = Eye {
        cfg: &cfg,
        origin: Vector3::zeros(),
        to_local: Matrix3::identity(),
        shift: Vector3::zeros(),
        half_h: 60.0,
        half_v: 60.0,
        tan_h: 3f32.sqrt(),
        tan_v: 3f32.sqrt(),
    };
    let truth = Polar {
        d: 7.5,
        h: 12.0,
        v: -8.0,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let n = 10_000;
    let mut sum = [0f64; 3];
    let mut sq = [0f64; 3];
    for _ in 0..n {
        let p = eye.noisy(truth, &mut rng);
        let e = [
            ((p.d - truth.d) / truth.d * 100.0) as f64,
            (p.h - truth.h) as f64,
            (p.v - truth.v) as f64,
        ];
        for k in 0..3 {
            sum[k] += e[k];
            sq[k] += e[k] * e[k];
        }
    }
    let sigma = [0.0965f64, 0.1480, 0.1225];
    for k in 0..3 {
        let mean = sum[k] / n as f64;
        let std = (sq[k] / n as f64 - mean * mean).sqrt();
        assert!(mean.abs() <= 0.02 * sigma[k], "component {k}: mean {mean}");
        assert!(
            (std / sigma[k] - 1.0).abs() <= 0.05,
            "component {k}: std {std}"
        );
    }
}

/// Noise reaches the text: with noise on, values differ from the exact
/// ones, but by a few sigma at most.
#[test]
fn noise_is_applied_to_objects_and_lines() {
    let pos = [-1.5f32, -1.0, 0.54];
    let input = VisionInput {
        camera: camera(pos, 0.0, -10.0),
        side: Some(Side::Left),
        calibration: Vector3::zeros(),
        ball: Vector3::new(0.5, 0.3, 0.042),
        robots: &[],
        field: FieldGeometry::default(),
    };
    let exact_els = see_elements(&see(&input, &exact(), 1));
    let noisy_els = see_elements(&see(&input, &VisionConfig::default(), 1));
    assert_eq!(exact_els.len(), noisy_els.len());
    let mut differ = 0;
    for (e, n) in exact_els.iter().zip(&noisy_els) {
        assert_eq!(head(e), head(n));
        let pols: Vec<(&Sx, &Sx)> = items(e)[1..].iter().zip(&items(n)[1..]).collect();
        for (pe, pn) in pols {
            let (a, b) = (pol(pe), pol(pn));
            differ += usize::from(a != b);
            assert!((a[0] - b[0]).abs() <= 5.0 * 0.000965 * a[0] + 0.011);
            assert!((a[1] - b[1]).abs() <= 5.0 * 0.148 + 0.011);
            assert!((a[2] - b[2]).abs() <= 5.0 * 0.1225 + 0.011);
        }
    }
    assert!(differ >= 5);
}

#[test]
fn calibration_draw() {
    let cfg = VisionConfig::default();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let draws: Vec<Vector3<f32>> = (0..1000)
        .map(|_| draw_calibration(&cfg, &mut rng))
        .collect();
    for e in &draws {
        assert!(e.iter().all(|c| c.abs() <= 0.005));
    }
    let max = draws
        .iter()
        .flat_map(|e| e.iter().copied())
        .fold(0f32, f32::max);
    let min = draws
        .iter()
        .flat_map(|e| e.iter().copied())
        .fold(0f32, f32::min);
    assert!(max > 0.0049 && min < -0.0049);
    let none = VisionConfig {
        calibration_error: 0.0,
        ..cfg
    };
    assert_eq!(draw_calibration(&none, &mut rng), Vector3::zeros());
}

/// The calibration offset shifts angles (objects and lines) and line
/// distances, but not object distances; it is the same in every See.
#[test]
fn calibration_effect() {
    let cfg = VisionConfig {
        sigma_distance: 0.0,
        sigma_horizontal: 0.0,
        sigma_vertical: 0.0,
        h_view_cone: 360,
        v_view_cone: 360,
        ..VisionConfig::default()
    };
    let e = [0.005f64, -0.005, 0.004];
    let pos = [-1.5f32, -1.0, 0.54];
    let cam = RefCam::new(pos, 0.0, 0.0);
    let input = VisionInput {
        camera: camera(pos, 0.0, 0.0),
        side: Some(Side::Left),
        calibration: v3(e),
        ball: Vector3::new(-1.0, -1.0, 0.042),
        robots: &[],
        field: FieldGeometry::default(),
    };
    let text = see(&input, &cfg, 1);
    assert_eq!(text, see(&input, &cfg, 2), "offset must not be redrawn");
    let els = see_elements(&text);
    let shifted = |p: [f64; 3]| cam.local([p[0] + e[0], p[1] + e[1], p[2] + e[2]]);
    // Ball at 0.5 m: the offset moves the angles visibly.
    let ball = [-1.0, -1.0, 0.042];
    let got = static_pol(&els, "B").unwrap();
    let true_d = ref_polar(cam.local(ball))[0];
    let sh = ref_polar(shifted(ball));
    assert_pol_close(got, [true_d, sh[1], sh[2]], "ball");
    assert!((ref_polar(cam.local(ball))[2] - sh[2]).abs() > 0.2);
    // Line end points: distance (and angles) from the shifted vector.
    let lines = lines_of(&els);
    assert_eq!(lines.len(), 21, "full vision shows every line whole");
    for (l, (a, b)) in lines.iter().zip(spec_lines()) {
        assert_pol_close(l[0], ref_polar(shifted(a)), "line start");
        assert_pol_close(l[1], ref_polar(shifted(b)), "line end");
    }
}

#[test]
fn same_seed_same_text() {
    let robots = [SeenRobot {
        team: "Beta",
        side: Side::Right,
        unum: 4,
        is_self: false,
        parts: standing_parts(2.0, 0.5, 180.0),
    }];
    let run = |seed: u64| {
        let cfg = VisionConfig::default();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let calibration = draw_calibration(&cfg, &mut rng);
        let mut out = String::new();
        for i in 0..5 {
            let input = VisionInput {
                camera: camera([-1.5, -1.0, 0.54], 5.0 * i as f32, -10.0),
                side: Some(Side::Left),
                calibration,
                ball: Vector3::new(0.5, 0.3, 0.042),
                robots: &robots,
                field: FieldGeometry::default(),
            };
            write_see(&mut out, &input, &cfg, &mut rng);
        }
        out
    };
    assert_eq!(run(11), run(11));
    assert_ne!(run(11), run(12));
}

#[test]
fn position_cheats_in_team_frame() {
    let cfg = VisionConfig {
        add_noise: false,
        sense_my_pos: true,
        sense_my_orien: true,
        sense_ball_pos: true,
        sense_lines: false,
        ..VisionConfig::default()
    };
    // Right team robot at (3, 0.5) looking along -x (its own +x), head
    // turned 30 deg to its left; ball behind it.
    let mut input = VisionInput {
        camera: camera([3.0, 0.5, 0.54], 210.0, 0.0),
        side: Some(Side::Right),
        calibration: Vector3::new(0.005, 0.005, 0.005),
        ball: Vector3::new(5.0, 1.0, 0.042),
        robots: &[],
        field: FieldGeometry::default(),
    };
    let text = see(&input, &cfg, 1);
    assert!(
        text.ends_with(" (mypos -3.00 -0.50 0.54) (myorien 30.00) (ballpos -5.00 -1.00 0.04))"),
        "{text}"
    );
    input.side = Some(Side::Left);
    input.camera = camera([3.0, 0.5, 0.54], 210.0, 0.0);
    let text = see(&input, &cfg, 1);
    assert!(
        text.ends_with(" (mypos 3.00 0.50 0.54) (myorien -150.00) (ballpos 5.00 1.00 0.04))"),
        "{text}"
    );
    // Cheats come after objects and players, before lines.
    let cfg = VisionConfig {
        sense_lines: true,
        ..cfg
    };
    let text = see(&input, &cfg, 1);
    let els = see_elements(&text);
    let kinds: Vec<&str> = els.iter().map(head).collect();
    let at = kinds.iter().position(|k| *k == "mypos").unwrap();
    assert_eq!(&kinds[at..at + 3], ["mypos", "myorien", "ballpos"]);
    assert!(kinds[at + 3..].iter().all(|k| *k == "L"));
}

#[test]
fn robots_ordered_and_teamless_hidden() {
    let mk = |team: &'static str, side, unum, x: f32| SeenRobot {
        team,
        side,
        unum,
        is_self: false,
        parts: standing_parts(x, 0.0, 180.0),
    };
    let robots = [
        mk("R", Side::Right, 2, 3.0),
        mk("L", Side::Left, 7, 3.5),
        mk("R", Side::Right, 1, 4.0),
        mk("", Side::Left, 3, 4.5),
        mk("L", Side::Left, 2, 5.0),
    ];
    let input = VisionInput {
        camera: camera([0.0, 0.0, 0.54], 0.0, 0.0),
        side: Some(Side::Left),
        calibration: Vector3::zeros(),
        ball: Vector3::new(-5.0, 0.0, 0.0),
        robots: &robots,
        field: FieldGeometry::default(),
    };
    let text = see(&input, &exact(), 1);
    let order: Vec<String> = see_elements(&text)
        .iter()
        .filter(|e| head(e) == "P")
        .map(|e| format!("{} {}", print(&items(e)[1]), print(&items(e)[2])))
        .collect();
    assert_eq!(
        order,
        [
            "(team L) (id 2)",
            "(team L) (id 7)",
            "(team R) (id 1)",
            "(team R) (id 2)"
        ]
    );
}

// ---------------------------------------------------- transcript format

fn transcript_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reference/transcripts")
}

/// The `(See ...)` substrings of every agent transcript.
fn transcript_sees() -> Vec<String> {
    let dir = transcript_dir();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".txt") && !n.contains("monitor") && !n.contains("_sent_"))
        .collect();
    names.sort();
    let mut sees = Vec::new();
    for n in names {
        let text = std::fs::read_to_string(dir.join(&n)).unwrap();
        for line in text.lines() {
            let Some(start) = line.find("(See ") else {
                continue;
            };
            let b = line.as_bytes();
            let mut depth = 0;
            let mut end = start;
            for (i, &c) in b.iter().enumerate().skip(start) {
                depth += i32::from(c == b'(') - i32::from(c == b')');
                if depth == 0 {
                    end = i + 1;
                    break;
                }
            }
            sees.push(line[start..end].to_string());
        }
    }
    sees
}

/// The shape of one See element: numbers become `#`, team names `T`,
/// landmark names `N`; a `P` is split into its header and one shape per
/// part.
fn shapes(el: &Sx) -> Vec<String> {
    fn generic(x: &Sx) -> String {
        match x {
            Sx::A(a) if a.parse::<f64>().is_ok() => "#".into(),
            Sx::A(a) if LANDMARK_NAMES.contains(&a.as_str()) => "N".into(),
            Sx::A(a) => a.clone(),
            Sx::L(items) if head(x) == "team" => {
                assert_eq!(items.len(), 2);
                "(team T)".into()
            }
            Sx::L(items) => format!(
                "({})",
                items.iter().map(generic).collect::<Vec<_>>().join(" ")
            ),
        }
    }
    if head(el) == "P" {
        let it = items(el);
        let mut v = vec![format!("(P {} {} ...)", generic(&it[1]), generic(&it[2]))];
        v.extend(it[3..].iter().map(generic));
        v
    } else {
        vec![generic(el)]
    }
}

/// Our See has the same element kinds and field shapes as the recorded
/// ones (numbers may differ), and both print back canonically (§1.9).
#[test]
fn see_format_matches_transcripts() {
    let sees = transcript_sees();
    assert!(sees.len() >= 20, "transcripts not found or changed");
    let mut reference = std::collections::BTreeSet::new();
    for s in &sees {
        let top = parse_all(s);
        assert_eq!(print(&top[0]), *s, "transcript not canonical?");
        for el in see_elements(s) {
            for sh in shapes(&el) {
                reference.insert(sh);
            }
        }
    }
    // The recorded scene: Left/1 at (-1.5, -1) facing +x, Right/1 at (3, 0)
    // facing -x, Left/2 at (-2, 1), ball on the centre spot.
    let robots = [
        SeenRobot {
            team: "Left",
            side: Side::Left,
            unum: 1,
            is_self: true,
            parts: standing_parts(-1.5, -1.0, 0.0),
        },
        SeenRobot {
            team: "Left",
            side: Side::Left,
            unum: 2,
            is_self: false,
            parts: standing_parts(-2.0, 1.0, 0.0),
        },
        SeenRobot {
            team: "Right",
            side: Side::Right,
            unum: 1,
            is_self: false,
            parts: standing_parts(3.0, 0.0, 180.0),
        },
    ];
    let cfg = VisionConfig::default();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let calibration = draw_calibration(&cfg, &mut rng);
    let mut ours = std::collections::BTreeSet::new();
    for (heading, pitch) in [(0.0, 0.0), (25.0, -10.0), (-30.0, 5.0)] {
        let input = VisionInput {
            camera: camera([-1.5, -1.0, 0.54], heading, pitch),
            side: Some(Side::Left),
            calibration,
            ball: Vector3::new(0.0, 0.0, 0.042),
            robots: &robots,
            field: FieldGeometry::default(),
        };
        let mut s = String::new();
        write_see(&mut s, &input, &cfg, &mut rng);
        let top = parse_all(&s);
        assert_eq!(top.len(), 1);
        assert_eq!(print(&top[0]), s, "ours not canonical");
        for el in see_elements(&s) {
            // Every number has exactly two decimals.
            fn check(x: &Sx) {
                match x {
                    Sx::A(a) if a.parse::<f64>().is_ok() && a.contains('.') => {
                        let frac = a.rsplit('.').next().unwrap();
                        assert_eq!(frac.len(), 2, "{a}");
                    }
                    Sx::L(items) => items.iter().for_each(check),
                    _ => {}
                }
            }
            check(&el);
            for sh in shapes(&el) {
                ours.insert(sh);
            }
        }
    }
    let extra: Vec<_> = ours.difference(&reference).collect();
    let missing: Vec<_> = reference.difference(&ours).collect();
    assert!(
        extra.is_empty() && missing.is_empty(),
        "extra {extra:?}, missing {missing:?}"
    );
}

// ---------------------------------------------------------- size budget

/// 22 robots with 20-character team names crowded in front of one camera
/// (and the full-vision variants): the See stays within 6.5 KB, leaving
/// room for the rest of a frame (~1.5 KB) under FCPCodebase's 8192 bytes.
///
/// Upper bound by counting characters: a `pol` is at most 26 bytes
/// (`(pol 99.99 -179.99 -89.99)`), a `P` with 20-character team name and
/// five parts at most 222, the observer's (no head) 188; the 9 static
/// elements at most 295, 21 lines 1218, the cheats 74, `(See)` 5: at most
/// 6442 bytes in any 11-vs-11 scene on the field (distances < 100 m).
#[test]
fn see_fits_the_frame_budget() {
    let team_l = "LLLLLLLLLLLLLLLLLLLL";
    let team_r = "RRRRRRRRRRRRRRRRRRRR";
    let mut crowded = Vec::new();
    let mut around = Vec::new();
    let mut far = Vec::new();
    for i in 0..22u8 {
        let (team, side, unum) = if i < 11 {
            (team_l, Side::Left, i + 1)
        } else {
            (team_r, Side::Right, i - 10)
        };
        let is_self = i == 0;
        let (x, y) = if is_self {
            (-1.5, -1.0)
        } else {
            // In front of the camera, 1 to 6 m away, within +-40 degrees.
            let a = ((i as f32) * 4.0 - 44.0).to_radians();
            let r = 1.0 + (i % 6) as f32;
            (-1.5 + r * a.cos(), -1.0 + r * a.sin())
        };
        crowded.push(SeenRobot {
            team,
            side,
            unum,
            is_self,
            parts: standing_parts(x, y, if is_self { 0.0 } else { 180.0 }),
        });
        // Spread around the observer at 10 to 14 m (long numbers, all
        // directions) for the 360-degree variant.
        let a = (i as f32 * 16.3).to_radians();
        let r = if is_self { 0.0 } else { 10.0 + (i % 5) as f32 };
        around.push(SeenRobot {
            team,
            side,
            unum,
            is_self,
            parts: standing_parts(-1.5 + r * a.cos(), -1.0 + r * a.sin(), 90.0),
        });
        // 10 to 14 m in front of a camera at (-14, 0), within +-45 degrees.
        let a = ((i as f32) * 4.2 - 45.0).to_radians();
        let r = if is_self { 0.0 } else { 10.0 + (i % 5) as f32 };
        far.push(SeenRobot {
            team,
            side,
            unum,
            is_self,
            parts: standing_parts(
                -14.0 + r * a.cos(),
                r * a.sin(),
                if is_self { 0.0 } else { 180.0 },
            ),
        });
    }
    let cam = camera([-1.5, -1.0, 0.54], 0.0, -20.0);
    let cone = VisionConfig::default();
    let full = VisionConfig {
        h_view_cone: 360,
        v_view_cone: 360,
        ..VisionConfig::default()
    };
    let cheats = VisionConfig {
        sense_my_pos: true,
        sense_my_orien: true,
        sense_ball_pos: true,
        ..VisionConfig::default()
    };
    let far_cam = camera([-14.0, 0.0, 0.54], 0.0, -5.0);
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    for (name, robots, cfg, cam) in [
        ("crowded 120", &crowded, &cone, cam),
        ("crowded 360", &crowded, &full, cam),
        ("around 360", &around, &full, cam),
        ("far 120 + cheats", &far, &cheats, far_cam),
    ] {
        let input = VisionInput {
            camera: cam,
            side: Some(Side::Left),
            calibration: draw_calibration(cfg, &mut rng),
            ball: Vector3::new(0.0, -1.0, 0.042),
            robots,
            field: FieldGeometry::default(),
        };
        let mut s = String::new();
        write_see(&mut s, &input, cfg, &mut rng);
        let els = see_elements(&s);
        let players = els.iter().filter(|e| head(e) == "P").count();
        let lines = els.iter().filter(|e| head(e) == "L").count();
        eprintln!("{name}: {} bytes, {players} P, {lines} L", s.len());
        assert_eq!(players, 22, "{name}: {s}");
        assert!(lines <= MAX_LINES);
        assert!(s.len() <= 6500, "{name}: {} bytes", s.len());
    }
}
