//! A per-connection inbound byte budget (token bucket).
//!
//! A client may send `rate` bytes per second on average, in bursts of up to
//! `burst` bytes. Going over closes the connection (a client over
//! a limit is dropped, the others go on). Real agents send well under a
//! kilobyte per cycle; the default (16 MiB/s) only stops floods.

use std::time::Instant;

/// Token bucket over bytes; time is passed in, so it is testable.
#[derive(Debug, Clone)]
pub struct ByteBudget {
    /// Bytes per second, as given.
    per_sec: u64,
    rate: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl ByteBudget {
    /// A full bucket: `rate` bytes/s, at most `burst` bytes at once.
    pub fn new(rate: u64, burst: u64, now: Instant) -> ByteBudget {
        ByteBudget {
            per_sec: rate,
            rate: rate as f64,
            burst: burst as f64,
            tokens: burst as f64,
            last: now,
        }
    }

    /// The average rate allowed, bytes per second.
    pub fn rate(&self) -> u64 {
        self.per_sec
    }

    /// Takes `bytes` from the bucket; `false` when the client is over its
    /// budget (the bucket stays empty).
    pub fn take(&mut self, bytes: usize, now: Instant) -> bool {
        let dt = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + dt * self.rate).min(self.burst);
        self.tokens -= bytes as f64;
        if self.tokens < 0.0 {
            self.tokens = 0.0;
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn bursts_up_to_the_bucket_then_the_rate() {
        let t0 = Instant::now();
        let mut b = ByteBudget::new(1000, 4000, t0);
        // A full bucket takes 4000 bytes at once, not 4001.
        assert!(b.take(4000, t0));
        assert!(!b.take(1, t0));
        // Refilled at 1000 bytes/s.
        let t1 = t0 + Duration::from_millis(500);
        assert!(b.take(500, t1));
        assert!(!b.take(10, t1));
        // A steady 1000 bytes/s in 100-byte messages is fine for long.
        let mut t = t1;
        for _ in 0..1000 {
            t += Duration::from_millis(100);
            assert!(b.take(100, t));
        }
        // Never more than the bucket, however long the pause.
        let t2 = t + Duration::from_secs(3600);
        assert!(b.take(4000, t2));
        assert!(!b.take(1, t2));
    }
}
