//! Open-loop gait replay with an oracle: after every step, chosen parts
//! of the robot's state are pulled towards the reference's recorded
//! state of that row, to see which error decides an outcome (whether a
//! walk falls, a get-up ends lying).
//!
//! ```text
//! cargo run --release -p rcss3d-tools --bin fit -- oracle [PREFIX] [PARTS] [ALPHA] [RON overrides]
//! cargo run --release -p rcss3d-tools --bin fit -- oracle g_walk yaw,xy 1
//! cargo run --release -p rcss3d-tools --bin fit -- oracle g_walk tilt 0.1 '(part_drag_as_forces: true)'
//! ```
//!
//! PARTS is a comma-separated list of `yaw` (torso heading and turning
//! rate), `tilt` (torso pitch and roll and their rates), `xy` (torso
//! position and velocity along the ground), `z` (torso height and
//! vertical velocity), `joints` (angles and rates), or `none` (a plain
//! replay). ALPHA is the fraction of the difference removed per step
//! (default 1: the reference's value). The correction acts only while the
//! reference's torso is above 0.25 m (the robot up), rows 1 on.
//!
//! Reading it: `tilt` and `z` act as an external support (they hold any
//! robot up against gravity), so a walk kept up by them says little;
//! `yaw`, `xy` and `joints` add no support, so a walk that stays up with
//! one of them names that error as the one that makes it fall.
//! With `TRACE=1` the torso's rotation error (in the reference's torso
//! frame: roll, pitch, yaw) and position error are printed every 10 rows
//! to stderr (`TRACE=all`: every row, with both feet's loads).

use crate::overrides;
use rcss3d_tools::replay;

use nalgebra::{UnitQuaternion, Vector3};
use rcss3d::sim::world::{PhysicsConfig, RobotState};
use std::f32::consts::PI;

/// Which parts of the state the oracle corrects, and by how much.
struct Oracle {
    yaw: bool,
    tilt: bool,
    xy: bool,
    z: bool,
    joints: bool,
    alpha: f32,
}

impl Oracle {
    fn is_active(&self) -> bool {
        self.yaw || self.tilt || self.xy || self.z || self.joints
    }

    /// Pulls `s` (ours) towards `r` (the reference's).
    fn correct(&self, s: &mut RobotState, r: &RobotState) {
        let a = self.alpha;
        let (our_roll, our_pitch, our_yaw) = s.torso.rotation.euler_angles();
        let (ref_roll, ref_pitch, ref_yaw) = r.torso.rotation.euler_angles();
        let (mut roll, mut pitch, mut yaw) = (our_roll, our_pitch, our_yaw);
        if self.yaw {
            let d = (ref_yaw - our_yaw + PI).rem_euclid(2.0 * PI) - PI;
            yaw += a * d;
            // The whole motion turns with the torso.
            let turn = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), a * d);
            s.linvel = turn * s.linvel;
            s.angvel = turn * s.angvel;
            s.angvel.z += a * (r.angvel.z - s.angvel.z);
        }
        if self.tilt {
            roll += a * (ref_roll - our_roll);
            pitch += a * (ref_pitch - our_pitch);
            s.angvel.x += a * (r.angvel.x - s.angvel.x);
            s.angvel.y += a * (r.angvel.y - s.angvel.y);
        }
        s.torso.rotation = UnitQuaternion::from_euler_angles(roll, pitch, yaw);
        let axes: &[usize] = match (self.xy, self.z) {
            (true, true) => &[0, 1, 2],
            (true, false) => &[0, 1],
            (false, true) => &[2],
            (false, false) => &[],
        };
        for &k in axes {
            let p = &mut s.torso.translation.vector[k];
            *p += a * (r.torso.translation.vector[k] - *p);
            s.linvel[k] += a * (r.linvel[k] - s.linvel[k]);
        }
        if self.joints {
            for (q, want) in s.joint_angles.iter_mut().zip(&r.joint_angles) {
                *q += a * (want - *q);
            }
            for (v, want) in s.joint_rates.iter_mut().zip(&r.joint_rates) {
                *v += a * (want - *v);
            }
        }
    }
}

/// Runs the subcommand with its arguments.
pub fn run(args: Vec<String>) {
    let prefix = args.first().cloned().unwrap_or_else(|| "g_walk".into());
    let parts = args.get(1).cloned().unwrap_or_else(|| "none".into());
    let has = |m: &str| parts.split(',').any(|x| x == m);
    let oracle = Oracle {
        yaw: has("yaw"),
        tilt: has("tilt"),
        xy: has("xy"),
        z: has("z"),
        joints: has("joints"),
        alpha: args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1.0),
    };
    let cfg: PhysicsConfig = args
        .get(3)
        .map_or_else(PhysicsConfig::default, |a| overrides::parse(a).1);
    let trace = std::env::var("TRACE").ok();
    for sc in replay::Scenario::all(&replay::gaits_dir(), &prefix) {
        let c = replay::compare(&sc, &run_with_oracle(&cfg, &sc, &oracle, trace.as_deref()));
        let fall = c.fall.0.map_or("-".to_string(), |t| format!("{t:.2} s"));
        print!(
            "{}: fall {fall}, walked {:.2} m of {:.2}",
            c.name, c.walked.0, c.walked.1
        );
        if c.name.starts_with("g_kick") {
            print!(", ball {:.2} m of {:.2}", c.ball_moved.0, c.ball_moved.1);
        }
        if c.name.starts_with("g_getup") {
            print!(", upright {}", replay::ends_upright(&c));
        }
        println!();
    }
}

/// Replays one scenario with the oracle's corrections after every step.
fn run_with_oracle(
    cfg: &PhysicsConfig,
    sc: &replay::Scenario,
    oracle: &Oracle,
    trace: Option<&str>,
) -> replay::Run {
    let (mut w, h) = replay::start(cfg, &sc.script);
    let m = w.robot_model(h).clone();
    let names = replay::joint_names(&m);
    let rows = sc.trace.len();
    let mut out = replay::Run::new(&m, rows);
    let ref_z = sc.trace.column("torso_z");
    let (ref_lf, ref_rf) = (
        replay::ref_foot_fz(&sc.trace, "lf"),
        replay::ref_foot_fz(&sc.trace, "rf"),
    );
    for row in 0..rows {
        replay::apply(&mut w, h, &sc.script, row);
        w.step();
        let reference = (row >= 1).then(|| replay::recorded_state(sc, &names, row));
        if let (true, Some(r)) = (oracle.is_active() && ref_z[row] > 0.25, &reference) {
            if let Some(mut s) = w.robot_state(h) {
                oracle.correct(&mut s, r);
                if let Err(e) = w.set_robot_state(h, &s) {
                    panic!("{}: {e}", sc.name);
                }
            }
        }
        if let (Some(mode), Some(r)) = (trace, &reference) {
            if mode == "all" || row % 10 == 0 {
                let t = w.part_pose(h, m.torso);
                let loads = replay::foot_loads(&w, h);
                let q = r.torso.rotation;
                let e = q.inverse() * (t.rotation * q.inverse()).scaled_axis();
                let d = q.inverse() * (t.translation.vector - r.torso.translation.vector);
                eprintln!(
                    "{} row {row} feet L {:.0}/{:.0} R {:.0}/{:.0} N, rot err roll {:.2} pitch {:.2} yaw {:.2} deg, pos err {:.3} {:.3} {:.3} m",
                    sc.name,
                    loads.0,
                    ref_lf[row],
                    loads.1,
                    ref_rf[row],
                    e.x.to_degrees(),
                    e.y.to_degrees(),
                    e.z.to_degrees(),
                    d.x,
                    d.y,
                    d.z
                );
            }
        }
        out.record(&w, h, Vector3::zeros());
    }
    out
}
