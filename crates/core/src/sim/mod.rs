//! The simulated world: robot models and scene files, the rapier3d world,
//! the per-cycle step, and the read-only snapshot handed to perception,
//! monitors and the log.
//!
//! It takes typed inputs (agent commands from `crate::command`, trainer
//! commands from `crate::command::trainer`) and returns typed outputs
//! (percept text, [`snapshot::WorldSnapshot`]s, agent status and the step
//! report). It must not use the `net`, `monitor` or `app` modules:
//! sockets, framing, the wall clock, the simulation thread, outboxes and
//! the match log live there (`app::driver` runs the cycle loop).

pub mod assets;
pub mod config;
pub mod cycle;
pub mod model;
pub mod scene;
pub mod snapshot;
pub mod world;
