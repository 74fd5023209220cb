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
//! server's turn. While the client answers the frames it gets, its turn
//! also lasts at least as many frames as the timeout has cycles, so a
//! server running slower than real time gives it as many cycles as a fast
//! one; a frame it leaves unanswered for the timeout ends it at once. Once
//! the agent is in a team the deadline is off.

use std::time::{Duration, Instant};

use crate::sim::driver::AgentStatus;

/// Where a not-yet-joined connection stands, and since when the server has
/// been waiting for it.
#[derive(Debug, Clone)]
pub struct JoinDeadline {
    timeout: Option<Duration>,
    /// Frames the client's turn lasts at least while it answers them.
    min_frames: u64,
    /// The client's turn began then; `None` while it is the server's turn.
    since: Option<Instant>,
    /// Frames written since the client's turn began.
    frames: u64,
    /// When the newest frame was written.
    last_frame: Option<Instant>,
    /// The client sent a message after the newest frame.
    answered: bool,
    joined: bool,
    scene_sent: bool,
    init_sent: bool,
}

impl JoinDeadline {
    /// A fresh connection accepted at `now`; `None` disables the deadline.
    /// `step` is the simulation step (seconds per cycle).
    pub fn new(timeout: Option<Duration>, step: f32, now: Instant) -> JoinDeadline {
        let min_frames = timeout
            .map(|t| (t.as_secs_f32() / step.max(1e-3)).ceil() as u64)
            .unwrap_or(0);
        JoinDeadline {
            timeout,
            min_frames,
            since: Some(now),
            frames: 0,
            last_frame: None,
            answered: true,
            joined: false,
            scene_sent: false,
            init_sent: false,
        }
    }

    /// The client sent a message; `scene` and `init` tell whether it held
    /// those commands. The first of each hands the turn to the server (an
    /// `init` only after a `scene`: before the robot exists it is dropped).
    pub fn message(&mut self, scene: bool, init: bool) {
        self.answered = true;
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
        if self.joined || !self.scene_sent {
            return;
        }
        if self.since.is_none() {
            self.since = Some(now);
            self.frames = 0;
        }
        self.frames += 1;
        self.last_frame = Some(now);
        self.answered = false;
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
                self.frames = 0;
                self.last_frame = None;
            }
            AgentStatus::Connecting => {}
        }
    }

    /// When the connection is to be closed, if the server waits for it:
    /// the timeout after its turn began (but while it answers the frames it
    /// gets, not before it has had the timeout's worth of cycles), or the
    /// timeout after a frame it has not answered.
    pub fn deadline(&self) -> Option<Instant> {
        if self.joined {
            return None;
        }
        let since = self.since?;
        let timeout = self.timeout?;
        let turn = (self.frames == 0 || self.frames >= self.min_frames).then(|| since + timeout);
        let unanswered = self
            .last_frame
            .filter(|_| !self.answered)
            .map(|t| t + timeout);
        turn.into_iter().chain(unanswered).min()
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

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn joined() -> AgentStatus {
        AgentStatus::Joined {
            team: "A".into(),
            unum: 1,
        }
    }

    #[test]
    fn silent_connection_expires_after_the_timeout() {
        let t0 = Instant::now();
        let mut d = JoinDeadline::new(Some(T), 0.02, t0);
        assert_eq!(d.deadline(), Some(t0 + T));
        // Messages without a scene do not count as progress.
        d.message(false, false);
        d.message(false, true);
        assert_eq!(d.deadline(), Some(t0 + T));
        assert_eq!(d.awaited(), "a `scene`");
        // Frames are only written once there is a robot; a stray write
        // before the scene does not restart the clock.
        d.frame_sent(t0 + ms(1000));
        assert_eq!(d.deadline(), Some(t0 + T));
    }

    #[test]
    fn the_clock_stops_while_the_server_has_the_turn() {
        let t0 = Instant::now();
        let mut d = JoinDeadline::new(Some(T), 0.02, t0);
        d.message(true, false);
        // Waiting for a scripted start: no frame for a long time, no deadline.
        assert_eq!(d.deadline(), None);
        let t1 = t0 + Duration::from_secs(60);
        d.frame_sent(t1);
        assert_eq!(d.awaited(), "an `init`");
        // Unanswered, the first frame starts the clock...
        assert_eq!(d.deadline(), Some(t1 + T));
        // ... answered, it is not the client that holds things up: a slow
        // server gives it the timeout's worth of cycles (5 s = 250).
        d.message(false, false);
        assert_eq!(d.deadline(), None);
        for _ in 1..250 {
            d.frame_sent(t1 + ms(100));
            d.message(false, false);
        }
        assert_eq!(d.deadline(), Some(t1 + T));
        // A repeated scene is no progress; the first init is.
        d.message(true, false);
        assert_eq!(d.deadline(), Some(t1 + T));
        d.message(false, true);
        assert_eq!(d.deadline(), None);
        let t2 = t1 + Duration::from_secs(2);
        d.frame_sent(t2);
        assert_eq!(d.awaited(), "a successful `init`");
        assert_eq!(d.deadline(), Some(t2 + T));
        // A second init (after a failed one) does not restart the clock.
        d.message(false, true);
        for _ in 0..300 {
            d.frame_sent(t2 + ms(500));
        }
        assert_eq!(d.deadline(), Some(t2 + T));
        d.status(&joined(), t2);
        assert_eq!(d.deadline(), None);
        d.frame_sent(t2 + T);
        assert_eq!(d.deadline(), None);
    }

    #[test]
    fn a_robot_that_stops_answering_expires_even_when_frames_stop() {
        // Sync mode: the server waits for this client, so no more frames
        // come; the unanswered frame is what counts.
        let t0 = Instant::now();
        let mut d = JoinDeadline::new(Some(T), 0.02, t0);
        d.message(true, false);
        let t1 = t0 + ms(100);
        d.frame_sent(t1);
        d.message(false, false);
        let t2 = t1 + ms(20);
        d.frame_sent(t2);
        assert_eq!(d.deadline(), Some(t2 + T));
    }

    #[test]
    fn a_refused_scene_gives_the_turn_back_for_another_scene() {
        let t0 = Instant::now();
        let mut d = JoinDeadline::new(Some(T), 0.02, t0);
        d.message(true, false);
        let t1 = t0 + ms(1000);
        d.status(&AgentStatus::SceneRefused, t1);
        assert_eq!(d.deadline(), Some(t1 + T));
        d.message(true, false);
        assert_eq!(d.deadline(), None);
    }

    #[test]
    fn disabled_never_expires() {
        let t0 = Instant::now();
        let d = JoinDeadline::new(None, 0.02, t0);
        assert_eq!(d.deadline(), None);
    }
}
