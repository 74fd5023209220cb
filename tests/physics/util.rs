//! Shared helpers: the model library, reference facts and traces.

use std::path::PathBuf;

use nalgebra::Vector3;
use rcss3d::sim::world::{PhysicsConfig, RobotHandle, World, DEFAULT_CYCLE_DT};

/// The reference data copied into the repository (`tests/data/reference`).
pub fn reference_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/reference"))
}

pub use rcss3d_tools::replay::{library, model, Trace};

pub fn world() -> World {
    world_with(&PhysicsConfig::default())
}

pub fn world_with(cfg: &PhysicsConfig) -> World {
    match World::new(cfg, DEFAULT_CYCLE_DT) {
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
