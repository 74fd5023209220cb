//! Thinning of repeated log lines, so no flood of bad input can make the
//! log grow without bound.
//!
//! A [`LogLimit`] lets the first `burst` lines through, then one line per
//! `interval`. A line that gets through after some were left out carries
//! their number (`skipped=N`; a [`Skipped`] of `None` records no field),
//! so the log still says how much happened. Time is passed in, so it is
//! testable.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The lines left out before one that may be written, as a log field:
/// `Some(n)` for n > 0, `None` when none was (a `tracing` field of `None`
/// is not written, so lines carry `skipped=N` only when it says something).
pub type Skipped = Option<u64>;

fn skipped(n: u64) -> Skipped {
    (n > 0).then_some(n)
}

/// Writes a `tracing` event if a limit lets it through, with the lines
/// left out before it as its `skipped` field:
///
/// ```
/// # use rcss3d_core::{limited, log_limit::LogLimit};
/// # let mut limit = LogLimit::for_clients();
/// # let conn = 3;
/// limited!(limit.admit(std::time::Instant::now()), warn!(conn, "bad frame"));
/// ```
///
/// The first argument is the admission (`Option<Skipped>` from
/// [`LogLimit::admit`], [`SharedLogLimit::admit`] or
/// [`KindLimits::admit_at`]); the second is the event as it would be
/// written without a limit.
#[macro_export]
macro_rules! limited {
    ($admit:expr, $level:ident!($($arg:tt)*)) => {
        if let Some(skipped) = $admit {
            ::tracing::$level!(skipped, $($arg)*);
        }
    };
}

/// A token bucket over log lines.
#[derive(Debug, Clone)]
pub struct LogLimit {
    burst: f64,
    per_sec: f64,
    tokens: f64,
    /// Time of the previous call, seconds since `epoch`.
    last: Option<f64>,
    epoch: Option<Instant>,
    suppressed: u64,
}

impl LogLimit {
    /// At most `burst` lines at once, then one per `interval`.
    pub fn new(burst: u32, interval: Duration) -> LogLimit {
        LogLimit {
            burst: f64::from(burst.max(1)),
            per_sec: 1.0 / interval.as_secs_f64().max(1e-6),
            tokens: f64::from(burst.max(1)),
            last: None,
            epoch: None,
            suppressed: 0,
        }
    }

    /// The limit used for lines caused by clients: 10 at once, then one per
    /// second.
    pub fn for_clients() -> LogLimit {
        LogLimit::new(10, Duration::from_secs(1))
    }

    /// The limit for lines of agents joining or leaving a team: a whole
    /// match (22 agents and two more) at once, then one per 5 seconds, so
    /// a client joining and leaving in a loop cannot flood the log.
    pub fn for_team_changes() -> LogLimit {
        LogLimit::new(24, Duration::from_secs(5))
    }

    /// Whether a line may be written at `now`: `Some(skipped)` when it
    /// may, with the lines left out since the last one written; `None`
    /// when this one is left out (and counted).
    pub fn admit(&mut self, now: Instant) -> Option<Skipped> {
        let epoch = *self.epoch.get_or_insert(now);
        self.admit_at(now.saturating_duration_since(epoch).as_secs_f64())
    }

    /// [`LogLimit::admit`] on a clock of the caller's own, in seconds (the
    /// simulation passes its server time: it reads no wall clock).
    pub fn admit_at(&mut self, now_secs: f64) -> Option<Skipped> {
        if let Some(last) = self.last {
            let dt = (now_secs - last).max(0.0);
            self.tokens = (self.tokens + dt * self.per_sec).min(self.burst);
        }
        self.last = Some(now_secs);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Some(skipped(std::mem::take(&mut self.suppressed)))
        } else {
            self.suppressed += 1;
            None
        }
    }

    /// Lines left out since the last one written, and resets the count
    /// (for a closing summary line).
    pub fn take_suppressed(&mut self) -> u64 {
        std::mem::take(&mut self.suppressed)
    }
}

/// One [`LogLimit`] per kind of line, shared by many connections.
///
/// A flood of one kind of line (connections accepted or refused, say)
/// must not hide a line of another kind (a connection closed because it
/// idled), so each kind has its own bucket. Kinds are the call sites'
/// static names, so the map stays as small as the code that logs.
#[derive(Debug)]
pub struct SharedLogLimit {
    make: fn() -> LogLimit,
    kinds: Mutex<BTreeMap<&'static str, LogLimit>>,
}

impl SharedLogLimit {
    /// Every kind limited as [`LogLimit::for_clients`].
    pub fn for_clients() -> SharedLogLimit {
        SharedLogLimit::new(LogLimit::for_clients)
    }

    /// Every kind limited as `make` builds it.
    pub fn new(make: fn() -> LogLimit) -> SharedLogLimit {
        SharedLogLimit {
            make,
            kinds: Mutex::new(BTreeMap::new()),
        }
    }

    /// Whether a line of `kind` may be written now: `Some(n)` with the
    /// number of lines of that kind left out before it.
    pub fn admit(&self, kind: &'static str) -> Option<Skipped> {
        let mut kinds = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        kinds
            .entry(kind)
            .or_insert_with(self.make)
            .admit(Instant::now())
    }
}

/// One [`LogLimit`] per kind of line on the caller's clock, for one owner
/// (the simulation, which passes its server time and reads no wall clock).
/// Kinds are the call sites' static names, as for [`SharedLogLimit`].
#[derive(Debug, Clone, Default)]
pub struct KindLimits {
    kinds: BTreeMap<&'static str, LogLimit>,
}

impl KindLimits {
    /// No line counted yet.
    pub fn new() -> KindLimits {
        KindLimits::default()
    }

    /// Whether a line of `kind` may be written at `now_secs`: `Some(n)`
    /// with the number of lines of that kind left out before it. A kind
    /// seen for the first time gets the limit `make` builds.
    pub fn admit_at(
        &mut self,
        kind: &'static str,
        now_secs: f64,
        make: fn() -> LogLimit,
    ) -> Option<Skipped> {
        self.kinds
            .entry(kind)
            .or_insert_with(make)
            .admit_at(now_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_one_per_interval_with_the_count() {
        let t0 = Instant::now();
        let mut l = LogLimit::new(3, Duration::from_secs(1));
        assert_eq!(l.admit(t0), Some(None));
        assert_eq!(l.admit(t0), Some(None));
        assert_eq!(l.admit(t0), Some(None));
        // A flood of 10 000 lines within the same second: all left out.
        for _ in 0..10_000 {
            assert_eq!(l.admit(t0 + Duration::from_millis(500)), None);
        }
        // One second after the burst, one line with the count.
        assert_eq!(
            l.admit(t0 + Duration::from_millis(1001)),
            Some(Some(10_000))
        );
        assert_eq!(l.admit(t0 + Duration::from_millis(1002)), None);
        assert_eq!(l.take_suppressed(), 1);
        assert_eq!(l.take_suppressed(), 0);
        // After a long pause the burst is back, not more.
        let later = t0 + Duration::from_secs(3600);
        let passed = (0..100).filter(|_| l.admit(later).is_some()).count();
        assert_eq!(passed, 3);
    }

    #[test]
    fn lines_over_a_minute_of_flood_are_bounded() {
        let t0 = Instant::now();
        let mut l = LogLimit::for_clients();
        let mut written = 0;
        for i in 0..600_000u64 {
            if l.admit(t0 + Duration::from_micros(i * 100)).is_some() {
                written += 1;
            }
        }
        // 60 s: the burst of 10 plus one per second.
        assert!((60..=71).contains(&written), "{written} lines");
    }

    #[test]
    fn a_flood_of_one_kind_does_not_hide_another_kind() {
        let shared = SharedLogLimit::for_clients();
        let written = (0..1000)
            .filter(|_| shared.admit("refused").is_some())
            .count();
        assert!(written <= 11, "{written} refusal lines");
        assert_eq!(shared.admit("idle"), Some(None));
        assert_eq!(shared.admit("refused"), None);
    }

    #[test]
    fn kinds_on_the_callers_clock_are_thinned_apart() {
        let mut kinds = KindLimits::new();
        let written = (0..1000)
            .filter(|i| {
                kinds
                    .admit_at("init failed", f64::from(*i) * 0.001, LogLimit::for_clients)
                    .is_some()
            })
            .count();
        assert_eq!(written, 10, "a burst of 10 in the first second");
        assert_eq!(
            kinds.admit_at("agent joined", 0.5, LogLimit::for_team_changes),
            Some(None)
        );
        assert_eq!(
            kinds.admit_at("init failed", 2.0, LogLimit::for_clients),
            Some(Some(990))
        );
    }
}
