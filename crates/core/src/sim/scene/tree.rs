//! The expanded scene: nodes, their method calls and poses.

use std::sync::Arc;

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

use super::{at, SceneError};

/// One method call on a node, arguments fully evaluated to text.
#[derive(Debug, Clone)]
pub struct Call {
    /// Method name (`setLocalPos`, `attach`, ...).
    pub method: String,
    /// Arguments as text.
    pub args: Vec<String>,
    /// File the call was written in.
    pub file: Arc<str>,
    /// Line of the call.
    pub line: usize,
}

impl Call {
    /// An error located at this call.
    pub fn error(&self, message: impl Into<String>) -> SceneError {
        at(
            &self.file,
            self.line,
            format!("{}: {}", self.method, message.into()),
        )
    }

    /// Checks the argument count.
    pub fn expect_args(&self, n: usize) -> Result<(), SceneError> {
        if self.args.len() != n {
            return Err(self.error(format!("expected {n} argument(s), got {}", self.args.len())));
        }
        Ok(())
    }

    /// Argument `i` as a number (strict).
    pub fn num(&self, i: usize) -> Result<f64, SceneError> {
        let a = self
            .args
            .get(i)
            .ok_or_else(|| self.error(format!("missing argument {}", i + 1)))?;
        parse_num(a).ok_or_else(|| self.error(format!("'{a}' is not a number")))
    }

    /// Arguments `i..i+3` as a vector.
    pub fn vec3(&self, i: usize) -> Result<Vector3<f64>, SceneError> {
        Ok(Vector3::new(
            self.num(i)?,
            self.num(i + 1)?,
            self.num(i + 2)?,
        ))
    }

    /// Argument `i` as a boolean (`true`/`false`).
    pub fn boolean(&self, i: usize) -> Result<bool, SceneError> {
        match self.args.get(i).map(String::as_str) {
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(a) => Err(self.error(format!("'{a}' is not true or false"))),
            None => Err(self.error(format!("missing argument {}", i + 1))),
        }
    }

    /// Argument `i` as text.
    pub fn text(&self, i: usize) -> Result<&str, SceneError> {
        self.args
            .get(i)
            .map(String::as_str)
            .ok_or_else(|| self.error(format!("missing argument {}", i + 1)))
    }
}

/// One node of an expanded scene.
#[derive(Debug, Clone)]
pub struct SceneNode {
    /// Node class (`Transform`, `RigidBody`, `HingeJoint`, ...).
    pub class: String,
    /// Name given by `setName`, if any.
    pub name: Option<String>,
    /// Parent node (None for the root).
    pub parent: Option<usize>,
    /// Children in file order.
    pub children: Vec<usize>,
    /// Pose relative to the nearest enclosing transform-like node.
    pub local: Isometry3<f64>,
    /// Pose in the scene frame (composition of the enclosing transforms).
    pub world: Isometry3<f64>,
    /// Method calls other than the immediate ones (`setName`,
    /// `setLocalPos`, `setLocalRotation`), in file order.
    pub calls: Vec<Call>,
    /// File and line where the node was created.
    pub file: Arc<str>,
    /// Line where the node was created.
    pub line: usize,
}

impl SceneNode {
    /// Whether this class has a pose of its own.
    pub fn is_transform(&self) -> bool {
        matches!(self.class.as_str(), "Transform" | "AgentAspect" | "Ball")
    }

    /// An error located where this node was created.
    pub fn error(&self, message: impl Into<String>) -> SceneError {
        at(
            &self.file,
            self.line,
            format!("{}: {}", self.class, message.into()),
        )
    }

    /// The calls of one method.
    pub fn calls_of<'a>(&'a self, method: &'a str) -> impl Iterator<Item = &'a Call> + 'a {
        self.calls.iter().filter(move |c| c.method == method)
    }

    /// The last call of one method, if any.
    pub fn last_call(&self, method: &str) -> Option<&Call> {
        self.calls.iter().rev().find(|c| c.method == method)
    }
}

/// An expanded scene: node 0 is the root.
#[derive(Debug, Clone)]
pub struct SceneTree {
    /// All nodes; children are listed depth-first from the root.
    pub nodes: Vec<SceneNode>,
}

impl SceneTree {
    /// Node indices in depth-first (file) order, root excluded.
    pub fn depth_first(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut stack: Vec<usize> = self
            .nodes
            .first()
            .map(|n| n.children.iter().rev().copied().collect())
            .unwrap_or_default();
        while let Some(i) = stack.pop() {
            out.push(i);
            if let Some(n) = self.nodes.get(i) {
                stack.extend(n.children.iter().rev().copied());
            }
        }
        out
    }

    /// The nearest transform-like node at or above `i`.
    pub fn enclosing_transform(&self, mut i: usize) -> Option<usize> {
        loop {
            let n = self.nodes.get(i)?;
            if n.is_transform() {
                return Some(i);
            }
            i = n.parent?;
        }
    }

    /// Resolves a node path (`../boxBody`, `../../torso/boxBody`) relative
    /// to node `from`.
    pub fn resolve_path(&self, from: usize, path: &str) -> Option<usize> {
        let mut cur = if path.starts_with('/') { 0 } else { from };
        for seg in path.split('/').filter(|s| !s.is_empty() && *s != ".") {
            if seg == ".." {
                cur = self.nodes.get(cur)?.parent?;
            } else {
                cur =
                    *self.nodes.get(cur)?.children.iter().find(|&&c| {
                        self.nodes.get(c).and_then(|n| n.name.as_deref()) == Some(seg)
                    })?;
            }
        }
        Some(cur)
    }
}

/// Formats a number as text the way `eval` results are passed on.
pub(super) fn fmt_num(x: f64) -> String {
    format!("{x}")
}

/// Strict number parsing (`1e-8`, `-0.055`, `3`); no lenient zero.
pub fn parse_num(s: &str) -> Option<f64> {
    let v: f64 = s.trim().parse().ok()?;
    v.is_finite().then_some(v)
}

/// Applies a method call to a node: immediate methods change the node at
/// once, the others are stored in file order.
pub(super) fn apply_call(tree: &mut SceneTree, node: usize, call: Call) -> Result<(), SceneError> {
    let n = tree
        .nodes
        .get_mut(node)
        .ok_or_else(|| call.error("no current node"))?;
    match call.method.as_str() {
        "setName" => {
            call.expect_args(1)?;
            n.name = Some(call.args[0].clone());
            // Keep the call too: some classes (perceptors) read it.
            n.calls.push(call);
        }
        "setLocalPos" => {
            call.expect_args(3)?;
            if !n.is_transform() {
                return Err(call.error(format!("{} has no pose", n.class)));
            }
            let p = call.vec3(0)?;
            n.local.translation = Translation3::from(p);
            refresh_world(tree, node);
        }
        "setLocalRotation" => {
            call.expect_args(3)?;
            if !n.is_transform() {
                return Err(call.error(format!("{} has no pose", n.class)));
            }
            let r = call.vec3(0)?.map(f64::to_radians);
            let rot = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), r.x)
                * UnitQuaternion::from_axis_angle(&Vector3::y_axis(), r.y)
                * UnitQuaternion::from_axis_angle(&Vector3::z_axis(), r.z);
            n.local.rotation = rot;
            refresh_world(tree, node);
        }
        _ => n.calls.push(call),
    }
    Ok(())
}

/// Recomputes the world pose of `node` and its subtree.
fn refresh_world(tree: &mut SceneTree, node: usize) {
    let mut stack = vec![node];
    while let Some(i) = stack.pop() {
        let parent_world = tree
            .nodes
            .get(i)
            .and_then(|n| n.parent)
            .and_then(|p| tree.nodes.get(p))
            .map(|p| p.world)
            .unwrap_or_else(Isometry3::identity);
        if let Some(n) = tree.nodes.get_mut(i) {
            n.world = if n.is_transform() {
                parent_world * n.local
            } else {
                parent_world
            };
            stack.extend(n.children.iter().copied());
        }
    }
}
