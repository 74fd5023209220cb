//! Tests of the vision perceptor: geometry without noise ([`geometry`]),
//! field lines clipped to the view ([`lines`]), noise and calibration
//! ([`noise`]), the text against the reference transcripts and its size
//! ([`format`]).
//!
//! Expected values are computed independently of the implementation, by
//! the model this module holds: in f64, with the head axes written out by
//! hand (no nalgebra rotation), the line table typed in from the design notes, and
//! line clipping found by sampling plus bisection instead of plane
//! clipping; messages are read back by a small S-expression reader of its
//! own.

use super::*;
use nalgebra::UnitQuaternion;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

mod format;
mod geometry;
mod lines;
mod noise;

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

/// Prints a tree in the server's canonical form
/// (docs/protocol.md#server-message-syntax).
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

/// (d, h, v) of a head-local vector as the reference computes them
/// (docs/protocol.md#see).
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
        // horizontal, -22 deg vertical (docs/protocol.md#players-in-view).
        at(0.10, 0.144, 0.47),
        at(-0.10, 0.144, 0.47),
        at(0.055, 0.01, 0.02),
        at(-0.055, 0.01, 0.02),
    ]
}

/// The line table of docs/protocol.md#landmarks-and-field-lines, typed in again.
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
