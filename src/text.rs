//! Untrusted text (from agents and monitors) quoted in log lines and error
//! messages: cut to a readable length, so a client sending something huge
//! cannot make the log huge.

/// `s` cut after `max_chars` characters, with `...` appended when cut.
pub fn truncate(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::truncate;

    #[test]
    fn long_text_is_cut_on_a_character_boundary() {
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("abcd", 3), "abc...");
        assert_eq!(truncate("ééé", 2), "éé...");
        assert_eq!(truncate("", 0), "");
    }
}
