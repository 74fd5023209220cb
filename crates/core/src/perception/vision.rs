//! `See`: the head camera of the Nao (docs/protocol.md#see).
//!
//! [`write_see`] turns one observer's view of a world snapshot (camera pose,
//! ball, the robots' visible parts) into the `(See ...)` predicate: the static
//! group (goal posts, corner flags, ball), one `P` element per robot, the
//! optional position cheats, then the field lines clipped to the view. Noise
//! and the per-robot calibration offset follow docs/protocol.md#vision-noise;
//! the random numbers come from the RNG passed in, so a seeded server is
//! reproducible.
//!
//! This module must not touch the physics world, sockets or any global
//! state: the caller gathers the positions into a [`VisionInput`].
//!
//! Field lines follow the reference's procedure, quirks included: a line
//! whose two end points pass the point test is reported whole; otherwise it
//! is clipped against the pinhole image rectangle and replaced end points
//! are ordered by image edge (top, bottom, left, right), so a line crossing
//! the whole view starts at its left end whatever its direction.
//!
//! # Deviations from the reference, on purpose
//!
//! * Group order: the reference orders object groups by a memory address
//!   (the transcripts happen to show the observer's own `P` first); we
//!   always write the static group first, then robots of the left team by
//!   uniform number, then the right team (docs/protocol.md#see).
//! * No `nan`, ever: the reference can print `nan` in clipped line end
//!   points (docs/protocol.md#field-lines-in-view). Our clipping uses no
//!   `acos`; an element whose numbers would not be finite (only possible if
//!   the input positions are not finite) is left out instead of printed.
//! * "Full vision" (a half cone of 90 degrees or more on either axis) cannot
//!   use the pinhole clipping of the reference; lines are then reported
//!   whole if either end point is in view (with 360 x 360: every line).

use nalgebra::{Isometry3, Matrix3, Vector3};
use rand::Rng;
use rand_distr::StandardNormal;
use serde::Deserialize;

use crate::perception::format::{push_int, push_real};
use crate::rules::Side;

#[cfg(test)]
mod tests;

/// Settings of the vision perceptor; the `vision:` section of the server
/// configuration. Every field defaults to the stock rcssserver3d 0.7.1 value
/// (`naoneckhead.rsg`, docs/protocol.md#see and docs/protocol.md#settings-that-change-the-protocol).
#[derive(Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct VisionConfig {
    /// Horizontal view cone in whole degrees; the visible half angle is the
    /// integer half (`h_view_cone / 2`). Stock: 120. "Full vision": 360.
    pub h_view_cone: u32,
    /// Vertical view cone in whole degrees, halved like `h_view_cone`.
    /// Stock: 120. "Full vision": 360.
    pub v_view_cone: u32,
    /// Add the measurement noise and the calibration error
    /// (docs/protocol.md#vision-noise). With `false` every value is exact and
    /// the calibration offset passed in [`VisionInput::calibration`] is
    /// ignored. Stock: true.
    pub add_noise: bool,
    /// Half width in metres of the uniform calibration offset drawn once per
    /// robot on each axis ([`draw_calibration`]); 0 disables it.
    /// Stock: 0.005.
    pub calibration_error: f32,
    /// Standard deviation of the distance noise, in **percent** of the
    /// distance (`d += N(0, s) * d / 100`). Stock: 0.0965.
    pub sigma_distance: f32,
    /// Standard deviation of the horizontal angle noise, degrees.
    /// Stock: 0.1480 (the code's value; the reference's prose swaps it with
    /// the vertical one).
    pub sigma_horizontal: f32,
    /// Standard deviation of the vertical angle noise, degrees.
    /// Stock: 0.1225.
    pub sigma_vertical: f32,
    /// Report the 21 field lines (`L`). Stock: true.
    pub sense_lines: bool,
    /// Append `(mypos x y z)`: the head centre in the team frame, exact.
    /// Stock: false.
    pub sense_my_pos: bool,
    /// Append `(myorien deg)`: the heading of the head's forward axis in the
    /// team frame, exact. Stock: false.
    pub sense_my_orien: bool,
    /// Append `(ballpos x y z)`: the ball centre in the team frame, exact.
    /// Stock: false.
    pub sense_ball_pos: bool,
    /// `See` is sent when the connection's perception counter is a multiple
    /// of this ([`VisionConfig::is_vision_cycle`]); `None` switches vision
    /// off. Stock: 3.
    pub interval: Option<u32>,
    /// Points whose calibration-shifted distance is at most this (metres)
    /// are not reported; this hides the observer's own head. Stock: 0.1.
    pub min_distance: f32,
}

impl Default for VisionConfig {
    fn default() -> Self {
        VisionConfig {
            h_view_cone: 120,
            v_view_cone: 120,
            add_noise: true,
            calibration_error: 0.005,
            sigma_distance: 0.0965,
            sigma_horizontal: 0.1480,
            sigma_vertical: 0.1225,
            sense_lines: true,
            sense_my_pos: false,
            sense_my_orien: false,
            sense_ball_pos: false,
            interval: Some(3),
            min_distance: 0.1,
        }
    }
}

impl VisionConfig {
    /// Whether the perception built when the connection's counter is `k`
    /// (0 for the cycle the connection was accepted) contains
    /// `See`. Always false when `interval` is `None` (and for an interval
    /// of 0, which the server's configuration refuses).
    pub fn is_vision_cycle(&self, k: u64) -> bool {
        matches!(self.interval, Some(n) if n > 0 && k.is_multiple_of(u64::from(n)))
    }

    /// Half of the horizontal view cone in whole degrees (the integer half, as
    /// the reference computes it).
    pub fn half_h(&self) -> f32 {
        (self.h_view_cone / 2) as f32
    }

    /// Half of the vertical view cone in whole degrees (the integer half, as
    /// the reference computes it).
    pub fn half_v(&self) -> f32 {
        (self.v_view_cone / 2) as f32
    }
}

/// The field dimensions vision needs to place the landmarks and lines
/// (docs/protocol.md#landmarks-and-field-lines). Defaults are the stock values.
#[derive(Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FieldGeometry {
    /// Length along x, goal line to goal line, metres. Stock: 30.
    pub field_length: f32,
    /// Width along y, touch line to touch line, metres. Stock: 20.
    pub field_width: f32,
    /// Distance between the goal posts, metres. Stock: 2.1.
    pub goal_width: f32,
    /// Height of the goal posts (the `G` landmarks sit on top), metres.
    /// Stock: 0.8.
    pub goal_height: f32,
    /// Depth of the penalty area from the goal line, metres. Stock: 1.8.
    pub penalty_length: f32,
    /// Penalty area width minus the goal width (the reference's
    /// `PenaltyWidth`; the area is `penalty_width + goal_width` wide),
    /// metres. Stock: 3.9.
    pub penalty_width: f32,
    /// Radius of the centre circle (the reference's `FreeKickDistance`),
    /// metres. Stock: 2.0.
    pub centre_circle_radius: f32,
}

impl Default for FieldGeometry {
    fn default() -> Self {
        FieldGeometry {
            field_length: 30.0,
            field_width: 20.0,
            goal_width: 2.1,
            goal_height: 0.8,
            penalty_length: 1.8,
            penalty_width: 3.9,
            centre_circle_radius: 2.0,
        }
    }
}

/// Number of field line segments reported by vision.
pub const LINE_COUNT: usize = 21;

/// FCPCodebase keeps at most this many lines per frame; we never send more.
pub const MAX_LINES: usize = 30;

/// Names of the robot parts vision reports, in the order they are written
/// and the order of [`SeenRobot::parts`].
pub const PART_NAMES: [&str; 5] = ["head", "rlowerarm", "llowerarm", "rfoot", "lfoot"];

/// Names of the fixed landmarks in the order of the static group
/// (docs/protocol.md#see); the ball `B` follows them.
pub const LANDMARK_NAMES: [&str; 8] = ["G1L", "G2L", "G2R", "G1R", "F1L", "F2L", "F1R", "F2R"];

impl FieldGeometry {
    /// Field positions of the landmarks, in the order of [`LANDMARK_NAMES`].
    pub fn landmarks(&self) -> [Vector3<f32>; 8] {
        let x = self.field_length / 2.0;
        let y = self.field_width / 2.0;
        let gy = self.goal_width / 2.0;
        let gz = self.goal_height;
        [
            Vector3::new(-x, gy, gz),
            Vector3::new(-x, -gy, gz),
            Vector3::new(x, -gy, gz),
            Vector3::new(x, gy, gz),
            Vector3::new(-x, y, 0.0),
            Vector3::new(-x, -y, 0.0),
            Vector3::new(x, y, 0.0),
            Vector3::new(x, -y, 0.0),
        ]
    }

    /// The 21 field line segments (start, end) on the ground, in the order
    /// they are reported (docs/protocol.md#landmarks-and-field-lines).
    pub fn lines(&self) -> [(Vector3<f32>, Vector3<f32>); LINE_COUNT] {
        let x = self.field_length / 2.0;
        let y = self.field_width / 2.0;
        let px = x - self.penalty_length;
        let py = (self.penalty_width + self.goal_width) / 2.0;
        let p = |a: f32, b: f32| Vector3::new(a, b, 0.0);
        let r = self.centre_circle_radius;
        let circle = |k: u32| {
            // a = 36 k degrees; k = 10 closes the circle at a = 0 exactly.
            let a = ((36 * (k % 10)) as f32).to_radians();
            p(r * a.cos(), r * a.sin())
        };
        let mut lines = [(Vector3::zeros(), Vector3::zeros()); LINE_COUNT];
        let fixed = [
            (p(0.0, -y), p(0.0, y)),
            (p(x, -y), p(x, y)),
            (p(-x, -y), p(-x, y)),
            (p(x, y), p(-x, y)),
            (p(x, -y), p(-x, -y)),
            (p(px, py), p(px, -py)),
            (p(px, py), p(x, py)),
            (p(px, -py), p(x, -py)),
            (p(-px, py), p(-px, -py)),
            (p(-px, py), p(-x, py)),
            (p(-px, -py), p(-x, -py)),
        ];
        lines[..11].copy_from_slice(&fixed);
        for (k, slot) in lines[11..].iter_mut().enumerate() {
            let k = k as u32;
            *slot = (circle(k), circle(k + 1));
        }
        lines
    }
}

/// One robot as vision sees it. Only robots that belong to a team may be listed
/// (robots without a team are invisible, docs/protocol.md#players-in-view); an
/// entry with an empty team name is skipped as well.
#[derive(Clone, Copy, Debug)]
pub struct SeenRobot<'a> {
    /// Team name as given in the robot's `init`.
    pub team: &'a str,
    /// The side the robot's team plays on (orders the `P` elements).
    pub side: Side,
    /// Uniform number.
    pub unum: u8,
    /// This robot is the observer: its own head is never reported.
    pub is_self: bool,
    /// Field positions of the body centres in the order of [`PART_NAMES`]:
    /// head, right lower arm, left lower arm, right foot, left foot. `None`
    /// for a part the robot model does not have.
    pub parts: [Option<Vector3<f32>>; 5],
}

/// Everything one observer's `See` is computed from.
#[derive(Clone, Copy, Debug)]
pub struct VisionInput<'a> {
    /// Pose of the head body in the field frame. Head-local axes: x to the
    /// robot's right, y forward, z up.
    pub camera: Isometry3<f32>,
    /// The observer's side (team frame of the position cheats); `None`
    /// before `init`, in which case the cheats use the field frame.
    pub side: Option<Side>,
    /// The observer's calibration offset ([`draw_calibration`]), metres in
    /// field axes. Ignored when noise is off.
    pub calibration: Vector3<f32>,
    /// Ball centre in the field frame.
    pub ball: Vector3<f32>,
    /// The robots on the field, in any order; the observer included.
    pub robots: &'a [SeenRobot<'a>],
    /// Field dimensions for landmarks and lines.
    pub field: FieldGeometry,
}

/// Draws a robot's calibration offset: each component uniform in
/// `[-calibration_error, calibration_error)` metres. Call once when the
/// robot's vision is created and keep the result for the robot's life.
/// Draws nothing and returns zero when `calibration_error` is not a positive
/// finite number.
pub fn draw_calibration(cfg: &VisionConfig, rng: &mut impl Rng) -> Vector3<f32> {
    let e = cfg.calibration_error;
    if !(e.is_finite() && e > 0.0) {
        return Vector3::zeros();
    }
    let mut c = || (rng.gen::<f32>() * 2.0 - 1.0) * e;
    let x = c();
    let y = c();
    let z = c();
    Vector3::new(x, y, z)
}

/// A point in polar form as reported: distance (m), horizontal angle
/// (degrees, 0 straight ahead, positive to the left, (-180, 180]) and
/// vertical angle (degrees, positive up).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Polar {
    d: f32,
    h: f32,
    v: f32,
}

impl Polar {
    fn is_finite(&self) -> bool {
        self.d.is_finite() && self.h.is_finite() && self.v.is_finite()
    }
}

/// Normalises an angle in degrees to (-180, 180].
pub(crate) fn normalize_deg(mut a: f32) -> f32 {
    if a > 180.0 {
        a -= 360.0;
    } else if a <= -180.0 {
        a += 360.0;
    }
    a
}

/// Horizontal and vertical angle (degrees) of a head-local vector
/// (docs/protocol.md#see).
fn angles(r: &Vector3<f32>) -> (f32, f32) {
    let h = normalize_deg(r.y.atan2(r.x).to_degrees() - 90.0);
    let v = r.z.atan2(r.x.hypot(r.y)).to_degrees();
    (h, v)
}

/// Near plane of the reference's pinhole camera (its focal length), metres.
const NEAR_PLANE: f32 = 0.1;

/// One observer's camera, prepared once per [`write_see`] call.
struct Eye<'c> {
    cfg: &'c VisionConfig,
    origin: Vector3<f32>,
    to_local: Matrix3<f32>,
    shift: Vector3<f32>,
    half_h: f32,
    half_v: f32,
    /// The image rectangle's half extents as slopes (the reference
    /// computes the tangents in double precision).
    tan_h: f32,
    tan_v: f32,
}

impl Eye<'_> {
    /// The calibration-shifted vector from the camera to `p`, in head axes.
    fn local(&self, p: &Vector3<f32>) -> Vector3<f32> {
        self.to_local * (p - self.origin + self.shift)
    }

    fn in_cone(&self, h: f32, v: f32) -> bool {
        h.abs() <= self.half_h && v.abs() <= self.half_v
    }

    /// Whether a head-local vector is surely outside the horizontal cone
    /// without computing its angles: with a half cone below 90 degrees
    /// nothing at or behind the camera's side plane (y <= 0, |h| >= 90) is
    /// in view. Saves the arc tangents of the half of the field behind
    /// the observer; the outcome is the same as [`Eye::in_cone`]'s.
    fn behind(&self, r: &Vector3<f32>) -> bool {
        self.half_h < 90.0 && r.y <= 0.0
    }

    /// Polar coordinates of an object (landmark, ball, body part), or `None`
    /// when it is not visible. Angles and the visibility test use the shifted
    /// vector, the distance is the true one (docs/protocol.md#vision-noise).
    fn object(&self, p: &Vector3<f32>, rng: &mut impl Rng) -> Option<Polar> {
        let r = self.local(p);
        // NaN (non-finite input) fails this test as well.
        if r.norm().partial_cmp(&self.cfg.min_distance) != Some(std::cmp::Ordering::Greater) {
            return None;
        }
        if self.behind(&r) {
            return None;
        }
        let (h, v) = angles(&r);
        if !self.in_cone(h, v) {
            return None;
        }
        let d = (p - self.origin).norm();
        let pol = self.noisy(Polar { d, h, v }, rng);
        pol.is_finite().then_some(pol)
    }

    /// Polar coordinates of a head-local line end point (already shifted).
    fn line_point(&self, r: &Vector3<f32>, rng: &mut impl Rng) -> Polar {
        let (h, v) = angles(r);
        self.noisy(Polar { d: r.norm(), h, v }, rng)
    }

    /// Adds the measurement noise (three normal draws: d, h, v) if enabled.
    fn noisy(&self, p: Polar, rng: &mut impl Rng) -> Polar {
        if !self.cfg.add_noise {
            return p;
        }
        let nd: f32 = rng.sample(StandardNormal);
        let nh: f32 = rng.sample(StandardNormal);
        let nv: f32 = rng.sample(StandardNormal);
        Polar {
            d: p.d + nd * self.cfg.sigma_distance * p.d / 100.0,
            h: p.h + nh * self.cfg.sigma_horizontal,
            v: p.v + nv * self.cfg.sigma_vertical,
        }
    }

    /// Whether a head-local line end point passes the point test: farther
    /// than the minimum distance and inside the view cone.
    fn sees_point(&self, r: &Vector3<f32>) -> bool {
        if self.behind(r) {
            return false;
        }
        let (h, v) = angles(r);
        r.norm() > self.cfg.min_distance && self.in_cone(h, v)
    }

    /// The reported part of a line, given its calibration-shifted head-local
    /// end points `b` (start) and `e` (end), or `None` if the line is not
    /// reported. Follows the reference (docs/protocol.md#field-lines-in-view):
    ///
    /// 1. If both end points pass the point test (distance and cone), the
    ///    whole line is reported.
    /// 2. Otherwise the segment is cut at the plane y = 0.1 in front of the
    ///    camera if it crosses it, dropped unless both ends then lie in
    ///    front (y > 0), and intersected with the four edges of the pinhole
    ///    image rectangle (`|x| <= tan(H) y`, `|z| <= tan(V) y`), in the
    ///    order top, bottom, left (h = +H), right (h = -H); at most two
    ///    intersections count.
    /// 3. Two intersections replace both end points, in that edge order
    ///    (so a line crossing the whole view starts at its left end, as in
    ///    the transcripts). One intersection replaces the start if the start
    ///    failed the point test, else the end. The line is reported only if
    ///    both end points are then accounted for.
    ///
    /// The reference finds the 3-D intersection point with the law of
    /// sines and `acos`, which can produce `nan`; we solve for the point
    /// where the segment meets the edge's plane through the camera, which
    /// is the same point computed exactly, so no NaN can arise from finite
    /// input. Replaced points on a side edge lie at h = +-H exactly; on the
    /// top/bottom edge |v| <= V (= V straight ahead).
    ///
    /// With a half cone of 90 degrees or more on either axis the pinhole
    /// model does not exist; the whole line is then reported if either end
    /// passes the point test (with 360 x 360: every line, as in the
    /// reference's "full vision").
    fn clip(&self, b: Vector3<f32>, e: Vector3<f32>) -> Option<(Vector3<f32>, Vector3<f32>)> {
        let see_b = self.sees_point(&b);
        let see_e = self.sees_point(&e);
        if see_b && see_e {
            return Some((b, e));
        }
        if self.half_h >= 90.0 || self.half_v >= 90.0 {
            return (see_b || see_e).then_some((b, e));
        }
        // Cut at the near plane.
        let (mut cb, mut ce) = (b, e);
        if cb.y < NEAR_PLANE && ce.y >= NEAR_PLANE {
            cb = ce + (cb - ce) * ((NEAR_PLANE - ce.y) / (cb.y - ce.y));
        } else if ce.y < NEAR_PLANE && cb.y >= NEAR_PLANE {
            ce = cb + (ce - cb) * ((NEAR_PLANE - cb.y) / (ce.y - cb.y));
        }
        if !(cb.y > 0.0 && ce.y > 0.0) {
            return None;
        }
        let (th, tv) = (self.tan_h, self.tan_v);
        // Each edge: its plane through the camera, g(p) = 0, and the extent
        // along the edge, |a(p)| <= slope * y.
        type Edge = (
            fn(&Vector3<f32>, f32) -> f32,
            fn(&Vector3<f32>) -> f32,
            f32,
            f32,
        );
        let edges: [Edge; 4] = [
            (|p, t| p.z - t * p.y, |p| p.x, tv, th), // top
            (|p, t| p.z + t * p.y, |p| p.x, tv, th), // bottom
            (|p, t| p.x + t * p.y, |p| p.z, th, tv), // left: h = +H
            (|p, t| p.x - t * p.y, |p| p.z, th, tv), // right: h = -H
        ];
        let mut hits = [Vector3::zeros(); 2];
        let mut n = 0;
        for (plane, along, plane_slope, extent_slope) in edges {
            if n == 2 {
                break;
            }
            let gb = plane(&cb, plane_slope);
            let ge = plane(&ce, plane_slope);
            // No crossing: both ends strictly on one side, or the segment
            // lies in the plane.
            if (gb > 0.0 && ge > 0.0) || (gb < 0.0 && ge < 0.0) || gb == ge {
                continue;
            }
            // gb != ge here, so t is finite and in [0, 1].
            let t = gb / (gb - ge);
            let p = cb + (ce - cb) * t;
            if along(&p).abs() <= extent_slope * p.y {
                hits[n] = p;
                n += 1;
            }
        }
        match n {
            2 => Some((hits[0], hits[1])),
            1 if !see_b => see_e.then_some((hits[0], e)),
            1 => Some((b, hits[0])),
            _ => None,
        }
    }
}

/// Converts a field-frame vector to the team frame of `side` (right team:
/// rotated 180 degrees about z); `None` means the field frame.
fn to_team(v: Vector3<f32>, side: Option<Side>) -> Vector3<f32> {
    let s = side.map_or(1.0, Side::sign);
    Vector3::new(s * v.x, s * v.y, v.z)
}

fn push_pol(out: &mut String, p: &Polar) {
    out.push_str("(pol ");
    push_real(out, p.d);
    out.push(' ');
    push_real(out, p.h);
    out.push(' ');
    push_real(out, p.v);
    out.push(')');
}

fn push_xyz(out: &mut String, name: &str, v: &Vector3<f32>) {
    out.push_str(" (");
    out.push_str(name);
    for c in [v.x, v.y, v.z] {
        out.push(' ');
        push_real(out, c);
    }
    out.push(')');
}

/// Sort key of a robot in the `See`: left team first, then uniform number,
/// then the position in the input (only for duplicates).
fn robot_key(r: &SeenRobot<'_>, index: usize) -> (u8, u8, usize) {
    let side = match r.side {
        Side::Left => 0,
        Side::Right => 1,
    };
    (side, r.unum, index)
}

/// Appends one observer's `(See ...)` predicate to `out` (docs/protocol.md#see).
///
/// Order: the visible landmarks and ball (`G1L G2L G2R G1R F1L F2L F1R F2R
/// B`), one `P` per robot with a visible part (left team, then right, by
/// uniform number; parts `head rlowerarm llowerarm rfoot lfoot`), then
/// `mypos`, `myorien`, `ballpos` if enabled, then the visible field lines in
/// table order. `(See )` if nothing is visible. With noise on, three normal
/// draws are taken from `rng` per reported point, in output order.
///
/// Allocates nothing besides growing `out`.
pub fn write_see(
    out: &mut String,
    input: &VisionInput<'_>,
    cfg: &VisionConfig,
    rng: &mut impl Rng,
) {
    let eye = Eye {
        cfg,
        origin: input.camera.translation.vector,
        to_local: input
            .camera
            .rotation
            .inverse()
            .to_rotation_matrix()
            .into_inner(),
        shift: if cfg.add_noise {
            input.calibration
        } else {
            Vector3::zeros()
        },
        half_h: cfg.half_h(),
        half_v: cfg.half_v(),
        tan_h: f64::from(cfg.half_h()).to_radians().tan() as f32,
        tan_v: f64::from(cfg.half_v()).to_radians().tan() as f32,
    };
    out.push_str("(See");
    let empty_len = out.len();

    // Static group.
    let landmarks = input.field.landmarks();
    let statics = LANDMARK_NAMES
        .iter()
        .zip(landmarks.iter())
        .chain(std::iter::once((&"B", &input.ball)));
    for (name, p) in statics {
        if let Some(pol) = eye.object(p, rng) {
            out.push_str(" (");
            out.push_str(name);
            out.push(' ');
            push_pol(out, &pol);
            out.push(')');
        }
    }

    // Robots, by (side, unum) without sorting into a buffer: pick the next
    // smallest key each round (22 robots: a few hundred comparisons).
    let mut last: Option<(u8, u8, usize)> = None;
    loop {
        let next = input
            .robots
            .iter()
            .enumerate()
            .map(|(i, r)| (robot_key(r, i), r))
            .filter(|(k, _)| last.is_none_or(|l| *k > l))
            .min_by_key(|(k, _)| *k);
        let Some((key, robot)) = next else { break };
        last = Some(key);
        if robot.team.is_empty() {
            continue;
        }
        write_robot(out, &eye, robot, rng);
    }

    // Position cheats: exact, team frame.
    if cfg.sense_my_pos {
        push_xyz(out, "mypos", &to_team(eye.origin, input.side));
    }
    if cfg.sense_my_orien {
        let fwd = to_team(input.camera.rotation * Vector3::y(), input.side);
        let heading = normalize_deg(fwd.y.atan2(fwd.x).to_degrees());
        if heading.is_finite() {
            out.push_str(" (myorien ");
            push_real(out, heading);
            out.push(')');
        }
    }
    if cfg.sense_ball_pos {
        push_xyz(out, "ballpos", &to_team(input.ball, input.side));
    }

    // Field lines.
    if cfg.sense_lines {
        let mut written = 0;
        for (a, b) in input.field.lines() {
            if written == MAX_LINES {
                break;
            }
            let Some((la, lb)) = eye.clip(eye.local(&a), eye.local(&b)) else {
                continue;
            };
            let pa = eye.line_point(&la, rng);
            let pb = eye.line_point(&lb, rng);
            if !(pa.is_finite() && pb.is_finite()) {
                continue;
            }
            out.push_str(" (L ");
            push_pol(out, &pa);
            out.push(' ');
            push_pol(out, &pb);
            out.push(')');
            written += 1;
        }
    }

    if out.len() == empty_len {
        out.push(' ');
    }
    out.push(')');
}

/// Appends ` (P (team T) (id N) (part (pol ..)) ...)` if any part is
/// visible; otherwise leaves `out` as it was.
fn write_robot(out: &mut String, eye: &Eye<'_>, robot: &SeenRobot<'_>, rng: &mut impl Rng) {
    let mark = out.len();
    out.push_str(" (P (team ");
    out.push_str(robot.team);
    out.push_str(") (id ");
    push_int(out, i64::from(robot.unum));
    out.push(')');
    let mut seen = false;
    for (i, (name, part)) in PART_NAMES.iter().zip(robot.parts.iter()).enumerate() {
        if i == 0 && robot.is_self {
            continue;
        }
        let Some(p) = part else { continue };
        if let Some(pol) = eye.object(p, rng) {
            out.push_str(" (");
            out.push_str(name);
            out.push(' ');
            push_pol(out, &pol);
            out.push(')');
            seen = true;
        }
    }
    if seen {
        out.push(')');
    } else {
        out.truncate(mark);
    }
}
