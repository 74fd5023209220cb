//! Number formatting of server messages (docs/protocol.md#server-message-syntax): reals as
//! C `printf("%.2f")` of the f32 value, never an exponent, `-0.00` for
//! negative values that round to zero, lowercase `nan`/`inf`.

use std::fmt::Write;

/// Appends `x` with exactly two decimals, as the reference prints it.
///
/// This is the hot path of every perception frame (several hundred numbers
/// per agent and cycle), so the common case avoids `fmt`: an f32 times 100
/// is exact in f64 (24 + 5 mantissa bits), so rounding that product half
/// to even gives exactly what glibc's `%.2f` prints.
pub fn push_real(out: &mut String, x: f32) {
    if x.is_nan() {
        out.push_str(if x.is_sign_negative() { "-nan" } else { "nan" });
        return;
    }
    if x.is_infinite() {
        out.push_str(if x < 0.0 { "-inf" } else { "inf" });
        return;
    }
    let y = f64::from(x) * 100.0;
    if y.abs() >= 1.0e15 {
        // `{:.2}` prints the exact decimal expansion rounded half to even,
        // like glibc; only huge values take this slow path.
        let _ = write!(out, "{:.2}", x);
        return;
    }
    let cents = y.round_ties_even().abs() as u64;
    if x.is_sign_negative() {
        out.push('-');
    }
    push_u64(out, cents / 100);
    let frac = (cents % 100) as u8;
    out.push('.');
    out.push((b'0' + frac / 10) as char);
    out.push((b'0' + frac % 10) as char);
}

fn push_u64(out: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &b in &buf[i..] {
        out.push(b as char);
    }
}

/// Appends an integer in plain decimal.
pub fn push_int(out: &mut String, n: i64) {
    if n < 0 {
        out.push('-');
    }
    push_u64(out, n.unsigned_abs());
}

/// Appends a vector as three reals separated by spaces.
pub fn push_vec(out: &mut String, v: nalgebra::Vector3<f32>) {
    push_real(out, v.x);
    out.push(' ');
    push_real(out, v.y);
    out.push(' ');
    push_real(out, v.z);
}

/// Formats one real as a new string (convenience for tests and rare paths).
pub fn real(x: f32) -> String {
    let mut s = String::new();
    push_real(&mut s, x);
    s
}

#[cfg(test)]
mod tests {
    use super::{push_int, real};

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
        assert_eq!(real(-0.005), "-0.00"); // f32 -0.005 is -0.00499999...
        assert_eq!(real(-0.006), "-0.01");
        assert_eq!(real(-1.5), "-1.50");
        assert_eq!(real(f32::MAX), format!("{:.2}", f32::MAX));
    }

    #[test]
    fn fast_path_equals_fmt_on_many_values() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for i in 0..200_000u32 {
            let x = match i % 4 {
                0 => f32::from_bits(rng.gen()),
                1 => rng.gen_range(-200.0f32..200.0),
                2 => (rng.gen_range(-100_000i32..100_000) as f32) / 200.0,
                _ => rng.gen_range(-1.0e7f32..1.0e7),
            };
            if !x.is_finite() {
                continue;
            }
            assert_eq!(real(x), format!("{:.2}", x), "{x:e}");
        }
    }

    #[test]
    fn integers() {
        let mut s = String::new();
        push_int(&mut s, -12);
        s.push(' ');
        push_int(&mut s, 0);
        s.push(' ');
        push_int(&mut s, i64::MIN);
        assert_eq!(s, format!("-12 0 {}", i64::MIN));
    }
}
