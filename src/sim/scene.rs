//! The scene language: a strict reading of SimSpark's `.rsg` files
//! (spec/scene-format.md §10) into a plain tree of nodes.
//!
//! Pipeline: text -> [`Sexp`] (with line numbers) -> expansion of `templ`,
//! `def`, `$` substitution, `join`, `eval`, `switch` and `importScene`
//! into a [`SceneTree`] of nodes whose method calls carry their arguments as
//! text. Interpreting the tree (robot model, field) happens elsewhere
//! ([`crate::sim::model`], [`crate::sim::world`]); this module never touches
//! the physics engine.
//!
//! Every error names the file and line: `file:line: message`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

/// Everything that can go wrong while loading a scene or a robot model.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// A file or directory could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The path that failed.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A problem at a known place in a scene file.
    #[error("{file}:{line}: {message}")]
    At {
        /// Scene file (resource path relative to the library root).
        file: Arc<str>,
        /// 1-based line number.
        line: usize,
        /// What went wrong.
        message: String,
    },
    /// A data table (`*.ron` next to the scene files) is malformed.
    #[error("{path}: {message}")]
    Table {
        /// The table file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The requested scene file is not in the library.
    #[error("unknown scene '{0}'")]
    UnknownScene(String),
    /// The scene was read but does not describe a usable model or field.
    #[error("{scene}: {message}")]
    Invalid {
        /// The scene file at the top of the import chain.
        scene: String,
        /// What is wrong with it.
        message: String,
    },
}

fn at(file: &Arc<str>, line: usize, message: impl Into<String>) -> SceneError {
    SceneError::At {
        file: file.clone(),
        line,
        message: message.into(),
    }
}

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
    fn line(&self) -> usize {
        match self {
            Sexp::Atom(_, l) | Sexp::List(_, l) => *l,
        }
    }
}

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
            '(' => stack.push((Vec::new(), line)),
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

/// A value of a data table.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(untagged)]
enum TableValue {
    Bool(bool),
    Num(f64),
    Text(String),
}

impl TableValue {
    fn text(&self) -> String {
        match self {
            TableValue::Bool(b) => b.to_string(),
            TableValue::Num(n) => fmt_num(*n),
            TableValue::Text(t) => t.clone(),
        }
    }
}

/// A data table read from a `*.ron` file: either a list of records
/// (looked up as `Name[i]['key']`, like the variant table `NaoType`) or one
/// record (looked up as `Name.key`, like `Soccer.FieldLength`).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(untagged)]
enum Table {
    List(Vec<BTreeMap<String, TableValue>>),
    Map(BTreeMap<String, TableValue>),
}

/// One method call on a node, arguments fully evaluated to text.
#[derive(Debug, Clone)]
pub struct Call {
    /// Method name (`setLocalPos`, `attach`, ...).
    pub method: String,
    /// Arguments as text.
    pub args: Vec<String>,
    /// File the call was written in.
    pub file: Arc<str>,
    /// Line of the call.
    pub line: usize,
}

impl Call {
    /// An error located at this call.
    pub fn error(&self, message: impl Into<String>) -> SceneError {
        at(
            &self.file,
            self.line,
            format!("{}: {}", self.method, message.into()),
        )
    }

    /// Checks the argument count.
    pub fn expect_args(&self, n: usize) -> Result<(), SceneError> {
        if self.args.len() != n {
            return Err(self.error(format!("expected {n} argument(s), got {}", self.args.len())));
        }
        Ok(())
    }

    /// Argument `i` as a number (strict).
    pub fn num(&self, i: usize) -> Result<f64, SceneError> {
        let a = self
            .args
            .get(i)
            .ok_or_else(|| self.error(format!("missing argument {}", i + 1)))?;
        parse_num(a).ok_or_else(|| self.error(format!("'{a}' is not a number")))
    }

    /// Arguments `i..i+3` as a vector.
    pub fn vec3(&self, i: usize) -> Result<Vector3<f64>, SceneError> {
        Ok(Vector3::new(
            self.num(i)?,
            self.num(i + 1)?,
            self.num(i + 2)?,
        ))
    }

    /// Argument `i` as a boolean (`true`/`false`).
    pub fn boolean(&self, i: usize) -> Result<bool, SceneError> {
        match self.args.get(i).map(String::as_str) {
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(a) => Err(self.error(format!("'{a}' is not true or false"))),
            None => Err(self.error(format!("missing argument {}", i + 1))),
        }
    }

    /// Argument `i` as text.
    pub fn text(&self, i: usize) -> Result<&str, SceneError> {
        self.args
            .get(i)
            .map(String::as_str)
            .ok_or_else(|| self.error(format!("missing argument {}", i + 1)))
    }
}

/// One node of an expanded scene.
#[derive(Debug, Clone)]
pub struct SceneNode {
    /// Node class (`Transform`, `RigidBody`, `HingeJoint`, ...).
    pub class: String,
    /// Name given by `setName`, if any.
    pub name: Option<String>,
    /// Parent node (None for the root).
    pub parent: Option<usize>,
    /// Children in file order.
    pub children: Vec<usize>,
    /// Pose relative to the nearest enclosing transform-like node.
    pub local: Isometry3<f64>,
    /// Pose in the scene frame (composition of the enclosing transforms).
    pub world: Isometry3<f64>,
    /// Method calls other than the immediate ones (`setName`,
    /// `setLocalPos`, `setLocalRotation`), in file order.
    pub calls: Vec<Call>,
    /// File and line where the node was created.
    pub file: Arc<str>,
    /// Line where the node was created.
    pub line: usize,
}

impl SceneNode {
    /// Whether this class has a pose of its own.
    pub fn is_transform(&self) -> bool {
        matches!(self.class.as_str(), "Transform" | "AgentAspect" | "Ball")
    }

    /// An error located where this node was created.
    pub fn error(&self, message: impl Into<String>) -> SceneError {
        at(
            &self.file,
            self.line,
            format!("{}: {}", self.class, message.into()),
        )
    }

    /// The calls of one method.
    pub fn calls_of<'a>(&'a self, method: &'a str) -> impl Iterator<Item = &'a Call> + 'a {
        self.calls.iter().filter(move |c| c.method == method)
    }

    /// The last call of one method, if any.
    pub fn last_call(&self, method: &str) -> Option<&Call> {
        self.calls.iter().rev().find(|c| c.method == method)
    }
}

/// An expanded scene: node 0 is the root.
#[derive(Debug, Clone)]
pub struct SceneTree {
    /// All nodes; children are listed depth-first from the root.
    pub nodes: Vec<SceneNode>,
}

impl SceneTree {
    /// Node indices in depth-first (file) order, root excluded.
    pub fn depth_first(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut stack: Vec<usize> = self
            .nodes
            .first()
            .map(|n| n.children.iter().rev().copied().collect())
            .unwrap_or_default();
        while let Some(i) = stack.pop() {
            out.push(i);
            if let Some(n) = self.nodes.get(i) {
                stack.extend(n.children.iter().rev().copied());
            }
        }
        out
    }

    /// The nearest transform-like node at or above `i`.
    pub fn enclosing_transform(&self, mut i: usize) -> Option<usize> {
        loop {
            let n = self.nodes.get(i)?;
            if n.is_transform() {
                return Some(i);
            }
            i = n.parent?;
        }
    }

    /// Resolves a node path (`../boxBody`, `../../torso/boxBody`) relative
    /// to node `from`.
    pub fn resolve_path(&self, from: usize, path: &str) -> Option<usize> {
        let mut cur = if path.starts_with('/') { 0 } else { from };
        for seg in path.split('/').filter(|s| !s.is_empty() && *s != ".") {
            if seg == ".." {
                cur = self.nodes.get(cur)?.parent?;
            } else {
                cur =
                    *self.nodes.get(cur)?.children.iter().find(|&&c| {
                        self.nodes.get(c).and_then(|n| n.name.as_deref()) == Some(seg)
                    })?;
            }
        }
        Some(cur)
    }
}

/// Formats a number as text the way `eval` results are passed on.
fn fmt_num(x: f64) -> String {
    format!("{x}")
}

/// Strict number parsing (`1e-8`, `-0.055`, `3`); no lenient zero.
pub fn parse_num(s: &str) -> Option<f64> {
    let v: f64 = s.trim().parse().ok()?;
    v.is_finite().then_some(v)
}

/// The scene files of one directory tree, read and syntax-checked at load
/// time, plus the data tables (`*.ron`) found beside them.
#[derive(Debug, Clone)]
pub struct SceneLibrary {
    root: PathBuf,
    files: BTreeMap<String, Arc<Vec<Sexp>>>,
    tables: BTreeMap<String, Table>,
}

const MAX_IMPORT_DEPTH: usize = 16;

impl SceneLibrary {
    /// Reads every `*.rsg` file below `dir` (keyed by its path relative to
    /// `dir`, with `/` separators) and every `*.ron` data table.
    pub fn load(dir: &Path) -> Result<SceneLibrary, SceneError> {
        let mut lib = SceneLibrary {
            root: dir.to_path_buf(),
            files: BTreeMap::new(),
            tables: BTreeMap::new(),
        };
        let mut pending = vec![dir.to_path_buf()];
        while let Some(d) = pending.pop() {
            let rd = std::fs::read_dir(&d).map_err(|source| SceneError::Io {
                path: d.clone(),
                source,
            })?;
            let mut entries = Vec::new();
            for e in rd {
                let e = e.map_err(|source| SceneError::Io {
                    path: d.clone(),
                    source,
                })?;
                entries.push(e.path());
            }
            entries.sort();
            for p in entries {
                if p.is_dir() {
                    pending.push(p);
                    continue;
                }
                let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
                if ext != "rsg" && ext != "ron" {
                    continue;
                }
                let text = std::fs::read_to_string(&p).map_err(|source| SceneError::Io {
                    path: p.clone(),
                    source,
                })?;
                if ext == "ron" {
                    let t: BTreeMap<String, Table> =
                        ron::from_str(&text).map_err(|e| SceneError::Table {
                            path: p.clone(),
                            message: e.to_string(),
                        })?;
                    lib.tables.extend(t);
                    continue;
                }
                let rel = p
                    .strip_prefix(dir)
                    .unwrap_or(&p)
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                let name: Arc<str> = Arc::from(rel.as_str());
                let sexps = parse_sexps(&name, &text)?;
                check_header(&name, &sexps)?;
                lib.files.insert(rel, Arc::new(sexps));
            }
        }
        Ok(lib)
    }

    /// The directory the library was read from.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether a scene file of that resource path exists.
    pub fn contains(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    /// Resource paths of all scene files, sorted.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// Expands a scene file with its template arguments into a node tree.
    pub fn instantiate(&self, path: &str, args: &[String]) -> Result<SceneTree, SceneError> {
        let mut tree = SceneTree {
            nodes: vec![SceneNode {
                class: "Root".into(),
                name: None,
                parent: None,
                children: Vec::new(),
                local: Isometry3::identity(),
                world: Isometry3::identity(),
                calls: Vec::new(),
                file: Arc::from(path),
                line: 0,
            }],
        };
        self.import(&mut tree, 0, path, args, None, 0)?;
        Ok(tree)
    }

    fn import(
        &self,
        tree: &mut SceneTree,
        node: usize,
        path: &str,
        args: &[String],
        from: Option<(&Arc<str>, usize)>,
        depth: usize,
    ) -> Result<(), SceneError> {
        let sexps = match self.files.get(path) {
            Some(s) => s.clone(),
            None => {
                return Err(match from {
                    Some((f, l)) => at(f, l, format!("importScene: unknown scene '{path}'")),
                    None => SceneError::UnknownScene(path.to_string()),
                })
            }
        };
        if depth > MAX_IMPORT_DEPTH {
            let (f, l) = from
                .map(|(f, l)| (f.clone(), l))
                .unwrap_or((Arc::from(path), 0));
            return Err(at(
                &f,
                l,
                "importScene: imports nested too deeply (a cycle?)",
            ));
        }
        let file: Arc<str> = Arc::from(path);
        let mut env = Env {
            file: file.clone(),
            vars: BTreeMap::new(),
            args: args.to_vec(),
            args_used: false,
        };
        let body = match sexps.get(1) {
            Some(Sexp::List(items, _)) => items.clone(),
            Some(other) => return Err(at(&file, other.line(), "expected a list of statements")),
            None => Vec::new(),
        };
        if sexps.len() > 2 {
            return Err(at(
                &file,
                sexps[2].line(),
                "unexpected expression after the statement list",
            ));
        }
        for st in &body {
            self.statement(tree, node, st, &mut env, depth)?;
        }
        Ok(())
    }

    fn statement(
        &self,
        tree: &mut SceneTree,
        node: usize,
        st: &Sexp,
        env: &mut Env,
        depth: usize,
    ) -> Result<(), SceneError> {
        let (items, line) = match st {
            Sexp::List(items, line) => (items, *line),
            Sexp::Atom(a, line) => {
                return Err(at(
                    &env.file,
                    *line,
                    format!("expected a statement, got '{a}'"),
                ))
            }
        };
        let head = match items.first() {
            Some(Sexp::Atom(h, _)) => h.as_str(),
            _ => return Err(at(&env.file, line, "a statement must start with a name")),
        };
        let rest = &items[1..];
        match head {
            "templ" | "template" => {
                let mut names = Vec::new();
                for r in rest {
                    match r {
                        Sexp::Atom(a, _) if a.starts_with('$') => names.push(a.clone()),
                        _ => return Err(at(&env.file, r.line(), "templ: expected $names")),
                    }
                }
                if names.len() != env.args.len() {
                    return Err(at(
                        &env.file,
                        line,
                        format!(
                            "templ: this file takes {} argument(s) ({}), got {}",
                            names.len(),
                            names.join(" "),
                            env.args.len()
                        ),
                    ));
                }
                for (n, v) in names.into_iter().zip(env.args.clone()) {
                    env.vars.insert(n, v);
                }
                env.args_used = true;
            }
            "def" | "define" => {
                if rest.len() != 2 {
                    return Err(at(&env.file, line, "def: expected (def $name value)"));
                }
                let name = match &rest[0] {
                    Sexp::Atom(a, _) if a.starts_with('$') => a.clone(),
                    _ => return Err(at(&env.file, line, "def: the name must start with '$'")),
                };
                let v = self.value(&rest[1], env)?;
                env.vars.insert(name, v);
            }
            "nd" | "node" => {
                let class = match rest.first() {
                    Some(Sexp::Atom(c, l)) => env.subst(c, *l)?,
                    _ => return Err(at(&env.file, line, "nd: expected a class name")),
                };
                let parent_world = tree
                    .nodes
                    .get(node)
                    .map(|n| n.world)
                    .unwrap_or_else(Isometry3::identity);
                let idx = tree.nodes.len();
                tree.nodes.push(SceneNode {
                    class,
                    name: None,
                    parent: Some(node),
                    children: Vec::new(),
                    local: Isometry3::identity(),
                    world: parent_world,
                    calls: Vec::new(),
                    file: env.file.clone(),
                    line,
                });
                if let Some(p) = tree.nodes.get_mut(node) {
                    p.children.push(idx);
                }
                for st in &rest[1..] {
                    self.statement(tree, idx, st, env, depth)?;
                }
            }
            "switch" => {
                let value = match rest.first() {
                    Some(v) => self.value(v, env)?,
                    None => return Err(at(&env.file, line, "switch: missing value")),
                };
                for case in &rest[1..] {
                    let (citems, cline) = match case {
                        Sexp::List(ci, cl) if ci.len() == 2 => (ci, *cl),
                        _ => {
                            return Err(at(
                                &env.file,
                                case.line(),
                                "switch: each case is (label statement)",
                            ))
                        }
                    };
                    let label = self.value(&citems[0], env)?;
                    if label == value {
                        let _ = cline;
                        return self.statement(tree, node, &citems[1], env, depth);
                    }
                }
                return Err(at(
                    &env.file,
                    line,
                    format!("switch: no case matches '{value}'"),
                ));
            }
            "importScene" => {
                let mut vals = Vec::new();
                for r in rest {
                    vals.push(self.value(r, env)?);
                }
                if vals.is_empty() {
                    return Err(at(&env.file, line, "importScene: missing file name"));
                }
                let path = vals.remove(0);
                let file = env.file.clone();
                self.import(tree, node, &path, &vals, Some((&file, line)), depth + 1)?;
            }
            method => {
                let mut args = Vec::new();
                for r in rest {
                    args.push(self.value(r, env)?);
                }
                let call = Call {
                    method: method.to_string(),
                    args,
                    file: env.file.clone(),
                    line,
                };
                apply_call(tree, node, call)?;
            }
        }
        Ok(())
    }

    /// Evaluates one argument to text.
    fn value(&self, v: &Sexp, env: &Env) -> Result<String, SceneError> {
        match v {
            Sexp::Atom(a, line) => env.subst(a, *line),
            Sexp::List(items, line) => {
                let head = match items.first() {
                    Some(Sexp::Atom(h, _)) => h.as_str(),
                    _ => return Err(at(&env.file, *line, "expected (eval ...) or (join ...)")),
                };
                let mut parts = Vec::new();
                for it in &items[1..] {
                    let t = self.value(it, env)?;
                    // Nested evals group: keep them as one operand.
                    let grouped = head == "eval"
                        && matches!(it, Sexp::List(l, _) if matches!(l.first(), Some(Sexp::Atom(h, _)) if h == "eval"));
                    parts.push(if grouped { format!("({t})") } else { t });
                }
                match head {
                    "join" => Ok(parts.concat()),
                    "eval" => {
                        let text = parts.join(" ");
                        self.eval(&text)
                            .map_err(|m| at(&env.file, *line, format!("eval '{text}': {m}")))
                    }
                    other => Err(at(
                        &env.file,
                        *line,
                        format!("unknown expression '{other}'"),
                    )),
                }
            }
        }
    }

    fn eval(&self, text: &str) -> Result<String, String> {
        let toks = tokenize_expr(text)?;
        let mut p = ExprParser {
            toks: &toks,
            pos: 0,
            lib: self,
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

    fn lookup(&self, name: &str, index: Option<usize>, key: &str) -> Result<String, String> {
        let t = self
            .tables
            .get(name)
            .ok_or_else(|| format!("unknown table '{name}'"))?;
        let rec = match (t, index) {
            (Table::List(l), Some(i)) => l
                .get(i)
                .ok_or_else(|| format!("{name}[{i}] does not exist ({} entries)", l.len()))?,
            (Table::Map(m), None) => m,
            (Table::List(_), None) => return Err(format!("'{name}' needs an index")),
            (Table::Map(_), Some(_)) => return Err(format!("'{name}' takes no index")),
        };
        rec.get(key)
            .map(TableValue::text)
            .ok_or_else(|| format!("no key '{key}' in {name}"))
    }
}

fn check_header(file: &Arc<str>, sexps: &[Sexp]) -> Result<(), SceneError> {
    match sexps.first() {
        Some(Sexp::List(items, line)) => {
            let words: Vec<&str> = items
                .iter()
                .filter_map(|s| match s {
                    Sexp::Atom(a, _) => Some(a.as_str()),
                    _ => None,
                })
                .collect();
            match words.as_slice() {
                ["RSG" | "RubySceneGraph", "0", "1"] => Ok(()),
                _ => Err(at(file, *line, "expected the header (RSG 0 1)")),
            }
        }
        Some(other) => Err(at(file, other.line(), "expected the header (RSG 0 1)")),
        None => Err(at(file, 1, "empty scene file")),
    }
}

struct Env {
    file: Arc<str>,
    vars: BTreeMap<String, String>,
    args: Vec<String>,
    args_used: bool,
}

impl Env {
    fn subst(&self, a: &str, line: usize) -> Result<String, SceneError> {
        if let Some(_name) = a.strip_prefix('$') {
            return self.vars.get(a).cloned().ok_or_else(|| {
                let hint = if !self.args_used && !self.args.is_empty() {
                    " (arguments given but no templ)"
                } else {
                    ""
                };
                at(&self.file, line, format!("unknown variable '{a}'{hint}"))
            });
        }
        Ok(a.to_string())
    }
}

/// Applies a method call to a node: immediate methods change the node at
/// once, the others are stored in file order.
fn apply_call(tree: &mut SceneTree, node: usize, call: Call) -> Result<(), SceneError> {
    let n = tree
        .nodes
        .get_mut(node)
        .ok_or_else(|| call.error("no current node"))?;
    match call.method.as_str() {
        "setName" => {
            call.expect_args(1)?;
            n.name = Some(call.args[0].clone());
            // Keep the call too: some classes (perceptors) read it.
            n.calls.push(call);
        }
        "setLocalPos" => {
            call.expect_args(3)?;
            if !n.is_transform() {
                return Err(call.error(format!("{} has no pose", n.class)));
            }
            let p = call.vec3(0)?;
            n.local.translation = Translation3::from(p);
            refresh_world(tree, node);
        }
        "setLocalRotation" => {
            call.expect_args(3)?;
            if !n.is_transform() {
                return Err(call.error(format!("{} has no pose", n.class)));
            }
            let r = call.vec3(0)?.map(f64::to_radians);
            let rot = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), r.x)
                * UnitQuaternion::from_axis_angle(&Vector3::y_axis(), r.y)
                * UnitQuaternion::from_axis_angle(&Vector3::z_axis(), r.z);
            n.local.rotation = rot;
            refresh_world(tree, node);
        }
        _ => n.calls.push(call),
    }
    Ok(())
}

/// Recomputes the world pose of `node` and its subtree.
fn refresh_world(tree: &mut SceneTree, node: usize) {
    let mut stack = vec![node];
    while let Some(i) = stack.pop() {
        let parent_world = tree
            .nodes
            .get(i)
            .and_then(|n| n.parent)
            .and_then(|p| tree.nodes.get(p))
            .map(|p| p.world)
            .unwrap_or_else(Isometry3::identity);
        if let Some(n) = tree.nodes.get_mut(i) {
            n.world = if n.is_transform() {
                parent_world * n.local
            } else {
                parent_world
            };
            stack.extend(n.children.iter().copied());
        }
    }
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

struct ExprParser<'a> {
    toks: &'a [Tok],
    pos: usize,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lib_with(files: &[(&str, &str)]) -> Result<SceneLibrary, SceneError> {
        let mut lib = SceneLibrary {
            root: PathBuf::new(),
            files: BTreeMap::new(),
            tables: BTreeMap::new(),
        };
        for (name, text) in files {
            let f: Arc<str> = Arc::from(*name);
            let s = parse_sexps(&f, text)?;
            check_header(&f, &s)?;
            lib.files.insert(name.to_string(), Arc::new(s));
        }
        Ok(lib)
    }

    #[test]
    fn eval_and_join() {
        let lib = lib_with(&[(
            "a.rsg",
            "(RSG 0 1)\n((templ $s $x)\n(def $y (eval (eval $x + 1) * 2))\n(nd Transform (setName (join $s arm)) (setLocalPos $x $y (eval -1* 3)))\n)",
        )])
        .expect("parse");
        let t = lib
            .instantiate("a.rsg", &["l".into(), "0.5".into()])
            .expect("instantiate");
        let n = &t.nodes[1];
        assert_eq!(n.name.as_deref(), Some("larm"));
        assert!((n.world.translation.vector - Vector3::new(0.5, 3.0, -3.0)).norm() < 1e-12);
    }

    #[test]
    fn errors_name_file_and_line() {
        let lib = lib_with(&[(
            "b.rsg",
            "(RSG 0 1)\n(\n(nd Transform\n (setLocalPos 1 x 2)))",
        )])
        .expect("parse");
        let e = lib.instantiate("b.rsg", &[]).expect_err("bad number");
        assert!(e.to_string().starts_with("b.rsg:4:"), "{e}");
        let e = lib_with(&[("c.rsg", "(RSG 0 1)\n((nd Transform)")]).expect_err("unclosed");
        assert!(e.to_string().starts_with("c.rsg:2:"), "{e}");
        let e = lib.instantiate("nope.rsg", &[]).expect_err("unknown");
        assert!(e.to_string().contains("nope.rsg"));
    }
}
