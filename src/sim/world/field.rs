//! The field scene read into static geometry and the ball: ground plane,
//! goals, border walls and goal sensors.

use nalgebra::{Isometry3, Vector3};
use rapier3d::prelude::*;

use crate::sim::model::{collider_shape, collider_surface, ShapeDesc};
use crate::sim::scene::{SceneError, SceneTree};

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
