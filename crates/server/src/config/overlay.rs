//! Laying configuration files over each other field by field.
//!
//! A RON configuration is a struct of keys whose values are plain values or
//! sections (structs). [`Node::parse`] splits a file into that tree, keeping
//! every plain value as its source text (so enum variants such as `None`
//! or `Some(2000)` survive as written, which `ron::Value` would not keep);
//! [`Node::overlay`]
//! puts one file's keys over another's, descending into sections; and
//! [`Node::render`] writes the result back as RON for the typed parse. The
//! caller parses each file typed first, so syntax and unknown keys are
//! reported against the file itself with its line and column.

/// A RON value split into struct fields.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A struct `(key: value, ...)`; a struct name before the parenthesis
    /// is dropped. An empty `()` is an empty struct (changes nothing).
    Struct(Vec<(String, Node)>),
    /// Any other value, as its source text.
    Leaf(String),
}

impl Node {
    /// An empty struct: the identity of [`Node::overlay`].
    pub fn empty() -> Node {
        Node::Struct(Vec::new())
    }

    /// Splits a RON file whose top level is a struct. `None` if the text
    /// is not one (the typed parse reports what is wrong).
    pub fn parse(text: &str) -> Option<Node> {
        let mut s = Scanner {
            b: text.as_bytes(),
            i: 0,
        };
        s.skip_trivia()?;
        s.skip_attributes()?;
        let node = s.value()?;
        s.skip_trivia()?;
        (s.i == s.b.len() && matches!(node, Node::Struct(_))).then_some(node)
    }

    /// Puts `top`'s keys over this node's: a section present in both is
    /// laid over key by key; any other value of `top` replaces this one.
    pub fn overlay(&mut self, top: Node) {
        match (self, top) {
            (Node::Struct(base), Node::Struct(fields)) => {
                for (key, value) in fields {
                    match base.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, old)) => old.overlay(value),
                        None => base.push((key, value)),
                    }
                }
            }
            (this, top) => *this = top,
        }
    }

    /// The value at `path` (keys from the top), if set.
    pub fn get(&self, path: &[&str]) -> Option<&Node> {
        match path.split_first() {
            None => Some(self),
            Some((first, rest)) => match self {
                Node::Struct(fields) => fields
                    .iter()
                    .find(|(k, _)| k == first)
                    .and_then(|(_, v)| v.get(rest)),
                Node::Leaf(_) => None,
            },
        }
    }

    /// Sets the plain value at `path`, creating sections on the way.
    pub fn set(&mut self, path: &[&str], text: String) {
        let Some((first, rest)) = path.split_first() else {
            *self = Node::Leaf(text);
            return;
        };
        if let Node::Leaf(_) = self {
            *self = Node::empty();
        }
        if let Node::Struct(fields) = self {
            match fields.iter_mut().find(|(k, _)| k == first) {
                Some((_, v)) => v.set(rest, text),
                None => {
                    let mut v = Node::empty();
                    v.set(rest, text);
                    fields.push(((*first).to_owned(), v));
                }
            }
        }
    }

    /// Every plain value with its dotted key path, in file order.
    pub fn leaves(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        self.collect_leaves("", &mut out);
        out
    }

    fn collect_leaves(&self, prefix: &str, out: &mut Vec<(String, String)>) {
        match self {
            Node::Leaf(t) => out.push((prefix.to_owned(), t.clone())),
            Node::Struct(fields) => {
                for (k, v) in fields {
                    let path = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    v.collect_leaves(&path, out);
                }
            }
        }
    }

    /// The tree as RON text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(&mut out, 0);
        out
    }

    fn render_into(&self, out: &mut String, depth: usize) {
        match self {
            Node::Leaf(t) => out.push_str(t),
            Node::Struct(fields) => {
                out.push_str("(\n");
                for (k, v) in fields {
                    out.push_str(&"  ".repeat(depth + 1));
                    out.push_str(k);
                    out.push_str(": ");
                    v.render_into(out, depth + 1);
                    // On its own line: a value may end in a line comment.
                    out.push('\n');
                    out.push_str(&"  ".repeat(depth + 1));
                    out.push_str(",\n");
                }
                out.push_str(&"  ".repeat(depth));
                out.push(')');
            }
        }
    }
}

/// A cursor over RON text that knows strings, characters, comments and
/// brackets: enough to find where a value ends.
struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn rest_starts(&self, s: &str) -> bool {
        self.b[self.i..].starts_with(s.as_bytes())
    }

    /// Skips whitespace and comments (block comments nest, as in RON).
    fn skip_trivia(&mut self) -> Option<()> {
        loop {
            match self.peek() {
                Some(c) if c.is_ascii_whitespace() => self.i += 1,
                Some(b'/') if self.rest_starts("//") => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.i += 1;
                    }
                }
                Some(b'/') if self.rest_starts("/*") => {
                    self.i += 2;
                    let mut depth = 1;
                    while depth > 0 {
                        if self.rest_starts("/*") {
                            depth += 1;
                            self.i += 2;
                        } else if self.rest_starts("*/") {
                            depth -= 1;
                            self.i += 2;
                        } else {
                            self.peek()?;
                            self.i += 1;
                        }
                    }
                }
                _ => return Some(()),
            }
        }
    }

    /// Skips `#![enable(...)]` lines at the top of a file.
    fn skip_attributes(&mut self) -> Option<()> {
        while self.rest_starts("#!") {
            while self.peek()? != b']' {
                self.i += 1;
            }
            self.i += 1;
            self.skip_trivia()?;
        }
        Some(())
    }

    fn identifier(&mut self) -> Option<&str> {
        let start = self.i;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.i += 1;
        }
        (self.i > start && !self.b[start].is_ascii_digit())
            .then(|| std::str::from_utf8(&self.b[start..self.i]).ok())
            .flatten()
    }

    /// One value: a struct with named fields becomes [`Node::Struct`],
    /// anything else a [`Node::Leaf`] of its text (trailing comments
    /// excluded). Stops before the `,` or `)` that ends it.
    fn value(&mut self) -> Option<Node> {
        let start = self.i;
        if let Some(fields) = self.try_struct() {
            return Some(Node::Struct(fields));
        }
        self.i = start;
        let end = self.leaf_end()?;
        let text = std::str::from_utf8(&self.b[start..end]).ok()?;
        (!text.is_empty()).then(|| Node::Leaf(text.to_owned()))
    }

    /// `Name? ( key: value, ... )` or `()`; `None` (position unspecified)
    /// for anything else, e.g. `Some(3)` or a tuple.
    fn try_struct(&mut self) -> Option<Vec<(String, Node)>> {
        if self.peek()? != b'(' {
            self.identifier()?;
            self.skip_trivia()?;
        }
        if self.peek()? != b'(' {
            return None;
        }
        self.i += 1;
        let mut fields = Vec::new();
        loop {
            self.skip_trivia()?;
            if self.peek()? == b')' {
                self.i += 1;
                return Some(fields);
            }
            let key = self.identifier()?.to_owned();
            self.skip_trivia()?;
            if self.peek()? != b':' {
                return None;
            }
            self.i += 1;
            self.skip_trivia()?;
            let value = self.value()?;
            fields.push((key, value));
            self.skip_trivia()?;
            match self.peek()? {
                b',' => self.i += 1,
                b')' => {}
                _ => return None,
            }
        }
    }

    /// Moves to the end of a plain value: the `,` or unmatched closing
    /// bracket at depth 0, or the end of the text. Returns the end of its
    /// last token.
    fn leaf_end(&mut self) -> Option<usize> {
        let mut depth = 0usize;
        let mut end = self.i;
        loop {
            self.skip_trivia()?;
            let Some(c) = self.peek() else {
                return (depth == 0).then_some(end);
            };
            match c {
                b',' | b')' | b']' | b'}' if depth == 0 => return Some(end),
                b'(' | b'[' | b'{' => {
                    depth += 1;
                    self.i += 1;
                }
                b')' | b']' | b'}' => {
                    depth -= 1;
                    self.i += 1;
                }
                b'"' => self.string()?,
                b'\'' => self.char_literal()?,
                b'r' if matches!(self.b.get(self.i + 1), Some(b'"' | b'#')) => self.raw_string()?,
                b'b' if self.b.get(self.i + 1) == Some(&b'"') => {
                    self.i += 1;
                    self.string()?
                }
                _ => self.i += 1,
            }
            end = self.i;
        }
    }

    fn string(&mut self) -> Option<()> {
        self.i += 1;
        loop {
            match self.peek()? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some(());
                }
                _ => self.i += 1,
            }
        }
    }

    fn char_literal(&mut self) -> Option<()> {
        self.i += 1;
        loop {
            match self.peek()? {
                b'\\' => self.i += 2,
                b'\'' => {
                    self.i += 1;
                    return Some(());
                }
                _ => self.i += 1,
            }
        }
    }

    fn raw_string(&mut self) -> Option<()> {
        self.i += 1;
        let mut hashes = 0;
        while self.peek()? == b'#' {
            hashes += 1;
            self.i += 1;
        }
        if self.peek()? != b'"' {
            return None;
        }
        self.i += 1;
        let close = format!("\"{}", "#".repeat(hashes));
        while !self.rest_starts(&close) {
            self.peek()?;
            self.i += 1;
        }
        self.i += close.len();
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaves(text: &str) -> Vec<(String, String)> {
        Node::parse(text).expect("parses").leaves()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn values_keep_their_text_and_sections_nest() {
        let text = r##"#![enable(implicit_some)]
// a comment
(
    bind: "0.0.0.0", // trailing
    sync_timeout_ms: Some(2000),
    log: None,
    physics: PhysicsConfig(joint_kind: Multibody /* block /* nested */ */, gravity: 9.81),
    list: [1, (2, 3), "a,b)"],
    quote: 'x',
    escaped: "say \"hi\", (there)",
    raw: r#"a"b,c"#,
    empty: (),
)"##;
        assert_eq!(
            leaves(text),
            pairs(&[
                ("bind", "\"0.0.0.0\""),
                ("sync_timeout_ms", "Some(2000)"),
                ("log", "None"),
                ("physics.joint_kind", "Multibody"),
                ("physics.gravity", "9.81"),
                ("list", "[1, (2, 3), \"a,b)\"]"),
                ("quote", "'x'"),
                ("escaped", "\"say \\\"hi\\\", (there)\""),
                ("raw", "r#\"a\"b,c\"#"),
            ])
        );
        assert_eq!(
            Node::parse(text).expect("parses").get(&["empty"]),
            Some(&Node::empty())
        );
    }

    #[test]
    fn overlay_replaces_values_and_merges_sections() {
        let mut base = Node::parse(
            "(agent_port: 3100, vision: (h_view_cone: 120, add_noise: true), rules: (FieldLength: 30.0))",
        )
        .expect("base");
        let top = Node::parse("(vision: (add_noise: false), seed: 7, rules: ())").expect("top");
        base.overlay(top);
        assert_eq!(
            base.leaves(),
            pairs(&[
                ("agent_port", "3100"),
                ("vision.h_view_cone", "120"),
                ("vision.add_noise", "false"),
                ("rules.FieldLength", "30.0"),
                ("seed", "7"),
            ])
        );
        // The rendering reads back as the same tree; a value that ends in
        // a line comment does not swallow what follows it.
        let mut commented = base.clone();
        commented.set(&["monitor", "monitor_step"], "1 // every cycle".into());
        base.set(&["monitor", "monitor_step"], "1".into());
        let again = Node::parse(&commented.render()).expect("rendered text parses");
        assert_eq!(again, base);
    }

    #[test]
    fn text_that_is_not_a_struct_is_refused() {
        for bad in ["", "3", "(a: 1", "(a 1)", "(a: 1) trailing", "(a: \"open)"] {
            assert_eq!(Node::parse(bad), None, "{bad:?}");
        }
    }
}
