//! The simulated world: robot models and scene files, the rapier3d world,
//! the per-cycle step, and the read-only snapshot handed to perception,
//! monitors and the log.

pub mod assets;
pub mod cycle;
pub mod latency;
pub mod model;
pub mod scene;
pub mod snapshot;
pub mod world;
