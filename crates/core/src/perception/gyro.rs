//! The gyroscope `GYR` (docs/protocol.md#gyr): the torso's angular
//! velocity in the torso frame, degrees per second.

use nalgebra::Vector3;

use crate::perception::format::push_vec;

/// Appends `(GYR (n torso) (rt x y z))` for an angular velocity given in
/// rad/s in the torso frame.
pub fn write_gyro(out: &mut String, angvel_local: Vector3<f32>) {
    out.push_str("(GYR (n torso) (rt ");
    push_vec(out, angvel_local.map(f32::to_degrees));
    out.push_str("))");
}

#[cfg(test)]
mod tests {
    use nalgebra::Vector3;

    #[test]
    fn reports_degrees_per_second() {
        let mut s = String::new();
        super::write_gyro(&mut s, Vector3::new(std::f32::consts::PI, 0.0, -0.5));
        assert_eq!(s, "(GYR (n torso) (rt 180.00 0.00 -28.65))");
    }
}
