//! A SimSpark-compatible RoboCup 3D soccer simulator: the server
//! binaries (`rcss3d`, `rcssserver3d`, `simspark`) and, for the tests,
//! tools and benches, every layer under one name.
//!
//! The layers are crates of their own (README, "Architecture"):
//! `rcss3d-core` (the simulation: [`sexp`], [`command`], [`rules`],
//! [`perception`], [`sim`]), `rcss3d-server` (the server: [`app`],
//! [`config`], [`net`], [`monitor`], [`web`]), `rcss3d-clients` (the
//! agent and monitor clients) and `rcss3d-cli` (the command line, used
//! only by the binaries). This crate re-exports the first three.
#![warn(missing_docs)]

pub use rcss3d_core::{
    command, input_file, limited, log_limit, perception, playmode, rules, sexp, sim, untrusted,
};
pub use rcss3d_server::{app, config, framing, procfs, web};

pub mod net {
    //! The server's agent side ([`rcss3d_server::net`]) and the agent
    //! client ([`client`], from `rcss3d-clients`).
    pub use rcss3d_clients::agent as client;
    pub use rcss3d_server::net::*;
}

pub mod monitor {
    //! The server's monitor side ([`rcss3d_server::monitor`]), the
    //! monitor client ([`client`]) and the trainer chores ([`control`]),
    //! from `rcss3d-clients` (`rcss3d_clients::trainer`).
    pub use rcss3d_clients::monitor as client;
    pub use rcss3d_clients::trainer as control;
    pub use rcss3d_server::monitor::*;
}
