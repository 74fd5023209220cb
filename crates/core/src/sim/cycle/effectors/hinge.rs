//! Hinge-joint effectors (`he1`, `lle4`, ...): a joint's target speed,
//! set in the read phase.

use crate::command::HingeEffector;
use crate::sim::model::RobotModel;
use crate::sim::world::{RobotHandle, World};

/// Sets the target speed of the joint driven by `effector` (rad/s);
/// `false` if the robot type has no such effector.
pub(in crate::sim::cycle) fn set_speed(
    world: &mut World,
    robot: RobotHandle,
    model: &RobotModel,
    effector: HingeEffector,
    speed: f32,
) -> bool {
    match model.joint_of(effector) {
        Some(j) => {
            world.set_joint_speed(robot, j, speed);
            true
        }
        None => false,
    }
}
