//! Scenario tests of the automated referee: the referee is driven
//! with prepared world facts, cycle by cycle, and its decisions are applied
//! to a toy world (no physics, no sockets), one module per rule family.

mod util;

mod beam;
mod fouls;
mod goals;
mod match_structure;
mod monitor_and_modes;
mod out_of_play;
mod placement;
