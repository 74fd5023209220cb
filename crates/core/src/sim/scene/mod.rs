//! The scene language: a strict reading of SimSpark's `.rsg` files
//! (docs/protocol.md#what-the-reader-supports) into a plain tree of nodes.
//!
//! Pipeline: text -> [`Sexp`] (with line numbers) -> expansion of `templ`,
//! `def`, `$` substitution, `join`, `eval`, `switch` and `importScene`
//! into a [`SceneTree`] of nodes whose method calls carry their arguments as
//! text. Interpreting the tree (robot model, field) happens elsewhere
//! ([`crate::sim::model`], [`crate::sim::world`]); this module never touches
//! the physics engine.
//!
//! Every error names the file and line: `file:line: message`.

mod expr;
mod library;
pub mod limits;
mod sexp;
mod tree;

pub use library::SceneLibrary;
pub use sexp::{parse_sexps, Sexp, MAX_NESTING};
pub use tree::{parse_num, Call, SceneNode, SceneTree};

use std::path::PathBuf;
use std::sync::Arc;

/// Everything that can go wrong while loading a scene or a robot model.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// A file or directory could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The path that failed.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A problem at a known place in a scene file.
    #[error("{file}:{line}: {message}")]
    At {
        /// Scene file (resource path relative to the library root).
        file: Arc<str>,
        /// 1-based line number.
        line: usize,
        /// What went wrong.
        message: String,
    },
    /// A data table (`*.ron` next to the scene files) is malformed.
    #[error("{path}: {message}")]
    Table {
        /// The table file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The requested scene file is not in the library.
    #[error("unknown scene '{0}'")]
    UnknownScene(String),
    /// A scene was asked for with other arguments than its `templ` line
    /// declares (a file without one takes none).
    #[error(
        "{scene} takes {declared} argument(s) (its templ line; none without one), got {given}"
    )]
    Arguments {
        /// The scene file (client text, cut and escaped).
        scene: String,
        /// Arguments the file declares.
        declared: usize,
        /// Arguments given.
        given: usize,
    },
    /// A scene argument is not a small integer.
    #[error("{scene}: argument `{argument}` is not a small integer")]
    BadArgument {
        /// The scene file.
        scene: String,
        /// The argument (client text, cut and escaped).
        argument: String,
    },
    /// The scene was read but does not describe a usable model or field.
    #[error("{scene}: {message}")]
    Invalid {
        /// The scene file at the top of the import chain.
        scene: String,
        /// What is wrong with it.
        message: String,
    },
}

fn at(file: &Arc<str>, line: usize, message: impl Into<String>) -> SceneError {
    SceneError::At {
        file: file.clone(),
        line,
        message: message.into(),
    }
}
