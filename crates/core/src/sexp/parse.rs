//! The sfsexp-compatible tokenizer and parser (docs/protocol.md#agent-message-syntax).

use thiserror::Error;

use super::Sexp;

/// Maximum list nesting accepted; deeper input is a syntax error. No client
/// nests deeper than three levels.
pub const MAX_DEPTH: usize = 64;

/// Maximum number of elements (atoms and lists) built from one message;
/// parsing stops with [`ParseError::TooManyNodes`] there. A real agent's
/// message has fewer than 100 (24 hinge commands, `say`, `beam`, `syn`), so
/// this only bounds the work and memory one hostile message can cause.
pub const MAX_NODES: usize = 1024;

/// Why parsing stopped before the end of the payload.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseError {
    /// A `)` with no open list.
    #[error("unbalanced ')' at byte {offset}")]
    UnbalancedClose {
        /// Byte offset of the parenthesis.
        offset: usize,
    },
    /// The payload ended inside a list (the unfinished list is discarded).
    #[error("unterminated list at the end of the message (opened at byte {offset})")]
    Unterminated {
        /// Byte offset where the outermost unfinished list was opened.
        offset: usize,
    },
    /// A quoted atom was not closed.
    #[error("unterminated string starting at byte {offset}")]
    UnterminatedString {
        /// Byte offset of the opening quote.
        offset: usize,
    },
    /// Lists nested deeper than [`MAX_DEPTH`].
    #[error("lists nested deeper than {MAX_DEPTH} at byte {offset}")]
    TooDeep {
        /// Byte offset of the offending parenthesis.
        offset: usize,
    },
    /// More than [`MAX_NODES`] elements in one message.
    #[error("more than {MAX_NODES} elements in one message (at byte {offset})")]
    TooManyNodes {
        /// Byte offset of the first element over the limit.
        offset: usize,
    },
}

/// The result of parsing one payload: every top-level expression completed
/// before the end or before the first syntax error, and that error if any.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    /// Complete top-level expressions, in order.
    pub items: Vec<Sexp>,
    /// The syntax error that ended parsing early, if any.
    pub error: Option<ParseError>,
}

/// Whether `b` may appear in an unquoted atom: `!`, `#`..`&`, `*`..`~` and
/// bytes >= 0x80.
pub(crate) fn is_atom_byte(b: u8) -> bool {
    b == b'!' || (b'#'..=b'&').contains(&b) || (b'*'..=b'~').contains(&b) || b >= 0x80
}

fn to_text(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// The length of the plain atom at the start of `input`: its atom bytes up
/// to the first separator, or `None` if a backslash comes first (the atom
/// then needs the escape handling).
fn plain_atom_len(input: &[u8]) -> Option<usize> {
    for (n, &c) in input.iter().enumerate() {
        if c == b'\\' {
            return None;
        }
        if !is_atom_byte(c) {
            return Some(n);
        }
    }
    Some(input.len())
}

/// Parses one payload. Never panics; a NUL byte ends the payload; at most
/// [`MAX_NODES`] elements are built.
pub fn parse(input: &[u8]) -> Parsed {
    let end = input.iter().position(|&b| b == 0).unwrap_or(input.len());
    let input = &input[..end];
    let mut out = Parsed::default();
    // Stack of open lists: (offset of '(', items so far).
    let mut stack: Vec<(usize, Vec<Sexp>)> = Vec::new();
    let mut i = 0;
    let mut nodes = 0usize;
    let push =
        |stack: &mut Vec<(usize, Vec<Sexp>)>, out: &mut Parsed, e: Sexp| match stack.last_mut() {
            Some((_, items)) => items.push(e),
            None => out.items.push(e),
        };
    while i < input.len() {
        let b = input[i];
        let starts_node = b == b'(' || b == b'"' || is_atom_byte(b) || b == b'\\';
        if starts_node {
            nodes += 1;
            if nodes > MAX_NODES {
                out.error = Some(ParseError::TooManyNodes { offset: i });
                return out;
            }
        }
        match b {
            b'(' => {
                if stack.len() >= MAX_DEPTH {
                    out.error = Some(ParseError::TooDeep { offset: i });
                    return out;
                }
                stack.push((i, Vec::new()));
                i += 1;
            }
            b')' => match stack.pop() {
                Some((_, items)) => {
                    push(&mut stack, &mut out, Sexp::List(items));
                    i += 1;
                }
                None => {
                    out.error = Some(ParseError::UnbalancedClose { offset: i });
                    return out;
                }
            },
            b';' => {
                while i < input.len() && input[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' => {
                let start = i;
                i += 1;
                let mut text = Vec::new();
                loop {
                    match input.get(i) {
                        None => {
                            out.error = Some(ParseError::UnterminatedString { offset: start });
                            return out;
                        }
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(b'\\') if i + 1 < input.len() => {
                            text.push(input[i + 1]);
                            i += 2;
                        }
                        Some(&c) => {
                            text.push(c);
                            i += 1;
                        }
                    }
                }
                push(&mut stack, &mut out, Sexp::Atom(to_text(text)));
            }
            // Quote syntax: the quoted expression stands for itself.
            b'\'' => i += 1,
            _ if is_atom_byte(b) || b == b'\\' => {
                // Most atoms have no escape: one copy of their bytes.
                if let Some(n) = plain_atom_len(&input[i..]) {
                    let text = String::from_utf8_lossy(&input[i..i + n]).into_owned();
                    i += n;
                    push(&mut stack, &mut out, Sexp::Atom(text));
                    continue;
                }
                let mut text = Vec::new();
                while i < input.len() {
                    let c = input[i];
                    if c == b'\\' {
                        match input.get(i + 1) {
                            Some(&n @ (b'"' | b'\'' | b'(' | b')' | b'\\')) => {
                                text.push(n);
                                i += 2;
                            }
                            _ => {
                                text.push(c);
                                i += 1;
                            }
                        }
                    } else if is_atom_byte(c) {
                        text.push(c);
                        i += 1;
                    } else {
                        break;
                    }
                }
                push(&mut stack, &mut out, Sexp::Atom(to_text(text)));
            }
            // Separators and every other byte end a token.
            _ => i += 1,
        }
    }
    if let Some((offset, _)) = stack.first() {
        out.error = Some(ParseError::Unterminated { offset: *offset });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> Sexp {
        Sexp::atom(s)
    }
    fn l(items: Vec<Sexp>) -> Sexp {
        Sexp::List(items)
    }

    #[test]
    fn several_commands_without_separators() {
        let p = parse(b"(he1 0.10000)(he2 -1e-05)(syn)");
        assert_eq!(p.error, None);
        assert_eq!(
            p.items,
            vec![
                l(vec![a("he1"), a("0.10000")]),
                l(vec![a("he2"), a("-1e-05")]),
                l(vec![a("syn")]),
            ]
        );
    }

    #[test]
    fn nested_and_paths() {
        let p = parse(b"(init (unum 1)(teamname A-b_1))(scene rsg/agent/nao/nao_hetero.rsg 4)");
        assert_eq!(p.items.len(), 2);
        assert_eq!(
            p.items[0],
            l(vec![
                a("init"),
                l(vec![a("unum"), a("1")]),
                l(vec![a("teamname"), a("A-b_1")])
            ])
        );
        assert_eq!(p.items[1].as_predicate().map(|x| x.0), Some("scene"));
    }

    #[test]
    fn error_keeps_completed_commands() {
        let p = parse(b"(syn))(he1 1)");
        assert_eq!(p.items, vec![l(vec![a("syn")])]);
        assert_eq!(p.error, Some(ParseError::UnbalancedClose { offset: 5 }));
        let p = parse(b"(syn)(he1 1");
        assert_eq!(p.items.len(), 1);
        assert_eq!(p.error, Some(ParseError::Unterminated { offset: 5 }));
    }

    #[test]
    fn reference_tokenizer_rows() {
        // NUL ends the frame.
        assert_eq!(parse(b"(syn)\0(he1 1)").items.len(), 1);
        // Quoted atom with spaces and parentheses.
        assert_eq!(
            parse(b"(say \"a (b)\")").items[0],
            l(vec![a("say"), a("a (b)")])
        );
        // Comment swallows the closing parenthesis.
        let p = parse(b"(say ;x)\n)");
        assert_eq!(p.items, vec![l(vec![a("say")])]);
        // Backslash escapes inside an atom.
        assert_eq!(parse(b"(say a\\)b)").items[0], l(vec![a("say"), a("a)b")]));
        // Tabs, CR, LF separate.
        assert_eq!(
            parse(b"(a\tb\r\nc)").items[0],
            l(vec![a("a"), a("b"), a("c")])
        );
        // Non-ASCII bytes stay inside atoms.
        let p = parse(b"(say h\xffi)");
        assert_eq!(p.items[0].as_list().map(|x| x.len()), Some(2));
    }

    #[test]
    fn atoms_with_and_without_escapes() {
        // An escape after plain bytes, at the start, and a lone backslash.
        assert_eq!(
            parse(b"(say ab\\(c)").items[0],
            l(vec![a("say"), a("ab(c")])
        );
        assert_eq!(parse(b"\\)x \\q").items, vec![a(")x"), a("\\q")]);
        // An atom ending the input, and invalid UTF-8 replaced.
        assert_eq!(parse(b"syn").items, vec![a("syn")]);
        assert_eq!(parse(b"h\xffi").items, vec![a("h\u{FFFD}i")]);
    }

    #[test]
    fn too_deep_is_an_error_not_a_crash() {
        let deep = vec![b'('; 100_000];
        let p = parse(&deep);
        assert!(matches!(p.error, Some(ParseError::TooDeep { .. })));
    }

    #[test]
    fn too_many_nodes_stops_parsing() {
        // A real agent message: 24 hinges, say, syn, far below the limit.
        let mut real = String::new();
        for name in crate::command::HINGE_EFFECTORS {
            real.push_str(&format!("({name} -0.12345)"));
        }
        real.push_str("(say hello)(syn)");
        assert_eq!(parse(real.as_bytes()).error, None);
        // `(x)` is two elements: 512 fit, the 513th list is cut.
        let flood = "(x)".repeat(100_000);
        let p = parse(flood.as_bytes());
        assert_eq!(p.items.len(), MAX_NODES / 2);
        assert_eq!(
            p.error,
            Some(ParseError::TooManyNodes {
                offset: 3 * MAX_NODES / 2
            })
        );
    }

    #[test]
    fn display_round_trip() {
        let e = l(vec![
            a("See"),
            l(vec![a("B"), l(vec![a("pol"), a("1.00")])]),
            a(""),
        ]);
        let text = e.to_string();
        assert_eq!(text, "(See (B (pol 1.00)) \"\")");
        assert_eq!(parse(text.as_bytes()).items, vec![e]);
    }
}
