//! The match log check: complete, balanced, a full state first.

use std::path::Path;

use anyhow::{Context, Result};

use crate::wire::balanced;

pub(crate) struct LogCheck {
    pub(crate) lines: usize,
    pub(crate) full_states: usize,
    pub(crate) first_is_full: bool,
    pub(crate) unbalanced: usize,
    pub(crate) blank: usize,
    pub(crate) ends_with_newline: bool,
    pub(crate) bytes: u64,
}

impl LogCheck {
    pub(crate) fn valid(&self) -> bool {
        self.lines > 0
            && self.first_is_full
            && self.unbalanced == 0
            && self.blank == 0
            && self.ends_with_newline
    }
}

pub(crate) fn check_log(path: &Path) -> Result<LogCheck> {
    let data = std::fs::read(path).with_context(|| format!("read {}", path.display()))?;
    let ends_with_newline = data.last() == Some(&b'\n');
    let body = data.strip_suffix(b"\n").unwrap_or(&data);
    let mut c = LogCheck {
        lines: 0,
        full_states: 0,
        first_is_full: false,
        unbalanced: 0,
        blank: 0,
        ends_with_newline,
        bytes: data.len() as u64,
    };
    if data.is_empty() {
        return Ok(c);
    }
    for (i, line) in body.split(|&b| b == b'\n').enumerate() {
        c.lines += 1;
        if line.is_empty() {
            c.blank += 1;
            continue;
        }
        if !balanced(line) {
            c.unbalanced += 1;
        }
        let full = line.windows(9).any(|w| w == b"(RSG 0 1)")
            && line.windows(12).any(|w| w == b"(FieldLength");
        if full {
            c.full_states += 1;
        }
        if i == 0 {
            c.first_is_full = full;
        }
    }
    Ok(c)
}
