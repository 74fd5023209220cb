//! The scene and model files built into the binary, so the server runs
//! from wherever it is installed: the robot models (`models/`) and the
//! field scene (`scenes/`). A user's own files are read from a directory
//! on top of these ([`ModelSource`], `physics.field_scene`).
//!
//! Each list is the directory's files as (resource path, text); a test
//! (`tests/cli.rs`) checks it against the directories, so a file added
//! there and not here is caught.

use std::path::{Path, PathBuf};

/// The robot model files of `models/`: path relative to `models/`, text.
pub const MODEL_FILES: &[(&str, &str)] = &[
    (
        "rsg/agent/nao/hinge.rsg",
        include_str!("../../models/rsg/agent/nao/hinge.rsg"),
    ),
    (
        "rsg/agent/nao/nao.rsg",
        include_str!("../../models/rsg/agent/nao/nao.rsg"),
    ),
    (
        "rsg/agent/nao/nao_hetero.rsg",
        include_str!("../../models/rsg/agent/nao/nao_hetero.rsg"),
    ),
    (
        "rsg/agent/nao/naoarm.rsg",
        include_str!("../../models/rsg/agent/nao/naoarm.rsg"),
    ),
    (
        "rsg/agent/nao/naoleg.rsg",
        include_str!("../../models/rsg/agent/nao/naoleg.rsg"),
    ),
    (
        "rsg/agent/nao/naolegtoe.rsg",
        include_str!("../../models/rsg/agent/nao/naolegtoe.rsg"),
    ),
    (
        "rsg/agent/nao/naolegupper.rsg",
        include_str!("../../models/rsg/agent/nao/naolegupper.rsg"),
    ),
    (
        "rsg/agent/nao/naoneckhead.rsg",
        include_str!("../../models/rsg/agent/nao/naoneckhead.rsg"),
    ),
    (
        "rsg/agent/nao/naorobottypes.ron",
        include_str!("../../models/rsg/agent/nao/naorobottypes.ron"),
    ),
    (
        "rsg/agent/nao/partcontact.rsg",
        include_str!("../../models/rsg/agent/nao/partcontact.rsg"),
    ),
];

/// The field scene files of `scenes/`: path relative to `scenes/`, text.
pub const SCENE_FILES: &[(&str, &str)] = &[
    ("goal.rsg", include_str!("../../scenes/goal.rsg")),
    ("soccer.rsg", include_str!("../../scenes/soccer.rsg")),
];

/// The built-in field scene (ground, goals, border walls, ball).
pub const FIELD_SCENE: &str = "soccer.rsg";

/// Where the robot model files come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ModelSource {
    /// The model files built into the binary.
    #[default]
    BuiltIn,
    /// The built-in files with those of a directory on top: a file there
    /// adds a robot variant, or replaces the built-in file of the same
    /// path (`rsg/agent/nao/nao.rsg`).
    BuiltInAnd(PathBuf),
    /// Only the files of a directory.
    Dir(PathBuf),
}

impl ModelSource {
    /// The directory read besides (or instead of) the built-in files.
    pub fn dir(&self) -> Option<&Path> {
        match self {
            ModelSource::BuiltIn => None,
            ModelSource::BuiltInAnd(d) | ModelSource::Dir(d) => Some(d),
        }
    }

    /// Whether the built-in files are part of it.
    pub fn has_built_in(&self) -> bool {
        !matches!(self, ModelSource::Dir(_))
    }
}

impl std::fmt::Display for ModelSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelSource::BuiltIn => f.write_str("the built-in models"),
            ModelSource::BuiltInAnd(d) => {
                write!(f, "the built-in models and those of {}", d.display())
            }
            ModelSource::Dir(d) => write!(f, "the models of {}", d.display()),
        }
    }
}
