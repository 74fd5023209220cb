//! The boundary between the crate's nalgebra types and rapier's glam-based
//! math: the world's public API speaks nalgebra (`Vector3`, `Isometry3`,
//! `UnitQuaternion`), rapier speaks `glamx` (`Vec3`, `Pose3`, `Rot3`). The
//! conversions copy the components unchanged (no renormalisation), so a
//! pose read back is bit for bit the engine's.

use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};
use rapier3d::math::{Pose, Rotation, Vector};

/// A nalgebra vector as rapier's.
pub(super) fn to_vec(v: &Vector3<f32>) -> Vector {
    Vector::new(v.x, v.y, v.z)
}

/// A rapier vector as nalgebra's.
pub(super) fn from_vec(v: Vector) -> Vector3<f32> {
    Vector3::new(v.x, v.y, v.z)
}

/// A nalgebra unit quaternion as rapier's rotation.
pub(super) fn to_rot(q: &UnitQuaternion<f32>) -> Rotation {
    Rotation::from_xyzw(q.i, q.j, q.k, q.w)
}

/// A rapier rotation as a nalgebra unit quaternion (taken as unit: rapier
/// keeps its rotations normalised).
pub(super) fn from_rot(q: &Rotation) -> UnitQuaternion<f32> {
    UnitQuaternion::new_unchecked(Quaternion::new(q.w, q.x, q.y, q.z))
}

/// A nalgebra isometry as rapier's pose.
pub(super) fn to_pose(p: &Isometry3<f32>) -> Pose {
    Pose::from_parts(to_vec(&p.translation.vector), to_rot(&p.rotation))
}

/// A rapier pose as a nalgebra isometry.
pub(super) fn from_pose(p: &Pose) -> Isometry3<f32> {
    Isometry3::from_parts(
        Translation3::from(from_vec(p.translation)),
        from_rot(&p.rotation),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poses_round_trip_bit_for_bit() {
        let p = Isometry3::from_parts(
            Translation3::new(1.25, -3.5, 0.375),
            UnitQuaternion::from_euler_angles(0.3, -1.1, 2.7),
        );
        let back = from_pose(&to_pose(&p));
        assert_eq!(back.translation.vector, p.translation.vector);
        assert_eq!(back.rotation.coords, p.rotation.coords);
    }

    #[test]
    fn conversions_keep_the_meaning_of_a_rotation() {
        let q = UnitQuaternion::from_euler_angles(0.2, 0.4, -0.9);
        let v = Vector3::new(0.1, -2.0, 3.0);
        let rotated = from_vec(to_rot(&q) * to_vec(&v));
        assert!((rotated - q * v).norm() < 1e-6, "{rotated} vs {}", q * v);
        let p = Isometry3::from_parts(Translation3::new(1.0, 2.0, 3.0), q);
        let moved = from_vec(to_pose(&p).transform_point(to_vec(&v)));
        assert!((moved - (p * nalgebra::Point3::from(v)).coords).norm() < 1e-5);
    }
}
