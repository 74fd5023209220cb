//! Untrusted text (from agents and monitors) quoted in log lines, error
//! messages and the match log: cut to a readable length, so a client
//! sending something huge cannot make the log huge, and with every control
//! character written as an escape, so a client cannot start a line of its
//! own (a forged `ERROR ...` line) or send terminal escape sequences to
//! whoever reads the log.
//!
//! [`quote`] is for text kept in an error value or a message; [`logged`]
//! wraps anything displayed in a `tracing` field (an error that quotes
//! client text, a path an agent asked for). Both escape the same way:
//! `\n`, `\r` and `\t` as those two characters, every other control
//! character (C0, DEL, C1), line and paragraph separator and bidirectional
//! override as `\u{..}`. A backslash is left as it is, so text escaped
//! once and logged again is not escaped twice (the escapes keep a line
//! safe; they are not meant to be decoded).

use std::fmt::{self, Display, Write};

/// Characters of a value kept by [`logged`]: room for an error message
/// that quotes up to 80 characters of client text.
pub const MAX_LOGGED: usize = 240;

/// `s` cut after `max_chars` characters (with `...` appended when cut),
/// every unsafe character escaped.
pub fn quote(s: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max_chars * 2) + 3);
    let _ = EscapingWriter {
        out: &mut out,
        left: max_chars,
        cut: false,
    }
    .write_str(s);
    out
}

/// `value` as a log field: displayed with every unsafe character escaped,
/// cut after [`MAX_LOGGED`] characters.
pub fn logged<T: Display>(value: T) -> Logged<T> {
    Logged(value)
}

/// See [`logged`].
#[derive(Debug, Clone, Copy)]
pub struct Logged<T>(T);

impl<T: Display> Display for Logged<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        let mut w = EscapingWriter {
            out: &mut out,
            left: MAX_LOGGED,
            cut: false,
        };
        // The writer stops taking text once full; the error that makes
        // `write!` return early is its own, not the formatter's.
        let _ = write!(w, "{}", self.0);
        f.write_str(&out)
    }
}

/// Whether `c` may not appear as it is in a log line.
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Appends escaped text to `out` until `left` characters have been taken,
/// then `...` once, and fails so formatting stops early.
struct EscapingWriter<'a> {
    out: &'a mut String,
    left: usize,
    cut: bool,
}

impl Write for EscapingWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            if self.left == 0 {
                if !self.cut {
                    self.cut = true;
                    self.out.push_str("...");
                }
                return Err(fmt::Error);
            }
            self.left -= 1;
            match c {
                '\n' => self.out.push_str("\\n"),
                '\r' => self.out.push_str("\\r"),
                '\t' => self.out.push_str("\\t"),
                c if unsafe_char(c) => {
                    let _ = write!(self.out, "\\u{{{:x}}}", u32::from(c));
                }
                c => self.out.push(c),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{logged, quote, MAX_LOGGED};

    #[test]
    fn long_text_is_cut_on_a_character_boundary() {
        assert_eq!(quote("abc", 3), "abc");
        assert_eq!(quote("abcd", 3), "abc...");
        assert_eq!(quote("ééé", 2), "éé...");
        assert_eq!(quote("", 0), "");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(quote("a\nERROR b", 64), "a\\nERROR b");
        assert_eq!(quote("\r\t\u{1b}[31m", 64), "\\r\\t\\u{1b}[31m");
        assert_eq!(
            quote("\0\u{7f}\u{85}\u{9b}", 64),
            "\\u{0}\\u{7f}\\u{85}\\u{9b}"
        );
        assert_eq!(quote("x\u{2028}y\u{202e}z", 64), "x\\u{2028}y\\u{202e}z");
        // Printable text, backslashes included, is kept as it is.
        assert_eq!(
            quote("rsg/agent/nao.rsg \\n ü", 64),
            "rsg/agent/nao.rsg \\n ü"
        );
    }

    #[test]
    fn a_logged_value_is_escaped_and_cut() {
        let e = std::io::Error::other("bad\npath\u{1b}]0;x\u{7}");
        assert_eq!(logged(&e).to_string(), "bad\\npath\\u{1b}]0;x\\u{7}");
        let long = "é".repeat(MAX_LOGGED + 10);
        let shown = logged(&long).to_string();
        assert_eq!(shown.chars().count(), MAX_LOGGED + 3);
        assert!(shown.ends_with("..."));
        // Quoting twice changes nothing more.
        let once = quote("a\nb", 64);
        assert_eq!(logged(&once).to_string(), once);
    }
}
