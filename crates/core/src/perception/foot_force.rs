//! The force-resistance perceptor `FRP` (docs/protocol.md#frp): the
//! contact point and force on one foot, reported only while it touches
//! something.

use nalgebra::Vector3;

use crate::perception::format::push_vec;

/// Appends `(FRP (n name) (c x y z) (f x y z))`: `c` the contact centre
/// in the foot frame, `f` the force (N).
pub fn write_foot_force(out: &mut String, name: &str, centre: Vector3<f32>, force: Vector3<f32>) {
    out.push_str("(FRP (n ");
    out.push_str(name);
    out.push_str(") (c ");
    push_vec(out, centre);
    out.push_str(") (f ");
    push_vec(out, force);
    out.push_str("))");
}

#[cfg(test)]
mod tests {
    use nalgebra::Vector3;

    #[test]
    fn point_then_force() {
        let mut s = String::new();
        super::write_foot_force(
            &mut s,
            "lf",
            Vector3::new(0.01, -0.02, -0.015),
            Vector3::new(0.0, 0.5, 22.3),
        );
        assert_eq!(s, "(FRP (n lf) (c 0.01 -0.02 -0.01) (f 0.00 0.50 22.30))");
    }
}
