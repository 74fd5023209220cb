//! Frame helpers of the soak's clients (agents and monitors alike use the
//! library's framed client, [`AgentClient`]).

use bytes::Bytes;
use rcss3d::net::client::AgentClient;

/// The next frame; the end of the connection is an error here.
pub(crate) async fn recv(s: &mut AgentClient) -> std::io::Result<Bytes> {
    s.recv()
        .await?
        .ok_or_else(|| std::io::ErrorKind::UnexpectedEof.into())
}

/// `(time (now X))` of an agent frame.
pub(crate) fn agent_now(frame: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(frame).ok()?;
    let i = text.find("(now ")? + 5;
    let end = i + text[i..].find(')')?;
    text[i..end].parse().ok()
}

/// Parentheses balance: never negative, zero at the end.
pub(crate) fn balanced(text: &[u8]) -> bool {
    let mut depth: i64 = 0;
    for &b in text {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// The server's clock as agents see it: like the reference's, a 32-bit
/// float that adds the float value of the step every cycle
/// (docs/protocol.md#clocks), printed with two decimals. It drifts from
/// multiples of 0.02, so two consecutive frames can read 0.01 or 0.03
/// apart; counting steps on the same float clock tells a missed frame from
/// that rounding.
#[derive(Debug, Default)]
pub(crate) struct ServerClock {
    /// The clock of the last frame, once found.
    t: Option<f32>,
}

/// Cycles a frame's clock may be ahead of the last one before the reading
/// is taken as a new start rather than steps (a clock set back or far
/// ahead).
const MAX_STEPS: u32 = 100_000;

fn shows(t: f32, now: f64) -> bool {
    (f64::from(t) * 100.0).round_ties_even() == (now * 100.0).round()
}

impl ServerClock {
    /// The cycles from the last frame to one reading `now`: 1 for the next
    /// frame, 2 when one frame in between is missing. None for the first
    /// frame and for a reading the clock does not reach.
    pub(crate) fn steps_to(&mut self, now: f64, step: f32) -> Option<u32> {
        let steps = self.t.and_then(|mut t| {
            (1..=MAX_STEPS).find(|_| {
                t += step;
                shows(t, now)
            })
        });
        match steps {
            Some(n) => {
                let t = self.t.unwrap_or(0.0);
                self.t = Some((0..n).fold(t, |t, _| t + step));
            }
            None => {
                // Find the reading from the start of the clock.
                let mut t = 0.0f32;
                let found = (0..=10 * MAX_STEPS).any(|_| {
                    if shows(t, now) {
                        return true;
                    }
                    t += step;
                    false
                });
                self.t = found.then_some(t);
            }
        }
        steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server's printing of a time (`perception::format`).
    fn printed(t: f32) -> f64 {
        let mut s = String::new();
        rcss3d::perception::format::push_real(&mut s, t);
        s.parse().expect("a number")
    }

    #[test]
    fn the_drifting_clock_counts_one_step_per_frame() {
        let mut clock = ServerClock::default();
        let mut t = 0.0f32;
        let mut jumps = 0;
        let mut last = printed(t);
        assert_eq!(clock.steps_to(last, 0.02), None);
        for _ in 0..20_000 {
            t += 0.02;
            let now = printed(t);
            if now - last > 0.025 {
                jumps += 1;
            }
            last = now;
            assert_eq!(clock.steps_to(now, 0.02), Some(1), "at {now}");
        }
        // The printed clock does jump by 0.03 now and then (cycle 7448 is
        // the first): the reason to count on the float clock.
        assert!(jumps > 0);
    }

    #[test]
    fn a_missing_frame_counts_two_steps() {
        let mut clock = ServerClock::default();
        let mut t = 0.0f32;
        for _ in 0..7000 {
            t += 0.02;
        }
        clock.steps_to(printed(t), 0.02);
        t += 0.02;
        t += 0.02;
        assert_eq!(clock.steps_to(printed(t), 0.02), Some(2));
    }
}
