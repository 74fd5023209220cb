//! `eval` expressions: arithmetic and table look-ups in scene files.

use super::library::SceneLibrary;
use super::tree::{fmt_num, parse_num};

/// Evaluates an `eval` expression to text (numbers formatted like
/// [`fmt_num`]).
pub(super) fn eval_expr(lib: &SceneLibrary, text: &str) -> Result<String, String> {
    let toks = tokenize_expr(text)?;
    let mut p = ExprParser {
        toks: &toks,
        pos: 0,
        depth: 0,
        lib,
    };
    let v = p.expr()?;
    if p.pos != toks.len() {
        return Err("trailing input".into());
    }
    Ok(match v {
        EVal::Num(n) => fmt_num(n),
        EVal::Text(t) => t,
    })
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Ident(String),
    Str(String),
    Op(char),
}

fn tokenize_expr(s: &str) -> Result<Vec<Tok>, String> {
    let cs: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit()
            || (c == '.' && cs.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let start = i;
            while i < cs.len() && (cs[i].is_ascii_digit() || cs[i] == '.') {
                i += 1;
            }
            if i < cs.len() && (cs[i] == 'e' || cs[i] == 'E') {
                let mut j = i + 1;
                if j < cs.len() && (cs[j] == '+' || cs[j] == '-') {
                    j += 1;
                }
                if j < cs.len() && cs[j].is_ascii_digit() {
                    i = j;
                    while i < cs.len() && cs[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let t: String = cs[start..i].iter().collect();
            out.push(Tok::Num(
                t.parse().map_err(|_| format!("bad number '{t}'"))?,
            ));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < cs.len() && (cs[i].is_alphanumeric() || cs[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(cs[start..i].iter().collect()));
        } else if c == '\'' || c == '"' {
            let start = i + 1;
            i += 1;
            while i < cs.len() && cs[i] != c {
                i += 1;
            }
            if i >= cs.len() {
                return Err("unterminated string".into());
            }
            out.push(Tok::Str(cs[start..i].iter().collect()));
            i += 1;
        } else if "+-*/()[].".contains(c) {
            out.push(Tok::Op(c));
            i += 1;
        } else {
            return Err(format!("unexpected character '{c}'"));
        }
    }
    Ok(out)
}

enum EVal {
    Num(f64),
    Text(String),
}

/// Nesting of parentheses and signs an expression may use: the parser
/// recurses over it.
const MAX_EXPR_DEPTH: usize = 200;

struct ExprParser<'a> {
    toks: &'a [Tok],
    pos: usize,
    /// Current nesting of `unary` calls.
    depth: usize,
    lib: &'a SceneLibrary,
}

impl ExprParser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Op(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn num(v: EVal) -> Result<f64, String> {
        match v {
            EVal::Num(n) => Ok(n),
            EVal::Text(t) => parse_num(&t).ok_or_else(|| format!("'{t}' is not a number")),
        }
    }

    fn expr(&mut self) -> Result<EVal, String> {
        let mut v = self.term()?;
        loop {
            if self.eat('+') {
                let r = Self::num(self.term()?)?;
                v = EVal::Num(Self::num(v)? + r);
            } else if self.eat('-') {
                let r = Self::num(self.term()?)?;
                v = EVal::Num(Self::num(v)? - r);
            } else {
                return Ok(v);
            }
        }
    }

    fn term(&mut self) -> Result<EVal, String> {
        let mut v = self.unary()?;
        loop {
            if self.eat('*') {
                let r = Self::num(self.unary()?)?;
                v = EVal::Num(Self::num(v)? * r);
            } else if self.eat('/') {
                let r = Self::num(self.unary()?)?;
                if r == 0.0 {
                    return Err("division by zero".into());
                }
                v = EVal::Num(Self::num(v)? / r);
            } else {
                return Ok(v);
            }
        }
    }

    fn unary(&mut self) -> Result<EVal, String> {
        if self.depth >= MAX_EXPR_DEPTH {
            return Err(format!("nested more than {MAX_EXPR_DEPTH} levels deep"));
        }
        self.depth += 1;
        let v = self.unary_inner();
        self.depth -= 1;
        v
    }

    fn unary_inner(&mut self) -> Result<EVal, String> {
        if self.eat('-') {
            return Ok(EVal::Num(-Self::num(self.unary()?)?));
        }
        if self.eat('+') {
            return Ok(EVal::Num(Self::num(self.unary()?)?));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<EVal, String> {
        let t = self.peek().cloned().ok_or("unexpected end")?;
        self.pos += 1;
        match t {
            Tok::Num(n) => Ok(EVal::Num(n)),
            Tok::Str(s) => Ok(EVal::Text(s)),
            Tok::Op('(') => {
                let v = self.expr()?;
                if !self.eat(')') {
                    return Err("missing ')'".into());
                }
                Ok(v)
            }
            Tok::Ident(name) => {
                if name == "true" || name == "false" {
                    return Ok(EVal::Text(name));
                }
                if self.eat('.') {
                    let key = match self.peek().cloned() {
                        Some(Tok::Ident(k)) => k,
                        _ => return Err(format!("expected a key after '{name}.'")),
                    };
                    self.pos += 1;
                    return Ok(EVal::Text(self.lib.lookup(&name, None, &key)?));
                }
                if self.eat('[') {
                    let idx = Self::num(self.expr()?)?;
                    if !self.eat(']') {
                        return Err("missing ']'".into());
                    }
                    if idx < 0.0 || idx.fract() != 0.0 || idx > 1e6 {
                        return Err(format!("bad index {idx}"));
                    }
                    if !self.eat('[') {
                        return Err("expected ['key']".into());
                    }
                    let key = match self.peek().cloned() {
                        Some(Tok::Str(k)) => k,
                        _ => return Err("expected a quoted key".into()),
                    };
                    self.pos += 1;
                    if !self.eat(']') {
                        return Err("missing ']'".into());
                    }
                    return Ok(EVal::Text(self.lib.lookup(
                        &name,
                        Some(idx as usize),
                        &key,
                    )?));
                }
                Err(format!("unknown name '{name}'"))
            }
            Tok::Op(c) => Err(format!("unexpected '{c}'")),
        }
    }
}
