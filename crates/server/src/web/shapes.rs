//! What the page needs to draw a robot and the field: each robot type's
//! part shapes, read from the model files (the collision shape of a part,
//! or its mass shape when it has no collider), and the field dimensions.
//! Both go to the page once, in the hello message.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};

use super::view::UNKNOWN_PART;
use crate::config::Config;
use crate::monitor::follow::TrackedScene;
use crate::sim::assets::ModelSource;
use crate::sim::model::{ModelLibrary, RobotModel, ShapeDesc};
use crate::sim::scene::SceneError;

/// The scene file every heterogeneous Nao type is built from.
const HETERO_SCENE: &str = "rsg/agent/nao/nao_hetero.rsg";
/// Robot types 0-4.
const TYPES: u8 = 5;

/// Part names and, per robot type, the shape of each named part.
#[derive(Debug, Clone, Default)]
pub struct RobotShapes {
    names: Vec<Arc<str>>,
    index: BTreeMap<Arc<str>, u8>,
    /// Per type: per name index, the shape (None: the type has no such part).
    types: Vec<Vec<Option<ShapeDesc>>>,
}

impl RobotShapes {
    /// Reads the Nao types 0-4 from the model files of `source` (the
    /// server's: [`Config::resolved_models_dir`]).
    pub fn load(source: &ModelSource) -> Result<RobotShapes, SceneError> {
        let library = ModelLibrary::load(source)?;
        let mut models = Vec::new();
        for t in 0..TYPES {
            models.push(library.resolve(HETERO_SCENE, &[t.to_string()])?);
        }
        Ok(RobotShapes::from_models(&models))
    }

    /// The shapes of `models`, index = robot type.
    pub fn from_models(models: &[Arc<RobotModel>]) -> RobotShapes {
        let mut shapes = RobotShapes::default();
        for model in models {
            for part in &model.parts {
                if !shapes.index.contains_key(&part.name) && shapes.names.len() < 255 {
                    shapes
                        .index
                        .insert(part.name.clone(), shapes.names.len() as u8);
                    shapes.names.push(part.name.clone());
                }
            }
        }
        for model in models {
            let mut table = vec![None; shapes.names.len()];
            for part in &model.parts {
                if let Some(&i) = shapes.index.get(&part.name) {
                    table[usize::from(i)] = Some(part.collider.unwrap_or(part.mass_shape));
                }
            }
            shapes.types.push(table);
        }
        shapes
    }

    /// Index of a part name in [`names`](Self::names), or
    /// [`UNKNOWN_PART`].
    pub fn part_index(&self, name: &str) -> u8 {
        let name = if name == "body" { "torso" } else { name };
        self.index.get(name).copied().unwrap_or(UNKNOWN_PART)
    }

    /// Every part name, in index order.
    pub fn names(&self) -> &[Arc<str>] {
        &self.names
    }

    /// The shape of a named part of a robot type.
    pub fn shape(&self, robot_type: u8, name: &str) -> Option<ShapeDesc> {
        let i = self.index.get(name)?;
        *self
            .types
            .get(usize::from(robot_type))?
            .get(usize::from(*i))?
    }

    /// `{"names": [...], "types": [[shape or null, ...], ...]}`.
    pub fn to_json(&self) -> Value {
        let types: Vec<Value> = self
            .types
            .iter()
            .map(|t| Value::Array(t.iter().map(|s| shape_json(s.as_ref())).collect()))
            .collect();
        let names: Vec<&str> = self.names.iter().map(|n| &**n).collect();
        json!({ "names": names, "types": types })
    }
}

fn shape_json(shape: Option<&ShapeDesc>) -> Value {
    match shape {
        None => Value::Null,
        Some(ShapeDesc::Box(l)) => json!({"kind": "box", "size": [l.x, l.y, l.z]}),
        Some(ShapeDesc::Sphere { radius }) => json!({"kind": "sphere", "radius": radius}),
        Some(ShapeDesc::Capsule { radius, length }) => {
            json!({"kind": "capsule", "radius": radius, "length": length})
        }
    }
}

/// Field dimensions the page draws, in metres.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldView {
    /// Goal line to goal line.
    pub length: f32,
    /// Touch line to touch line.
    pub width: f32,
    /// Inner width of a goal.
    pub goal_width: f32,
    /// Depth of a goal behind the goal line.
    pub goal_depth: f32,
    /// Height of the crossbar.
    pub goal_height: f32,
    /// Centre-circle radius.
    pub centre_radius: f32,
    /// Penalty area depth from the goal line.
    pub penalty_length: f32,
    /// Penalty area full width.
    pub penalty_width: f32,
    /// Ball radius.
    pub ball_radius: f32,
}

impl FieldView {
    /// The field the referee uses.
    pub fn from_config(cfg: &Config) -> FieldView {
        let r = &cfg.rules;
        FieldView {
            length: r.field_length,
            width: r.field_width,
            goal_width: r.goal_width,
            goal_depth: r.goal_depth,
            goal_height: r.goal_height,
            centre_radius: r.free_kick_distance,
            penalty_length: r.penalty_length,
            penalty_width: r.penalty_width + r.goal_width,
            ball_radius: r.ball_radius,
        }
    }

    /// The field a log announces in its environment predicates; missing
    /// values keep those of `fallback`. The penalty area is RoboViz's
    /// `GoalieArea*` when present.
    pub fn from_scene(scene: &TrackedScene, fallback: FieldView) -> FieldView {
        let get = |name: &str, default: f32| {
            scene
                .environment
                .get(name)
                .and_then(|v| v.parse::<f32>().ok())
                .filter(|v| v.is_finite() && *v > 0.0)
                .unwrap_or(default)
        };
        FieldView {
            length: get("FieldLength", fallback.length),
            width: get("FieldWidth", fallback.width),
            goal_width: get("GoalWidth", fallback.goal_width),
            goal_depth: get("GoalDepth", fallback.goal_depth),
            goal_height: get("GoalHeight", fallback.goal_height),
            centre_radius: get("FreeKickDistance", fallback.centre_radius),
            penalty_length: get("GoalieAreaLength", fallback.penalty_length),
            penalty_width: get("GoalieAreaWidth", fallback.penalty_width),
            ball_radius: get("BallRadius", fallback.ball_radius),
        }
    }

    /// The JSON object the page reads.
    pub fn to_json(&self) -> Value {
        json!({
            "length": self.length,
            "width": self.width,
            "goalWidth": self.goal_width,
            "goalDepth": self.goal_depth,
            "goalHeight": self.goal_height,
            "centreRadius": self.centre_radius,
            "penaltyLength": self.penalty_length,
            "penaltyWidth": self.penalty_width,
            "ballRadius": self.ball_radius,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nao_types_have_their_parts_and_collision_shapes() {
        let shapes = RobotShapes::load(&ModelSource::BuiltIn).expect("models load");
        assert_eq!(shapes.types.len(), 5);
        let torso = shapes.part_index("torso");
        assert_ne!(torso, UNKNOWN_PART);
        assert_eq!(shapes.part_index("body"), torso);
        assert_eq!(shapes.part_index("tail"), UNKNOWN_PART);
        // The torso collider is a box; every type has one.
        for t in 0..5 {
            assert!(matches!(shapes.shape(t, "torso"), Some(ShapeDesc::Box(_))));
            assert!(shapes.shape(t, "lfoot").is_some());
        }
        // Only type 4 has toes.
        assert!(shapes.shape(4, "ltoe").is_some());
        assert!(shapes.shape(0, "ltoe").is_none());
        let json = shapes.to_json();
        assert_eq!(
            json["names"].as_array().map(Vec::len),
            Some(shapes.names().len())
        );
        assert_eq!(json["types"][0][usize::from(torso)]["kind"], "box");
    }
}
