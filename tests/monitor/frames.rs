//! Monitor messages built from snapshots: the RoboViz checklist, the
//! reference's shape, per-consumer deltas.

use std::sync::Arc;

use crate::eqnice;
use nalgebra::Isometry3;
use rcss3d::monitor::client::{validate_message, NodeKind, TrackedScene};
use rcss3d::monitor::{ConsumerState, FieldParams, FrameBuilder, FrameKind};
use rcss3d::rules::{PlayMode, Side};
use rcss3d::sim::snapshot::FoulRecord;

use crate::util::{full_match_robots, items, parts, robot, shape, snapshot, transcript};

fn build(
    b: &FrameBuilder,
    st: &mut ConsumerState,
    snap: &rcss3d::sim::snapshot::WorldSnapshot,
) -> (FrameKind, String) {
    let mut s = String::new();
    let k = b.write(st, snap, &mut s);
    (k, s)
}

/// The RoboViz checklist (docs/protocol.md#what-roboviz-needs), item by
/// item, on the first message of a match with two initialised robots.
#[test]
fn first_message_passes_the_roboviz_checklist() {
    let b = FrameBuilder::new(&FieldParams::default());
    let snap = snapshot(
        0,
        [0.0, 0.0],
        vec![
            robot(1, Some(Side::Left), 1, 0, -14.2, 9.2, 0.0),
            robot(2, Some(Side::Right), 7, 4, 3.0, 0.0, 3.0),
        ],
    );
    let mut st = ConsumerState::new();
    let (kind, msg) = build(&b, &mut st, &snap);
    assert_eq!(kind, FrameKind::Full);
    // Three parts, ASCII, no whitespace after `(`, balanced; predicates,
    // header, node kinds, SLT first, setVisible, mesh names (the validator).
    assert_eq!(validate_message(&msg).unwrap(), FrameKind::Full);
    assert!(msg.is_ascii() && !msg.contains("( ") && !msg.contains('\n'));
    let [preds, header, _] = parts(&msg);
    assert_eq!(header, "(RSG 0 1)");
    assert!(preds.starts_with("((FieldLength 30)(FieldWidth 20)"));
    for p in [
        "(FreeKickDistance 2)",
        "(BallRadius 0.042)",
        "(RuleHalfTime 300)",
        "(time 0)",
    ] {
        assert!(preds.contains(p), "{p}");
    }
    assert!(preds.contains("(play_modes BeforeKickOff KickOff_Left KickOff_Right PlayOn KickIn_Left KickIn_Right corner_kick_left corner_kick_right goal_kick_left goal_kick_right offside_left offside_right GameOver Goal_Left Goal_Right free_kick_left free_kick_right direct_free_kick_left direct_free_kick_right)"));
    assert!(preds.ends_with("(time 0)(team_left Alpha)(team_right Beta)(half 1)(score_left 0)(score_right 0)(play_mode 0))"));
    assert!(!msg.contains("nan") && !msg.contains("inf"));

    let mut scene = TrackedScene::default();
    scene.apply(&msg).unwrap();
    // Goals: transparent, visible, the 0.7.1 meshes.
    let mut goals = 0;
    fn visit(
        n: &[rcss3d::monitor::client::SceneNode],
        f: &mut dyn FnMut(&rcss3d::monitor::client::SceneNode),
    ) {
        for x in n {
            f(x);
            visit(&x.children, f);
        }
    }
    let mut meshes = Vec::new();
    visit(&scene.nodes, &mut |n| {
        if let Some(m) = &n.mesh {
            meshes.push((m.clone(), n.visible, n.materials.clone()));
            if m.ends_with("goal.obj") {
                assert!(n.transparent && n.visible);
                goals += 1;
            }
        }
    });
    assert_eq!(goals, 2);
    // Every mesh visible except the two selection markers.
    let hidden: Vec<_> = meshes.iter().filter(|m| !m.1).collect();
    assert_eq!(hidden.len(), 2);
    assert!(hidden
        .iter()
        .all(|m| m.0 == "StdUnitCylinder" && m.2 == ["matSelect"]));
    // Ball.
    let ball = scene.ball_position().unwrap();
    assert!((ball - nalgebra::Vector3::new(0.0, 0.0, 0.042)).norm() < 1e-5);
    assert!(msg.contains("(load models/soccerball.obj) (sSc 0.042 0.042 0.042)"));
    // Robots found as RoboViz finds them, one top-level node each, torso
    // position right; team-coloured meshes all list matLeft/matRight.
    let robots = scene.robots();
    assert_eq!(robots.len(), 2);
    assert_eq!((robots[0].side, robots[0].unum), (Side::Left, 1));
    assert_eq!((robots[1].side, robots[1].unum), (Side::Right, 7));
    assert!((robots[0].position - nalgebra::Vector3::new(-14.2, 9.2, 0.385)).norm() < 1e-4);
    assert_eq!(scene.nodes.len(), 36 + 2);
    assert!(msg.contains("(resetMaterials matNum1 matLeft matType0 naowhite)"));
    assert!(msg.contains(
        "(load models/naobody4.obj) (sSc 0.1 0.1 0.1)(resetMaterials matNum7 matRight naowhite)"
    ));
    assert!(msg.contains(
        "(load models/rthigh.obj) (sSc 0.07 0.07 0.07)(resetMaterials matNum7 matRight naowhite)"
    ));
    // Type 4 feet and toes use the reference's scales.
    assert!(msg.contains("(load models/rfoot.obj) (sSc 0.08 0.062241 0.08)"));
    assert!(msg.contains("(load models/rfoot.obj) (sSc 0.08 0.0228259 0.04)"));
    assert_eq!(scene.count(NodeKind::Light), 2);
}

/// Our empty-field full state and delta have exactly the reference's text
/// shape (same predicates, node kinds, order and spacing; numbers aside),
/// and the static numbers agree where the reference's are not float noise.
#[test]
fn empty_field_matches_the_reference_transcript() {
    let reference = transcript("sync_monitor_first3_no_agents.txt");
    let b = FrameBuilder::new(&FieldParams::default());
    let snap = snapshot(0, [0.0, 0.0], vec![]);
    let mut st = ConsumerState::new();
    let (_, full) = build(&b, &mut st, &snap);
    eqnice!(shape(&reference[0]), shape(&full));
    let (kind, delta) = build(&b, &mut st, &snap);
    assert_eq!(kind, FrameKind::Delta);
    eqnice!(reference[1], delta);
    // Static transforms with exact values in the reference are identical.
    for node in [
        "(nd TRF (SLT 1 0 0 0 0 1 0 0 0 0 1 0 -15.3 0 0.4 1)",
        "(nd TRF (SLT 1 0 0 0 0 1 0 0 0 0 1 0 0 -1.07 0 1))",
        "(nd TRF (SLT 0.866025 0 -0.5 0 0 1 0 0 0.5 0 0.866025 0 -0.06 0 0 1))",
        "(nd TRF (SLT 1 0 0 0 0 1 0 0 0 0 1 0 0.3 -1.05 0.4 1))",
        "(nd TRF (SLT 1 0 0 0 0 1 0 0 0 0 1 0 -24.99 0 0 1)(nd SMN (setVisible 1) (load StdUnitBox) (sSc 1 51 1) (sMat matGrey)))",
        "(nd TRF (SLT 1 0 0 0 0 1 0 0 0 0 1 0 0 -25 0 1)(nd SMN (setVisible 1) (load StdUnitBox) (sSc 50.98 1 1) (sMat matGrey)))",
        "(nd StaticMesh (setVisible 1) (setTransparent) (load models/rightgoal.obj) (sSc 2.18 0.88 0.68)(resetMaterials grey_naogoalnet.png sky-blue white))",
        "(nd Light (setDiffuse 1 1 1 1) (setAmbient 0 0 0 1) (setSpecular 0.1 0.1 0.1 1))",
    ] {
        assert!(reference[0].contains(node), "reference lacks {node}");
        assert!(full.contains(node), "ours lacks {node}");
    }
}

/// With three robots (types 4 and 0, left and right), the predicates and
/// every robot container have the reference's shape.
#[test]
fn robots_match_the_reference_transcript() {
    let reference = transcript("sync_monitor_first3_three_agents.txt");
    let b = FrameBuilder::new(&FieldParams::default());
    let mut snap = snapshot(
        0,
        [0.0, 0.0],
        // The reference's connection order (L2 type 4, L1, R1); the
        // builder keeps whatever order the snapshot has.
        vec![
            robot(1, Some(Side::Left), 2, 4, -2.0, 1.0, 0.2),
            robot(2, Some(Side::Left), 1, 0, -1.5, -1.0, 0.1),
            robot(3, Some(Side::Right), 1, 0, 3.0, 0.0, 3.0),
        ],
    );
    snap.game.team_left = Some(Arc::from("Left"));
    snap.game.team_right = Some(Arc::from("Right"));
    let mut st = ConsumerState::new();
    let (_, full) = build(&b, &mut st, &snap);
    let [rp, rh, rs] = parts(&reference[0]);
    let [p, h, s] = parts(&full);
    eqnice!(shape(rp), shape(p));
    assert_eq!(rh, h);
    let (rnodes, nodes) = (items(rs), items(s));
    assert_eq!(rnodes.len(), nodes.len());
    for i in 36..39 {
        eqnice!(shape(rnodes[i]), shape(nodes[i]));
    }
    // Materials and visual scales are the reference's, robot by robot.
    let materials = |t: &str| -> Vec<String> {
        t.split("(load ")
            .skip(1)
            .map(|m| {
                let name = m.split(')').next().unwrap().to_owned();
                let rest = m
                    .split("(resetMaterials")
                    .nth(1)
                    .map(|r| r.split(')').next().unwrap().to_owned());
                let scale = m
                    .split("(sSc")
                    .nth(1)
                    .map(|r| r.split(')').next().unwrap().to_owned());
                format!("{name} {scale:?} {rest:?}")
            })
            .collect()
    };
    for i in 36..39 {
        assert_eq!(materials(rnodes[i]), materials(nodes[i]));
    }
    // Deltas: same shape as the reference's when nothing moved.
    let (_, delta) = build(&b, &mut st, &snap);
    let ref_delta_shape =
        shape(&reference[1]).replace(" (SLT # # # # # # # # # # # # # # # #)", "");
    eqnice!(ref_delta_shape, shape(&delta));
}

/// Deltas apply cleanly to the consumer's last full state, transforms are
/// sent only beyond 5 mm, game predicates only on change, fouls once.
#[test]
fn deltas_carry_exactly_the_changes() {
    let b = FrameBuilder::new(&FieldParams::default());
    let robots = vec![robot(1, Some(Side::Left), 1, 0, -3.0, 0.0, 0.0)];
    let mut snap = snapshot(0, [0.0, 0.0], robots);
    let mut st = ConsumerState::new();
    let mut scene = TrackedScene::default();
    let (_, m) = build(&b, &mut st, &snap);
    scene.apply(&m).unwrap();

    // Nothing changed: only the time, no SLT.
    snap.cycle = 2;
    let (kind, m) = build(&b, &mut st, &snap);
    assert_eq!(kind, FrameKind::Delta);
    assert!(m.starts_with("((time 0))(RDS 0 1)("));
    assert!(!m.contains("SLT"));
    scene.apply(&m).unwrap();

    // Ball moves 4 mm: not sent. Then 2 mm more (6 mm from the last sent
    // value): sent.
    snap.ball = Isometry3::translation(0.004, 0.0, 0.042);
    let (_, m) = build(&b, &mut st, &snap);
    assert!(!m.contains("SLT"));
    snap.ball = Isometry3::translation(0.006, 0.0, 0.042);
    let (_, m) = build(&b, &mut st, &snap);
    assert_eq!(m.matches("SLT").count(), 1);
    assert!(m.contains("(nd (SLT 1 0 0 0 0 1 0 0 0 0 1 0 0.006 0 0.042 1)(nd StaticMesh))"));
    scene.apply(&m).unwrap();
    assert!((scene.ball_position().unwrap().x - 0.006).abs() < 1e-6);

    // Play mode, score, time: each in the delta where it changes, once.
    snap.game.play_mode = PlayMode::KickOffLeft;
    snap.game.game_time = 0.02;
    let (_, m) = build(&b, &mut st, &snap);
    assert!(m.starts_with("((time 0.02)(play_mode 1))(RDS 0 1)"));
    scene.apply(&m).unwrap();
    let (_, m) = build(&b, &mut st, &snap);
    assert!(m.starts_with("((time 0.02))(RDS"));
    snap.game.score_right = 1;
    snap.game.half = 2;
    snap.game.fouls.push(FoulRecord {
        kind: 3,
        side: Side::Right,
        unum: 4,
    });
    snap.game.fouls.push(FoulRecord {
        kind: 5,
        side: Side::Left,
        unum: 1,
    });
    let (_, m) = build(&b, &mut st, &snap);
    assert!(
        m.starts_with("((time 0.02)(half 2)(score_right 1)(foul 1 3 2 4)(foul 2 5 1 1))(RDS"),
        "{m:.120}"
    );
    scene.apply(&m).unwrap();
    let (_, m) = build(&b, &mut st, &snap);
    assert!(!m.contains("foul") && !m.contains("score"));
    scene.apply(&m).unwrap();
    assert_eq!(scene.game.score_right, 1);
    assert_eq!(scene.game.fouls, vec![[1, 3, 2, 4], [2, 5, 1, 1]]);

    // The robot walks: its part transforms are sent, nothing else.
    snap.robots = vec![robot(1, Some(Side::Left), 1, 0, -2.9, 0.0, 0.0)];
    let (kind, m) = build(&b, &mut st, &snap);
    assert_eq!(kind, FrameKind::Delta);
    assert_eq!(m.matches("SLT").count(), 23, "one per part");
    scene.apply(&m).unwrap();
    let r = &scene.robots()[0];
    assert!((r.position.x + 2.9).abs() < 1e-5);
    assert_eq!(scene.full_states, 1);
}

/// Two consumers with different histories each get every change once.
#[test]
fn consumers_keep_separate_state() {
    let b = FrameBuilder::new(&FieldParams::default());
    let mut snap = snapshot(0, [0.0, 0.0], vec![]);
    let (mut a, mut c) = (ConsumerState::new(), ConsumerState::new());
    build(&b, &mut a, &snap);
    build(&b, &mut c, &snap);
    snap.game.play_mode = PlayMode::PlayOn;
    snap.game.fouls.push(FoulRecord {
        kind: 1,
        side: Side::Left,
        unum: 2,
    });
    let (_, ma) = build(&b, &mut a, &snap);
    assert!(ma.contains("(play_mode 3)(foul 1 1 1 2)"));
    // A sees nothing new; C, built later, still gets the change.
    let (_, ma2) = build(&b, &mut a, &snap);
    assert!(!ma2.contains("play_mode"));
    let (_, mc) = build(&b, &mut c, &snap);
    assert!(mc.contains("(play_mode 3)(foul 1 1 1 2)"));
}

/// Joining, initialising and leaving robots, side swaps and
/// `(reqfullstate)` give a full state; everything else a delta.
#[test]
fn structure_changes_give_full_states() {
    let b = FrameBuilder::new(&FieldParams::default());
    let mut st = ConsumerState::new();
    let mut snap = snapshot(0, [0.0, 0.0], vec![]);
    let k = |st: &mut ConsumerState, s: &rcss3d::sim::snapshot::WorldSnapshot| build(&b, st, s).0;
    assert_eq!(k(&mut st, &snap), FrameKind::Full);
    assert_eq!(k(&mut st, &snap), FrameKind::Delta);
    // Joins (before init: placeholders).
    snap.robots.push(robot(1, None, 0, 0, -1.0, 0.0, 0.0));
    snap.structure_version += 1;
    let (kind, m) = build(&b, &mut st, &snap);
    assert_eq!(kind, FrameKind::Full);
    assert!(m.contains("(resetMaterials matNum matTeam matType0 naowhite)"));
    assert_eq!(k(&mut st, &snap), FrameKind::Delta);
    // Init: materials change even if structure_version does not.
    snap.robots[0] = robot(1, Some(Side::Left), 3, 0, -1.0, 0.0, 0.0);
    let (kind, m) = build(&b, &mut st, &snap);
    assert_eq!(kind, FrameKind::Full);
    assert!(m.contains("matNum3 matLeft"));
    // Side swap.
    snap.robots[0].side = Some(Side::Right);
    assert_eq!(k(&mut st, &snap), FrameKind::Full);
    // Request.
    st.request_full_state();
    assert_eq!(k(&mut st, &snap), FrameKind::Full);
    assert_eq!(k(&mut st, &snap), FrameKind::Delta);
    // Leaves.
    snap.robots.clear();
    snap.structure_version += 1;
    assert_eq!(k(&mut st, &snap), FrameKind::Full);
}

/// Non-finite physics values never reach the wire.
#[test]
fn non_finite_values_are_written_as_zero() {
    let b = FrameBuilder::new(&FieldParams::default());
    let mut snap = snapshot(0, [0.0, 0.0], vec![]);
    snap.ball = Isometry3::translation(f32::NAN, f32::INFINITY, 0.042);
    snap.game.game_time = f32::NAN;
    let mut st = ConsumerState::new();
    let (_, m) = build(&b, &mut st, &snap);
    validate_message(&m).unwrap();
    assert!(m.contains("(time 0)"));
    let (_, m) = build(&b, &mut st, &snap);
    validate_message(&m).unwrap();
}

/// A 22-robot match: full state and delta sizes in the range the design
/// notes give (docs/protocol.md#log-writer), all valid.
#[test]
fn full_match_sizes() {
    let b = FrameBuilder::new(&FieldParams::default());
    let mut st = ConsumerState::new();
    let s0 = snapshot(0, [0.0, 0.0], full_match_robots(0.0));
    let (_, full) = build(&b, &mut st, &s0);
    let s1 = snapshot(2, [0.5, 0.0], full_match_robots(0.05));
    let (_, delta) = build(&b, &mut st, &s1);
    let (_, still) = build(&b, &mut st, &s1);
    let mut scene = TrackedScene::default();
    scene.apply(&full).unwrap();
    scene.apply(&delta).unwrap();
    scene.apply(&still).unwrap();
    assert_eq!(scene.robots().len(), 22);
    eprintln!(
        "22 robots: full state {} bytes, delta (all moving) {} bytes, delta (nothing moved) {} bytes",
        full.len(),
        delta.len(),
        still.len()
    );
    assert!((60_000..200_000).contains(&full.len()));
    assert!((40_000..150_000).contains(&delta.len()));
}
