//! Numbers in monitor messages (docs/protocol.md#monitor-numbers): reals like C's
//! `%g` (6 significant digits) of the value widened to `f64`, integers in
//! plain decimal, and never `nan`/`inf` (Java's parser rejects them).

use std::fmt::Write;

/// A small stack buffer so formatting one number never allocates.
struct StackBuf {
    bytes: [u8; 48],
    len: usize,
}

impl StackBuf {
    fn new() -> Self {
        StackBuf {
            bytes: [0; 48],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        // Only ASCII produced by `fmt` lands here.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("0")
    }
}

impl Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.bytes.len() {
            return Err(std::fmt::Error);
        }
        self.bytes[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Appends `x` as C's `printf("%g", (double) x)` would. Non-finite values
/// are written as `0` and reported by returning `false`, so the caller can
/// log one error per message instead of one per number.
pub fn push_g(out: &mut String, x: f32) -> bool {
    if !x.is_finite() {
        out.push('0');
        return false;
    }
    if x == 0.0 {
        out.push_str(if x.is_sign_negative() { "-0" } else { "0" });
        return true;
    }
    let d = f64::from(x);
    if d.fract() == 0.0 && d.abs() < 1e6 {
        // Exact integers below 10^6 print without a dot under %g.
        push_uint(out, d < 0.0, d.abs() as u64);
        return true;
    }
    if push_fast(out, d) {
        return true;
    }
    slow_g(out, d)
}

/// Powers of ten as the nearest `f64` (exact up to 10^22).
const POW10: [f64; 41] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31, 1e32,
    1e33, 1e34, 1e35, 1e36, 1e37, 1e38, 1e39, 1e40,
];

/// `%g` for 1e-30 <= |d| < 1e6 by scaling to a 6-digit integer, about ten
/// times faster than exact decimal formatting. The scaled product can be
/// off by half an ulp, which only matters for values within 1e-10 of a
/// rounding tie; the unit test checks agreement with the exact path.
/// Returns false (nothing written) when the value is out of its range or
/// rounds up to the next power of ten.
fn push_fast(out: &mut String, d: f64) -> bool {
    let a = d.abs();
    if !(1e-30..1e6).contains(&a) {
        return false;
    }
    // Decimal exponent: 10^e <= a < 10^(e+1).
    let e: i32 = if a >= 1.0 {
        let mut e = 0;
        while e < 5 && a >= POW10[(e + 1) as usize] {
            e += 1;
        }
        e
    } else {
        let mut e = -1;
        while e > -31 && a * POW10[(-e) as usize] < 1.0 {
            e -= 1;
        }
        e
    };
    let k = 5 - e; // scale so six digits sit before the point
    let scaled = a * POW10[k as usize];
    let r = scaled.round_ties_even();
    if !(100_000.0..1_000_000.0).contains(&r) {
        return false;
    }
    let digits_int = r as u32;
    let mut digits = [b'0'; 6];
    let mut v = digits_int;
    for slot in digits.iter_mut().rev() {
        *slot = b'0' + (v % 10) as u8;
        v /= 10;
    }
    if d < 0.0 {
        out.push('-');
    }
    write_digits(out, &digits, e);
    true
}

/// Writes six significant digits with decimal exponent `exp` the way
/// `%g` does.
fn write_digits(out: &mut String, digits: &[u8; 6], exp: i32) {
    if !(-4..6).contains(&exp) {
        out.push(char::from(digits[0]));
        let frac = trim_zeros(&digits[1..]);
        if !frac.is_empty() {
            out.push('.');
            push_ascii(out, frac);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let x = exp.unsigned_abs();
        if x < 10 {
            out.push('0');
        }
        push_uint(out, false, u64::from(x));
    } else if exp >= 0 {
        let split = (exp as usize) + 1;
        push_ascii(out, &digits[..split]);
        let frac = trim_zeros(&digits[split..]);
        if !frac.is_empty() {
            out.push('.');
            push_ascii(out, frac);
        }
    } else {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        push_ascii(out, trim_zeros(digits));
    }
}

fn push_uint(out: &mut String, neg: bool, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if neg {
        out.push('-');
    }
    push_ascii(out, &buf[i..]);
}

/// Exact `%g` through the standard library's correctly rounded formatting.
fn slow_g(out: &mut String, d: f64) -> bool {
    let mut sci = StackBuf::new();
    if write!(sci, "{:.5e}", d).is_err() {
        out.push('0');
        return false;
    }
    let s = sci.as_str();
    let (neg, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let Some((mantissa, exp)) = s.split_once('e') else {
        out.push('0');
        return false;
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    // Six significant digits, the first before the dot.
    let mut digits = [b'0'; 6];
    for (slot, b) in digits
        .iter_mut()
        .zip(mantissa.bytes().filter(u8::is_ascii_digit))
    {
        *slot = b;
    }
    if neg {
        out.push('-');
    }
    write_digits(out, &digits, exp);
    true
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let end = digits.iter().rposition(|&b| b != b'0').map_or(0, |i| i + 1);
    &digits[..end]
}

fn push_ascii(out: &mut String, bytes: &[u8]) {
    for &b in bytes {
        out.push(char::from(b));
    }
}

/// Formats one real as a new string (tests and rare paths).
pub fn g(x: f32) -> String {
    let mut s = String::new();
    push_g(&mut s, x);
    s
}

#[cfg(test)]
mod tests {
    use super::g;

    #[test]
    fn matches_c_percent_g() {
        assert_eq!(g(30.0), "30");
        assert_eq!(g(0.042), "0.042");
        assert_eq!(g(-8.74228e-08), "-8.74228e-08");
        assert_eq!(g(123.4567), "123.457");
        assert_eq!(g(2.18), "2.18");
        assert_eq!(g(-24.99), "-24.99");
        assert_eq!(g(0.0402764), "0.0402764");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(0.00001), "1e-05");
        assert_eq!(g(1e6), "1e+06");
        assert_eq!(g(999_999.0), "999999");
        assert_eq!(g(1_234_567.0), "1.23457e+06");
        assert_eq!(g(0.866_025_4), "0.866025");
        assert_eq!(g(-0.0), "-0");
        assert_eq!(g(0.0), "0");
        assert_eq!(g(-1.5), "-1.5");
        assert_eq!(g(0.1), "0.1");
        assert_eq!(g(3.2), "3.2");
        assert_eq!(g(f32::NAN), "0");
        assert_eq!(g(f32::NEG_INFINITY), "0");
        assert_eq!(g(9.999_999), "10");
        assert_eq!(g(999_999.94), "1e+06");
        assert_eq!(g(6.31617e-07), "6.31617e-07");
        assert_eq!(g(-4.37114e-08), "-4.37114e-08");
        assert_eq!(g(1.5e-30), "1.5e-30");
        assert_eq!(g(f32::MIN_POSITIVE), "1.17549e-38");
    }

    /// The fast path agrees with exact formatting on a million f32 bit
    /// patterns spread over the whole range.
    #[test]
    fn fast_path_agrees_with_exact_formatting() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut mismatches = Vec::new();
        for i in 0..1_000_000u32 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let bits = if i % 2 == 0 {
                state as u32
            } else {
                (state as u32 >> 9) | 0x3800_0000
            };
            let x = f32::from_bits(bits);
            if !x.is_finite() {
                continue;
            }
            let mut fast = String::new();
            let mut exact = String::new();
            if super::push_fast(&mut fast, f64::from(x)) {
                super::slow_g(&mut exact, f64::from(x));
                if fast != exact {
                    mismatches.push((x, fast, exact));
                }
            }
        }
        assert!(
            mismatches.is_empty(),
            "{:?}",
            &mismatches[..mismatches.len().min(10)]
        );
    }
}
