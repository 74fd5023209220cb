//! Acceptance tests of the physical world (issue 3): model facts, standing,
//! motors, ball, and replays of the reference traces in
//! `../shared/reference/physics/`.

#[path = "physics/ball.rs"]
mod ball;
#[path = "physics/facts.rs"]
mod facts;
#[path = "physics/gaits.rs"]
mod gaits;
#[path = "physics/hold.rs"]
mod hold;
#[path = "physics/motor.rs"]
mod motor;
#[path = "physics/overlap.rs"]
mod overlap;
#[path = "physics/probe.rs"]
mod probe;
#[path = "physics/replay.rs"]
mod replay;
#[path = "physics/standing.rs"]
mod standing;
#[path = "physics/timing.rs"]
mod timing;
#[path = "physics/traces.rs"]
mod traces;
#[path = "physics/util.rs"]
mod util;
