//! A robot's nodes: body parts in the monitor's order, meshes and
//! materials (team, number, type).

use super::emit::{Emitter, Identity, Material};
use super::{isometry_matrix, IDENTITY, RM};
use crate::sim::snapshot::RobotSnapshot;

/// The Nao's parts in monitor order (docs/protocol.md#monitor-scene-content):
/// torso, neck, head, right arm, left arm, right leg, left leg; toes only for
/// robots that have them.
#[cfg_attr(not(test), allow(dead_code))]
pub(super) const PARTS: [&str; 25] = [
    "torso",
    "neck",
    "head",
    "rshoulder",
    "rupperarm",
    "relbow",
    "rlowerarm",
    "lshoulder",
    "lupperarm",
    "lelbow",
    "llowerarm",
    "rhip1",
    "rhip2",
    "rthigh",
    "rshank",
    "rankle",
    "rfoot",
    "rtoe",
    "lhip1",
    "lhip2",
    "lthigh",
    "lshank",
    "lankle",
    "lfoot",
    "ltoe",
];

pub(super) fn part_slot(name: &str) -> Option<usize> {
    // A `match` on the bytes compiles to a length switch plus a compare,
    // much cheaper than scanning `PARTS` for every part of every robot.
    Some(match name {
        "torso" | "body" => 0,
        "neck" => 1,
        "head" => 2,
        "rshoulder" => 3,
        "rupperarm" => 4,
        "relbow" => 5,
        "rlowerarm" => 6,
        "lshoulder" => 7,
        "lupperarm" => 8,
        "lelbow" => 9,
        "llowerarm" => 10,
        "rhip1" => 11,
        "rhip2" => 12,
        "rthigh" => 13,
        "rshank" => 14,
        "rankle" => 15,
        "rfoot" => 16,
        "rtoe" => 17,
        "lhip1" => 18,
        "lhip2" => 19,
        "lthigh" => 20,
        "lshank" => 21,
        "lankle" => 22,
        "lfoot" => 23,
        "ltoe" => 24,
        _ => return None,
    })
}

/// For each canonical part, the index of its pose in `robot.parts`, and
/// the bit mask of parts present.
pub(super) fn part_slots(robot: &RobotSnapshot) -> ([Option<usize>; 25], u32) {
    let mut slots = [None; 25];
    let mut mask = 0u32;
    for (i, p) in robot.parts.iter().enumerate() {
        if let Some(s) = part_slot(&p.name) {
            if slots[s].is_none() {
                slots[s] = Some(i);
                mask |= 1 << s;
            }
        }
    }
    (slots, mask)
}

pub(super) const BODY: [&str; 5] = [
    "models/naobody0.obj",
    "models/naobody1.obj",
    "models/naobody2.obj",
    "models/naobody3.obj",
    "models/naobody4.obj",
];
pub(super) const RUPPERARM: [&str; 5] = [
    "models/rupperarm0.obj",
    "models/rupperarm1.obj",
    "models/rupperarm2.obj",
    "models/rupperarm3.obj",
    "models/rupperarm4.obj",
];
pub(super) const LUPPERARM: [&str; 5] = [
    "models/lupperarm0.obj",
    "models/lupperarm1.obj",
    "models/lupperarm2.obj",
    "models/lupperarm3.obj",
    "models/lupperarm4.obj",
];
pub(super) const RSHANK: [&str; 5] = [
    "models/rshank0.obj",
    "models/rshank1.obj",
    "models/rshank2.obj",
    "models/rshank3.obj",
    "models/rshank4.obj",
];
pub(super) const LSHANK: [&str; 5] = [
    "models/lshank0.obj",
    "models/lshank1.obj",
    "models/lshank2.obj",
    "models/lshank3.obj",
    "models/lshank4.obj",
];

/// Visual scales of the type-4 foot and toe, both drawn with the foot mesh
/// (docs/protocol.md#monitor-scene-content): y scale 0.08 × (0.16 − ℓ) / 0.16
/// for the foot and 0.08 × ℓ / (0.16 − ℓ) for the toe, with ℓ = `ToeLength` as
/// the reference's visual files round it (0.035518), which gives exactly the
/// reference's printed `0.062241` and `0.0228259`.
pub(super) const TOE_FOOT_SCALE: [f32; 3] = [0.08, 0.062_241, 0.08];
pub(super) const TOE_SCALE: [f32; 3] = [0.08, 0.022_825_9, 0.04];

pub(super) const TEAM_WHITE: [Material; 2] = [Material::Team, Material::Name("naowhite")];
pub(super) const TEAM_TYPE_WHITE: [Material; 3] =
    [Material::Team, Material::Type, Material::Name("naowhite")];
pub(super) const NUM_TEAM_WHITE: [Material; 3] =
    [Material::Num, Material::Team, Material::Name("naowhite")];

pub(super) fn robot_nodes(robot: &RobotSnapshot, e: &mut Emitter<'_>) {
    let (slots, _) = part_slots(robot);
    let t = usize::from(robot.robot_type.min(4));
    let who = Identity {
        side: robot.side,
        unum: robot.unum,
        robot_type: robot.robot_type.min(4),
    };
    let toe = t == 4 && slots[17].is_some();
    let foot_scale = if toe { TOE_FOOT_SCALE } else { [0.08; 3] };
    let look = Look {
        t,
        who,
        foot_scale,
        selected: robot.selected,
    };
    e.open_trf(&IDENTITY);
    for (slot, pose_index) in slots.iter().enumerate() {
        let Some(pose) = pose_index.and_then(|i| robot.parts.get(i)) else {
            continue;
        };
        e.open_trf(&isometry_matrix(&pose.pose));
        part_node(e, slot, &look);
        e.close();
    }
    e.close();
}

/// How one robot's parts look: its type, identity and foot scale.
struct Look {
    /// The robot type, at most 4.
    t: usize,
    who: Identity,
    foot_scale: [f32; 3],
    selected: bool,
}

/// The meshes of the part in monitor slot `slot`, in the part's frame.
fn part_node(e: &mut Emitter<'_>, slot: usize, look: &Look) {
    match slot {
        0..=2 => trunk_node(e, slot, look),
        _ => limb_node(e, slot, look),
    }
}

/// Torso (with the selection marker), neck, head.
fn trunk_node(e: &mut Emitter<'_>, slot: usize, look: &Look) {
    match slot {
        0 => {
            e.open_trf(&RM);
            e.static_mesh(
                true,
                false,
                BODY[look.t],
                [0.1; 3],
                &[
                    Material::Num,
                    Material::Team,
                    Material::Type,
                    Material::Name("naowhite"),
                ],
                &look.who,
            );
            e.close();
            e.open_trf(&IDENTITY);
            // The selection marker.
            e.smn(
                look.selected,
                true,
                "StdUnitCylinder 1 1",
                [0.2, 0.2, 0.02],
                "matSelect",
            );
            e.close();
        }
        1 => e.smn(
            true,
            false,
            "StdCapsule 0.015 0.08",
            [1.0; 3],
            "matDarkGrey",
        ),
        2 => {
            e.open_trf(&RM);
            e.static_mesh(
                true,
                false,
                "models/naohead.obj",
                [0.1; 3],
                &[
                    Material::Team,
                    Material::Name("naoblack"),
                    Material::Name("naogrey"),
                    Material::Name("naowhite"),
                ],
                &look.who,
            );
            e.close();
        }
        _ => {}
    }
}

/// Arms, legs, feet and toes; joints as small spheres.
fn limb_node(e: &mut Emitter<'_>, slot: usize, look: &Look) {
    let joint = |e: &mut Emitter<'_>, mat: &str| {
        e.smn(true, false, "StdUnitSphere", [0.01; 3], mat);
    };
    match slot {
        3 | 5 | 7 | 9 | 11 | 12 | 18 | 19 => joint(e, "matYellow"),
        15 | 22 => joint(e, "matRed"),
        4 => e.static_mesh(
            true,
            false,
            RUPPERARM[look.t],
            [0.07; 3],
            &TEAM_TYPE_WHITE,
            &look.who,
        ),
        8 => e.static_mesh(
            true,
            false,
            LUPPERARM[look.t],
            [0.07; 3],
            &TEAM_TYPE_WHITE,
            &look.who,
        ),
        6 => e.static_mesh(
            true,
            false,
            "models/rlowerarm.obj",
            [0.05; 3],
            &TEAM_WHITE,
            &look.who,
        ),
        10 => e.static_mesh(
            true,
            false,
            "models/llowerarm.obj",
            [0.05; 3],
            &TEAM_WHITE,
            &look.who,
        ),
        13 => e.static_mesh(
            true,
            false,
            "models/rthigh.obj",
            [0.07; 3],
            &NUM_TEAM_WHITE,
            &look.who,
        ),
        20 => e.static_mesh(
            true,
            false,
            "models/lthigh.obj",
            [0.07; 3],
            &TEAM_WHITE,
            &look.who,
        ),
        14 => e.static_mesh(
            true,
            false,
            RSHANK[look.t],
            [0.08; 3],
            &TEAM_TYPE_WHITE,
            &look.who,
        ),
        21 => e.static_mesh(
            true,
            false,
            LSHANK[look.t],
            [0.08; 3],
            &TEAM_TYPE_WHITE,
            &look.who,
        ),
        16 => e.static_mesh(
            true,
            false,
            "models/rfoot.obj",
            look.foot_scale,
            &TEAM_WHITE,
            &look.who,
        ),
        23 => e.static_mesh(
            true,
            false,
            "models/lfoot.obj",
            look.foot_scale,
            &TEAM_WHITE,
            &look.who,
        ),
        17 => e.static_mesh(
            true,
            false,
            "models/rfoot.obj",
            TOE_SCALE,
            &TEAM_WHITE,
            &look.who,
        ),
        _ => e.static_mesh(
            true,
            false,
            "models/lfoot.obj",
            TOE_SCALE,
            &TEAM_WHITE,
            &look.who,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{part_slot, PARTS};

    #[test]
    pub(super) fn part_slots_follow_the_monitor_order() {
        for (i, name) in PARTS.iter().enumerate() {
            assert_eq!(part_slot(name), Some(i));
        }
        assert_eq!(part_slot("body"), Some(0));
        assert_eq!(part_slot("tail"), None);
    }
}
