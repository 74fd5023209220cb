//! Short-horizon prediction error against the reference gaits: the
//! robot is put into the reference's recorded state (torso pose, joint
//! angles, and the velocities of the last recorded step), stepped with
//! the recorded commands for a few cycles (the horizon), compared with
//! the reference's next rows, and put back into the reference's state
//! for the next window. Unlike a whole open-loop replay, where a small
//! difference grows until the robot falls somewhere else, this measures
//! the model error itself, smoothly in the settings: the objective for
//! fitting them.
//!
//! ```text
//! cargo run --release -p rcss3d-tools --bin fit -- onestep [PREFIX] [--horizon H] [--joints] [--steps] [--self] [--anchor-feet] [RON overrides]...
//! ```
//!
//! `--self` replaces the reference by our own open-loop replay (the
//! tool's check: the error must then be close to zero). `--joints`
//! prints the error per joint and scenario; `--steps` every window's
//! first step per joint as CSV: scenario, row, joint, then the commanded,
//! the reference's and our travel in that step (deg); with it also, per
//! step, the foot loads (`feet,…`) and the signed torso rotation error
//! about the field's axes (`rot,scenario,row,x,y,z`, deg), and per foot
//! sensor the reference's and our FRP (`frp,scenario,row,side,` then the
//! reference's centre x, y and force x, y, z in the foot frame, then
//! ours), and (with `--horizon 1`) per foot its rotation error against
//! the reference's foot rebuilt from the next window's start state
//! (`footrot,scenario,row,foot (0 left, 1 right),` the reference foot's
//! heading about z, then the error about the field's axes, deg). With the
//! joint stretch emulation on (`(joints: (stretch_erp: 0.2))`), each start state carries the
//! joints' separations the recorded motion built up, so our feet start
//! where the reference's are. `--anchor-feet` instead shifts the torso so
//! that they do (for settings with rigid joints). With `--steps` also,
//! per window start, the parts whose collider is within 5 mm of the
//! ground (`low,scenario,row,part:lowest point:centre above the
//! reference's,…`, mm).

use crate::overrides;
use rcss3d_tools::replay;

use nalgebra::Isometry3;
use nalgebra::{Matrix3, Rotation3, UnitQuaternion, Vector3};
use rcss3d::sim::model::ShapeDesc;
use rcss3d::sim::world::{joint_drift, PhysicsConfig, RobotHandle, RobotState, World};

/// A recorded trajectory in the form the tool needs: per row, torso
/// pose, joint angles (rad), foot loads, ball position.
struct Rows {
    torso_p: Vec<Vector3<f32>>,
    torso_r: Vec<UnitQuaternion<f32>>,
    joints: Vec<Vec<f32>>,
    foot_fz: Vec<(f32, f32)>,
    ball: Vec<Vector3<f32>>,
    /// Left and right foot centres, where recorded.
    feet: Option<Vec<[Vector3<f32>; 2]>>,
    /// Per row: the joints' separations the recorded motion built up
    /// (empty when the stretch emulation is off).
    separations: Vec<Vec<Vector3<f32>>>,
}

const H: f32 = 0.02;

impl Rows {
    fn from_trace(sc: &replay::Scenario, joint_names: &[String]) -> Rows {
        let tr = &sc.trace;
        let col = |n: &str| tr.column(n);
        let (x, y, z) = (col("torso_x"), col("torso_y"), col("torso_z"));
        let r: Vec<Vec<f64>> = (0..3)
            .flat_map(|i| (0..3).map(move |j| format!("torso_r{i}{j}")))
            .map(|n| col(&n))
            .collect();
        let (bx, by, bz) = (col("ball_x"), col("ball_y"), col("ball_z"));
        let jc: Vec<Vec<f64>> = joint_names
            .iter()
            .map(|n| col(&format!("hj_{n}")))
            .collect();
        let (lf, rf) = (replay::ref_foot_fz(tr, "lf"), replay::ref_foot_fz(tr, "rf"));
        let n = tr.len();
        Rows {
            torso_p: (0..n)
                .map(|i| Vector3::new(x[i], y[i], z[i]).cast())
                .collect(),
            torso_r: (0..n)
                .map(|i| {
                    let m = Matrix3::from_fn(|a, b| r[a * 3 + b][i] as f32);
                    UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix(&m))
                })
                .collect(),
            joints: (0..n)
                .map(|i| jc.iter().map(|c| (c[i] as f32).to_radians()).collect())
                .collect(),
            foot_fz: (0..n).map(|i| (lf[i] as f32, rf[i] as f32)).collect(),
            ball: (0..n)
                .map(|i| Vector3::new(bx[i], by[i], bz[i]).cast())
                .collect(),
            feet: sc.parts.as_ref().map(|p| {
                let c = |part: &str| -> Vec<Vector3<f32>> {
                    let (x, y, z) = (
                        p.column(&format!("{part}_x")),
                        p.column(&format!("{part}_y")),
                        p.column(&format!("{part}_z")),
                    );
                    (0..n.min(x.len()))
                        .map(|i| Vector3::new(x[i], y[i], z[i]).cast())
                        .collect()
                };
                let (l, r) = (c("lfoot"), c("rfoot"));
                l.into_iter().zip(r).map(|(l, r)| [l, r]).collect()
            }),
            separations: Vec::new(),
        }
    }

    fn from_run(run: &replay::Run) -> Rows {
        Rows {
            torso_p: run.torso.iter().map(|p| p.cast()).collect(),
            torso_r: run.torso_rot.clone(),
            joints: (0..run.torso.len())
                .map(|i| {
                    run.joints
                        .iter()
                        .map(|(_, v)| (v[i] as f32).to_radians())
                        .collect()
                })
                .collect(),
            foot_fz: run
                .foot_fz
                .iter()
                .map(|(l, r)| (*l as f32, *r as f32))
                .collect(),
            ball: run.ball.iter().map(|b| b.cast()).collect(),
            feet: Some(
                run.parts
                    .iter()
                    .map(|p| [p[1].cast(), p[2].cast()])
                    .collect(),
            ),
            separations: Vec::new(),
        }
    }

    /// The state at row `i` with the velocities of the step that ended
    /// there (positions are integrated with the new velocity, so the
    /// difference of two rows is that velocity).
    fn state(&self, i: usize) -> RobotState {
        let dr = self.torso_r[i] * self.torso_r[i - 1].inverse();
        RobotState {
            torso: nalgebra::Isometry3::from_parts(self.torso_p[i].into(), self.torso_r[i]),
            linvel: (self.torso_p[i] - self.torso_p[i - 1]) / H,
            angvel: dr.scaled_axis() / H,
            joint_angles: self.joints[i].clone(),
            joint_rates: self.joints[i]
                .iter()
                .zip(&self.joints[i - 1])
                .map(|(a, b)| (a - b) / H)
                .collect(),
            joint_separations: self.separations.get(i).cloned().unwrap_or_default(),
            held_angles: Vec::new(),
        }
    }

    /// The joints' separations at every row, from the recorded motion:
    /// the parts' poses by forward kinematics of each row, the drift of
    /// each step from them, the fraction `erp` removed per step (as the
    /// world does).
    fn add_separations(&mut self, w: &mut World, h: RobotHandle, erp: f32) {
        let m = w.robot_model(h).clone();
        let mut poses: Vec<Vec<Isometry3<f32>>> = Vec::with_capacity(self.torso_p.len());
        for i in 1..self.torso_p.len() {
            if let Err(e) = w.set_robot_state(h, &self.state(i)) {
                panic!("row {i}: {e}");
            }
            poses.push((0..m.parts.len()).map(|p| w.part_pose(h, p)).collect());
        }
        let mut e = vec![Vector3::zeros(); m.joints.len()];
        self.separations = vec![e.clone(), e.clone()];
        for pair in poses.windows(2) {
            for (e, d) in e.iter_mut().zip(joint_drift(&m, &pair[0], &pair[1], H)) {
                *e = *e * (1.0 - erp) + d;
            }
            self.separations.push(e.clone());
        }
    }
}

/// Errors at each horizon step, summed over windows.
#[derive(Default, Clone)]
struct Acc {
    n: usize,
    joint_sq: f64,
    pos: f64,
    rot: f64,
    force: f64,
    per_joint_sq: Vec<f64>,
}

/// Height above the ground plane of the lowest point of a part's collider
/// at `pose`, m (negative: below the plane).
fn lowest_point(pose: &Isometry3<f32>, shape: &ShapeDesc) -> f32 {
    match *shape {
        ShapeDesc::Box(sides) => (0..8)
            .map(|k| {
                let corner = Vector3::new(
                    if k & 1 == 0 { -0.5 } else { 0.5 } * sides.x,
                    if k & 2 == 0 { -0.5 } else { 0.5 } * sides.y,
                    if k & 4 == 0 { -0.5 } else { 0.5 } * sides.z,
                );
                (pose * nalgebra::Point3::from(corner)).z
            })
            .fold(f32::INFINITY, f32::min),
        ShapeDesc::Sphere { radius } => pose.translation.vector.z - radius,
        ShapeDesc::Capsule { radius, length } => {
            let half = pose.rotation * Vector3::new(0.0, 0.0, length / 2.0);
            pose.translation.vector.z - half.z.abs() - radius
        }
    }
}

/// Runs the subcommand with its arguments.
pub fn run(args: Vec<String>) {
    let mut prefix = String::new();
    let mut horizon = 5usize;
    let mut per_joint = false;
    let mut steps = false;
    let mut self_check = false;
    let mut anchor_feet = false;
    let mut configs: Vec<(String, PhysicsConfig)> = Vec::new();
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--horizon" => horizon = args.next().and_then(|v| v.parse().ok()).unwrap_or(5).max(1),
            "--joints" => per_joint = true,
            "--steps" => steps = true,
            "--self" => self_check = true,
            "--anchor-feet" => anchor_feet = true,
            _ if a.starts_with('(') => configs.push(overrides::parse(&a)),
            _ => prefix = a,
        }
    }
    let configs = overrides::or_defaults(configs);
    let prefix = if prefix.is_empty() {
        "g_".into()
    } else {
        prefix
    };
    let scenarios = replay::Scenario::all(&replay::gaits_dir(), &prefix);
    for (label, cfg) in &configs {
        let t0 = std::time::Instant::now();
        let mut kinds: Vec<(String, Vec<Acc>)> = Vec::new();
        let mut lines = Vec::new();
        for sc in &scenarios {
            let accs = evaluate(
                cfg,
                sc,
                horizon,
                (self_check, anchor_feet),
                (per_joint, steps),
                &mut lines,
            );
            let kind = sc.name.split('_').nth(1).unwrap_or("").to_string();
            match kinds.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, a)) => {
                    for (x, y) in a.iter_mut().zip(&accs) {
                        x.n += y.n;
                        x.joint_sq += y.joint_sq;
                        x.pos += y.pos;
                        x.rot += y.rot;
                        x.force += y.force;
                    }
                }
                None => kinds.push((kind, accs)),
            }
        }
        for l in &lines {
            println!("{l}");
        }
        let mut s = format!("{label} ({:.1} s):", t0.elapsed().as_secs_f64());
        for (k, a) in &kinds {
            let f = |x: &Acc| {
                let n = x.n.max(1) as f64;
                format!(
                    "{:.3}°/{:.1}mm/{:.2}°/{:.1}N",
                    (x.joint_sq / n).sqrt(),
                    1000.0 * x.pos / n,
                    x.rot / n,
                    x.force / n
                )
            };
            s.push_str(&format!(
                "  {k}: 1 step {} | {} steps {}",
                f(&a[0]),
                horizon,
                f(&a[horizon - 1])
            ));
        }
        println!("{s}");
    }
}

/// Runs the windows of one scenario; returns the accumulated errors per
/// horizon step.
fn evaluate(
    cfg: &PhysicsConfig,
    sc: &replay::Scenario,
    horizon: usize,
    (self_check, anchor_feet): (bool, bool),
    (per_joint, steps): (bool, bool),
    lines: &mut Vec<String>,
) -> Vec<Acc> {
    let (mut w, h) = replay::start(cfg, &sc.script);
    let m = w.robot_model(h).clone();
    let names = replay::joint_names(&m);
    let part = |name: &str| match m.parts.iter().position(|p| &*p.name == name) {
        Some(i) => i,
        None => panic!("no part {name}"),
    };
    let (lfoot, rfoot) = (part("lfoot"), part("rfoot"));
    let mut rows = if self_check {
        Rows::from_run(&replay::run(cfg, &sc.script, sc.trace.len()))
    } else {
        Rows::from_trace(sc, &names)
    };
    if let Some(erp) = cfg.joints.stretch_erp.filter(|e| *e > 0.0) {
        rows.add_separations(&mut w, h, erp);
    }
    let n = rows.torso_p.len();
    let frp_cols = reference_frp(sc, n);
    let mut accs = vec![
        Acc {
            per_joint_sq: vec![0.0; names.len()],
            ..Acc::default()
        };
        horizon
    ];
    // Row index i is the state after step i + 1; the commands of script
    // step i + 1 act on the step to row index i + 1.
    let mut i = 1;
    // Run up to the first window with the recorded commands so the motor
    // state (held angles) is the replay's.
    replay::apply(&mut w, h, &sc.script, 0);
    w.step();
    // Our feet's rotations after a window's first step, for the
    // `footrot,` lines of the next window (which starts at that row).
    let mut prev_feet: Option<(usize, [UnitQuaternion<f32>; 2])> = None;
    while i + horizon < n {
        let mut state = rows.state(i);
        if let Err(e) = w.set_robot_state(h, &state) {
            panic!("{}: {e}", sc.name);
        }
        if let (true, Some((prow, ours))) = (steps, prev_feet.take()) {
            if prow == i {
                footrot_lines(lines, sc, &w, h, [lfoot, rfoot], ours, i);
            }
        }
        if let (true, Some(feet)) = (anchor_feet, rows.feet.as_ref()) {
            // The reference's joints give a little under fast motion (its
            // legs are up to several mm longer than the angles say): move
            // our torso so that the feet are where the reference's are.
            let ours = [lfoot, rfoot].map(|p| w.part_pose(h, p).translation.vector);
            let d = (ours[0] - feet[i][0] + ours[1] - feet[i][1]) / 2.0;
            state.torso.translation.vector -= d;
            if let Err(e) = w.set_robot_state(h, &state) {
                panic!("{}: {e}", sc.name);
            }
        }
        if steps {
            lines.push(low_line(sc, &w, h, &m, i));
        }
        if rows.ball[i].iter().all(|x| x.is_finite()) {
            w.set_ball_position(rows.ball[i]);
            w.set_ball_velocity((rows.ball[i] - rows.ball[i - 1]) / H);
        }
        for (k, a) in accs.iter_mut().enumerate() {
            let row = i + 1 + k;
            replay::apply(&mut w, h, &sc.script, row);
            w.step();
            a.n += 1;
            for (j, want) in rows.joints[row].iter().enumerate() {
                let e = (w.joint_angle_deg(h, j) as f64) - (want.to_degrees() as f64);
                a.joint_sq += e * e / names.len() as f64;
                a.per_joint_sq[j] += e * e;
                if steps && k == 0 {
                    let before = rows.joints[row - 1][j].to_degrees();
                    lines.push(format!(
                        "step,{},{row},{},{:.4},{:.4},{:.4}",
                        sc.name,
                        names[j],
                        w.joint_target(h, j).to_degrees() * H,
                        want.to_degrees() - before,
                        w.joint_angle_deg(h, j) - before
                    ));
                }
            }
            let t = w.part_pose(h, m.torso);
            a.pos += (t.translation.vector - rows.torso_p[row]).norm() as f64;
            a.rot += (t.rotation.angle_to(&rows.torso_r[row]) as f64).to_degrees();
            if steps {
                lines.push(rot_line(sc, row, &t.rotation, &rows.torso_r[row]));
            }
            let got = replay::foot_loads(&w, h);
            if steps && k == 0 {
                prev_feet = Some((row, [lfoot, rfoot].map(|p| w.part_pose(h, p).rotation)));
                lines.push(format!(
                    "feet,{},{row},{:.1},{:.1},{:.1},{:.1}",
                    sc.name, rows.foot_fz[row].0, rows.foot_fz[row].1, got.0, got.1
                ));
                frp_lines(lines, sc, &w, h, &m, &frp_cols, row);
            }
            a.force += ((got.0 - rows.foot_fz[row].0).abs() + (got.1 - rows.foot_fz[row].1).abs())
                as f64
                / 2.0;
        }
        // Windows follow each other, so the solver's memory (warm start,
        // held angles, last contacts) is that of a continuous run.
        i += horizon;
    }
    if per_joint {
        lines.push(per_joint_line(sc, &names, &accs[0]));
    }
    accs
}

/// The reference's foot sensors (centre x, y and force x, y, z in the
/// foot's frame) for the `frp,` lines; NaN where a foot has no contact.
fn reference_frp(sc: &replay::Scenario, n: usize) -> [[Vec<f64>; 5]; 2] {
    ["lf", "rf"].map(|side| {
        ["cx", "cy", "fx", "fy", "fz"].map(|c| {
            let name = format!("frp_{side}_{c}");
            if sc.trace.has(&name) {
                sc.trace.column(&name)
            } else {
                vec![f64::NAN; n]
            }
        })
    })
}

/// The `footrot,` lines: our feet's rotations `ours` after the last
/// window's first step against the reference's rebuilt at row `i`.
fn footrot_lines(
    lines: &mut Vec<String>,
    sc: &replay::Scenario,
    w: &World,
    h: RobotHandle,
    feet: [usize; 2],
    ours: [UnitQuaternion<f32>; 2],
    i: usize,
) {
    for (k, p) in feet.into_iter().enumerate() {
        // The reference's foot, rebuilt from its state at this row.
        let refr = w.part_pose(h, p).rotation;
        let e = (ours[k] * refr.inverse()).scaled_axis();
        lines.push(format!(
            "footrot,{},{i},{k},{:.3},{:.3},{:.3},{:.3}",
            sc.name,
            refr.euler_angles().2.to_degrees(),
            e.x.to_degrees(),
            e.y.to_degrees(),
            e.z.to_degrees()
        ));
    }
}

/// The `low,` line: which parts touch or nearly touch the ground as the
/// window at row `i` starts.
fn low_line(
    sc: &replay::Scenario,
    w: &World,
    h: RobotHandle,
    m: &rcss3d::sim::model::RobotModel,
    i: usize,
) -> String {
    // Which parts touch or nearly touch the ground as the window
    // starts: name and lowest point, mm.
    let mut l = format!("low,{},{i}", sc.name);
    for (p, desc) in m.parts.iter().enumerate() {
        let Some(shape) = desc.collider else { continue };
        let pose = w.part_pose(h, p);
        let z = lowest_point(&pose, &shape);
        if z < 0.005 {
            // And how far our rebuilt part centre is above the
            // reference's recorded one, mm.
            let col = format!("{}_z", desc.name);
            let off = match &sc.parts {
                Some(t) if t.has(&col) => {
                    (pose.translation.vector.z as f64 - t.column(&col)[i]) * 1e3
                }
                _ => f64::NAN,
            };
            l.push_str(&format!(",{}:{:.2}:{off:.2}", desc.name, z * 1e3));
        }
    }
    l
}

/// The `frp,` lines at `row`: the reference's foot sensors against ours.
fn frp_lines(
    lines: &mut Vec<String>,
    sc: &replay::Scenario,
    w: &World,
    h: RobotHandle,
    m: &rcss3d::sim::model::RobotModel,
    frp_cols: &[[Vec<f64>; 5]; 2],
    row: usize,
) {
    for (k, side) in ["lf", "rf"].iter().enumerate() {
        let reference = frp_cols[k].each_ref().map(|c| c[row]);
        let sensor = m.foot_sensors.iter().position(|s| &*s.name == *side);
        let (c, f) = sensor.and_then(|i| w.foot_force(h, i)).unwrap_or_default();
        lines.push(format!(
            "frp,{},{row},{side},{:.2},{:.2},{:.1},{:.1},{:.1},{:.3},{:.3},{:.1},{:.1},{:.1}",
            sc.name,
            reference[0],
            reference[1],
            reference[2],
            reference[3],
            reference[4],
            c.x,
            c.y,
            f.x,
            f.y,
            f.z
        ));
    }
}

/// The 1-step RMS error of each joint, one line.
fn per_joint_line(sc: &replay::Scenario, names: &[String], a: &Acc) -> String {
    let mut l = format!("{} 1-step RMS per joint (deg):", sc.name);
    for (j, n) in names.iter().enumerate() {
        l.push_str(&format!(
            " {n} {:.3}",
            (a.per_joint_sq[j] / a.n.max(1) as f64).sqrt()
        ));
    }
    l
}

/// The `rot,` line: the signed torso rotation error (ours relative to the
/// reference's, field axes, deg) at `row`.
fn rot_line(
    sc: &replay::Scenario,
    row: usize,
    ours: &UnitQuaternion<f32>,
    reference: &UnitQuaternion<f32>,
) -> String {
    let e = (ours * reference.inverse()).scaled_axis();
    format!(
        "rot,{},{row},{:.3},{:.3},{:.3}",
        sc.name,
        e.x.to_degrees(),
        e.y.to_degrees(),
        e.z.to_degrees()
    )
}
