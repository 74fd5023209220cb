//! Shared helpers: the model library, reference facts and traces.

use std::path::PathBuf;

use nalgebra::Vector3;
use rcss3d::sim::world::{PhysicsConfig, RobotHandle, World};

/// The reference data copied into the repository (`tests/data/reference`).
pub fn reference_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/reference"))
}

pub use rcss3d_tools::replay::{library, model, Trace};

pub fn world() -> World {
    world_with(&PhysicsConfig::default())
}

pub fn world_with(cfg: &PhysicsConfig) -> World {
    match World::new(cfg) {
        Ok(w) => w,
        Err(e) => panic!("World::new: {e}"),
    }
}

/// The reference set-up of every robot scenario: the robot appears at its
/// init spot, 10 warm-up cycles, then the noise-free beam to (-5, 0) facing
/// +x with the torso at z = 0.4 (step 0). Returns the handle; the next
/// `step()` produces row 1.
pub fn reference_setup(w: &mut World, robot_type: u8) -> RobotHandle {
    let h = w.add_robot(model(robot_type), Vector3::new(-14.2, 9.2, 0.4), 0.0);
    for _ in 0..10 {
        w.step();
    }
    w.place_robot(h, Vector3::new(-5.0, 0.0, 0.4), 0.0);
    h
}

/// A reference trace of `tests/data/reference/physics/` by file name.
pub fn trace(name: &str) -> Trace {
    Trace::load(&reference_dir().join("physics").join(name))
}

/// A trainer ball command: (step, position, velocity).
pub type BallCommand = (usize, Option<Vector3<f32>>, Option<Vector3<f32>>);

/// The scenario commands of a `.sent.txt` file from step 0 on: per step,
/// the agent's effector commands and the monitor's ball placement.
pub struct Script {
    /// (step, effector, value)
    pub effectors: Vec<(usize, String, f32)>,
    /// (step, position, velocity)
    pub ball: Vec<BallCommand>,
}

fn numbers_after(payload: &str, key: &str) -> Option<Vector3<f32>> {
    let i = payload.find(&format!("({key} "))?;
    let rest = &payload[i + key.len() + 2..];
    let end = rest.find(')')?;
    let v: Vec<f32> = rest[..end]
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect();
    (v.len() == 3).then(|| Vector3::new(v[0], v[1], v[2]))
}

impl Script {
    pub fn load(name: &str) -> Script {
        let path = reference_dir().join("physics").join(name);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => panic!("{}: {e}", path.display()),
        };
        let mut s = Script {
            effectors: Vec::new(),
            ball: Vec::new(),
        };
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.splitn(3, '\t').collect();
            if f.len() != 3 {
                continue;
            }
            let Ok(step) = f[0].parse::<i64>() else {
                continue;
            };
            if step < 0 {
                continue;
            }
            let step = step as usize;
            match f[1] {
                "agent" => {
                    for cmd in f[2].split(')').map(|c| c.trim_start_matches('(')) {
                        let mut it = cmd.split_whitespace();
                        if let (Some(name), Some(v)) = (it.next(), it.next()) {
                            if let Ok(v) = v.parse::<f32>() {
                                s.effectors.push((step, name.to_string(), v));
                            }
                        }
                    }
                }
                "monitor" if f[2].starts_with("(ball") => {
                    s.ball
                        .push((step, numbers_after(f[2], "pos"), numbers_after(f[2], "vel")));
                }
                _ => {}
            }
        }
        s
    }

    /// Applies the commands labelled `step` (they act on the step from
    /// row `step` to row `step + 1`).
    pub fn apply(&self, w: &mut World, h: RobotHandle, step: usize) {
        let m = w.robot_model(h).clone();
        for (s, name, v) in &self.effectors {
            if *s == step {
                if let Some(j) = m.joint_by_effector(name) {
                    w.set_joint_speed(h, j, *v);
                }
            }
        }
        for (s, pos, vel) in &self.ball {
            if *s == step {
                if let Some(p) = pos {
                    w.set_ball_position(*p);
                }
                if let Some(v) = vel {
                    w.set_ball_velocity(*v);
                }
            }
        }
    }
}
