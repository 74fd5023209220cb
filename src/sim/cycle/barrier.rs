//! The sync-mode barrier: whether the read phase may end, and who it is
//! waiting for.

use super::Simulation;

impl Simulation {
    /// Whether the sync-mode read phase may end: every agent that has a
    /// robot (or asked for one) has answered the frames it was sent. With
    /// no such agent the cycle waits (the reference free-runs; waiting
    /// keeps sync-mode logs independent of wall time).
    ///
    /// A new agent counts as answered, whether it sent anything or not, as
    /// in the reference's grace period, until it answers a frame with
    /// `(syn)` (from then on it is waited for, so an agent in lockstep from
    /// its first frame never reads frames sent ahead of it), but no longer
    /// than `sync_grace_frames` frames after the one that told it its
    /// number. The reference counts its grace from the connection; counting
    /// from the team join is more forgiving and never stalls a client that
    /// drives several agents from one loop and answers a new agent's frames
    /// only once it has seen its number (a connection that never joins is
    /// closed by the idle timeout). A scripted start
    /// (`sync_wait_for_agents` > 0) instead waits for some message in
    /// answer to each of the first `sync_grace_frames` frames, so the
    /// agents' `init` and `beam` land in the same cycle every run.
    pub fn barrier_satisfied(&self) -> bool {
        if !self.started {
            let asked = self.agents.values().filter(|a| a.in_barrier()).count();
            if asked < self.cfg.sync_wait_for_agents.max(1) {
                return false;
            }
        }
        let scripted = self.cfg.sync_wait_for_agents > 0;
        let grace = u64::from(self.cfg.sync_grace_frames);
        let mut participants = 0;
        for a in self.agents.values() {
            if !a.in_barrier() {
                continue;
            }
            participants += 1;
            if a.frames_sent == 0 {
                continue;
            }
            let answered = if scripted {
                a.synced || (a.frames_sent <= grace && a.got_message)
            } else {
                let in_grace =
                    !a.in_lockstep && a.joined_at_frame.is_none_or(|j| a.frames_sent <= j + grace);
                a.synced || in_grace
            };
            if !answered {
                return false;
            }
        }
        participants > 0
    }

    /// Agents the barrier is waiting for (for the sync-timeout log line).
    pub fn unsynced_agents(&self) -> Vec<String> {
        self.agents
            .iter()
            .filter(|(_, a)| a.in_barrier() && a.frames_sent > 0 && !a.synced)
            .map(|(c, a)| format!("conn {c} {}", a.label()))
            .collect()
    }
}
