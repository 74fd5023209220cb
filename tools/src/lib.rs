//! The code the measuring tools share with the tests: the open-loop
//! replay of the reference's recordings (`replay`), used by the physics
//! fitting kit (`fit`) and by the physics tests (`tests/physics/`, through
//! the simulator's dev-dependency on this package). It needs the
//! simulator's `fitting` API, so it lives here and not in the simulator
//! library.

pub mod replay;
