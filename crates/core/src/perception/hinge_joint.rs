//! The hinge-joint perceptor `HJ` (docs/protocol.md#hj): one joint's
//! angle in degrees.

use crate::perception::format::push_real;

/// Appends `(HJ (n name) (ax angle))`; `name` is the perceptor name of the
/// joint (`hj1`, `laj3`, ...).
pub fn write_hinge_joint(out: &mut String, name: &str, angle_deg: f32) {
    out.push_str("(HJ (n ");
    out.push_str(name);
    out.push_str(") (ax ");
    push_real(out, angle_deg);
    out.push_str("))");
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_the_joint() {
        let mut s = String::new();
        super::write_hinge_joint(&mut s, "hj1", -12.345);
        assert_eq!(s, "(HJ (n hj1) (ax -12.35))");
    }
}
