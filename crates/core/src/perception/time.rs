//! The `time` perceptor (docs/protocol.md#time): the server time at the
//! start of every frame.

use crate::perception::format::push_real;

/// Appends `(time (now T))` with the server time `now` (seconds).
pub fn write_time(out: &mut String, now: f32) {
    out.push_str("(time (now ");
    push_real(out, now);
    out.push_str("))");
}

#[cfg(test)]
mod tests {
    #[test]
    fn time_has_two_decimals() {
        let mut s = String::new();
        super::write_time(&mut s, 1.5);
        assert_eq!(s, "(time (now 1.50))");
    }
}
