//! The field (static scene: lines, goals, skybox) and the dynamic scene
//! (ball, then each robot).

use super::emit::{Emitter, Material, NO_ONE};
use super::robot::robot_nodes;
use super::{isometry_matrix, translation, Mat, IDENTITY, RM};
use crate::monitor::config::FieldParams;
use crate::sim::snapshot::{RobotSnapshot, WorldSnapshot};

/// Nodes 1–35 of the scene (docs/protocol.md#monitor-scene-content): lights,
/// field, skybox, goals, walls, flags, lines.
pub(super) fn static_scene(f: &FieldParams, e: &mut Emitter<'_>) {
    lights_field_sky(f, e);
    goals(f, e);
    walls_and_markers(f, e);
}

/// The two lights, the field and the skybox.
fn lights_field_sky(f: &FieldParams, e: &mut Emitter<'_>) {
    let (l, w) = (f.field_length, f.field_width);
    e.open_trf(&translation(-10.0, 10.0, 10.0));
    e.light(0.8);
    e.close();
    e.open_trf(&translation(10.0, -10.0, 10.0));
    e.light(0.0);
    e.close();
    e.open_trf(&RM);
    e.static_mesh(
        true,
        false,
        "models/naosoccerfield.obj",
        [l / 12.0, 1.0, w / 8.0],
        &[Material::Name("None_rcs-naofield.png")],
        &NO_ONE,
    );
    e.close();
    e.open_trf(&RM);
    e.static_mesh(
        true,
        false,
        "models/skybox.obj",
        [10.0, 10.0, 10.0],
        &[
            Material::Name("Material_skyrender_0001.tif"),
            Material::Name("Material_skyrender_0002.tif"),
            Material::Name("Material_skyrender_0003.tif"),
            Material::Name("Material_skyrender_0004.tif"),
            Material::Name("Material_skyrender_0005.tif"),
            Material::Name("Material_skyrender_0006.tif"),
        ],
        &NO_ONE,
    );
    e.close();
}

/// The two goals, each with its net and posts.
fn goals(f: &FieldParams, e: &mut Emitter<'_>) {
    let l = f.field_length;
    let (gw, gd, gh) = (f.goal_width, f.goal_depth, f.goal_height);
    let goal_x = l / 2.0 + gd / 2.0;
    let left_goal = translation(-goal_x, 0.0, gh / 2.0);
    let right_goal: Mat = [
        -1.0,
        0.0,
        0.0,
        0.0,
        0.0,
        -1.0,
        0.0,
        0.0,
        0.0,
        0.0,
        1.0,
        0.0,
        goal_x,
        0.0,
        gh / 2.0,
        1.0,
    ];
    for (frame, mesh, mats) in [
        (
            left_goal,
            "models/leftgoal.obj",
            &[
                Material::Name("grey_naogoalnet.png"),
                Material::Name("yellow"),
            ][..],
        ),
        (
            right_goal,
            "models/rightgoal.obj",
            &[
                Material::Name("grey_naogoalnet.png"),
                Material::Name("sky-blue"),
                Material::Name("white"),
            ][..],
        ),
    ] {
        e.open_trf(&frame);
        e.open_trf(&[
            0.0,
            1.0,
            0.0,
            0.0,
            0.0,
            0.0,
            1.0,
            0.0,
            1.0,
            0.0,
            0.0,
            0.0,
            gd / 2.0,
            0.0,
            -gh / 2.0,
            1.0,
        ]);
        e.static_mesh(
            true,
            true,
            mesh,
            [gw + 0.08, gh + 0.08, gd + 0.08],
            mats,
            &NO_ONE,
        );
        e.close();
        e.empty_trf(&translation(0.0, -(gw / 2.0 + 0.02), 0.0));
        e.empty_trf(&translation(0.0, gw / 2.0 + 0.02, 0.0));
        e.empty_trf(&[
            0.866_025_4,
            0.0,
            -0.5,
            0.0,
            0.0,
            1.0,
            0.0,
            0.0,
            0.5,
            0.0,
            0.866_025_4,
            0.0,
            -0.1 * gd,
            0.0,
            0.0,
            1.0,
        ]);
        e.empty_trf(&translation(gd / 2.0, gw / 2.0, gh / 2.0));
        e.empty_trf(&translation(gd / 2.0, -gw / 2.0, gh / 2.0));
        e.close();
    }
}

/// The walls around the field, the corner flags and the empty transforms
/// that stand for the lines.
fn walls_and_markers(f: &FieldParams, e: &mut Emitter<'_>) {
    let (l, w) = (f.field_length, f.field_width);
    let wall_x = l / 2.0 + 0.333 * l;
    let wall_y = w / 2.0 + 0.75 * w;
    for (m, s) in [
        (translation(-wall_x, 0.0, 0.0), [1.0, 1.0 + 2.5 * w, 1.0]),
        (translation(wall_x, 0.0, 0.0), [1.0, 1.0 + 2.5 * w, 1.0]),
        (translation(0.0, wall_y, 0.0), [1.0 + 1.666 * l, 1.0, 1.0]),
        (translation(0.0, -wall_y, 0.0), [1.0 + 1.666 * l, 1.0, 1.0]),
    ] {
        e.open_trf(&m);
        e.smn(true, false, "StdUnitBox", s, "matGrey");
        e.close();
    }
    for (x, y) in [(-1.0, 1.0), (-1.0, -1.0), (1.0, 1.0), (1.0, -1.0)] {
        e.empty_trf(&translation(x * l / 2.0, y * w / 2.0, 0.0));
    }
    for _ in 0..21 {
        e.empty_trf(&IDENTITY);
    }
}

/// The ball (node 36) and one container per robot shown
/// (docs/protocol.md#monitor-scene-content).
pub(super) fn dynamic_scene<'r>(
    f: &FieldParams,
    snap: &WorldSnapshot,
    robots: impl Iterator<Item = &'r RobotSnapshot>,
    e: &mut Emitter<'_>,
) {
    ball_node(f.ball_radius, snap, e);
    for robot in robots {
        robot_nodes(robot, e);
    }
}

/// The ball's node (node 36 of the scene), of radius `r`.
pub(super) fn ball_node(r: f32, snap: &WorldSnapshot, e: &mut Emitter<'_>) {
    e.open_trf(&isometry_matrix(&snap.ball));
    e.static_mesh(
        true,
        false,
        "models/soccerball.obj",
        [r, r, r],
        &[Material::Name("soccerball_rcs-soccerball.png")],
        &NO_ONE,
    );
    e.close();
}
