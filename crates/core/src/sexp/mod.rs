//! S-expressions: the tree ([`Sexp`]), the parser for agent messages
//! ([`parse`]) and the printer ([`Display`](std::fmt::Display)).
//!
//! The parser follows the tokenizer of the reference server (the bundled
//! `sfsexp`, docs/protocol.md#agent-message-syntax) rather than a general Lisp reader:
//! atoms may contain `#`, `/`, `.` and bytes >= 0x80; `"` starts a quoted
//! atom; `;` starts a comment; `\` escapes inside atoms; a NUL byte ends the
//! frame; commands completed before a syntax error are kept. That is why it
//! is written here by hand instead of using `lexpr`, whose Scheme syntax
//! rejects or reinterprets such input. This module does no I/O.

mod number;
mod parse;

use std::fmt;

pub use number::{atof, atoi};
pub use parse::{parse, ParseError, Parsed, MAX_DEPTH, MAX_NODES};

/// One S-expression: an atom or a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sexp {
    /// A token. Bytes that are not valid UTF-8 are kept as U+FFFD, so the
    /// atom still fails any ASCII-only validation downstream.
    Atom(String),
    /// A parenthesised list.
    List(Vec<Sexp>),
}

impl Sexp {
    /// Shorthand for an atom.
    pub fn atom(s: impl Into<String>) -> Sexp {
        Sexp::Atom(s.into())
    }

    /// The text of an atom, `None` for a list.
    pub fn as_atom(&self) -> Option<&str> {
        match self {
            Sexp::Atom(a) => Some(a),
            Sexp::List(_) => None,
        }
    }

    /// The items of a list, `None` for an atom.
    pub fn as_list(&self) -> Option<&[Sexp]> {
        match self {
            Sexp::List(items) => Some(items),
            Sexp::Atom(_) => None,
        }
    }

    /// For a list whose first element is an atom: that atom (the command or
    /// predicate name) and the remaining elements.
    pub fn as_predicate(&self) -> Option<(&str, &[Sexp])> {
        let items = self.as_list()?;
        let (head, rest) = items.split_first()?;
        Some((head.as_atom()?, rest))
    }
}

impl fmt::Display for Sexp {
    /// Prints in the server's output style: one space between elements, no
    /// other whitespace. An atom that would not read back as one atom
    /// (empty, or containing separators, parentheses or quotes) is printed
    /// quoted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sexp::Atom(a) => {
                if needs_quotes(a) {
                    f.write_str("\"")?;
                    for c in a.chars() {
                        if c == '"' || c == '\\' {
                            f.write_str("\\")?;
                        }
                        write!(f, "{c}")?;
                    }
                    f.write_str("\"")
                } else {
                    f.write_str(a)
                }
            }
            Sexp::List(items) => {
                f.write_str("(")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str(")")
            }
        }
    }
}

fn needs_quotes(a: &str) -> bool {
    a.is_empty()
        || a.starts_with(';')
        || a.bytes()
            .any(|b| !parse::is_atom_byte(b) || b == b'\\' || b == b'"' || b == b'\'')
}
