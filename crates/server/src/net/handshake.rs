//! The scene deadline of an agent connection.
//!
//! A connection holds one of the `max_agents` slots from the moment it is
//! accepted, so one that never asks for a robot must not hold it forever
//! (silent connections would lock every real agent out). The deadline
//! runs only until the simulation reports the client's first `scene`
//! (and again from a refused `scene` until the next one): the connection
//! learns it from the agent's [`AgentStatus`], never from the commands it
//! forwards. Once a robot exists the server never cuts
//! the connection for being slow: the reference has no timeouts at all,
//! and a real client (FC Portugal's) spends seconds building its agent
//! between `scene` and `init`. In sync mode such a client holds up the
//! cycle meanwhile, as on the reference (see `sync_timeout_ms`).

use std::time::{Duration, Instant};

use crate::sim::cycle::AgentStatus;

/// Whether a connection still owes the server its `scene`, and until when.
#[derive(Debug, Clone)]
pub struct SceneDeadline {
    timeout: Option<Duration>,
    /// The server waits for a `scene` since then; `None` once one came.
    since: Option<Instant>,
}

impl SceneDeadline {
    /// A fresh connection accepted at `now`; `None` disables the deadline.
    pub fn new(timeout: Option<Duration>, now: Instant) -> SceneDeadline {
        SceneDeadline {
            timeout,
            since: Some(now),
        }
    }

    /// Whether the connection still owes its `scene` (no robot asked for,
    /// or the last request was refused).
    pub fn awaiting_scene(&self) -> bool {
        self.since.is_some()
    }

    /// The simulation reports on the agent: a received `scene` (or a
    /// robot in a team) stops the clock, a refused one starts it again.
    pub fn status(&mut self, status: &AgentStatus, now: Instant) {
        match status {
            AgentStatus::Connecting => {}
            AgentStatus::SceneReceived | AgentStatus::Joined { .. } => self.since = None,
            AgentStatus::SceneRefused => self.since = Some(now),
        }
    }

    /// When the connection is to be closed, if it still owes a `scene`.
    pub fn deadline(&self) -> Option<Instant> {
        Some(self.since? + self.timeout?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(5);

    #[test]
    fn a_silent_connection_expires_after_the_timeout() {
        let t0 = Instant::now();
        let d = SceneDeadline::new(Some(T), t0);
        assert!(d.awaiting_scene());
        assert_eq!(d.deadline(), Some(t0 + T));
    }

    #[test]
    fn a_robot_that_exists_is_never_cut_off() {
        let t0 = Instant::now();
        let mut d = SceneDeadline::new(Some(T), t0);
        d.status(&AgentStatus::SceneReceived, t0);
        assert!(!d.awaiting_scene());
        assert_eq!(d.deadline(), None);
        d.status(
            &AgentStatus::Joined {
                team: "A".into(),
                unum: 1,
            },
            t0 + T,
        );
        assert_eq!(d.deadline(), None);
    }

    #[test]
    fn a_refused_scene_starts_the_clock_again() {
        let t0 = Instant::now();
        let mut d = SceneDeadline::new(Some(T), t0);
        d.status(&AgentStatus::SceneReceived, t0);
        let t1 = t0 + Duration::from_secs(60);
        d.status(&AgentStatus::SceneRefused, t1);
        assert_eq!(d.deadline(), Some(t1 + T));
        d.status(&AgentStatus::SceneReceived, t1);
        assert_eq!(d.deadline(), None);
    }

    #[test]
    fn disabled_never_expires() {
        let d = SceneDeadline::new(None, Instant::now());
        assert_eq!(d.deadline(), None);
    }
}
