//! The picture the page draws, in one form for the live stream and the log
//! player: game state, ball, and every robot's parts as (part name index,
//! position, orientation). [`WorldView::encode`] writes it as one binary
//! WebSocket message; `assets/protocol.js` reads the same layout.
//!
//! Layout (little-endian; floats are f32):
//!
//! ```text
//! u8 'W', u8 version (1), u16 0
//! u32 seq            live: simulation cycle; replay: frame index
//! u32 frames         live: 0; replay: frames in the log
//! f32 server_time    live: server time; replay: game time
//! f32 game_time
//! u8 play_mode       index into hello.playModes, 255 = unknown
//! u8 half, u16 score_left, u16 score_right, u16 robots
//! ball: 3 f32 position, 4 f32 quaternion (x, y, z, w)
//! team_left, team_right: u8 length, UTF-8 bytes
//! per robot: u32 id, u8 side (0 none, 1 left, 2 right), u8 unum,
//!            u8 type, u8 flags (1 = selected), u8 parts,
//!            per part: u8 name index (255 = unknown), 3 f32 position,
//!                      4 f32 quaternion
//! ```

use nalgebra::{Isometry3, UnitQuaternion, Vector3};

use super::shapes::RobotShapes;
use crate::rules::Side;
use crate::sim::snapshot::WorldSnapshot;

/// Version byte of the binary layout.
pub const VERSION: u8 = 1;
/// Name index of a part the shape table does not know.
pub const UNKNOWN_PART: u8 = 255;
/// Play-mode byte when the mode is unknown.
pub const UNKNOWN_MODE: u8 = 255;

/// One part's pose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartView {
    /// Index into the hello message's part names.
    pub name: u8,
    /// Centre in the field frame.
    pub pos: Vector3<f32>,
    /// Orientation in the field frame.
    pub rot: UnitQuaternion<f32>,
}

/// One robot.
#[derive(Debug, Clone, PartialEq)]
pub struct RobotView {
    /// Stable id (live: the robot id; replay: position in the scene).
    pub id: u32,
    /// Team side, once known.
    pub side: Option<Side>,
    /// Uniform number (0 before `init`).
    pub unum: u8,
    /// Heterogeneous type 0-4.
    pub robot_type: u8,
    /// Selected by a monitor.
    pub selected: bool,
    /// Body parts.
    pub parts: Vec<PartView>,
}

/// Everything one frame of the page shows.
#[derive(Debug, Clone, PartialEq)]
pub struct WorldView {
    /// Live: cycle; replay: frame index.
    pub seq: u32,
    /// Live: 0; replay: frames in the log.
    pub frames: u32,
    /// Live: server time; replay: game time.
    pub server_time: f32,
    /// Game time.
    pub game_time: f32,
    /// Play-mode index ([`UNKNOWN_MODE`] if unknown).
    pub play_mode: u8,
    /// Half (1 or 2).
    pub half: u8,
    /// Goals of the left team.
    pub score_left: u16,
    /// Goals of the right team.
    pub score_right: u16,
    /// Left team name (empty until known).
    pub team_left: String,
    /// Right team name (empty until known).
    pub team_right: String,
    /// Ball centre.
    pub ball: Vector3<f32>,
    /// Ball orientation.
    pub ball_rot: UnitQuaternion<f32>,
    /// Robots in scene order.
    pub robots: Vec<RobotView>,
}

impl WorldView {
    /// The view of a live snapshot. Part names are looked up in `shapes`.
    pub fn from_snapshot(snap: &WorldSnapshot, shapes: &RobotShapes) -> WorldView {
        let g = &snap.game;
        let robots = snap
            .robots
            .iter()
            .map(|r| RobotView {
                id: r.id,
                side: r.side,
                unum: r.unum,
                robot_type: r.robot_type,
                selected: r.selected,
                parts: r
                    .parts
                    .iter()
                    .map(|p| part_view(shapes.part_index(&p.name), &p.pose))
                    .collect(),
            })
            .collect();
        WorldView {
            seq: u32::try_from(snap.cycle).unwrap_or(u32::MAX),
            frames: 0,
            server_time: snap.server_time,
            game_time: g.game_time,
            play_mode: g.play_mode.index(),
            half: g.half,
            score_left: clamp16(g.score_left),
            score_right: clamp16(g.score_right),
            team_left: g.team_left.as_deref().unwrap_or("").to_owned(),
            team_right: g.team_right.as_deref().unwrap_or("").to_owned(),
            ball: snap.ball.translation.vector,
            ball_rot: snap.ball.rotation,
            robots,
        }
    }

    /// Appends the binary message to `out` (see the module docs).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&[b'W', VERSION, 0, 0]);
        put_u32(out, self.seq);
        put_u32(out, self.frames);
        put_f32(out, self.server_time);
        put_f32(out, self.game_time);
        out.push(self.play_mode);
        out.push(self.half);
        put_u16(out, self.score_left);
        put_u16(out, self.score_right);
        let robots = self.robots.len().min(usize::from(u16::MAX));
        put_u16(out, robots as u16);
        put_vec(out, &self.ball);
        put_rot(out, &self.ball_rot);
        put_name(out, &self.team_left);
        put_name(out, &self.team_right);
        for r in self.robots.iter().take(robots) {
            put_u32(out, r.id);
            out.push(match r.side {
                None => 0,
                Some(Side::Left) => 1,
                Some(Side::Right) => 2,
            });
            out.push(r.unum);
            out.push(r.robot_type);
            out.push(u8::from(r.selected));
            let parts = r.parts.len().min(usize::from(u8::MAX));
            out.push(parts as u8);
            for p in r.parts.iter().take(parts) {
                out.push(p.name);
                put_vec(out, &p.pos);
                put_rot(out, &p.rot);
            }
        }
    }

    /// The encoded message as a new buffer.
    pub fn to_bytes(&self) -> Vec<u8> {
        let parts: usize = self.robots.iter().map(|r| r.parts.len()).sum();
        let mut out = Vec::with_capacity(128 + self.robots.len() * 9 + parts * 29);
        self.encode(&mut out);
        out
    }
}

/// Reads a message written by [`WorldView::encode`]; `None` when it is
/// cut short or has another version.
pub fn decode(bytes: &[u8]) -> Option<WorldView> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(4)? != [b'W', VERSION, 0, 0] {
        return None;
    }
    let seq = r.u32()?;
    let frames = r.u32()?;
    let server_time = r.f32()?;
    let game_time = r.f32()?;
    let play_mode = r.u8()?;
    let half = r.u8()?;
    let score_left = r.u16()?;
    let score_right = r.u16()?;
    let robots = r.u16()?;
    let ball = r.vec()?;
    let ball_rot = r.rot()?;
    let team_left = r.name()?;
    let team_right = r.name()?;
    let mut view = WorldView {
        seq,
        frames,
        server_time,
        game_time,
        play_mode,
        half,
        score_left,
        score_right,
        team_left,
        team_right,
        ball,
        ball_rot,
        robots: Vec::with_capacity(usize::from(robots)),
    };
    for _ in 0..robots {
        let id = r.u32()?;
        let side = match r.u8()? {
            1 => Some(Side::Left),
            2 => Some(Side::Right),
            _ => None,
        };
        let unum = r.u8()?;
        let robot_type = r.u8()?;
        let selected = r.u8()? & 1 == 1;
        let n = r.u8()?;
        let mut parts = Vec::with_capacity(usize::from(n));
        for _ in 0..n {
            let name = r.u8()?;
            let pos = r.vec()?;
            let rot = r.rot()?;
            parts.push(PartView { name, pos, rot });
        }
        view.robots.push(RobotView {
            id,
            side,
            unum,
            robot_type,
            selected,
            parts,
        });
    }
    Some(view)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn f32(&mut self) -> Option<f32> {
        Some(f32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn vec(&mut self) -> Option<Vector3<f32>> {
        Some(Vector3::new(self.f32()?, self.f32()?, self.f32()?))
    }
    fn rot(&mut self) -> Option<UnitQuaternion<f32>> {
        let (x, y, z, w) = (self.f32()?, self.f32()?, self.f32()?, self.f32()?);
        Some(UnitQuaternion::new_normalize(nalgebra::Quaternion::new(
            w, x, y, z,
        )))
    }
    fn name(&mut self) -> Option<String> {
        let n = usize::from(self.u8()?);
        Some(String::from_utf8_lossy(self.take(n)?).into_owned())
    }
}

fn part_view(name: u8, pose: &Isometry3<f32>) -> PartView {
    PartView {
        name,
        pos: pose.translation.vector,
        rot: pose.rotation,
    }
}

fn clamp16(x: u32) -> u16 {
    u16::try_from(x).unwrap_or(u16::MAX)
}

fn put_u16(out: &mut Vec<u8>, x: u16) {
    out.extend_from_slice(&x.to_le_bytes());
}

fn put_u32(out: &mut Vec<u8>, x: u32) {
    out.extend_from_slice(&x.to_le_bytes());
}

/// Non-finite values are written as 0 so the page never sees NaN.
fn put_f32(out: &mut Vec<u8>, x: f32) {
    let x = if x.is_finite() { x } else { 0.0 };
    out.extend_from_slice(&x.to_le_bytes());
}

fn put_vec(out: &mut Vec<u8>, v: &Vector3<f32>) {
    for x in v.iter() {
        put_f32(out, *x);
    }
}

fn put_rot(out: &mut Vec<u8>, q: &UnitQuaternion<f32>) {
    let c = q.coords;
    if c.iter().all(|x| x.is_finite()) {
        for x in [c.x, c.y, c.z, c.w] {
            put_f32(out, x);
        }
    } else {
        for x in [0.0, 0.0, 0.0, 1.0] {
            put_f32(out, x);
        }
    }
}

/// A name of at most 255 bytes, cut at a character boundary.
fn put_name(out: &mut Vec<u8>, name: &str) {
    let mut end = name.len().min(255);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    out.push(end as u8);
    out.extend_from_slice(&name.as_bytes()[..end]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> WorldView {
        WorldView {
            seq: 7,
            frames: 0,
            server_time: 1.5,
            game_time: 0.25,
            play_mode: 2,
            half: 1,
            score_left: 3,
            score_right: 1,
            team_left: "Alpha".into(),
            team_right: "Bétä".into(),
            ball: Vector3::new(1.0, -2.0, 0.042),
            ball_rot: UnitQuaternion::identity(),
            robots: vec![RobotView {
                id: 9,
                side: Some(Side::Right),
                unum: 4,
                robot_type: 3,
                selected: true,
                parts: vec![PartView {
                    name: 0,
                    pos: Vector3::new(0.5, 0.25, f32::NAN),
                    rot: UnitQuaternion::from_euler_angles(0.0, 0.0, 1.0),
                }],
            }],
        }
    }

    fn f32_at(b: &[u8], at: usize) -> f32 {
        f32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    #[test]
    fn encoding_follows_the_documented_layout() {
        let v = view();
        let b = v.to_bytes();
        assert_eq!(&b[..2], &[b'W', VERSION]);
        assert_eq!(u32::from_le_bytes([b[4], b[5], b[6], b[7]]), 7);
        assert_eq!(f32_at(&b, 12), 1.5);
        assert_eq!(f32_at(&b, 16), 0.25);
        assert_eq!((b[20], b[21]), (2, 1));
        assert_eq!(u16::from_le_bytes([b[22], b[23]]), 3);
        assert_eq!(u16::from_le_bytes([b[26], b[27]]), 1);
        assert_eq!(f32_at(&b, 28), 1.0);
        assert_eq!(f32_at(&b, 32), -2.0);
        assert_eq!(f32_at(&b, 52), 1.0); // w of the identity
        let mut at = 56;
        assert_eq!(&b[at + 1..at + 6], b"Alpha");
        at += 1 + 5;
        let n = usize::from(b[at]);
        assert_eq!(std::str::from_utf8(&b[at + 1..at + 1 + n]).unwrap(), "Bétä");
        at += 1 + n;
        assert_eq!(
            u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]),
            9
        );
        assert_eq!(&b[at + 4..at + 9], &[2, 4, 3, 1, 1]);
        at += 9;
        assert_eq!(b[at], 0);
        assert_eq!(f32_at(&b, at + 1), 0.5);
        // NaN is written as 0.
        assert_eq!(f32_at(&b, at + 9), 0.0);
        assert_eq!(b.len(), at + 29);
    }

    #[test]
    fn decode_reads_back_what_encode_wrote() {
        let mut v = view();
        v.robots[0].parts[0].pos.z = 0.0;
        let got = decode(&v.to_bytes()).expect("decodes");
        assert_eq!(got.robots[0].parts[0].pos, v.robots[0].parts[0].pos);
        assert!(
            got.robots[0].parts[0]
                .rot
                .angle_to(&v.robots[0].parts[0].rot)
                < 1e-6
        );
        assert_eq!(got.team_right, v.team_right);
        assert_eq!((got.seq, got.score_left, got.robots[0].unum), (7, 3, 4));
        let b = v.to_bytes();
        assert!(decode(&b[..b.len() - 1]).is_none());
    }

    #[test]
    fn long_names_are_cut_at_a_character_boundary() {
        let mut out = Vec::new();
        put_name(&mut out, &"é".repeat(200));
        assert_eq!(out[0], 254);
        assert!(std::str::from_utf8(&out[1..]).is_ok());
    }
}
