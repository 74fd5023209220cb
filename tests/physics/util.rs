//! Shared helpers: the model library, reference facts and traces.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use nalgebra::Vector3;
use rcss3d::sim::model::{ModelLibrary, RobotModel};
use rcss3d::sim::world::{PhysicsConfig, RobotHandle, World};

/// The reference data copied into the repository (`tests/data/reference`).
pub fn reference_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/reference"))
}

pub fn library() -> &'static ModelLibrary {
    static LIB: OnceLock<ModelLibrary> = OnceLock::new();
    LIB.get_or_init(|| match ModelLibrary::built_in() {
        Ok(l) => l,
        Err(e) => panic!("loading models/: {e}"),
    })
}

pub fn model(robot_type: u8) -> Arc<RobotModel> {
    match library().resolve("rsg/agent/nao/nao_hetero.rsg", &[robot_type.to_string()]) {
        Ok(m) => m,
        Err(e) => panic!("type {robot_type}: {e}"),
    }
}

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

/// A reference trace: header and rows (empty fields = None).
pub struct Trace {
    pub header: Vec<String>,
    pub rows: Vec<Vec<Option<f64>>>,
}

impl Trace {
    pub fn load(name: &str) -> Trace {
        let path = reference_dir().join("physics").join(name);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => panic!("{}: {e}", path.display()),
        };
        let mut lines = text.lines();
        let header: Vec<String> = lines
            .next()
            .unwrap_or_default()
            .split(',')
            .map(str::to_string)
            .collect();
        let rows = lines
            .filter(|l| !l.is_empty())
            .map(|l| l.split(',').map(|f| f.parse::<f64>().ok()).collect())
            .collect();
        Trace { header, rows }
    }

    pub fn col(&self, name: &str) -> usize {
        match self.header.iter().position(|h| h == name) {
            Some(i) => i,
            None => panic!("no column {name}"),
        }
    }

    /// Value of a column at a step (row with `step` == step).
    pub fn at(&self, step: usize, name: &str) -> f64 {
        let c = self.col(name);
        let s = self.col("step");
        self.rows
            .iter()
            .find(|r| r[s] == Some(step as f64))
            .and_then(|r| r[c])
            .unwrap_or(f64::NAN)
    }

    pub fn column(&self, name: &str) -> Vec<f64> {
        let c = self.col(name);
        self.rows.iter().map(|r| r[c].unwrap_or(f64::NAN)).collect()
    }
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
