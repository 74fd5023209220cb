//! Scene text -> s-expressions, each with the line it starts on.

use std::sync::Arc;

use super::{at, SceneError};

/// An s-expression with the line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub enum Sexp {
    /// An atom (quotes of quoted strings removed).
    Atom(String, usize),
    /// A parenthesised list.
    List(Vec<Sexp>, usize),
}

/// Dropping is iterative: a deeply nested (untrusted) scene text must not
/// overflow the stack when its tree is freed.
impl Drop for Sexp {
    fn drop(&mut self) {
        let Sexp::List(items, _) = self else {
            return;
        };
        let mut pending = std::mem::take(items);
        while let Some(mut s) = pending.pop() {
            if let Sexp::List(inner, _) = &mut s {
                pending.append(inner);
            }
        }
    }
}

impl Sexp {
    pub(super) fn line(&self) -> usize {
        match self {
            Sexp::Atom(_, l) | Sexp::List(_, l) => *l,
        }
    }
}

/// Nesting of lists a scene file may use (the Nao's files use under 10):
/// the expansion recurses over it, and a bound here bounds its stack.
pub const MAX_NESTING: usize = 100;

/// Parses scene text into its top-level expressions.
pub fn parse_sexps(file: &Arc<str>, text: &str) -> Result<Vec<Sexp>, SceneError> {
    let mut stack: Vec<(Vec<Sexp>, usize)> = vec![(Vec::new(), 1)];
    let mut line = 1usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            c if c.is_whitespace() => {}
            ';' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        line += 1;
                        break;
                    }
                }
            }
            '(' => {
                if stack.len() > MAX_NESTING {
                    return Err(at(
                        file,
                        line,
                        format!("lists nested more than {MAX_NESTING} levels deep"),
                    ));
                }
                stack.push((Vec::new(), line));
            }
            ')' => {
                let (items, start) = match stack.pop() {
                    Some(v) if !stack.is_empty() => v,
                    _ => return Err(at(file, line, "unbalanced ')'")),
                };
                if let Some(top) = stack.last_mut() {
                    top.0.push(Sexp::List(items, start));
                }
            }
            '"' | '\'' => {
                let start = line;
                let mut s = String::new();
                let mut closed = false;
                for d in chars.by_ref() {
                    if d == c {
                        closed = true;
                        break;
                    }
                    if d == '\n' {
                        line += 1;
                    }
                    s.push(d);
                }
                if !closed {
                    return Err(at(file, start, "unterminated string"));
                }
                if let Some(top) = stack.last_mut() {
                    top.0.push(Sexp::Atom(s, start));
                }
            }
            c => {
                let mut s = String::new();
                s.push(c);
                while let Some(&d) = chars.peek() {
                    if d.is_whitespace() || d == '(' || d == ')' || d == ';' {
                        break;
                    }
                    s.push(d);
                    chars.next();
                }
                if let Some(top) = stack.last_mut() {
                    top.0.push(Sexp::Atom(s, line));
                }
            }
        }
    }
    if stack.len() != 1 {
        let open = stack.last().map(|s| s.1).unwrap_or(line);
        return Err(at(file, open, "unclosed '('"));
    }
    Ok(stack.pop().map(|s| s.0).unwrap_or_default())
}
