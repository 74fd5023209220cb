//! The tracked scene: a copy of the monitor scene graph and game state,
//! brought up to date by each full state or delta.

use std::collections::BTreeMap;

use nalgebra::Vector3;

use super::{invalid, validate_message, StreamError};
use crate::monitor::frame::FrameKind;
use crate::monitor::sexp::{parse_all, Node};
use crate::rules::{PlayMode, Side};

/// The game-state predicates as last received.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GameView {
    /// `(time T)`.
    pub time: f32,
    /// `(team_left NAME)`, once received.
    pub team_left: Option<String>,
    /// `(team_right NAME)`, once received.
    pub team_right: Option<String>,
    /// `(half H)`.
    pub half: u32,
    /// `(score_left N)`.
    pub score_left: u32,
    /// `(score_right N)`.
    pub score_right: u32,
    /// `(play_mode I)`.
    pub play_mode: u32,
    /// Every `(foul IDX TYPE TEAM UNUM)` received, in order.
    pub fouls: Vec<[u32; 4]>,
}

impl GameView {
    /// The play mode, if the index is valid.
    pub fn play_mode(&self) -> Option<PlayMode> {
        PlayMode::from_index(self.play_mode as usize)
    }
}

/// Node kinds of the monitor scene graph (docs/protocol.md#scene-nodes-and-deltas).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// `TRF`.
    Transform,
    /// `Light`.
    Light,
    /// `StaticMesh`.
    StaticMesh,
    /// `SMN`.
    SingleMaterialMesh,
}

/// One node of the tracked scene.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneNode {
    /// Kind word of the full state.
    pub kind: NodeKind,
    /// Local matrix (column-major) of a transform.
    pub matrix: [f32; 16],
    /// `setVisible` of a mesh.
    pub visible: bool,
    /// `setTransparent` of a mesh.
    pub transparent: bool,
    /// Mesh name (`load`), without parameters.
    pub mesh: Option<String>,
    /// `resetMaterials` list, or the single `sMat`.
    pub materials: Vec<String>,
    /// Child nodes.
    pub children: Vec<SceneNode>,
}

/// A robot as RoboViz identifies it (docs/protocol.md#monitor-scene-content).
#[derive(Debug, Clone, PartialEq)]
pub struct RobotView {
    /// Team side from `matLeft`/`matRight`.
    pub side: Side,
    /// Number from `matNum<N>`.
    pub unum: u32,
    /// World position of the numbered mesh (the torso centre for a Nao).
    pub position: Vector3<f32>,
    /// Index of the robot's top-level node.
    pub node: usize,
}

/// Everything a monitor knows after applying messages in order.
#[derive(Debug, Clone, Default)]
pub struct TrackedScene {
    /// Environment and unknown predicates of the last full state (name →
    /// values joined by one space), e.g. `FieldLength` → `30`, `seed` →
    /// `42`.
    pub environment: BTreeMap<String, String>,
    /// The `play_modes` names.
    pub play_modes: Vec<String>,
    /// Game state.
    pub game: GameView,
    /// Top-level scene nodes.
    pub nodes: Vec<SceneNode>,
    /// Full states applied.
    pub full_states: u64,
    /// Deltas applied.
    pub deltas: u64,
    /// The reasons the server gave for refusing this client's commands
    /// (`(refused REASON)`, docs/protocol.md#refused-commands), oldest
    /// first; the last `MAX_REFUSALS` (16) are kept.
    pub refused: Vec<String>,
}

/// Refusal reasons a [`TrackedScene`] keeps.
pub const MAX_REFUSALS: usize = 16;

impl TrackedScene {
    /// Checks one message with [`validate_message`] and applies it: a full
    /// state replaces the scene, a delta must match its shape exactly.
    pub fn apply(&mut self, text: &str) -> Result<FrameKind, StreamError> {
        let kind = validate_message(text)?;
        let (parts, _) = parse_all(text);
        let [preds, _, scene] = &parts[..] else {
            return Err(invalid("expected three parts"));
        };
        let preds = preds.list().unwrap_or(&[]);
        let scene = scene.list().unwrap_or(&[]);
        match kind {
            FrameKind::Full => {
                self.environment.clear();
                let nodes = scene.iter().map(full_node).collect::<Result<Vec<_>, _>>()?;
                self.nodes = nodes;
                self.full_states += 1;
            }
            FrameKind::Delta => {
                if self.full_states == 0 {
                    return Err(StreamError::NoFullState);
                }
                apply_delta_list(&mut self.nodes, scene, "scene")?;
                self.deltas += 1;
            }
        }
        self.apply_predicates(preds);
        Ok(kind)
    }

    fn apply_predicates(&mut self, preds: &[Node<'_>]) {
        for p in preds {
            let Some(items) = p.list() else { continue };
            let Some(name) = items.first().and_then(Node::atom) else {
                continue;
            };
            let values: Vec<&str> = items[1..].iter().filter_map(Node::atom).collect();
            let first = values.first().copied().unwrap_or("");
            let int = || first.parse::<u32>().unwrap_or(0);
            let g = &mut self.game;
            match name {
                "time" => g.time = first.parse().unwrap_or(0.0),
                "team_left" => g.team_left = Some(first.to_owned()),
                "team_right" => g.team_right = Some(first.to_owned()),
                "half" => g.half = int(),
                "score_left" => g.score_left = int(),
                "score_right" => g.score_right = int(),
                "play_mode" => g.play_mode = int(),
                "foul" => {
                    let mut f = [0u32; 4];
                    for (slot, v) in f.iter_mut().zip(&values) {
                        *slot = v.parse().unwrap_or(0);
                    }
                    g.fouls.push(f);
                }
                "refused" => {
                    if self.refused.len() >= MAX_REFUSALS {
                        self.refused.remove(0);
                    }
                    self.refused.push(values.join(" "));
                }
                "play_modes" => {
                    self.play_modes = values.iter().map(|s| (*s).to_owned()).collect();
                }
                _ => {
                    self.environment.insert(name.to_owned(), values.join(" "));
                }
            }
        }
    }

    /// World position of the ball: the first mesh named
    /// `…soccerball.obj`, depth first.
    pub fn ball_position(&self) -> Option<Vector3<f32>> {
        let mut found = None;
        walk(&self.nodes, &IDENTITY, &mut |node, world| {
            if found.is_none()
                && node
                    .mesh
                    .as_deref()
                    .is_some_and(|m| m.ends_with("soccerball.obj"))
            {
                found = Some(translation_of(world));
            }
        });
        found
    }

    /// Robots as RoboViz finds them: for each top-level node, the first
    /// mesh listing `matNum<N>` (N = 1…11) and `matLeft` or `matRight`.
    pub fn robots(&self) -> Vec<RobotView> {
        let mut out = Vec::new();
        for (i, top) in self.nodes.iter().enumerate() {
            let mut found: Option<RobotView> = None;
            walk(std::slice::from_ref(top), &IDENTITY, &mut |node, world| {
                if found.is_some() {
                    return;
                }
                let side = if node.materials.iter().any(|m| m == "matLeft") {
                    Side::Left
                } else if node.materials.iter().any(|m| m == "matRight") {
                    Side::Right
                } else {
                    return;
                };
                let unum = node
                    .materials
                    .iter()
                    .filter_map(|m| m.strip_prefix("matNum"))
                    .find_map(|n| n.parse::<u32>().ok());
                if let Some(unum) = unum.filter(|n| (1..=11).contains(n)) {
                    found = Some(RobotView {
                        side,
                        unum,
                        position: translation_of(world),
                        node: i,
                    });
                }
            });
            out.extend(found);
        }
        out
    }

    /// Counts nodes of each kind in depth-first order (a shape summary).
    pub fn count(&self, kind: NodeKind) -> usize {
        let mut n = 0;
        walk(&self.nodes, &IDENTITY, &mut |node, _| {
            if node.kind == kind {
                n += 1;
            }
        });
        n
    }
}

pub(super) const IDENTITY: [f32; 16] = [
    1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
];

pub(super) fn mul(a: &[f32; 16], b: &[f32; 16]) -> [f32; 16] {
    let mut m = [0.0; 16];
    for col in 0..4 {
        for row in 0..4 {
            m[col * 4 + row] = (0..4).map(|k| a[k * 4 + row] * b[col * 4 + k]).sum();
        }
    }
    m
}

pub(super) fn translation_of(m: &[f32; 16]) -> Vector3<f32> {
    Vector3::new(m[12], m[13], m[14])
}

/// Visits every node with its world matrix (for meshes: the parent's).
pub(super) fn walk(
    nodes: &[SceneNode],
    parent: &[f32; 16],
    f: &mut dyn FnMut(&SceneNode, &[f32; 16]),
) {
    for n in nodes {
        let world = if n.kind == NodeKind::Transform {
            mul(parent, &n.matrix)
        } else {
            *parent
        };
        f(n, &world);
        walk(&n.children, &world, f);
    }
}

pub(super) fn full_node(node: &Node<'_>) -> Result<SceneNode, StreamError> {
    let items = node.list().unwrap_or(&[]);
    let kind = match items.get(1).and_then(Node::atom) {
        Some("TRF") => NodeKind::Transform,
        Some("Light") => NodeKind::Light,
        Some("StaticMesh") => NodeKind::StaticMesh,
        Some("SMN") => NodeKind::SingleMaterialMesh,
        other => return Err(invalid(format!("node kind {other:?}"))),
    };
    let mut n = SceneNode {
        kind,
        matrix: IDENTITY,
        visible: false,
        transparent: false,
        mesh: None,
        materials: Vec::new(),
        children: Vec::new(),
    };
    for item in &items[2..] {
        let Some(list) = item.list() else { continue };
        let args: Vec<&str> = list[1..].iter().filter_map(Node::atom).collect();
        match list.first().and_then(Node::atom) {
            Some("nd") => n.children.push(full_node(item)?),
            Some("SLT") => n.matrix = matrix(&args)?,
            Some("setVisible") => n.visible = args.first() == Some(&"1"),
            Some("setTransparent") => n.transparent = true,
            Some("load") => n.mesh = args.first().map(|s| (*s).to_owned()),
            Some("resetMaterials") | Some("sMat") => {
                n.materials = args.iter().map(|s| (*s).to_owned()).collect();
            }
            _ => {}
        }
    }
    Ok(n)
}

pub(super) fn matrix(args: &[&str]) -> Result<[f32; 16], StreamError> {
    if args.len() != 16 {
        return Err(invalid(format!("SLT with {} values", args.len())));
    }
    let mut m = [0.0; 16];
    for (slot, a) in m.iter_mut().zip(args) {
        *slot = a.parse().map_err(|_| invalid(format!("SLT value `{a}`")))?;
    }
    Ok(m)
}

pub(super) fn apply_delta_list(
    stored: &mut [SceneNode],
    delta: &[Node<'_>],
    path: &str,
) -> Result<(), StreamError> {
    let nds: Vec<&Node<'_>> = delta.iter().filter(|n| n.head() == Some("nd")).collect();
    if nds.len() != stored.len() {
        return Err(StreamError::Shape(format!(
            "{path}: {} nodes in the delta, {} stored",
            nds.len(),
            stored.len()
        )));
    }
    for (i, (node, d)) in stored.iter_mut().zip(nds).enumerate() {
        let items = d.list().unwrap_or(&[]);
        let word = items.get(1).and_then(Node::atom);
        let here = format!("{path}/{i}");
        match (node.kind, word) {
            (NodeKind::Transform | NodeKind::Light, None) => {}
            (NodeKind::StaticMesh, Some("StaticMesh"))
            | (NodeKind::SingleMaterialMesh, Some("SMN")) => {}
            (kind, word) => {
                return Err(StreamError::Shape(format!(
                    "{here}: {kind:?} stored, delta says {word:?}"
                )))
            }
        }
        for item in &items[1..] {
            let Some(list) = item.list() else { continue };
            let args: Vec<&str> = list[1..].iter().filter_map(Node::atom).collect();
            match list.first().and_then(Node::atom) {
                Some("SLT") if node.kind == NodeKind::Transform => node.matrix = matrix(&args)?,
                Some("setVisible") => node.visible = args.first() == Some(&"1"),
                _ => {}
            }
        }
        apply_delta_list(&mut node.children, &items[1..], &here)?;
    }
    Ok(())
}
