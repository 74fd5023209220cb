//! The automated referee: play modes, the game clock, goals, set pieces and
//! fouls, as plain functions of (game state, world facts, time).
//!
//! This module must not touch sockets or the physics engine: the simulation
//! gathers [`WorldFacts`] from the world, calls the referee once per cycle
//! after physics, and carries out the decisions it returns.

pub mod teams;

pub use crate::playmode::{PlayMode, Side};
mod config;
pub mod facts;
mod fouls;
mod geometry;
mod placement;
mod referee;

pub use config::{RulesConfig, RulesError};
pub use facts::{Decision, RobotContact, RobotFacts, RobotId, WorldFacts};
pub use fouls::{FoulKind, FoulRecord};
pub use geometry::Rect;
pub use referee::{kick_off_mode, Referee, Touch, MAX_GAME_TIME};
