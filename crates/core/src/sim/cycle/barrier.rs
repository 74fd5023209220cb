//! The sync-mode barrier: whether the read phase may end, and who it is
//! waiting for.
//!
//! The server never runs a cycle ahead of a robot whose agent has not
//! answered its newest frame, so in sync mode how many cycles pass, and in
//! which cycle each command lands, depend only on what the agents send,
//! never on how fast they send it. An agent answers a frame with `(syn)`
//! once it has sent one (it is then in lockstep); before that any message
//! answers, so an agent that builds itself slowly after its `scene` (the
//! reference's clients do) holds up the cycle instead of finding hundreds
//! of frames queued and being left behind.
//!
//! With `sync_grace_frames` = N the first N frames of a robot need no
//! answer (the reference's grace period: it does not wait for a new
//! connection in its first five cycles), nor do its frames until the one
//! announcing its number has been sent, for clients that read a new
//! agent's first frames late and wait for their number; the cycles in which such an agent's commands
//! land then depend on timing. With `sync_timeout_ms`, an agent that has
//! not answered in time is left behind: the cycles run without it until it
//! sends something again.

use super::agent::Agent;
use super::Simulation;

impl Simulation {
    /// Whether the sync-mode read phase may end: every agent that has a
    /// robot (or asked for one) has answered the frames it was sent. With
    /// no such agent the cycle waits (the reference free-runs; waiting
    /// keeps sync-mode logs independent of wall time). Before the first
    /// cycle with agents it also waits until `sync_wait_for_agents` agents
    /// have asked for a robot.
    pub fn barrier_satisfied(&self) -> bool {
        if !self.started {
            let asked = self.agents.values().filter(|a| a.in_barrier()).count();
            if asked < self.cfg.sync_wait_for_agents {
                return false;
            }
        }
        let mut participants = 0;
        for a in self.agents.values().filter(|a| a.in_barrier()) {
            participants += 1;
            if self.awaited(a) {
                return false;
            }
        }
        participants > 0
    }

    /// Whether the barrier waits for this agent's answer to its newest
    /// frame.
    fn awaited(&self, a: &Agent) -> bool {
        if !a.in_barrier() || a.left_behind || a.frames_sent == 0 {
            return false;
        }
        if a.in_lockstep {
            return !a.synced;
        }
        let grace_frames = u64::from(self.cfg.sync_grace_frames);
        // With a grace period, the grace lasts until the agent has been sent
        // the frame saying it joined (its number in the GS): that frame
        // goes out in the send phase after this wait, and the clients the
        // grace is for read their first frames late and answer nothing
        // before they see their number.
        let grace = grace_frames > 0 && (a.frames_sent <= grace_frames || a.announce_identity);
        !(a.got_message || grace)
    }

    /// Agents the barrier is waiting for (for the sync-timeout log line).
    pub fn unsynced_agents(&self) -> Vec<String> {
        self.agents
            .iter()
            .filter(|(_, a)| self.awaited(a))
            .map(|(c, a)| format!("conn {c} {}", a.label()))
            .collect()
    }

    /// The sync timeout ran out: the agents the barrier waits for are left
    /// behind until they send something again.
    pub fn leave_behind_unsynced(&mut self) {
        let late: Vec<_> = self
            .agents
            .iter()
            .filter(|(_, a)| self.awaited(a))
            .map(|(c, _)| *c)
            .collect();
        for c in &late {
            if let Some(a) = self.agents.get_mut(c) {
                a.left_behind = true;
            }
        }
    }
}
