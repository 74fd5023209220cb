//! Perceptors: what each agent senses. Each perceptor reads a world
//! snapshot (and, for noise, an RNG passed in by the caller) and appends its
//! predicate to the agent's frame text. Nothing here mutates the world or
//! does I/O. One file per perceptor, in frame order: [`time`],
//! [`game_state`] (`GS`), [`hear`], [`gyro`] (`GYR`), [`accelerometer`]
//! (`ACC`), [`hinge_joint`] (`HJ`), [`vision`] (`See`), [`foot_force`]
//! (`FRP`); [`format`](mod@format) prints their numbers.

pub mod accelerometer;
pub mod foot_force;
pub mod format;
pub mod game_state;
pub mod gyro;
pub mod hear;
pub mod hinge_joint;
pub mod time;
pub mod vision;
