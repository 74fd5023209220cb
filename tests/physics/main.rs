//! Acceptance tests of the physical world: model facts, standing, motors,
//! held joints, the ball, robots placed inside each other, replays of the
//! reference traces in `tests/data/reference/physics/` and of the gaits in
//! `tests/data/reference/gaits/`.

mod util;

mod ball;
mod coriolis;
mod drag;
mod facts;
mod gaits;
mod getup;
mod hinge_damping;
mod hold;
mod motor;
mod overlap;
mod slip;
mod standing;
mod state;
mod stops;
mod stretch;
mod switches;
mod traces;
mod velocity;
