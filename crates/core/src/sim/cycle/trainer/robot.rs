//! Trainer commands on one robot: `agent` (`pos`, `move`), `repos`, push
//! (the referee's clearance of the selected robot) and `kill`.

use nalgebra::Vector3;
use tracing::info;

use crate::rules::facts::WorldFacts;
use crate::sim::cycle::{ConnId, Simulation};

impl Simulation {
    /// `(agent (team T) (unum N) (pos x y z))`: moves the robot as a rigid
    /// whole, keeping its posture; clamped into the trainer's area, with
    /// the robot's lowest part no lower than the ground (see `bounds`).
    pub(super) fn trainer_agent_pos(&mut self, conn: ConnId, pos: Vector3<f32>) {
        let Some(h) = self.agents[&conn].robot else {
            return;
        };
        // A rigid shift keeps the torso's height above the lowest part.
        let torso = self.world.part_pose(h, self.world.robot_model(h).torso);
        let lowest = self
            .world
            .robot_lowest_point(h)
            .unwrap_or(torso.translation.z);
        let at = self.trainer_clamp(pos, torso.translation.z - lowest);
        if at != pos {
            self.log_trainer_clamp("agent pos", Some(conn), pos, at);
        }
        self.world.shift_robot(h, at);
    }

    /// `(agent (team T) (unum N) (move x y z yaw))`: places the robot
    /// upright with a heading; clamped into the trainer's area, and lifted
    /// so its lowest part is no lower than the ground (see `bounds`).
    pub(super) fn trainer_agent_move(&mut self, conn: ConnId, pos: Vector3<f32>, yaw_deg: f32) {
        let Some(h) = self.agents[&conn].robot else {
            return;
        };
        let mut at = self.trainer_clamp(pos, 0.0);
        // The Nao faces its local +y: yaw -90 faces +x.
        self.world.place_robot(h, at, yaw_deg + 90.0);
        // Upright, the posture decides how far the feet reach down.
        if let Some(lowest) = self.world.robot_lowest_point(h).filter(|l| *l < 0.0) {
            at.z -= lowest;
            self.world.shift_robot(h, at);
        }
        if at != pos {
            self.log_trainer_clamp("agent move", Some(conn), pos, at);
        }
    }

    /// `(kill)`: the robot leaves and its connection is closed.
    pub(super) fn trainer_kill(&mut self, conn: ConnId) {
        info!(conn, "robot killed by the trainer; closing the connection");
        self.disconnect(conn, "killed by trainer");
        self.report.close.push(conn);
    }

    /// `(repos)`: the robot moved outside the field beside its side's
    /// half, as the referee does with robots it takes out.
    pub(super) fn trainer_repos(&mut self, conn: ConnId) {
        let a = &self.agents[&conn];
        if let (Some(side), Some(h)) = (a.side, a.robot) {
            let pos = self
                .referee
                .outside_position(side, a.unum, self.world.ball_position().y);
            self.world.shift_robot(h, pos);
        }
    }

    /// Push: a robot cleared away as the referee clears offenders.
    pub(super) fn push_away(&mut self, conn: ConnId) {
        let Some(a) = self.agents.get(&conn) else {
            return;
        };
        if a.side.is_none() || a.robot.is_none() {
            return;
        }
        let robots = self.robot_facts();
        let facts = WorldFacts {
            ball: self.world.ball_position(),
            ball_velocity: self.world.ball_velocity(),
            ball_touches: &[],
            robots: &robots,
            robot_contacts: &[],
            self_collisions: &[],
            connected_agents: self.agent_count(),
            dt: self.cfg.step,
        };
        let decisions = self.referee.push_away(&facts, conn as u32, &mut self.rng);
        self.apply_decisions(decisions);
    }
}
