//! The join deadline of an agent connection.
//!
//! A connection holds one of the `max_agents` slots from the moment it is
//! accepted, so one that never joins a team must not hold it forever (63
//! silent connections would lock every real agent out). The deadline runs
//! only while the server waits for the client, never while the client
//! waits for the server:
//!
//! * from the accept until the client's first `scene`;
//! * from the first frame written to the client until its first `init`
//!   (the robot exists then, so `init` can work);
//! * from the first frame written after that `init` until the team is
//!   joined (an `init` that failed can be retried in that time);
//! * from a refused `scene` until the next `scene`.
//!
//! So a client waiting for a scripted start (`sync_wait_for_agents`) or for
//! an agent that holds up the sync barrier is never closed: it is the
//! server's turn. Once the agent is in a team the deadline is off.

use std::time::{Duration, Instant};

use crate::sim::driver::AgentStatus;

/// Where a not-yet-joined connection stands, and since when the server has
/// been waiting for it.
#[derive(Debug, Clone)]
pub struct JoinDeadline {
    timeout: Option<Duration>,
    /// The client's turn began then; `None` while it is the server's turn.
    since: Option<Instant>,
    joined: bool,
    scene_sent: bool,
    init_sent: bool,
}

impl JoinDeadline {
    /// A fresh connection accepted at `now`; `None` disables the deadline.
    pub fn new(timeout: Option<Duration>, now: Instant) -> JoinDeadline {
        JoinDeadline {
            timeout,
            since: Some(now),
            joined: false,
            scene_sent: false,
            init_sent: false,
        }
    }

    /// The client sent a message; `scene` and `init` tell whether it held
    /// those commands. The first of each hands the turn to the server (an
    /// `init` only after a `scene`: before the robot exists it is dropped).
    pub fn message(&mut self, scene: bool, init: bool) {
        if self.joined {
            return;
        }
        let init = init && self.scene_sent;
        let progress = (scene && !self.scene_sent) || (init && !self.init_sent);
        self.scene_sent |= scene;
        self.init_sent |= init;
        if progress {
            self.since = None;
        }
    }

    /// A frame was written to the client: its turn again (if it was not).
    pub fn frame_sent(&mut self, now: Instant) {
        if !self.joined && self.since.is_none() && self.scene_sent {
            self.since = Some(now);
        }
    }

    /// The simulation reports on the agent.
    pub fn status(&mut self, status: &AgentStatus, now: Instant) {
        match status {
            AgentStatus::Joined { .. } => {
                self.joined = true;
                self.since = None;
            }
            AgentStatus::SceneRefused => {
                self.scene_sent = false;
                self.since = Some(now);
            }
            AgentStatus::Connecting => {}
        }
    }

    /// When the connection is to be closed, if the server waits for it.
    pub fn deadline(&self) -> Option<Instant> {
        if self.joined {
            return None;
        }
        Some(self.since? + self.timeout?)
    }

    /// What the server has been waiting for, for the log line.
    pub fn awaited(&self) -> &'static str {
        if !self.scene_sent {
            "a `scene`"
        } else if !self.init_sent {
            "an `init`"
        } else {
            "a successful `init`"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(5);

    fn joined() -> AgentStatus {
        AgentStatus::Joined {
            team: "A".into(),
            unum: 1,
        }
    }

    #[test]
    fn silent_connection_expires_after_the_timeout() {
        let t0 = Instant::now();
        let mut d = JoinDeadline::new(Some(T), t0);
        assert_eq!(d.deadline(), Some(t0 + T));
        // Messages without a scene do not count as progress.
        d.message(false, false);
        d.message(false, true);
        assert_eq!(d.deadline(), Some(t0 + T));
        assert_eq!(d.awaited(), "a `scene`");
        // Frames are only written once there is a robot; a stray write
        // before the scene does not restart the clock.
        d.frame_sent(t0 + Duration::from_secs(1));
        assert_eq!(d.deadline(), Some(t0 + T));
    }

    #[test]
    fn the_clock_stops_while_the_server_has_the_turn() {
        let t0 = Instant::now();
        let mut d = JoinDeadline::new(Some(T), t0);
        d.message(true, false);
        // Waiting for a scripted start: no frame for a long time, no deadline.
        assert_eq!(d.deadline(), None);
        let t1 = t0 + Duration::from_secs(60);
        d.frame_sent(t1);
        assert_eq!(d.deadline(), Some(t1 + T));
        assert_eq!(d.awaited(), "an `init`");
        // Later frames do not push the deadline back; a repeated scene
        // is no progress.
        d.frame_sent(t1 + Duration::from_secs(1));
        d.message(true, false);
        assert_eq!(d.deadline(), Some(t1 + T));
        d.message(false, true);
        assert_eq!(d.deadline(), None);
        let t2 = t1 + Duration::from_secs(2);
        d.frame_sent(t2);
        assert_eq!(d.deadline(), Some(t2 + T));
        // A second init (after a failed one) does not restart the clock.
        d.message(false, true);
        assert_eq!(d.deadline(), Some(t2 + T));
        d.status(&joined(), t2);
        assert_eq!(d.deadline(), None);
        d.frame_sent(t2 + T);
        assert_eq!(d.deadline(), None);
    }

    #[test]
    fn a_refused_scene_gives_the_turn_back_for_another_scene() {
        let t0 = Instant::now();
        let mut d = JoinDeadline::new(Some(T), t0);
        d.message(true, false);
        let t1 = t0 + Duration::from_secs(1);
        d.status(&AgentStatus::SceneRefused, t1);
        assert_eq!(d.deadline(), Some(t1 + T));
        d.message(true, false);
        assert_eq!(d.deadline(), None);
    }

    #[test]
    fn disabled_never_expires() {
        let t0 = Instant::now();
        let d = JoinDeadline::new(None, t0);
        assert_eq!(d.deadline(), None);
    }
}
