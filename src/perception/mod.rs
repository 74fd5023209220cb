//! Perceptors: what each agent senses. Each perceptor reads a world
//! snapshot (and, for noise, an RNG passed in by the caller) and appends its
//! predicate to the agent's frame text. Nothing here mutates the world or
//! does I/O.

pub mod format;
pub mod hear;
pub mod vision;
