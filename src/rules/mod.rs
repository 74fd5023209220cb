//! The automated referee: play modes, the game clock, goals, set pieces and
//! fouls, as plain functions of (game state, world facts, time).
//!
//! This module must not touch sockets or the physics engine: the simulation
//! gathers [`facts`](self) from the world, calls the referee once per cycle
//! after physics, and carries out the decisions it returns.

mod playmode;

pub use playmode::{PlayMode, Side};
