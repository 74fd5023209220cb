//! An articulated robot's velocity-product (Coriolis and centripetal)
//! forces integrated explicitly, as the reference's engine does.
//!
//! Rapier steps a multibody's free motion semi-implicitly: it solves
//! `(M + h·K)·a = f`, where `f` holds the velocity-product forces at the
//! step's start velocities and `h·K·a` is their linearisation in the
//! coming velocity (per link, its mass and inertia times `K_i·a`). For a
//! robot whose limbs swing at several rad/s, `h·K` is not small at a
//! 20 ms step and takes out part of what those forces do. The reference's
//! engine has no such term: its bodies are free bodies held by constraint
//! rows, stepped explicitly. One step from the reference's recorded
//! states, a type-1 robot in the air after its get-up's jump turned 1.0–1.2°
//! per step less than the reference's with rapier's solve, and 0.1–0.3°
//! less with the explicit one (docs/physics.md#velocity-product-forces).
//!
//! Rapier has no switch for it, so the term is cancelled from outside.
//! Before the step each link gets the external force `h·m·(K_i·a)` and
//! torque `h·I·(K_i·a)`, where `a = M⁻¹·f` is the explicit acceleration
//! of the step's start state; rapier's solve then gives
//! `(M + h·K)·a' = f + h·K·a`, that is `a' = a`. This needs `M`, the
//! robot's mass matrix at the step's start, which rapier computes only
//! inside its step: it is built here from the links' Jacobians, over the
//! columns a link's Jacobian can have (the root's six and the hinges above
//! the link), a fifth of the dense product.
//!
//! `K_i·a` follows rapier's own linearisation of the links' bias
//! accelerations (their accelerations when the joints do not accelerate),
//! link by link from the root, as rapier forms it (its term for the
//! joint's offset from the parent's centre of mass takes the link's own
//! angular velocity where the derivative has the parent's; the point is
//! to cancel it). The bias accelerations themselves are the textbook
//! recursion: `ω_i = ω_p + u·θ̇`, `α_i = α_p + ω_p × u·θ̇`,
//! `a_i = a_p + α_p × r_p + ω_p × (ω_p × r_p) + α_i × r_c + ω_i × (ω_i × r_c)`,
//! with `u` the hinge axis, `r_p` from the parent's centre of mass to the
//! anchor and `r_c` from the anchor to the link's centre of mass; the
//! root's own terms are zero (its velocity is its centre of mass's).
//!
//! Rapier guards its implicit solve: where the kinetic energy it gains
//! exceeds the applied forces' work by more than 1 % of the kinetic energy,
//! it solves again with the plain mass matrix, which is the explicit
//! solve already. With the compensating forces in place its solution is
//! `a`, so the guard's outcome is known beforehand; where it would solve
//! again, the compensation would count twice and is left out.

use rapier3d::math::Vector;
use rapier3d::na::{DMatrix, DVector, Matrix3, Vector6, LU};
use rapier3d::prelude::{Multibody, RigidBodyHandle, RigidBodySet};

use super::step_forces::PartForce;
use super::{JointRef, World};

/// One link's geometry and mass at the step's start.
#[derive(Clone, Copy, Debug)]
struct LinkFrame {
    body: RigidBodyHandle,
    parent: Option<usize>,
    /// Index of the hinge's coordinate in the generalized vectors.
    dof: usize,
    /// Hinge axis (world).
    axis: Vector,
    /// From the parent's centre of mass to the joint anchor.
    r_parent: Vector,
    /// From the joint anchor to the link's centre of mass.
    r_child: Vector,
    mass: Vector,
    /// World inertia tensor.
    inertia: Matrix3<f32>,
    /// The link's Jacobian columns that can be non-zero, in
    /// `Scratch::columns[cols.0..cols.1]`.
    cols: (usize, usize),
}

/// Per-link vectors of a recursion: angular velocity, angular and linear
/// acceleration terms.
type LinkVectors = (Vector, Vector, Vector);

/// Buffers kept across steps.
#[derive(Default)]
pub(super) struct Scratch {
    links: Vec<LinkFrame>,
    columns: Vec<usize>,
    bias: Vec<LinkVectors>,
    linearised: Vec<LinkVectors>,
    /// `M_i·J` of one link over its columns.
    mj: Vec<[f32; 6]>,
    /// Generalized vectors of one robot: its velocity, `f`, the applied
    /// forces' part of it, the compensation, the explicit acceleration.
    qd: DVector<f32>,
    f: DVector<f32>,
    applied: DVector<f32>,
    df: DVector<f32>,
    acc: DVector<f32>,
}

/// Sets `v` to `n` zeros, reusing its storage.
fn zeroed(v: &mut DVector<f32>, n: usize) {
    if v.len() != n {
        *v = DVector::zeros(n);
    } else {
        v.fill(0.0);
    }
}

fn mul3(m: &Matrix3<f32>, v: Vector) -> Vector {
    Vector::new(
        m[(0, 0)] * v.x + m[(0, 1)] * v.y + m[(0, 2)] * v.z,
        m[(1, 0)] * v.x + m[(1, 1)] * v.y + m[(1, 2)] * v.z,
        m[(2, 0)] * v.x + m[(2, 1)] * v.y + m[(2, 2)] * v.z,
    )
}

/// Bias accelerations of every link for the generalized velocity `v`.
fn bias_accelerations(links: &[LinkFrame], v: &[f32], out: &mut Vec<LinkVectors>) {
    out.clear();
    for l in links {
        let entry = match l.parent {
            None => (Vector::new(v[3], v[4], v[5]), Vector::ZERO, Vector::ZERO),
            Some(p) => {
                let (w_p, al_p, a_p) = out[p];
                let w_joint = l.axis * v[l.dof];
                let w = w_p + w_joint;
                let al = al_p + w_p.cross(w_joint);
                let a = a_p
                    + al_p.cross(l.r_parent)
                    + w_p.cross(w_p.cross(l.r_parent))
                    + al.cross(l.r_child)
                    + w.cross(w.cross(l.r_child));
                (w, al, a)
            }
        };
        out.push(entry);
    }
}

/// Rapier's linearisation `K_i·a` of every link's bias acceleration,
/// about the start velocities whose recursion is `bias`: per link the
/// angular velocity for `a`, then the angular and linear part.
fn linearised(links: &[LinkFrame], bias: &[LinkVectors], a: &[f32], out: &mut Vec<LinkVectors>) {
    out.clear();
    for (k, l) in links.iter().enumerate() {
        let entry = match l.parent {
            None => (Vector::new(a[3], a[4], a[5]), Vector::ZERO, Vector::ZERO),
            Some(p) => {
                let w = bias[k].0;
                let w_p = bias[p].0;
                let (w_pa, k_ang_p, k_lin_p) = out[p];
                let w_joint = l.axis * (w - w_p).dot(l.axis);
                let joint_a = l.axis * a[l.dof];
                let w_a = w_pa + joint_a;
                let k_ang = k_ang_p - w_joint.cross(w_pa) + w_p.cross(joint_a);
                let k_lin = k_lin_p
                    + k_ang_p.cross(l.r_parent)
                    + w_pa.cross(w.cross(l.r_parent))
                    + w_p.cross(w_pa.cross(l.r_parent))
                    + k_ang.cross(l.r_child)
                    + w_a.cross(w.cross(l.r_child))
                    + w.cross(w_a.cross(l.r_child));
                (w_a, k_ang, k_lin)
            }
        };
        out.push(entry);
    }
}

/// Adds `Jᵀ·wrench` of one link to a generalized vector, over the link's
/// columns.
fn add_jt(
    out: &mut DVector<f32>,
    mb: &Multibody,
    k: usize,
    cols: &[usize],
    force: Vector,
    torque: Vector,
) {
    let j = mb.body_jacobian(k);
    let w = Vector6::new(force.x, force.y, force.z, torque.x, torque.y, torque.z);
    for &c in cols {
        out[c] += j.column(c).dot(&w);
    }
}

/// Reads a robot's links at the step's start: geometry, mass and the
/// columns of their Jacobians. False if a body is missing.
fn read_links(mb: &Multibody, bodies: &RigidBodySet, scratch: &mut Scratch) -> bool {
    scratch.links.clear();
    scratch.columns.clear();
    for (k, link) in mb.links().enumerate() {
        let body = link.rigid_body_handle();
        let Some(rb) = bodies.get(body) else {
            return false;
        };
        let mprops = rb.mass_properties();
        let i = mprops.effective_angular_inertia();
        let inertia = Matrix3::new(
            i.m11, i.m12, i.m13, i.m12, i.m22, i.m23, i.m13, i.m23, i.m33,
        );
        let com = link.local_to_world() * rb.local_center_of_mass();
        let start = scratch.columns.len();
        let frame = match link.parent_id() {
            None => {
                scratch.columns.extend(0..6);
                LinkFrame {
                    body,
                    parent: None,
                    dof: 0,
                    axis: Vector::ZERO,
                    r_parent: Vector::ZERO,
                    r_child: Vector::ZERO,
                    mass: mprops.effective_mass(),
                    inertia,
                    cols: (start, start + 6),
                }
            }
            Some(p) => {
                let (Some(parent), Some(pl)) = (mb.link(p), scratch.links.get(p).copied()) else {
                    return false;
                };
                let Some(prb) = bodies.get(parent.rigid_body_handle()) else {
                    return false;
                };
                let parent_com = parent.local_to_world() * prb.local_center_of_mass();
                let data = &link.joint.data;
                let anchor = link.local_to_world() * data.local_frame2.translation;
                let rot = parent.local_to_world().rotation * data.local_frame1.rotation;
                scratch.columns.extend_from_within(pl.cols.0..pl.cols.1);
                scratch.columns.push(link.assembly_id());
                LinkFrame {
                    body,
                    parent: Some(p),
                    dof: link.assembly_id(),
                    axis: rot * Vector::X,
                    r_parent: anchor - parent_com,
                    r_child: com - anchor,
                    mass: mprops.effective_mass(),
                    inertia,
                    cols: (start, scratch.columns.len()),
                }
            }
        };
        debug_assert_eq!(k, scratch.links.len());
        scratch.links.push(frame);
    }
    true
}

/// The robot's mass matrix as rapier's step builds it (`Σ Jᵀ·M_i·J`, the
/// hinges' damping times the step and their armature on the diagonal).
fn mass_matrix(
    mb: &Multibody,
    links: &[LinkFrame],
    columns: &[usize],
    mj: &mut Vec<[f32; 6]>,
    h: f32,
) -> DMatrix<f32> {
    let n = mb.generalized_velocity().len();
    let mut mass = DMatrix::<f32>::zeros(n, n);
    for (k, l) in links.iter().enumerate() {
        let j = mb.body_jacobian(k);
        let cols = &columns[l.cols.0..l.cols.1];
        // M_i·J over the link's columns.
        mj.clear();
        for &c in cols {
            let lin = Vector::new(j[(0, c)], j[(1, c)], j[(2, c)]) * l.mass;
            let ang = mul3(&l.inertia, Vector::new(j[(3, c)], j[(4, c)], j[(5, c)]));
            mj.push([lin.x, lin.y, lin.z, ang.x, ang.y, ang.z]);
        }
        for (ai, &a) in cols.iter().enumerate() {
            for (bi, &b) in cols.iter().enumerate().skip(ai) {
                let v: f32 = (0..6).map(|r| j[(r, a)] * mj[bi][r]).sum();
                mass[(a, b)] += v;
                if a != b {
                    mass[(b, a)] += v;
                }
            }
        }
    }
    for (i, (d, arm)) in mb.damping().iter().zip(mb.armature().iter()).enumerate() {
        mass[(i, i)] += d * h + arm;
    }
    mass
}

impl World {
    /// Adds, for the coming step of `h` seconds, the forces that cancel
    /// rapier's linearised velocity-product term on every articulated
    /// robot.
    pub(super) fn add_explicit_coriolis(&mut self, h: f32) {
        if !self.cfg.solver.explicit_coriolis {
            return;
        }
        let mut parts = std::mem::take(&mut self.step_forces.pending);
        let mut scratch = std::mem::take(&mut self.coriolis_scratch);
        let gravity = super::convert::to_vec(&self.gravity);
        for r in self.robots.values() {
            if !matches!(r.joints.first(), Some(JointRef::Multibody(_))) {
                continue;
            }
            let Some(mb) = r.bodies.first().and_then(|root| {
                let link = self.multibody_joints.rigid_body_link(*root)?;
                self.multibody_joints.get_multibody(link.multibody)
            }) else {
                continue;
            };
            let n = mb.generalized_velocity().len();
            zeroed(&mut scratch.qd, n);
            scratch.qd.copy_from(&mb.generalized_velocity());
            // Jacobians exist once the robot's kinematics ran.
            if n < 6 || mb.body_jacobian(0).ncols() != n {
                continue;
            }
            if !read_links(mb, &self.bodies, &mut scratch) {
                continue;
            }
            // The generalized forces as rapier's step gathers them (`f`),
            // and their part from applied forces alone (gravity, user
            // forces: the guard's work).
            let Scratch {
                links,
                columns,
                bias,
                linearised: lin,
                mj,
                qd,
                f,
                applied,
                df,
                acc,
            } = &mut scratch;
            bias_accelerations(links, qd.as_slice(), bias);
            zeroed(f, n);
            zeroed(applied, n);
            for (k, l) in links.iter().enumerate() {
                let Some(rb) = self.bodies.get(l.body) else {
                    continue;
                };
                let cols = &columns[l.cols.0..l.cols.1];
                let (w, ang, lin_bias) = bias[k];
                let force = rb.user_force() + l.mass * gravity;
                let torque = rb.user_torque();
                add_jt(applied, mb, k, cols, force, torque);
                let gyro = w.cross(mul3(&l.inertia, w));
                let inertial = l.mass * lin_bias;
                let torque_rest = torque - gyro - mul3(&l.inertia, ang);
                add_jt(f, mb, k, cols, force - inertial, torque_rest);
            }
            for ((fi, d), q) in f.iter_mut().zip(mb.damping().iter()).zip(qd.iter()) {
                *fi -= d * q;
            }
            let mass = mass_matrix(mb, links, columns, mj, h);
            let twice_kinetic = qd.dot(&(&mass * &*qd));
            acc.clone_from(f);
            if !LU::new(mass).solve_mut(acc) || !acc.iter().all(|x| x.is_finite()) {
                continue;
            }
            linearised(links, bias, acc.as_slice(), lin);
            let first = parts.len();
            zeroed(df, n);
            for (k, l) in links.iter().enumerate() {
                let (_, k_ang, k_lin) = lin[k];
                let force = l.mass * (k_lin * h);
                let torque = mul3(&l.inertia, k_ang * h);
                add_jt(df, mb, k, &columns[l.cols.0..l.cols.1], force, torque);
                parts.push(PartForce {
                    body: l.body,
                    force,
                    torque,
                });
            }
            // Rapier's guard with the compensated solution `acc`:
            // `M·acc = f`, so its kinetic energy gain minus work reduces
            // to this.
            if h * qd.amax() >= 1.0e-3 {
                let margin = 1.0e-2 * 0.5 * twice_kinetic + 1.0e-8;
                let rest: f32 = (0..n).map(|i| acc[i] * (f[i] - applied[i] - df[i])).sum();
                let excess = -h * qd.dot(df) + 0.5 * h * h * rest - margin;
                if excess > 0.0 || excess.is_nan() {
                    parts.truncate(first);
                }
            }
        }
        self.coriolis_scratch = scratch;
        self.step_forces.pending = parts;
        self.add_step_forces();
    }
}
