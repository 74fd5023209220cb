//! Robot models: the typed description of a robot (parts, hinges, sensors)
//! read from the scene files of `models/` (built into the binary) or a
//! user's directory.
//!
//! A [`ModelLibrary`] reads every scene file of its source once (the
//! files built into the binary, a user's directory, or both);
//! [`ModelLibrary::resolve`] expands an agent's `(scene <path> [args])` into
//! a [`RobotModel`]. The model is pure data in the robot's model frame
//! (+x right, +y forward, +z up, torso centre at the origin, zero pose);
//! inserting it into the physics world is [`crate::sim::world`]'s job.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use nalgebra::{Unit, Vector3};

use crate::command::{HingeEffector, HINGE_EFFECTORS};
use crate::sim::assets::{ModelSource, MODEL_FILES};
use crate::sim::scene::{SceneError, SceneLibrary};

mod build;

use build::build_model;
pub use build::{collider_shape, collider_surface, inertia_of};

/// The collision or mass shape of a part, in the part's frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ShapeDesc {
    /// A box with full side lengths (x, y, z).
    Box(Vector3<f32>),
    /// A sphere.
    Sphere {
        /// Radius (m).
        radius: f32,
    },
    /// A capsule along z.
    Capsule {
        /// Radius (m).
        radius: f32,
        /// Length of the cylinder between the caps (m).
        length: f32,
    },
}

/// Contact parameters written on a collider's contact handler (informative:
/// the physics world combines them per pair; see `PhysicsConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SurfaceDesc {
    /// Bounce coefficient, if bounce is on.
    pub bounce: Option<f32>,
    /// Minimum approach speed for bounce (m/s).
    pub min_bounce_speed: Option<f32>,
    /// Soft ERP, if on.
    pub soft_erp: Option<f32>,
    /// Soft CFM, if on.
    pub soft_cfm: Option<f32>,
    /// Force-dependent slip, if on.
    pub slip: Option<f32>,
}

/// One rigid body part of a robot.
#[derive(Debug, Clone, PartialEq)]
pub struct PartDesc {
    /// Part name (`torso`, `lthigh`, ...). The scene node `body` is called
    /// `torso`.
    pub name: Arc<str>,
    /// Mass (kg).
    pub mass: f32,
    /// Principal moments of inertia about the centre of mass, in the part
    /// frame (kg·m²), computed from the mass shape as ODE does.
    pub inertia: Vector3<f32>,
    /// The shape the mass was given with (`setBoxTotal` etc.).
    pub mass_shape: ShapeDesc,
    /// Centre relative to the torso centre in the zero pose (model frame).
    pub pos: Vector3<f32>,
    /// Collision shape, if the part has a collider.
    pub collider: Option<ShapeDesc>,
    /// Collider name (`lFootCollider`), if named.
    pub collider_name: Option<Arc<str>>,
    /// Contact parameters of the collider's handler.
    pub surface: SurfaceDesc,
    /// Object-state id if the part is seen by vision (`head`, `lfoot`, ...).
    pub visible_id: Option<Arc<str>>,
}

/// One hinge.
#[derive(Debug, Clone, PartialEq)]
pub struct JointDesc {
    /// Perceptor name (`hj1`).
    pub perceptor: Arc<str>,
    /// Effector name (`he1`).
    pub effector: Arc<str>,
    /// Index of the part the joint is mounted on (ODE's second body).
    pub parent: usize,
    /// Index of the part the joint moves (ODE's first body).
    pub child: usize,
    /// Anchor relative to the torso centre in the zero pose.
    pub anchor: Vector3<f32>,
    /// Unit axis in the model frame (same in both parts' frames at zero pose).
    pub axis: Unit<Vector3<f32>>,
    /// Lower limit (degrees).
    pub min_deg: f32,
    /// Upper limit (degrees).
    pub max_deg: f32,
    /// Maximum speed command magnitude (rad/s).
    pub max_speed: f32,
    /// Maximum motor torque (N·m).
    pub max_torque: f32,
}

impl JointDesc {
    /// The joint's range (lower, upper limit) in radians.
    pub fn limits_rad(&self) -> (f32, f32) {
        (self.min_deg.to_radians(), self.max_deg.to_radians())
    }

    /// Anchor relative to the child's centre (zero pose).
    pub fn anchor_in_child(&self, model: &RobotModel) -> Vector3<f32> {
        self.anchor - model.parts[self.child].pos
    }

    /// Anchor relative to the parent's centre (zero pose).
    pub fn anchor_in_parent(&self, model: &RobotModel) -> Vector3<f32> {
        self.anchor - model.parts[self.parent].pos
    }
}

/// One foot force sensor (`ForceResistancePerceptor`).
#[derive(Debug, Clone, PartialEq)]
pub struct FootSensorDesc {
    /// Sensor name (`rf`, `lf`, `rf1`, `lf1`).
    pub name: Arc<str>,
    /// Index of the part whose contacts it measures.
    pub part: usize,
}

/// One entry of the depth-first perceptor order (docs/protocol.md#perceptor-order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerceptorSlot {
    /// The gyroscope (`GYR`).
    Gyro,
    /// The accelerometer (`ACC`).
    Acc,
    /// A joint perceptor (`HJ`), index into [`RobotModel::joints`].
    Joint(usize),
    /// The camera (`See`).
    Vision,
    /// A foot force sensor (`FRP`), index into [`RobotModel::foot_sensors`].
    Force(usize),
}

/// A complete robot description.
#[derive(Debug, Clone, PartialEq)]
pub struct RobotModel {
    /// Resource path of the scene file it was built from.
    pub scene: Arc<str>,
    /// Heterogeneous type number (`setRobotType`).
    pub robot_type: u8,
    /// Rigid parts in scene order.
    pub parts: Vec<PartDesc>,
    /// Hinges in scene order.
    pub joints: Vec<JointDesc>,
    /// Foot force sensors in scene order.
    pub foot_sensors: Vec<FootSensorDesc>,
    /// Perceptors in the depth-first order of the robot description.
    pub perceptor_order: Vec<PerceptorSlot>,
    /// Index of the torso part (the part carrying the gyroscope).
    pub torso: usize,
    /// Index of the head part (carrying the camera at its centre).
    pub head: usize,
    /// The joint each hinge effector of [`HINGE_EFFECTORS`] drives, by the
    /// effector's index (`None`: this type has no such effector).
    pub effector_joints: [Option<usize>; HINGE_EFFECTORS.len()],
}

impl RobotModel {
    /// The joint driven by an effector name (`he1`).
    pub fn joint_by_effector(&self, name: &str) -> Option<usize> {
        self.joints.iter().position(|j| &*j.effector == name)
    }

    /// The joint driven by a decoded hinge effector (a table look-up, for
    /// the two dozen hinge commands of every agent and cycle).
    pub fn joint_of(&self, effector: HingeEffector) -> Option<usize> {
        self.effector_joints[effector.index()]
    }

    /// The joint reported under a perceptor name (`hj1`).
    pub fn joint_by_perceptor(&self, name: &str) -> Option<usize> {
        self.joints.iter().position(|j| &*j.perceptor == name)
    }

    /// A part by name (`torso`, `lfoot`).
    pub fn part_by_name(&self, name: &str) -> Option<usize> {
        self.parts.iter().position(|p| &*p.name == name)
    }

    /// Sum of all part masses (kg).
    pub fn total_mass(&self) -> f32 {
        self.parts.iter().map(|p| p.mass).sum()
    }

    /// Centre of mass relative to the torso centre in the zero pose.
    pub fn zero_pose_com(&self) -> Vector3<f32> {
        let m = self.total_mass();
        if m <= 0.0 {
            return Vector3::zeros();
        }
        self.parts
            .iter()
            .fold(Vector3::zeros(), |acc, p| acc + p.pos * p.mass)
            / m
    }

    /// Height of the torso centre above the lowest collider point in the
    /// zero pose (the standing height with flat feet).
    pub fn standing_height(&self) -> f32 {
        let lowest = self
            .parts
            .iter()
            .filter_map(|p| {
                p.collider.map(|s| {
                    p.pos.z
                        - match s {
                            ShapeDesc::Box(l) => l.z / 2.0,
                            ShapeDesc::Sphere { radius } => radius,
                            ShapeDesc::Capsule { radius, length } => radius + length / 2.0,
                        }
                })
            })
            .fold(0.0f32, f32::min);
        -lowest
    }
}

/// Models already built, by (scene path, canonical arguments).
type ModelCache = BTreeMap<(String, Vec<String>), Arc<RobotModel>>;

/// Most models the library keeps built. Keys are only the canonical,
/// declared arguments of requests that built a model, so the shipped
/// files give six (`nao.rsg` and `nao_hetero.rsg` 0-4); a model file whose
/// argument can take many values is still built for each request past
/// this many, but not kept (it is freed with its robot).
pub const MAX_CACHED_MODELS: usize = 64;

/// Client text quoted in a scene error: cut and escaped.
fn quoted(text: &str) -> String {
    crate::untrusted::quote(text, 64)
}

/// The robot model files: the built-in ones, a user's directory, or both
/// ([`ModelSource`]).
#[derive(Debug)]
pub struct ModelLibrary {
    scenes: SceneLibrary,
    cache: Mutex<ModelCache>,
}

impl ModelLibrary {
    /// Loads the robot model files of `source`: the built-in files, a
    /// user's directory laid over them, or a directory alone. A user adds
    /// a robot variant by adding a file, no recompiling. Every `*.rsg` file
    /// is read and syntax-checked now; `*.ron` files beside them are data
    /// tables for `eval` (the variant table `NaoType`).
    pub fn load(source: &ModelSource) -> Result<ModelLibrary, SceneError> {
        let built_in = if source.has_built_in() {
            MODEL_FILES
        } else {
            &[]
        };
        let user = match source.dir() {
            Some(dir) => SceneLibrary::read_dir(dir)?,
            None => Vec::new(),
        };
        let files = built_in
            .iter()
            .copied()
            .chain(user.iter().map(|(p, t)| (p.as_str(), t.as_str())));
        Ok(ModelLibrary {
            scenes: SceneLibrary::from_files(files)?,
            cache: Mutex::new(BTreeMap::new()),
        })
    }

    /// The model files built into the binary (the repository's `models/`).
    pub fn built_in() -> Result<ModelLibrary, SceneError> {
        ModelLibrary::load(&ModelSource::BuiltIn)
    }

    /// Resource paths of every scene file in the library.
    pub fn scene_paths(&self) -> Vec<String> {
        self.scenes.paths().map(str::to_string).collect()
    }

    /// Number of models kept built (at most [`MAX_CACHED_MODELS`]).
    pub fn cached_models(&self) -> usize {
        self.cache.lock().map(|c| c.len()).unwrap_or(0)
    }

    /// The cheap checks of an agent's `(scene <path> [args])`, done before
    /// anything is built: the file exists, every argument is a small
    /// integer, and there are exactly as many as the file's `templ` line
    /// declares (none for a file without one). Returns the arguments in
    /// canonical spelling (`+07` is `7`).
    pub fn check(&self, scene_path: &str, args: &[String]) -> Result<Vec<String>, SceneError> {
        let Some(declared) = self.scenes.declared_args(scene_path) else {
            return Err(SceneError::UnknownScene(quoted(scene_path)));
        };
        if args.len() != declared {
            return Err(SceneError::Arguments {
                scene: scene_path.to_string(),
                declared,
                given: args.len(),
            });
        }
        args.iter()
            .map(|a| {
                // Only short plain numbers reach the scene's expression
                // evaluator: odd spellings neither recurse deeply nor make
                // new cache keys.
                let digits = a.strip_prefix(['+', '-']).unwrap_or(a);
                (!digits.is_empty()
                    && digits.len() <= 6
                    && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| a.parse::<i32>().ok())
                .flatten()
                .map(|n| n.to_string())
                .ok_or_else(|| SceneError::BadArgument {
                    scene: scene_path.to_string(),
                    argument: quoted(a),
                })
            })
            .collect()
    }

    /// Resolves an agent's `(scene <path> [args])`:
    /// `rsg/agent/nao/nao.rsg` is type 0 (no arguments),
    /// `rsg/agent/nao/nao_hetero.rsg` with argument `N` (0-4) is type N.
    /// An unknown path, arguments the file does not declare or a bad type
    /// is an error with a clear message (see [`ModelLibrary::check`]).
    /// Built models are kept by path and canonical arguments, at most
    /// [`MAX_CACHED_MODELS`] of them.
    pub fn resolve(
        &self,
        scene_path: &str,
        args: &[String],
    ) -> Result<Arc<RobotModel>, SceneError> {
        let args = self.check(scene_path, args)?;
        let key = (scene_path.to_string(), args);
        if let Ok(cache) = self.cache.lock() {
            if let Some(m) = cache.get(&key) {
                return Ok(m.clone());
            }
        }
        let tree = self.scenes.instantiate(scene_path, &key.1)?;
        let model = Arc::new(build_model(scene_path, &tree)?);
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() < MAX_CACHED_MODELS {
                cache.insert(key, model.clone());
            }
        }
        Ok(model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn library() -> ModelLibrary {
        ModelLibrary::built_in().expect("models")
    }

    #[test]
    fn arguments_a_scene_file_does_not_declare_are_refused() {
        let lib = library();
        assert!(lib.resolve("rsg/agent/nao/nao.rsg", &[]).is_ok());
        for args in [&["1", "2"][..], &["0"], &["7", "7", "7", "7"]] {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            let e = lib
                .resolve("rsg/agent/nao/nao.rsg", &args)
                .expect_err("nao.rsg has no templ line");
            assert!(
                matches!(e, SceneError::Arguments { declared: 0, .. }),
                "{e}"
            );
            assert!(e.to_string().contains("takes 0 argument(s)"), "{e}");
        }
        let hetero = "rsg/agent/nao/nao_hetero.rsg";
        assert!(lib.resolve(hetero, &["3".into()]).is_ok());
        for args in [vec![], vec!["1".to_string(), "2".to_string()]] {
            let e = lib.resolve(hetero, &args).expect_err("takes one");
            assert!(
                matches!(e, SceneError::Arguments { declared: 1, .. }),
                "{e}"
            );
        }
        assert_eq!(lib.cached_models(), 2, "only the two models that built");
    }

    #[test]
    fn the_model_cache_is_keyed_by_canonical_arguments_and_capped() {
        // A robot file whose argument can take any value: every value is a
        // different model, and the library keeps only so many of them.
        let dir = std::env::temp_dir().join(format!("rcss3d-model-cap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(
            dir.join("stick.rsg"),
            "(RSG 0 1)\n((templ $h)\n(nd AgentAspect (setLocalPos 0 0 $h)\n\
             (nd RigidBody (setBoxTotal 1 0.1 0.1 0.1))\n\
             (nd BoxCollider (setBoxLengths 0.1 0.1 0.1))))\n",
        )
        .expect("write");
        let lib =
            ModelLibrary::load(&crate::sim::assets::ModelSource::Dir(dir.clone())).expect("load");
        let _ = std::fs::remove_dir_all(&dir);
        let first = lib.resolve("stick.rsg", &["1".into()]).expect("builds");
        for spelling in ["+1", "01", "+0001"] {
            let again = lib
                .resolve("stick.rsg", &[spelling.into()])
                .expect("builds");
            assert!(Arc::ptr_eq(&first, &again), "{spelling} is the same model");
        }
        for h in 2..(MAX_CACHED_MODELS as i32 + 50) {
            lib.resolve("stick.rsg", &[h.to_string()]).expect("builds");
        }
        assert_eq!(lib.cached_models(), MAX_CACHED_MODELS);
        // Past the cap models are still built, just not kept.
        let a = lib.resolve("stick.rsg", &["9999".into()]).expect("builds");
        let b = lib.resolve("stick.rsg", &["9999".into()]).expect("builds");
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!(lib.cached_models(), MAX_CACHED_MODELS);
    }
}
