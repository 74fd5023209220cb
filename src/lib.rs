//! A SimSpark-compatible RoboCup 3D soccer simulator: the server
//! binaries (`rcss3d`, `rcssserver3d`, `simspark`) and, for the tests,
//! tools and benches, every layer under one name.
//!
//! The layers are crates of their own (README, "Architecture"):
//! `rcss3d-core` (the simulation: [`sexp`], [`command`], [`rules`],
//! [`perception`], [`sim`]), `rcss3d-server` (the server: [`app`],
//! [`config`], [`net`], [`monitor`], [`web`]) and `rcss3d-cli` (the
//! command line, used only by the binaries). This crate re-exports the
//! first two.
#![warn(missing_docs)]

pub use rcss3d_core::{
    command, input_file, limited, log_limit, perception, playmode, rules, sexp, sim, text,
};
pub use rcss3d_server::{app, config, framing, monitor, net, procfs, web};
