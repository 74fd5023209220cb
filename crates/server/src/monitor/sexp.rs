//! A small S-expression reader for the monitor port, following RoboViz's
//! rules (docs/protocol.md#monitor-message-layout): lists in parentheses, atoms split on
//! whitespace, no quoting. It borrows atoms from the input, never recurses
//! (so deeply nested untrusted input cannot overflow the stack), and does
//! no I/O.

use thiserror::Error;

/// One node of a parsed expression, borrowing its atoms from the input.
#[derive(Debug, Clone, PartialEq)]
pub enum Node<'a> {
    /// A token between whitespace or parentheses.
    Atom(&'a str),
    /// A parenthesised list.
    List(Vec<Node<'a>>),
}

impl<'a> Node<'a> {
    /// The atom text, if this is an atom.
    pub fn atom(&self) -> Option<&'a str> {
        match self {
            Node::Atom(a) => Some(a),
            Node::List(_) => None,
        }
    }

    /// The items, if this is a list.
    pub fn list(&self) -> Option<&[Node<'a>]> {
        match self {
            Node::List(items) => Some(items),
            Node::Atom(_) => None,
        }
    }

    /// The first atom of a list (`foo` in `(foo 1 2)`).
    pub fn head(&self) -> Option<&'a str> {
        self.list().and_then(|l| l.first()).and_then(Node::atom)
    }
}

/// Why a text is not a well-formed sequence of expressions.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SexpError {
    /// A `)` without a matching `(`.
    #[error("unmatched `)` at byte {0}")]
    UnmatchedClose(usize),
    /// Input ended inside a list.
    #[error("{0} list(s) not closed at end of input")]
    Unclosed(usize),
    /// Nesting deeper than the reader accepts.
    #[error("nesting deeper than {0} levels")]
    TooDeep(usize),
    /// More elements than the caller accepts from one text.
    #[error("more than {0} elements")]
    TooManyNodes(usize),
}

/// Deepest nesting accepted; monitor messages use about 8 levels.
pub const MAX_DEPTH: usize = 256;

/// Reads every top-level expression of `text`. Top-level atoms (stray
/// words between expressions) are kept as [`Node::Atom`]. On a syntax
/// error the expressions completed before it are returned with the error.
pub fn parse_all(text: &str) -> (Vec<Node<'_>>, Option<SexpError>) {
    parse_limited(text, usize::MAX)
}

/// Like [`parse_all`], but stops with [`SexpError::TooManyNodes`] once
/// `max_nodes` atoms and lists have been read, so the work and memory one
/// untrusted text can cause are bounded.
pub fn parse_limited(text: &str, max_nodes: usize) -> (Vec<Node<'_>>, Option<SexpError>) {
    let mut stack: Vec<Vec<Node<'_>>> = vec![Vec::new()];
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut nodes = 0usize;
    while i < bytes.len() {
        let b = bytes[i];
        if b != b')' && !is_space(b) {
            nodes += 1;
            if nodes > max_nodes {
                return (take_top(stack), Some(SexpError::TooManyNodes(max_nodes)));
            }
        }
        match b {
            b'(' => {
                if stack.len() > MAX_DEPTH {
                    return (take_top(stack), Some(SexpError::TooDeep(MAX_DEPTH)));
                }
                stack.push(Vec::new());
                i += 1;
            }
            b')' => {
                if stack.len() == 1 {
                    return (take_top(stack), Some(SexpError::UnmatchedClose(i)));
                }
                let done = stack.pop().unwrap_or_default();
                if let Some(parent) = stack.last_mut() {
                    parent.push(Node::List(done));
                }
                i += 1;
            }
            _ if is_space(b) => i += 1,
            _ => {
                let start = i;
                while i < bytes.len() && !is_space(bytes[i]) && bytes[i] != b'(' && bytes[i] != b')'
                {
                    i += 1;
                }
                // Boundaries are ASCII bytes, so the slice is valid UTF-8.
                let atom = text.get(start..i).unwrap_or("");
                if let Some(top) = stack.last_mut() {
                    top.push(Node::Atom(atom));
                }
            }
        }
    }
    if stack.len() > 1 {
        let open = stack.len() - 1;
        return (take_top(stack), Some(SexpError::Unclosed(open)));
    }
    (take_top(stack), None)
}

fn take_top(mut stack: Vec<Vec<Node<'_>>>) -> Vec<Node<'_>> {
    stack.truncate(1);
    stack.pop().unwrap_or_default()
}

/// Whitespace as RoboViz's and the reference's readers see it (NUL too:
/// some clients terminate strings with it).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c | 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lists_atoms_and_reports_errors() {
        let (nodes, err) = parse_all("(a (b 1)(c))  (d)");
        assert!(err.is_none());
        assert_eq!(nodes.len(), 2);
        assert_eq!(nodes[0].head(), Some("a"));
        assert_eq!(nodes[1].head(), Some("d"));
        let (nodes, err) = parse_all("(a)(b");
        assert_eq!(nodes.len(), 1);
        assert_eq!(err, Some(SexpError::Unclosed(1)));
        let (_, err) = parse_all("(a))");
        assert_eq!(err, Some(SexpError::UnmatchedClose(3)));
        let deep = "(".repeat(100_000);
        let (_, err) = parse_all(&deep);
        assert_eq!(err, Some(SexpError::TooDeep(MAX_DEPTH)));
    }

    #[test]
    fn node_limit_keeps_the_expressions_before_it() {
        let (nodes, err) = parse_limited("(a 1)(b 2)(c 3)", 6);
        assert_eq!(nodes.len(), 2);
        assert_eq!(err, Some(SexpError::TooManyNodes(6)));
        let (nodes, err) = parse_limited("(a 1)(b 2)", 6);
        assert_eq!((nodes.len(), err), (2, None));
    }
}
