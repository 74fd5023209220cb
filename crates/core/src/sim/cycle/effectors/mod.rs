//! The effectors: what agents asked for, carried out in the step (one file
//! per effector). Hinge speeds are set in the read phase; `scene`, `init`
//! and `beam` wait for the physics step; `say` is broadcast at the end of
//! the read phase.

pub(super) mod beam;
pub(super) mod hinge;
pub(super) mod init;
pub(super) mod say;
pub(super) mod scene;
