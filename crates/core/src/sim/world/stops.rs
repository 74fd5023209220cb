//! Joint stops as the reference's engine has them (docs/physics.md#joint-stops),
//! an option (`physics.joints.reference_stops`).
//!
//! A stop is active for a whole step when the joint starts the step at or
//! beyond one of its limits. While it is active:
//! - the motor no longer holds the joint's speed: it pushes with a plain
//!   torque, the full maximum torque in the direction of the command when
//!   that points into the stop (a zero command pushes into the active
//!   stop), a small fraction of it (the fudge factor) when the command
//!   points away. A joint resting on a stop and commanded away is thus
//!   nearly free for that step: it moves as the rest of the body swings it;
//! - a one-sided row pushes the joint back into range: at least a fraction
//!   of the violation per step (the stop's error reduction) and at least
//!   the reflected speed when the joint moves into the stop (bounce).
//!
//! Inside its range the motor is a velocity constraint with no clamp at
//! the limits: a joint driven into a limit overshoots by what the command
//! asks beyond it, and the stop acts from the next step on. A joint driven
//! into its stop at full speed therefore chatters about it, as the
//! reference's do (a kick's hip pitch between 92° and 106° at its 100°
//! stop).
//!
//! Rapier's limit row corrects the whole violation it is given in one
//! step and only exists strictly beyond a limit, so the row's speed is set
//! through the limit handed to rapier for the step.

use super::config::JointStops;

/// Which stop of a joint is active.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stop {
    Low,
    High,
}

/// The stop that is active for a step starting at `angle` (rad), if any.
/// Limits with `lo > hi` are ignored, as the reference's engine does.
pub(super) fn active_stop(angle: f32, lo: f32, hi: f32) -> Option<Stop> {
    if lo > hi {
        None
    } else if angle <= lo {
        Some(Stop::Low)
    } else if angle >= hi {
        Some(Stop::High)
    } else {
        None
    }
}

/// The motor's plain torque (N·m, signed about the hinge axis) while a
/// stop is active, for speed command `command`.
pub(super) fn motor_torque(stop: Stop, command: f32, max_torque: f32, fudge: f32) -> f32 {
    let into = match stop {
        Stop::Low => -1.0,
        Stop::High => 1.0,
    };
    if command == 0.0 || command.signum() == into {
        into * max_torque
    } else {
        command.signum() * max_torque * fudge
    }
}

/// The limits to hand rapier for a step starting at `angle` with joint
/// rate `rate` (rad/s) against `stop`, so that its row drives the joint
/// away from the stop at least as fast as the reference's would: the
/// stops' `erp` of the violation removed per step of `dt`, a rate into
/// the stop reflected with their `bounce`. The active limit is moved
/// inside the angle by the travel that rapier's error correction
/// (`row_erp_inv_dt`) turns into that speed; the other limit stays.
pub(super) fn stop_row_limits(
    stop: Stop,
    angle: f32,
    (lo, hi): (f32, f32),
    rate: f32,
    stops: &JointStops,
    dt: f32,
    row_erp_inv_dt: f32,
) -> [f32; 2] {
    let (violation, rate_into) = match stop {
        Stop::Low => (lo - angle, -rate),
        Stop::High => (angle - hi, rate),
    };
    let away_speed = (stops.erp * violation.max(0.0) / dt).max(stops.bounce * rate_into.max(0.0));
    // Rapier only builds the row strictly beyond the limit: a joint that
    // rests exactly on its stop still gets a row that keeps it from going
    // further in.
    let inset = (away_speed / row_erp_inv_dt).max(MIN_INSET);
    match stop {
        Stop::Low => [angle + inset, hi],
        Stop::High => [lo, angle - inset],
    }
}

/// The least distance (rad) by which the limit handed to rapier lies
/// inside the angle, so that its row exists at all.
const MIN_INSET: f32 = 1e-6;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_is_active_at_and_beyond_a_limit_only() {
        assert_eq!(active_stop(0.5, -1.0, 1.0), None);
        assert_eq!(active_stop(1.0, -1.0, 1.0), Some(Stop::High));
        assert_eq!(active_stop(1.2, -1.0, 1.0), Some(Stop::High));
        assert_eq!(active_stop(-1.0, -1.0, 1.0), Some(Stop::Low));
        assert_eq!(active_stop(0.0, 1.0, -1.0), None);
    }

    #[test]
    fn the_motor_pushes_into_the_stop_with_full_torque_and_away_with_the_fudge() {
        assert_eq!(motor_torque(Stop::High, 2.0, 10.0, 1e-5), 10.0);
        assert_eq!(motor_torque(Stop::High, 0.0, 10.0, 1e-5), 10.0);
        assert_eq!(motor_torque(Stop::Low, 0.0, 10.0, 1e-5), -10.0);
        assert!((motor_torque(Stop::High, -2.0, 10.0, 1e-5) + 1e-4).abs() < 1e-9);
        assert!((motor_torque(Stop::Low, 3.0, 10.0, 1e-5) - 1e-4).abs() < 1e-9);
    }

    #[test]
    fn the_stop_row_removes_part_of_the_violation_or_reflects_the_rate() {
        let dt = 0.02;
        let close = |a: f32, b: f32| (a - b).abs() < 1e-6;
        // 0.01 rad beyond the high stop, at rest: 80 % of it in one step.
        let l = stop_row_limits(
            Stop::High,
            1.01,
            (-1.0, 1.0),
            0.0,
            &JointStops::default(),
            dt,
            1.0 / dt,
        );
        assert!(close(l[1], 1.01 - 0.008) && l[0] == -1.0, "{l:?}");
        // Moving into the low stop at 3 rad/s: reflected (0.06 rad a step).
        let l = stop_row_limits(
            Stop::Low,
            -1.0,
            (-1.0, 1.0),
            -3.0,
            &JointStops::default(),
            dt,
            1.0 / dt,
        );
        assert!(close(l[0], -1.0 + 0.06) && l[1] == 1.0, "{l:?}");
        // Without bounce, only the (zero) violation counts.
        let no_bounce = JointStops {
            bounce: 0.0,
            ..JointStops::default()
        };
        let l = stop_row_limits(Stop::Low, -1.0, (-1.0, 1.0), -3.0, &no_bounce, dt, 1.0 / dt);
        assert!(close(l[0], -1.0 + MIN_INSET), "{l:?}");
        // Resting exactly on the stop, moving away: a row that only holds.
        let l = stop_row_limits(
            Stop::High,
            1.0,
            (-1.0, 1.0),
            -0.5,
            &JointStops::default(),
            dt,
            1.0 / dt,
        );
        assert!(close(l[1], 1.0 - MIN_INSET), "{l:?}");
    }
}
