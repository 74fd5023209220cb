//! The `beam` effector: placing a robot before kick-off, on a free spot.

use nalgebra::Vector3;
use tracing::debug;

use crate::sim::cycle::agent::bad_input;
use crate::sim::cycle::{placement_height, torso_position, ConnId, Simulation};
use crate::sim::world::{RobotHandle, World};

/// Smallest distance between two robots' torsos a beam may leave (m).
const MIN_ROBOT_SPACING: f32 = 0.45;

impl Simulation {
    /// Places every robot that asked for a beam, where the referee allows
    /// it in this play mode.
    pub(in crate::sim::cycle) fn execute_beams(&mut self) {
        let conns: Vec<ConnId> = self
            .agents
            .iter()
            .filter(|(_, a)| a.pending_beam.is_some())
            .map(|(c, _)| *c)
            .collect();
        for conn in conns {
            let Some(agent) = self.agents.get_mut(&conn) else {
                continue;
            };
            if agent.side.is_none() {
                // Sent after an `init` that failed in this step.
                agent.pending_beam = None;
                bad_input(
                    self.server_time,
                    conn,
                    agent,
                    &mut self.teamless_log,
                    format_args!("`beam` after a failed `init` ignored"),
                );
                continue;
            }
            let (Some(beam), Some(side), Some(robot), Some(model)) = (
                agent.pending_beam.take(),
                agent.side,
                agent.robot,
                agent.model.clone(),
            ) else {
                continue;
            };
            match self
                .referee
                .beam_target(side, beam.x, beam.y, beam.rot, &mut self.rng)
            {
                Some((x, y, heading)) => {
                    let z = placement_height(&self.cfg, &model);
                    let (x, y) = free_spot(&self.world, robot, x, y);
                    self.world
                        .place_robot(robot, Vector3::new(x, y, z), heading);
                }
                None => {
                    debug!(conn, mode = %self.referee.play_mode(), "beam ignored in this play mode")
                }
            }
        }
    }
}

/// Closest spot to (x, y) at least [`MIN_ROBOT_SPACING`] from every other
/// robot's torso (deviation: the reference beams robots into each other,
/// which makes the contact solver fling them away). Searches rings of
/// 0.5 m around the spot.
fn free_spot(world: &World, me: RobotHandle, x: f32, y: f32) -> (f32, f32) {
    let others: Vec<Vector3<f32>> = world
        .robots()
        .into_iter()
        .filter(|h| *h != me)
        .map(|h| torso_position(world, h))
        .collect();
    let free = |px: f32, py: f32| {
        others
            .iter()
            .all(|o| (o.x - px).hypot(o.y - py) >= MIN_ROBOT_SPACING)
    };
    if free(x, y) {
        return (x, y);
    }
    for ring in 1..=8 {
        let r = ring as f32 * 0.5;
        for k in 0..(8 * ring) {
            let a = std::f32::consts::TAU * k as f32 / (8 * ring) as f32;
            let (px, py) = (x + r * a.cos(), y + r * a.sin());
            if free(px, py) {
                return (px, py);
            }
        }
    }
    (x, y)
}
