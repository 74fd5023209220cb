//! Number conversion of command parameters, as C `atof` does it
//! (docs/protocol.md#agent-message-syntax): optional leading whitespace and sign, digits
//! with optional fraction and exponent, or `inf`/`infinity`/`nan`; trailing
//! garbage is ignored and text with no numeric prefix converts to 0.

/// Converts like C `atof` (hexadecimal floats are not supported: they
/// convert to 0, which no client relies on).
pub fn atof(s: &str) -> f64 {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let start = i;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let rest = &b[i..];
    let starts_with =
        |word: &[u8]| rest.len() >= word.len() && rest[..word.len()].eq_ignore_ascii_case(word);
    let negative = start < b.len() && b[start] == b'-';
    if starts_with(b"inf") {
        return if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    if starts_with(b"nan") {
        return if negative { -f64::NAN } else { f64::NAN };
    }
    let digits_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut mantissa_digits = i - digits_start;
    if i < b.len() && b[i] == b'.' {
        let frac_start = i + 1;
        let mut j = frac_start;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        mantissa_digits += j - frac_start;
        if mantissa_digits > 0 {
            i = j;
        }
    }
    if mantissa_digits == 0 {
        return 0.0;
    }
    let mantissa_end = i;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let exp_digits = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp_digits {
            i = j;
        }
    }
    let text = &s[start..i];
    text.parse::<f64>().unwrap_or_else(|_| {
        // Only reachable for forms Rust rejects but C accepts, such as
        // "5." followed by an exponent; fall back to the mantissa.
        s[start..mantissa_end]
            .trim_end_matches('.')
            .parse()
            .unwrap_or(0.0)
    })
}

/// Converts an integer parameter: `atof`, then truncation toward zero.
/// Non-finite or out-of-range values saturate (NaN gives 0).
pub fn atoi(s: &str) -> i64 {
    let v = atof(s);
    if v.is_nan() {
        0
    } else {
        v.trunc() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_atof_forms() {
        assert_eq!(atof("1e-05"), 1e-05);
        assert_eq!(atof("1.0E-4"), 1.0e-4);
        assert_eq!(atof("-14"), -14.0);
        assert_eq!(atof(".5"), 0.5);
        assert_eq!(atof("5."), 5.0);
        assert_eq!(atof("  +2.5xyz"), 2.5);
        assert_eq!(atof("3e"), 3.0);
        assert_eq!(atof("3e+"), 3.0);
        assert_eq!(atof("abc"), 0.0);
        assert_eq!(atof(""), 0.0);
        assert_eq!(atof("-"), 0.0);
        assert_eq!(atof("."), 0.0);
        assert_eq!(atof("inf"), f64::INFINITY);
        assert_eq!(atof("-Infinity"), f64::NEG_INFINITY);
        assert_eq!(atof("+iNf7"), f64::INFINITY);
        assert!(atof("-NaN(1)").is_nan());
        assert_eq!(atof("in"), 0.0);
        assert_eq!(atof("na"), 0.0);
        assert_eq!(atof("\u{e9}nan"), 0.0);
        assert!(atof("nan").is_nan());
        assert_eq!(atof("1e999"), f64::INFINITY);
    }

    #[test]
    fn atoi_truncates() {
        assert_eq!(atoi("7"), 7);
        assert_eq!(atoi("7.9"), 7);
        assert_eq!(atoi("-7.9"), -7);
        assert_eq!(atoi("x"), 0);
        assert_eq!(atoi("nan"), 0);
        assert_eq!(atoi("1e30"), i64::MAX);
    }
}
