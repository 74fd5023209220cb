//! `say` / `hear`: message validation, the per-listener capacity rule, the
//! direction of a heard message and the `(hear ...)` predicate
//! (docs/protocol.md#say and docs/protocol.md#hear).
//!
//! Pure functions and a small counter: who is in range and which listener
//! gets which message is decided by the caller, which owns the robots. The
//! caller delivers, per listener and cycle, at most the self copy, then the
//! message from the own team, then the one from the opponents, in that order.

use nalgebra::Vector3;
use thiserror::Error;

use crate::perception::format::push_real;
use crate::perception::vision::normalize_deg;
use crate::rules::Side;

/// Longest message accepted by `say`, in characters (bytes).
pub const MAX_SAY_LEN: usize = 20;

/// Only robots whose torso centre is closer than this (metres) to the
/// speaker's torso centre hear a message (hard-coded in the reference).
pub const HEARING_RANGE: f32 = 50.0;

/// The hearing range in metres ([`HEARING_RANGE`]).
pub fn hearing_range() -> f32 {
    HEARING_RANGE
}

/// Whether a listener at `listener_torso` hears a speaker at
/// `speaker_torso`: strictly closer than [`HEARING_RANGE`].
pub fn in_hearing_range(listener_torso: Vector3<f32>, speaker_torso: Vector3<f32>) -> bool {
    (speaker_torso - listener_torso).norm() < HEARING_RANGE
}

/// Why a `say` message was dropped.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SayError {
    /// The message is empty (the reference would broadcast it; we drop it).
    #[error("say: empty message")]
    Empty,
    /// A byte outside 0x21-0x7E, or `(` or `)`.
    #[error(
        "say: character {byte:#04x} at byte {index} is not allowed (0x21-0x7e except '(' and ')')"
    )]
    BadCharacter {
        /// The offending byte.
        byte: u8,
        /// Its position in the message.
        index: usize,
    },
    /// Longer than [`MAX_SAY_LEN`]; the reference drops these silently.
    #[error("say: message of {len} characters is longer than {MAX_SAY_LEN}")]
    TooLong {
        /// Length of the message in bytes.
        len: usize,
    },
}

/// Checks a `say` message: non-empty, every byte in 0x20-0x7E but
/// not space, `(` or `)`, at most 20 bytes. Characters are checked before
/// the length, as in the reference (its effector checks the characters and
/// logs; the referee then drops long messages silently).
pub fn validate_say(msg: &str) -> Result<(), SayError> {
    if msg.is_empty() {
        return Err(SayError::Empty);
    }
    if let Some((index, &byte)) = msg
        .as_bytes()
        .iter()
        .enumerate()
        .find(|(_, &b)| !(0x21..=0x7e).contains(&b) || b == b'(' || b == b')')
    {
        return Err(SayError::BadCharacter { byte, index });
    }
    if msg.len() > MAX_SAY_LEN {
        return Err(SayError::TooLong { len: msg.len() });
    }
    Ok(())
}

/// Budget limit of the capacity rule (stock `max 2`).
const BUDGET_MAX: u8 = 2;
/// Budget regained per perception build (stock `increment 1`).
const BUDGET_INCREMENT: u8 = 1;
/// Budget one accepted message costs (stock `cost 2`).
const BUDGET_COST: u8 = 2;

/// One listener's hearing capacity: separate budgets for messages
/// from its own team and from the opponents. Each starts at 2; a message is
/// accepted if its budget is at least 2 and costs 2; [`HearBudget::tick`]
/// adds 1 (up to 2) each cycle when the perception is built. Net effect:
/// one message per team every two cycles, the first one of a cycle wins.
/// Self copies are not limited and must not be passed through here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HearBudget {
    own: u8,
    opponent: u8,
}

impl Default for HearBudget {
    fn default() -> Self {
        Self::new()
    }
}

impl HearBudget {
    /// A fresh budget (both teams at the maximum).
    pub fn new() -> Self {
        HearBudget {
            own: BUDGET_MAX,
            opponent: BUDGET_MAX,
        }
    }

    /// Accepts (and pays for) a message from the own team or the opponent
    /// team if the budget allows; `false` means the message is lost.
    pub fn try_accept(&mut self, from_own_team: bool) -> bool {
        let budget = if from_own_team {
            &mut self.own
        } else {
            &mut self.opponent
        };
        if *budget >= BUDGET_COST {
            *budget -= BUDGET_COST;
            true
        } else {
            false
        }
    }

    /// Regains budget; call once per cycle when the listener's perception
    /// is built (after this cycle's messages were offered).
    pub fn tick(&mut self) {
        for b in [&mut self.own, &mut self.opponent] {
            *b = (*b + BUDGET_INCREMENT).min(BUDGET_MAX);
        }
    }
}

/// Direction of a heard message: the bearing in degrees, in
/// (-180, 180], of the vector from the listener's torso to the speaker's
/// torso in the listener's **team frame** (an absolute direction, not
/// relative to the body). Only x and y are used; coincident torsos give 0.
pub fn hear_direction(
    listener_torso: Vector3<f32>,
    speaker_torso: Vector3<f32>,
    listener_side: Side,
) -> f32 {
    let s = listener_side.sign();
    let dx = s * (speaker_torso.x - listener_torso.x);
    let dy = s * (speaker_torso.y - listener_torso.y);
    normalize_deg(dy.atan2(dx).to_degrees())
}

/// Appends one `hear` predicate: `(hear <label> <time> self|<dir> <msg>)`,
/// where `label` is the speaker's team name (`None` when `LabelMessages` is
/// off, giving `(hear <time> ...)`), `game_time` the game time of the
/// cycle, and `direction` the bearing from [`hear_direction`] or `None` for
/// the speaker's own copy (`self`).
pub fn write_hear(
    out: &mut String,
    label: Option<&str>,
    game_time: f32,
    direction: Option<f32>,
    msg: &str,
) {
    out.push_str("(hear ");
    if let Some(label) = label {
        out.push_str(label);
        out.push(' ');
    }
    push_real(out, game_time);
    out.push(' ');
    match direction {
        Some(d) => push_real(out, d),
        None => out.push_str("self"),
    }
    out.push(' ');
    out.push_str(msg);
    out.push(')');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn say_validation_table() {
        let ok = [
            "hello",
            "a",
            "01234567890123456789",
            "~!#$%&*+,-./:;<=>?@",
            "a\"b'c\\d",
        ];
        for m in ok {
            assert_eq!(validate_say(m), Ok(()), "{m:?}");
        }
        let bad: [(&str, SayError); 9] = [
            ("", SayError::Empty),
            ("012345678901234567890", SayError::TooLong { len: 21 }),
            (
                "hello world",
                SayError::BadCharacter {
                    byte: b' ',
                    index: 5,
                },
            ),
            (
                "(x",
                SayError::BadCharacter {
                    byte: b'(',
                    index: 0,
                },
            ),
            (
                "x)",
                SayError::BadCharacter {
                    byte: b')',
                    index: 1,
                },
            ),
            (
                "tab\there",
                SayError::BadCharacter {
                    byte: b'\t',
                    index: 3,
                },
            ),
            (
                "del\x7f",
                SayError::BadCharacter {
                    byte: 0x7f,
                    index: 3,
                },
            ),
            (
                "é",
                SayError::BadCharacter {
                    byte: 0xc3,
                    index: 0,
                },
            ),
            // Characters are checked before the length.
            (
                "0123456789 0123456789",
                SayError::BadCharacter {
                    byte: b' ',
                    index: 10,
                },
            ),
        ];
        for (m, e) in bad {
            assert_eq!(validate_say(m), Err(e), "{m:?}");
        }
        assert!(SayError::TooLong { len: 21 }.to_string().contains("21"));
    }

    #[test]
    fn capacity_rule() {
        let mut b = HearBudget::new();
        // Cycle 1: three messages from the own team, the first wins; the
        // opponent budget is separate.
        assert!(b.try_accept(true));
        assert!(!b.try_accept(true));
        assert!(!b.try_accept(true));
        assert!(b.try_accept(false));
        b.tick();
        // Cycle 2: both budgets at 1, nothing is accepted.
        assert!(!b.try_accept(true));
        assert!(!b.try_accept(false));
        b.tick();
        // Cycle 3: accepted again.
        assert!(b.try_accept(true));
        assert!(b.try_accept(false));
        b.tick();
        b.tick();
        b.tick();
        // Budgets never exceed the maximum: one message, not two.
        assert!(b.try_accept(true));
        assert!(!b.try_accept(true));
        // Steady talk from one team: every second cycle gets through.
        let mut b = HearBudget::default();
        let got: Vec<bool> = (0..8)
            .map(|_| {
                let r = b.try_accept(false);
                b.tick();
                r
            })
            .collect();
        assert_eq!(got, [true, false, true, false, true, false, true, false]);
    }

    /// Three speakers in one cycle as seen by listener L1 of team Left:
    /// its own say (self copy), teammate L2, then opponent R1; then a
    /// cycle later L2 again (lost) and R1 again (lost).
    #[test]
    fn three_speakers_in_one_cycle() {
        let mut budget = HearBudget::new();
        let mut frame = String::new();
        let l1 = Vector3::new(-1.5, -1.0, 0.4);
        let l2 = Vector3::new(-2.0, 1.0, 0.4);
        let r1 = Vector3::new(3.0, 0.0, 0.4);
        // Self copy: not budgeted.
        write_hear(&mut frame, Some("Left"), 0.0, None, "me");
        for (from, label, pos, own) in [
            ("L2", "Left", l2, true),
            ("R1", "Right", r1, false),
            ("L3", "Left", l2, true),
        ] {
            if in_hearing_range(l1, pos) && budget.try_accept(own) {
                write_hear(
                    &mut frame,
                    Some(label),
                    0.0,
                    Some(hear_direction(l1, pos, Side::Left)),
                    from,
                );
            }
        }
        budget.tick();
        assert_eq!(
            frame,
            "(hear Left 0.00 self me)(hear Left 0.00 104.04 L2)(hear Right 0.00 12.53 R1)"
        );
        assert!(!budget.try_accept(true) && !budget.try_accept(false));
        // Labels off.
        let mut s = String::new();
        write_hear(&mut s, None, 1.5, Some(-11.31), "x");
        assert_eq!(s, "(hear 1.50 -11.31 x)");
    }

    #[test]
    fn range() {
        assert_eq!(hearing_range(), 50.0);
        let a = Vector3::new(-15.0, -10.0, 0.4);
        assert!(in_hearing_range(a, Vector3::new(15.0, 10.0, 0.4)));
        assert!(!in_hearing_range(a, Vector3::new(35.0, -10.0, 0.4)));
        assert!(in_hearing_range(a, Vector3::new(34.99, -10.0, 0.4)));
    }

    #[test]
    fn direction_in_both_team_frames() {
        let l = Vector3::new(0.0, 0.0, 0.4);
        let cases = [
            ((1.0, 0.0), 0.0, 180.0),
            ((0.0, 1.0), 90.0, -90.0),
            ((-1.0, 0.0), 180.0, 0.0),
            ((0.0, -1.0), -90.0, 90.0),
            ((1.0, 1.0), 45.0, -135.0),
            ((-1.0, -1.0), -135.0, 45.0),
        ];
        for ((x, y), left, right) in cases {
            let s = Vector3::new(x, y, 2.0);
            assert!(
                (hear_direction(l, s, Side::Left) - left).abs() < 1e-4,
                "{x} {y}"
            );
            assert!(
                (hear_direction(l, s, Side::Right) - right).abs() < 1e-4,
                "{x} {y}"
            );
        }
        // Straight behind is +180, never -180.
        for side in [Side::Left, Side::Right] {
            let behind = Vector3::new(-side.sign(), -0.0, 0.0);
            assert_eq!(hear_direction(Vector3::zeros(), behind, side), 180.0);
            assert_eq!(
                hear_direction(Vector3::zeros(), Vector3::new(-side.sign(), 0.0, 0.0), side),
                180.0
            );
        }
        assert_eq!(hear_direction(l, l, Side::Left), 0.0);
    }

    /// The recorded scene: Left/1 at (-1.5, -1) and Right/1 at (3, 0) hear
    /// Left/2 at (-2, 1) (beam noise moves them by up to 5 cm).
    #[test]
    fn directions_of_the_recorded_scene() {
        let l1 = Vector3::new(-1.5, -1.0, 0.4);
        let r1 = Vector3::new(3.0, 0.0, 0.4);
        let l2 = Vector3::new(-2.0, 1.0, 0.4);
        let d = hear_direction(l1, l2, Side::Left);
        assert!((d - 104.09).abs() < 1.5 && (d - 103.00).abs() < 1.5, "{d}");
        let d = hear_direction(r1, l2, Side::Right);
        assert!((d - -11.24).abs() < 0.5 && (d - -11.26).abs() < 0.5, "{d}");
    }

    /// Every recorded `hear` is reproduced byte for byte from its fields.
    #[test]
    fn format_matches_transcripts() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/reference/transcripts");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".txt"))
            .collect();
        names.sort();
        let mut seen = 0;
        for n in names {
            let text = std::fs::read_to_string(dir.join(&n)).unwrap();
            for line in text.lines() {
                let mut rest = line;
                while let Some(i) = rest.find("(hear ") {
                    let end = i + rest[i..].find(')').unwrap() + 1;
                    let rec = &rest[i..end];
                    rest = &rest[end..];
                    let f: Vec<&str> = rec[6..rec.len() - 1].split(' ').collect();
                    assert_eq!(f.len(), 4, "{n}: {rec}");
                    let time: f32 = f[1].parse().unwrap();
                    let dir = (f[2] != "self").then(|| f[2].parse::<f32>().unwrap());
                    assert_eq!(validate_say(f[3]), Ok(()));
                    let mut ours = String::new();
                    write_hear(&mut ours, Some(f[0]), time, dir, f[3]);
                    assert_eq!(ours, rec, "{n}");
                    let mut unlabelled = String::new();
                    write_hear(&mut unlabelled, None, time, dir, f[3]);
                    assert_eq!(unlabelled, rec.replacen(&format!("{} ", f[0]), "", 1));
                    seen += 1;
                }
            }
        }
        assert!(seen >= 40, "only {seen} hear predicates found");
    }
}
