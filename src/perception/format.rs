//! Number formatting of server messages (agent-protocol.md §1.9): reals as
//! C `printf("%.2f")` of the f32 value, never an exponent, `-0.00` for
//! negative values that round to zero, lowercase `nan`/`inf`.

use std::fmt::Write;

/// Appends `x` with exactly two decimals, as the reference prints it.
pub fn push_real(out: &mut String, x: f32) {
    if x.is_nan() {
        out.push_str(if x.is_sign_negative() { "-nan" } else { "nan" });
    } else if x.is_infinite() {
        out.push_str(if x < 0.0 { "-inf" } else { "inf" });
    } else {
        // `{:.2}` on f32 prints the exact decimal expansion rounded half to
        // even, like glibc, and keeps the sign of negative zero results.
        let _ = write!(out, "{:.2}", x);
    }
}

/// Appends an integer in plain decimal.
pub fn push_int(out: &mut String, n: i64) {
    let _ = write!(out, "{}", n);
}

/// Formats one real as a new string (convenience for tests and rare paths).
pub fn real(x: f32) -> String {
    let mut s = String::new();
    push_real(&mut s, x);
    s
}

#[cfg(test)]
mod tests {
    use super::real;

    #[test]
    fn matches_c_printf() {
        assert_eq!(real(9.81), "9.81");
        assert_eq!(real(-0.001), "-0.00");
        assert_eq!(real(-0.0), "-0.00");
        assert_eq!(real(0.0), "0.00");
        assert_eq!(real(104.866), "104.87");
        assert_eq!(real(1e12), "999999995904.00");
        assert_eq!(real(1e-7), "0.00");
        assert_eq!(real(f32::NAN), "nan");
        assert_eq!(real(f32::INFINITY), "inf");
        assert_eq!(real(f32::NEG_INFINITY), "-inf");
        // 0.125 is an exact binary tie: round half to even like glibc.
        assert_eq!(real(0.125), "0.12");
        assert_eq!(real(0.375), "0.38");
    }
}
