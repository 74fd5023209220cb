//! The reference's joints stretch under fast motion (its first-order
//! integration moves the two copies of a hinge's anchor apart, and its
//! joint rows remove a fifth of that per step). The world can emulate it
//! (`joints.stretch_erp`, off by default: see `getup.rs`): each joint
//! carries a separation, and either the parts' collision shapes and
//! reported poses are shifted by the sum along their chain
//! (`stretch_moves: Shapes`) or each hinge's anchor in its parent is, so
//! that the bodies below it move with their masses (`Bodies`).

use std::sync::Arc;

use nalgebra::{Isometry3, Vector3};
use rcss3d::sim::model::RobotModel;
use rcss3d::sim::world::{
    joint_drift, PhysicsConfig, RobotHandle, RobotState, StretchMoves, World,
};

use super::util::{reference_setup, world_with};
use rcss3d_tools::replay::{gaits_dir, joint_names, part_poses, recorded_state, start, Scenario};

/// The recorded walk g_walk_t0 with what the stretch tests need.
struct Walk {
    w: World,
    h: RobotHandle,
    m: Arc<RobotModel>,
    /// The feet's part indices (left, right).
    feet: Vec<usize>,
    /// The recorded state of every row (row 0, the beam's pose with no
    /// step before it, takes row 1's).
    states: Vec<RobotState>,
    /// The parts' poses by forward kinematics of each recorded row.
    poses: Vec<Vec<Isometry3<f32>>>,
    /// Per row: the feet's recorded positions.
    recorded_feet: Vec<Vec<Vector3<f32>>>,
}

/// The physics with the joint stretch emulation on, at the reference's
/// ERP, moving what `moves` says.
fn stretched(moves: StretchMoves) -> PhysicsConfig {
    let mut cfg = PhysicsConfig::default();
    cfg.joints.stretch_erp = Some(0.2);
    cfg.joints.stretch_moves = moves;
    cfg
}

fn recorded_walk(moves: StretchMoves) -> Walk {
    let sc = Scenario::load(&gaits_dir(), "g_walk_t0");
    let parts = sc.parts.as_ref().expect("the walk has part positions");
    let (mut w, h) = start(&stretched(moves), &sc.script);
    let m = w.robot_model(h).clone();
    let names = joint_names(&m);
    let feet: Vec<usize> = ["lfoot", "rfoot"]
        .iter()
        .filter_map(|n| m.parts.iter().position(|p| &*p.name == *n))
        .collect();
    let states: Vec<RobotState> = (0..sc.trace.len())
        .map(|i| recorded_state(&sc, &names, i.max(1)))
        .collect();
    let n = states.len().min(parts.len());
    let poses = part_poses(&mut w, h, &states[..n]);
    let column = |f: usize, axis: &str| parts.column(&format!("{}_{axis}", m.parts[f].name));
    let columns: Vec<[Vec<f64>; 3]> = feet
        .iter()
        .map(|&f| [column(f, "x"), column(f, "y"), column(f, "z")])
        .collect();
    let recorded_feet = (0..n)
        .map(|i| {
            columns
                .iter()
                .map(|c| Vector3::new(c[0][i], c[1][i], c[2][i]).cast::<f32>())
                .collect()
        })
        .collect();
    Walk {
        w,
        h,
        m,
        feet,
        states,
        poses,
        recorded_feet,
    }
}

#[test]
fn the_reference_legs_stretch_as_its_first_order_integration_predicts() {
    feet_where_the_stretch_puts_them(StretchMoves::Shapes);
}

/// The same with the stretch moving the bodies: the feet themselves (not
/// only their shapes) sit where the reference's do.
#[test]
fn stretched_bodies_put_the_feet_where_the_references_are() {
    feet_where_the_stretch_puts_them(StretchMoves::Bodies);
}

/// Replays the recorded walk's states with the separations its recorded
/// rotations build up and compares the feet with the reference's.
fn feet_where_the_stretch_puts_them(moves: StretchMoves) {
    let Walk {
        mut w,
        h,
        m,
        feet,
        mut states,
        poses,
        recorded_feet,
    } = recorded_walk(moves);
    let n = poses.len();
    let mut e = vec![Vector3::zeros(); m.joints.len()];
    let (mut rigid_sq, mut stretched_sq, mut count) = (0.0f64, 0.0f64, 0usize);
    for i in 2..n {
        for (e, d) in e
            .iter_mut()
            .zip(joint_drift(&m, &poses[i - 1], &poses[i], 0.02))
        {
            *e = *e * 0.8 + d;
        }
        // Walking only: the first second is the stand before the walk.
        if i < 60 {
            continue;
        }
        states[i].joint_separations = e.clone();
        w.set_robot_state(h, &states[i]).expect("a recorded state");
        for (k, &f) in feet.iter().enumerate() {
            let recorded = recorded_feet[i][k];
            let stretched = w.part_pose(h, f).translation.vector;
            let rigid = poses[i][f].translation.vector;
            rigid_sq += (recorded - rigid).norm_squared() as f64;
            stretched_sq += (recorded - stretched).norm_squared() as f64;
            count += 1;
        }
    }
    let rigid = 1000.0 * (rigid_sq / count as f64).sqrt();
    let stretched = 1000.0 * (stretched_sq / count as f64).sqrt();
    eprintln!(
        "feet vs the reference's, RMS: rigid legs {rigid:.2} mm, stretched {stretched:.2} mm"
    );
    assert!(
        rigid > 3.0,
        "the reference's legs should be visibly longer than the angles say ({rigid:.2} mm)"
    );
    assert!(
        stretched < 1.0,
        "stretched feet {stretched:.2} mm from the reference's (rigid {rigid:.2} mm)"
    );
}

/// A stretched leg is longer for the contacts too: feet whose ankles are
/// separated by a few mm push the robot up. (With the stretch on the
/// bodies the feet on the ground stay and the torso rises directly: the
/// unit tests of `crates/core/src/sim/world/stretch.rs`.)
#[test]
fn a_stretched_leg_stands_longer() {
    a_leg_stretched_by(StretchMoves::Shapes);
}

/// Separates both ankles by 4 mm downwards in a standing robot and checks
/// that the torso rises by at least 1.5 mm more than without.
fn a_leg_stretched_by(moves: StretchMoves) {
    let torso_after = |separation: f32| {
        let mut w = world_with(&stretched(moves));
        let h = reference_setup(&mut w, 0);
        for _ in 0..50 {
            w.step();
        }
        let m = w.robot_model(h).clone();
        let mut s = w.robot_state(h).expect("an articulated robot");
        for (k, j) in m.joints.iter().enumerate() {
            if ["lfoot", "rfoot"].contains(&&*m.parts[j.child].name) {
                s.joint_separations[k] = Vector3::new(0.0, 0.0, -separation);
            }
        }
        w.set_robot_state(h, &s).expect("set the state");
        let z0 = w.part_pose(h, m.torso).translation.z;
        let rise: Vec<f32> = (0..3)
            .map(|_| {
                w.step();
                w.part_pose(h, m.torso).translation.z - z0
            })
            .collect();
        rise
    };
    let rigid = torso_after(0.0);
    let stretched = torso_after(0.004);
    eprintln!("torso rise per step: rigid {rigid:.5?}, ankles 4 mm apart {stretched:.5?}");
    let most = |v: &[f32]| v.iter().copied().fold(f32::MIN, f32::max);
    assert!(
        most(&stretched) - most(&rigid) > 0.0015,
        "4 mm longer legs raised the torso by only {:.2} mm",
        1000.0 * (most(&stretched) - most(&rigid))
    );
}
