//! Numbers in monitor messages (monitor-protocol.md §9): reals like C's
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
        let _ = write!(out, "{}", d as i64);
        return true;
    }
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
    let mut n = 0;
    for b in mantissa.bytes().filter(u8::is_ascii_digit).take(6) {
        digits[n] = b;
        n += 1;
    }
    if neg {
        out.push('-');
    }
    if !(-4..6).contains(&exp) {
        // d.ddddde±XX with trailing zeros (and a bare dot) removed.
        out.push(char::from(digits[0]));
        let frac = trim_zeros(&digits[1..]);
        if !frac.is_empty() {
            out.push('.');
            push_ascii(out, frac);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let _ = write!(out, "{:02}", exp.unsigned_abs());
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
        push_ascii(out, trim_zeros(&digits));
    }
    true
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let end = digits
        .iter()
        .rposition(|&b| b != b'0')
        .map_or(0, |i| i + 1);
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
    }
}
