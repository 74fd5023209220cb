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
//! connection in its first five cycles), nor do the frames of a robot that
//! joined a team until its agent has answered after the frame announcing
//! its number went out. The grace is for clients that drive several agents
//! from one loop, read one frame per agent in turn and let a new agent
//! answer nothing before it sees its number: frames sent before the
//! announcement can still be queued ahead of it, and waiting for an agent
//! that is still reading them would wait for ever, because the same loop
//! is blocked on another agent's next frame. The cycles in which such an
//! agent's commands land depend on timing. With `sync_timeout_ms`, an agent
//! that has not answered in time is left behind: the cycles run without it
//! until it sends something again.

use super::agent::{Agent, Announcement};
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
        // With a grace period, a joined agent's grace lasts until it has
        // answered after the frame saying it joined (its number in the GS)
        // was queued: the clients the grace is for answer nothing before
        // they have read that frame, and frames sent before it may still
        // be waiting to be read. (Before its `init` an agent answers the
        // first frame it reads, so N frames of grace are enough.)
        let announcing = matches!(a.identity, Announcement::Pending | Announcement::Queued);
        let grace = grace_frames > 0 && (a.frames_sent <= grace_frames || announcing);
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

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use crate::command::{Command, Init, Scene};
    use crate::sim::config::SimConfig;
    use crate::sim::cycle::{ConnId, Simulation};

    const AGENT: ConnId = 1;

    /// A sync-mode simulation with the reference's grace of five frames.
    fn with_grace() -> Simulation {
        let cfg = SimConfig {
            step: 0.02,
            sync_grace_frames: 5,
            sync_wait_for_agents: 1,
            ..SimConfig::default()
        };
        Simulation::new(cfg, 7).expect("the built-in models load")
    }

    fn send(sim: &mut Simulation, cmd: Command) {
        sim.receive(AGENT, vec![Ok(cmd)], None);
    }

    /// One cycle as the sync-mode driver runs it, if the barrier lets it
    /// end its read phase: the frames prepared last cycle queued for the
    /// client (all of them taken by the socket), then the step.
    fn cycle(sim: &mut Simulation, queued: &mut VecDeque<String>) -> bool {
        if !sim.barrier_satisfied() {
            return false;
        }
        for (conn, frame) in sim.take_outgoing() {
            queued.push_back(String::from_utf8_lossy(&frame).into_owned());
            sim.frame_delivered(conn);
        }
        sim.step(|_| {});
        true
    }

    #[test]
    fn a_joined_agent_still_reading_the_frames_before_its_number_is_not_waited_for() {
        let mut sim = with_grace();
        let mut queued = VecDeque::new();
        sim.connect(AGENT, "127.0.0.1:3101".parse().expect("an address"));
        send(
            &mut sim,
            Command::Scene(Scene {
                path: "rsg/agent/nao/nao_hetero.rsg".into(),
                args: vec!["0".into()],
            }),
        );
        // The grace frames go out without answers; then the server waits.
        let mut cycles = 0;
        while cycle(&mut sim, &mut queued) {
            cycles += 1;
            assert!(cycles < 20, "the grace never ended");
        }
        assert!(queued.len() > 5, "{} frames before the wait", queued.len());
        // The client reads its first frame and sends `init`, then nothing
        // until it reads a frame with its number.
        queued.pop_front();
        send(
            &mut sim,
            Command::Init(Init {
                unum: 1,
                team: Some("Loop".into()),
            }),
        );
        let announces = |f: &String| f.contains("(unum 1)");
        while !queued.iter().any(announces) {
            assert!(
                cycle(&mut sim, &mut queued),
                "the server waits before announcing the agent's number"
            );
        }
        let unread = queued.iter().take_while(|f| !announces(f)).count();
        assert!(unread > 0, "no frame queued before the announcement");
        // The server must not wait for the agent while it reads those:
        // a one-loop client reading them is blocked on its other agents'
        // next frames, which this wait would hold back.
        for _ in 0..unread {
            queued.pop_front();
            assert!(
                cycle(&mut sim, &mut queued),
                "the server waits for an agent that has not read its number yet"
            );
        }
        // It reads its number and answers: from then on every frame waits
        // for its answer.
        while queued.pop_front().is_some_and(|f| !announces(&f)) {}
        send(&mut sim, Command::Syn);
        assert!(cycle(&mut sim, &mut queued));
        assert!(
            !sim.barrier_satisfied(),
            "an agent in lockstep is not waited for"
        );
        send(&mut sim, Command::Syn);
        assert!(cycle(&mut sim, &mut queued));
    }
}
