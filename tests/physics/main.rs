//! Acceptance tests of the physical world: model facts, standing, motors,
//! the ball, robots placed inside each other, and replays of the reference
//! traces in `tests/data/reference/physics/`.

mod util;

mod ball;
mod facts;
mod motor;
mod overlap;
mod standing;
mod traces;
