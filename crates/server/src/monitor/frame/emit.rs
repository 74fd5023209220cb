//! The node writer shared by the static scene, the ball and the robots:
//! one walk that writes a full state or a delta.

use super::{ConsumerState, Mat, MOVE_THRESHOLD};
use crate::monitor::number::push_g;
use crate::rules::Side;

/// Writes scene nodes in either form, walking dynamic nodes in the same
/// order for a full state and a delta so their indices line up.
pub(super) struct Emitter<'a> {
    out: &'a mut String,
    state: &'a mut ConsumerState,
    full: bool,
    trf: usize,
    mesh: usize,
    pub(super) finite: bool,
    /// Writing a robot that has gone, in a delta: every mesh hidden, every
    /// transform left as last sent.
    pub(super) hidden: bool,
}

/// Entries of a `resetMaterials` list; team and number are substituted.
#[derive(Clone, Copy)]
pub(super) enum Material {
    Name(&'static str),
    /// `matNum<N>`, or `matNum` before `init`.
    Num,
    /// `matLeft`/`matRight`, or `matTeam` before `init`.
    Team,
    /// `matType<t>`, absent for type 4.
    Type,
}

pub(super) struct Identity {
    pub(super) side: Option<Side>,
    pub(super) unum: u8,
    pub(super) robot_type: u8,
}

impl<'a> Emitter<'a> {
    pub(super) fn new(out: &'a mut String, state: &'a mut ConsumerState, full: bool) -> Self {
        Emitter {
            out,
            state,
            full,
            trf: 0,
            mesh: 0,
            finite: true,
            hidden: false,
        }
    }

    pub(super) fn matrix(&mut self, m: &Mat) {
        self.out.push_str("(SLT");
        for v in m {
            self.out.push(' ');
            self.finite &= push_g(self.out, *v);
        }
        self.out.push(')');
    }

    /// Opens a transform node; the caller writes children and `close`s.
    pub(super) fn open_trf(&mut self, m: &Mat) {
        let i = self.trf;
        self.trf += 1;
        if self.full {
            self.out.push_str("(nd TRF ");
            self.matrix(m);
            self.state.matrices.push(*m);
            return;
        }
        self.out.push_str("(nd");
        let moved = match self.state.matrices.get(i) {
            _ if self.hidden => false,
            Some(last) => last
                .iter()
                .zip(m)
                .any(|(a, b)| (a - b).abs() > MOVE_THRESHOLD || !b.is_finite()),
            None => true,
        };
        if moved {
            self.out.push(' ');
            self.matrix(m);
            match self.state.matrices.get_mut(i) {
                Some(slot) => *slot = *m,
                None => self.state.matrices.push(*m),
            }
        }
    }

    pub(super) fn close(&mut self) {
        self.out.push(')');
    }

    pub(super) fn light(&mut self, ambient: f32) {
        if self.full {
            self.out
                .push_str("(nd Light (setDiffuse 1 1 1 1) (setAmbient ");
            for _ in 0..3 {
                push_g(self.out, ambient);
                self.out.push(' ');
            }
            self.out.push_str("1) (setSpecular 0.1 0.1 0.1 1))");
        } else {
            self.out.push_str("(nd)");
        }
    }

    /// Writes `(setVisible V)` in a full state, or in a delta when it
    /// changed for this consumer.
    pub(super) fn visibility(&mut self, visible: bool) {
        let i = self.mesh;
        self.mesh += 1;
        let visible = visible && !self.hidden;
        let v = if visible { "1" } else { "0" };
        if self.full {
            self.out.push_str(" (setVisible ");
            self.out.push_str(v);
            self.out.push(')');
            self.state.visible.push(visible);
            return;
        }
        match self.state.visible.get_mut(i) {
            Some(last) if *last == visible => {}
            Some(last) => {
                *last = visible;
                self.out.push_str(" (setVisible ");
                self.out.push_str(v);
                self.out.push(')');
            }
            None => self.state.visible.push(visible),
        }
    }

    pub(super) fn scale(&mut self, s: [f32; 3]) {
        self.out.push_str(" (sSc");
        for v in s {
            self.out.push(' ');
            self.finite &= push_g(self.out, v);
        }
        self.out.push(')');
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn static_mesh(
        &mut self,
        visible: bool,
        transparent: bool,
        mesh: &str,
        scale: [f32; 3],
        materials: &[Material],
        who: &Identity,
    ) {
        self.out.push_str("(nd StaticMesh");
        self.visibility(visible);
        if self.full {
            if transparent {
                self.out.push_str(" (setTransparent)");
            }
            self.out.push_str(" (load ");
            self.out.push_str(mesh);
            self.out.push(')');
            self.scale(scale);
            self.out.push_str("(resetMaterials");
            for m in materials {
                self.material(*m, who);
            }
            self.out.push(')');
        }
        self.out.push(')');
    }

    pub(super) fn material(&mut self, m: Material, who: &Identity) {
        use std::fmt::Write;
        match m {
            Material::Name(n) => {
                self.out.push(' ');
                self.out.push_str(n);
            }
            Material::Num => {
                if who.unum == 0 {
                    self.out.push_str(" matNum");
                } else {
                    let _ = write!(self.out, " matNum{}", who.unum);
                }
            }
            Material::Team => self.out.push_str(match who.side {
                None => " matTeam",
                Some(Side::Left) => " matLeft",
                Some(Side::Right) => " matRight",
            }),
            Material::Type => {
                if who.robot_type < 4 {
                    let _ = write!(self.out, " matType{}", who.robot_type);
                }
            }
        }
    }

    /// `load` is the mesh name with its parameters (`StdUnitCylinder 1 1`).
    pub(super) fn smn(
        &mut self,
        visible: bool,
        transparent: bool,
        load: &str,
        scale: [f32; 3],
        mat: &str,
    ) {
        self.out.push_str("(nd SMN");
        self.visibility(visible);
        if self.full {
            if transparent {
                self.out.push_str(" (setTransparent)");
            }
            self.out.push_str(" (load ");
            self.out.push_str(load);
            self.out.push(')');
            self.scale(scale);
            self.out.push_str(" (sMat ");
            self.out.push_str(mat);
            self.out.push(')');
        }
        self.out.push(')');
    }

    /// A transform with a single mesh-less child list (corner flags,
    /// field lines).
    pub(super) fn empty_trf(&mut self, m: &Mat) {
        self.open_trf(m);
        self.close();
    }
}

pub(super) const NO_ONE: Identity = Identity {
    side: None,
    unum: 0,
    robot_type: 0,
};
