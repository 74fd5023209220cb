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
        include_str!("../../../../models/rsg/agent/nao/hinge.rsg"),
    ),
    (
        "rsg/agent/nao/nao.rsg",
        include_str!("../../../../models/rsg/agent/nao/nao.rsg"),
    ),
    (
        "rsg/agent/nao/nao_hetero.rsg",
        include_str!("../../../../models/rsg/agent/nao/nao_hetero.rsg"),
    ),
    (
        "rsg/agent/nao/naoarm.rsg",
        include_str!("../../../../models/rsg/agent/nao/naoarm.rsg"),
    ),
    (
        "rsg/agent/nao/naoleg.rsg",
        include_str!("../../../../models/rsg/agent/nao/naoleg.rsg"),
    ),
    (
        "rsg/agent/nao/naolegtoe.rsg",
        include_str!("../../../../models/rsg/agent/nao/naolegtoe.rsg"),
    ),
    (
        "rsg/agent/nao/naolegupper.rsg",
        include_str!("../../../../models/rsg/agent/nao/naolegupper.rsg"),
    ),
    (
        "rsg/agent/nao/naoneckhead.rsg",
        include_str!("../../../../models/rsg/agent/nao/naoneckhead.rsg"),
    ),
    (
        "rsg/agent/nao/naorobottypes.ron",
        include_str!("../../../../models/rsg/agent/nao/naorobottypes.ron"),
    ),
    (
        "rsg/agent/nao/partcontact.rsg",
        include_str!("../../../../models/rsg/agent/nao/partcontact.rsg"),
    ),
];

/// The field scene files of `scenes/`: path relative to `scenes/`, text.
pub const SCENE_FILES: &[(&str, &str)] = &[
    ("goal.rsg", include_str!("../../../../scenes/goal.rsg")),
    ("soccer.rsg", include_str!("../../../../scenes/soccer.rsg")),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::model::ModelLibrary;

    /// A user's directory with a robot variant of their own that imports
    /// the built-in parts.
    #[test]
    fn a_users_directory_adds_to_the_built_in_models() {
        let dir = std::env::temp_dir().join(format!("rcss3d-assets-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let variant = dir.join("rsg/agent/mine/robot.rsg");
        std::fs::create_dir_all(variant.parent().expect("parent")).expect("dir");
        let hetero = MODEL_FILES
            .iter()
            .find(|(p, _)| *p == "rsg/agent/nao/nao_hetero.rsg")
            .expect("nao_hetero.rsg")
            .1;
        std::fs::write(&variant, hetero).expect("write");
        std::fs::write(dir.join("README.txt"), "not a model").expect("write");

        let both = ModelLibrary::load(&ModelSource::BuiltInAnd(dir.clone())).expect("loads");
        let model = both
            .resolve("rsg/agent/mine/robot.rsg", &["4".into()])
            .expect("the variant builds from the built-in parts");
        assert!(model.joint_by_perceptor("llj7").is_some());
        assert!(both.resolve("rsg/agent/nao/nao.rsg", &[]).is_ok());
        // The directory alone lacks the variant table and the parts.
        let alone = ModelLibrary::load(&ModelSource::Dir(dir.clone())).expect("loads");
        let err = alone
            .resolve("rsg/agent/mine/robot.rsg", &["4".into()])
            .expect_err("the built-in files are missing");
        assert!(err.to_string().contains("unknown table 'NaoType'"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
