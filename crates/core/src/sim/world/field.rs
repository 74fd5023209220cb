//! The field scene read into static geometry and the ball: ground plane,
//! goals, border walls and goal sensors, built with the dimensions of a
//! [`FieldSize`]. The server takes them from the rules configuration (the
//! one place the field is described, `crate::config::Config::field_size`);
//! the world only sees this description.

use std::path::Path;

use nalgebra::{Isometry3, Vector3};
use rapier3d::prelude::SharedShape;

use crate::sim::assets::{FIELD_SCENE, SCENE_FILES};
use crate::sim::model::{collider_shape, collider_surface, ShapeDesc};
use crate::sim::scene::{SceneError, SceneLibrary, SceneTree};

/// The dimensions the physics field is built with. The server fills them
/// in from the rules configuration so the referee and the physics agree on
/// one field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldSize {
    /// Goal line to goal line (m).
    pub field_length: f32,
    /// Sideline to sideline (m). Not a scene argument: the run-away guard
    /// puts robots back inside the lines with it.
    pub field_width: f32,
    /// Distance between the posts (m).
    pub goal_width: f32,
    /// Depth of a goal (m).
    pub goal_depth: f32,
    /// Height of the bar (m).
    pub goal_height: f32,
    /// Ball radius (m).
    pub ball_radius: f32,
    /// Ball mass (kg).
    pub ball_mass: f32,
}

impl FieldSize {
    /// The field scene's template arguments, in its `templ` order
    /// (`$fieldLength $goalWidth $goalDepth $goalHeight $ballR
    /// $ballMass`), each printed as the shortest text that reads back as
    /// the same value.
    pub(super) fn scene_args(&self) -> Vec<String> {
        [
            self.field_length,
            self.goal_width,
            self.goal_depth,
            self.goal_height,
            self.ball_radius,
            self.ball_mass,
        ]
        .iter()
        .map(|x| format!("{x}"))
        .collect()
    }
}

impl Default for FieldSize {
    /// The 0.7.1 field, that of the default rules.
    fn default() -> Self {
        FieldSize {
            field_length: 30.0,
            field_width: 20.0,
            goal_width: 2.1,
            goal_depth: 0.6,
            goal_height: 0.8,
            ball_radius: 0.042,
            ball_mass: 0.026,
        }
    }
}

/// Static geometry and the ball, read from the field scene.
#[derive(Debug, Clone)]
pub(super) struct FieldDesc {
    pub(super) ground: Option<(Vector3<f32>, f32)>,
    pub(super) statics: Vec<(Isometry3<f32>, ShapeDesc, bool)>,
    pub(super) ball: Option<BallDesc>,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct BallDesc {
    pub(super) pos: Vector3<f32>,
    pub(super) radius: f32,
    pub(super) mass: f32,
}

pub(super) fn shape_of(s: ShapeDesc) -> SharedShape {
    match s {
        ShapeDesc::Box(l) => SharedShape::cuboid(l.x / 2.0, l.y / 2.0, l.z / 2.0),
        ShapeDesc::Sphere { radius } => SharedShape::ball(radius),
        ShapeDesc::Capsule { radius, length } => SharedShape::capsule_z(length / 2.0, radius),
    }
}

/// The field scene expanded with the dimensions of `size`, and its name:
/// the built-in `soccer.rsg` (`field_scene` = `None`), or a user's file,
/// read with the scene files of its directory laid over the built-in ones
/// (so it may import the built-in `goal.rsg`).
pub(super) fn field_tree(
    field_scene: Option<&Path>,
    size: &FieldSize,
) -> Result<(SceneTree, String), SceneError> {
    let (user, name) = match field_scene {
        None => (Vec::new(), FIELD_SCENE.to_owned()),
        Some(path) => {
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (SceneLibrary::read_dir(dir)?, name)
        }
    };
    let files = SCENE_FILES
        .iter()
        .copied()
        .chain(user.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    let lib = SceneLibrary::from_files(files)?;
    if !lib.contains(&name) {
        let shown = field_scene.map_or(name, |p| p.display().to_string());
        return Err(SceneError::UnknownScene(shown));
    }
    let tree = lib.instantiate(&name, &size.scene_args())?;
    Ok((tree, name))
}

fn iso32(i: &Isometry3<f64>) -> Isometry3<f32> {
    nalgebra::convert(*i)
}

pub(super) fn read_field(tree: &SceneTree, scene: &str) -> Result<FieldDesc, SceneError> {
    let mut field = FieldDesc {
        ground: None,
        statics: Vec::new(),
        ball: None,
    };
    for i in tree.depth_first() {
        let n = &tree.nodes[i];
        if n.class == "PlaneCollider" {
            let c = n
                .last_call("setParams")
                .ok_or_else(|| n.error("missing setParams"))?;
            c.expect_args(4)?;
            let normal = c.vec3(0)?;
            let len = normal.norm();
            if len < 1e-9 {
                return Err(c.error("plane normal has zero length"));
            }
            let d = c.num(3)?;
            field.ground = Some(((normal / len).map(|x| x as f32), (d / len) as f32));
            continue;
        }
        let Some(shape) = collider_shape(tree, i)? else {
            continue;
        };
        let tr = tree.enclosing_transform(i);
        let body_sibling = tr.and_then(|t| {
            tree.nodes[t]
                .children
                .iter()
                .copied()
                .find(|&c| tree.nodes[c].class == "RigidBody")
        });
        match body_sibling {
            Some(b) => {
                let bn = &tree.nodes[b];
                let c = bn.last_call("setSphereTotal").ok_or_else(|| {
                    bn.error("the field's dynamic body must be a sphere (setSphereTotal)")
                })?;
                c.expect_args(2)?;
                let radius = match shape {
                    ShapeDesc::Sphere { radius } => radius,
                    _ => return Err(n.error("the ball collider must be a SphereCollider")),
                };
                if field.ball.is_some() {
                    return Err(bn.error("a second dynamic body in the field scene"));
                }
                let mass = c.num(0)? as f32;
                if mass <= 0.0 {
                    return Err(c.error("mass must be positive"));
                }
                field.ball = Some(BallDesc {
                    pos: n.world.translation.vector.map(|x| x as f32),
                    radius,
                    mass,
                });
            }
            None => {
                let has_contact = n.children.iter().any(|&c| {
                    matches!(
                        tree.nodes[c].class.as_str(),
                        "ContactJointHandler" | "TouchPerceptorHandler"
                    )
                });
                let has_handler = !n.children.is_empty();
                // A collider with only a recorder handler senses, never touches.
                let sensor = has_handler && !has_contact;
                let _ = collider_surface(tree, i)?;
                field.statics.push((iso32(&n.world), shape, sensor));
            }
        }
    }
    if field.ball.is_none() {
        return Err(SceneError::Invalid {
            scene: scene.to_string(),
            message: "the field scene has no ball (a Ball with a RigidBody and a SphereCollider)"
                .into(),
        });
    }
    Ok(field)
}

#[cfg(test)]
mod tests {
    use super::{field_tree, read_field, FieldSize, FIELD_SCENE, SCENE_FILES};

    fn goal_sensor_x(size: &FieldSize) -> Vec<f32> {
        let (tree, name) = field_tree(None, size).expect("field scene");
        let field = read_field(&tree, &name).expect("field");
        let mut xs: Vec<f32> = field
            .statics
            .iter()
            .filter(|(_, _, sensor)| *sensor)
            .map(|(pose, _, _)| pose.translation.vector.x)
            .collect();
        xs.sort_by(f32::total_cmp);
        xs
    }

    /// A field scene of the user's own, beside nothing else, imports the
    /// built-in goal.
    #[test]
    fn a_users_field_scene_may_import_the_built_in_goal() {
        let dir = std::env::temp_dir().join(format!("rcss3d-field-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let soccer = SCENE_FILES
            .iter()
            .find(|(p, _)| *p == FIELD_SCENE)
            .expect("soccer.rsg")
            .1;
        let path = dir.join("my-field.rsg");
        std::fs::write(&path, soccer).expect("write");
        let (tree, name) = field_tree(Some(&path), &FieldSize::default()).expect("field scene");
        assert_eq!(name, "my-field.rsg");
        assert!(read_field(&tree, &name).expect("field").ball.is_some());
        let missing = dir.join("none.rsg");
        let err = field_tree(Some(&missing), &FieldSize::default()).expect_err("no such scene");
        assert!(err.to_string().contains("none.rsg"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn scene_arguments_print_the_rules_values() {
        assert_eq!(
            FieldSize::default().scene_args(),
            ["30", "2.1", "0.6", "0.8", "0.042", "0.026"]
        );
    }

    #[test]
    fn the_goals_stand_where_the_rules_field_ends() {
        let xs = goal_sensor_x(&FieldSize::default());
        assert_eq!(xs.len(), 2, "{xs:?}");
        assert!(
            (xs[0] + 15.3).abs() < 1e-4 && (xs[1] - 15.3).abs() < 1e-4,
            "{xs:?}"
        );
        let longer = FieldSize {
            field_length: 40.0,
            ..FieldSize::default()
        };
        let xs = goal_sensor_x(&longer);
        assert!(
            (xs[0] + 20.3).abs() < 1e-4 && (xs[1] - 20.3).abs() < 1e-4,
            "{xs:?}"
        );
        let bigger_ball = FieldSize {
            ball_radius: 0.05,
            ..FieldSize::default()
        };
        let (tree, name) = field_tree(None, &bigger_ball).expect("field scene");
        let ball = read_field(&tree, &name).expect("field").ball;
        assert_eq!(ball.map(|b| b.radius), Some(0.05));
    }
}
