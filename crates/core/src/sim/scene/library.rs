//! The scene library: every `.rsg` file and data table of a directory,
//! and the expansion of a scene (`templ`, `def`, `$` substitution, `join`,
//! `eval`, `switch`, `importScene`) into a [`SceneTree`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nalgebra::Isometry3;

use super::expr::eval_expr;
use super::limits::{
    dir_key, Budget, MAX_FILES, MAX_FILE_BYTES, MAX_IMPORTS, MAX_LEVELS, MAX_NODES,
    MAX_TOTAL_BYTES, MAX_VALUE_BYTES,
};
use super::sexp::{parse_sexps, Sexp};
use super::tree::{apply_call, fmt_num, Call, SceneNode, SceneTree};
use super::{at, SceneError};
use crate::input_file::read_regular;

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

/// The scene files of one directory tree (or of the built-in list),
/// read and syntax-checked at load time, plus the data tables (`*.ron`)
/// found beside them.
#[derive(Debug, Clone)]
pub struct SceneLibrary {
    files: BTreeMap<String, Arc<Vec<Sexp>>>,
    tables: BTreeMap<String, Table>,
}

const MAX_IMPORT_DEPTH: usize = 16;

impl SceneLibrary {
    /// Reads every `*.rsg` file below `dir` (keyed by its path relative to
    /// `dir`, with `/` separators) and every `*.ron` data table.
    pub fn load(dir: &Path) -> Result<SceneLibrary, SceneError> {
        let files = SceneLibrary::read_dir(dir)?;
        SceneLibrary::from_files(files.iter().map(|(p, t)| (p.as_str(), t.as_str())))
    }

    /// Builds the library from (resource path, text) pairs: `*.rsg` scene
    /// files, `*.ron` data tables; other names are skipped. A later file
    /// of the same path replaces an earlier one, and a later table of the
    /// same name replaces an earlier one, so a user's directory can be laid
    /// over the built-in files.
    pub fn from_files<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<SceneLibrary, SceneError> {
        let mut lib = SceneLibrary {
            files: BTreeMap::new(),
            tables: BTreeMap::new(),
        };
        for (rel, text) in files {
            if rel.ends_with(".ron") {
                let t: BTreeMap<String, Table> =
                    ron::from_str(text).map_err(|e| SceneError::Table {
                        path: PathBuf::from(rel),
                        message: e.to_string(),
                    })?;
                lib.tables.extend(t);
            } else if rel.ends_with(".rsg") {
                let name: Arc<str> = Arc::from(rel);
                let sexps = parse_sexps(&name, text)?;
                check_header(&name, &sexps)?;
                lib.files.insert(rel.to_owned(), Arc::new(sexps));
            }
        }
        Ok(lib)
    }

    /// The `*.rsg` and `*.ron` files below `dir` as (path relative to
    /// `dir` with `/` separators, text), sorted by path. Each directory is
    /// walked once, however symlinks lead back to it; only regular files
    /// of at most [`MAX_FILE_BYTES`] are read, at most [`MAX_FILES`] of
    /// them and [`MAX_TOTAL_BYTES`] in all: a FIFO, a device, a symlink
    /// loop or an oversized file is an error naming it.
    pub fn read_dir(dir: &Path) -> Result<Vec<(String, String)>, SceneError> {
        let mut out = Vec::new();
        let mut pending = vec![dir.to_path_buf()];
        let mut seen_dirs = std::collections::BTreeSet::new();
        let mut total = 0u64;
        let io = |path: &Path, source| SceneError::Io {
            path: path.to_path_buf(),
            source,
        };
        while let Some(d) = pending.pop() {
            let meta = std::fs::metadata(&d).map_err(|e| io(&d, e))?;
            if !seen_dirs.insert(dir_key(&meta, &d)) {
                continue;
            }
            let rd = std::fs::read_dir(&d).map_err(|e| io(&d, e))?;
            for e in rd {
                let p = e.map_err(|e| io(&d, e))?.path();
                let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
                let scene_file = ext == "rsg" || ext == "ron";
                // Follows symlinks: a loop is an error here, for a file
                // name the library reads (others are skipped).
                let meta = match std::fs::metadata(&p) {
                    Ok(m) => m,
                    Err(e) if scene_file => return Err(io(&p, e)),
                    Err(_) => continue,
                };
                if meta.is_dir() {
                    pending.push(p);
                    continue;
                }
                if !scene_file {
                    continue;
                }
                if out.len() >= MAX_FILES {
                    return Err(io(
                        &p,
                        std::io::Error::other(format!(
                            "more than {MAX_FILES} scene files in the directory"
                        )),
                    ));
                }
                let text = read_regular(&p, MAX_FILE_BYTES).map_err(|e| io(&p, e))?;
                total += text.len() as u64;
                if total > MAX_TOTAL_BYTES {
                    return Err(io(
                        &p,
                        std::io::Error::other(format!(
                            "the scene files hold more than {MAX_TOTAL_BYTES} bytes in all"
                        )),
                    ));
                }
                let rel = p
                    .strip_prefix(dir)
                    .unwrap_or(&p)
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                out.push((rel, text));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Whether a scene file of that resource path exists.
    pub fn contains(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    /// Resource paths of all scene files, sorted.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// How many arguments a scene file declares on its `templ` line (a
    /// file without one takes none); `None` for an unknown file.
    pub fn declared_args(&self, path: &str) -> Option<usize> {
        self.files.get(path).map(|sexps| templ_arity(sexps))
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
        let mut budget = Budget::default();
        self.import(&mut tree, 0, path, args, None, 0, 0, &mut budget)?;
        Ok(tree)
    }

    #[allow(clippy::too_many_arguments)]
    fn import(
        &self,
        tree: &mut SceneTree,
        node: usize,
        path: &str,
        args: &[String],
        from: Option<(&Arc<str>, usize)>,
        depth: usize,
        level: usize,
        budget: &mut Budget,
    ) -> Result<(), SceneError> {
        if let Some((f, l)) = from {
            budget.imports += 1;
            if budget.imports > MAX_IMPORTS {
                return Err(at(
                    f,
                    l,
                    format!("importScene: more than {MAX_IMPORTS} imports in one scene"),
                ));
            }
        }
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
        // A file takes exactly the arguments its `templ` line declares; one
        // without a `templ` line takes none (its `templ` check covers the
        // files that have one).
        if !args.is_empty() && templ_arity(&sexps) == 0 {
            return Err(match from {
                Some((f, l)) => at(
                    f,
                    l,
                    format!(
                        "importScene: {path} takes no arguments (it has no templ line), got {}",
                        args.len()
                    ),
                ),
                None => SceneError::Arguments {
                    scene: path.to_string(),
                    declared: 0,
                    given: args.len(),
                },
            });
        }
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
            self.statement(tree, node, st, &mut env, depth, level, budget)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn statement(
        &self,
        tree: &mut SceneTree,
        node: usize,
        st: &Sexp,
        env: &mut Env,
        depth: usize,
        level: usize,
        budget: &mut Budget,
    ) -> Result<(), SceneError> {
        budget.step(&env.file, st.line())?;
        if level > MAX_LEVELS {
            return Err(at(
                &env.file,
                st.line(),
                format!("statements nested more than {MAX_LEVELS} levels deep"),
            ));
        }
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
            "templ" | "template" => templ(env, rest, line)?,
            "def" | "define" => {
                if rest.len() != 2 {
                    return Err(at(&env.file, line, "def: expected (def $name value)"));
                }
                let name = match &rest[0] {
                    Sexp::Atom(a, _) if a.starts_with('$') => a.clone(),
                    _ => return Err(at(&env.file, line, "def: the name must start with '$'")),
                };
                let v = self.value(&rest[1], env, budget)?;
                env.vars.insert(name, v);
            }
            "nd" | "node" => {
                let class = match rest.first() {
                    Some(Sexp::Atom(c, l)) => env.subst(c, *l)?,
                    _ => return Err(at(&env.file, line, "nd: expected a class name")),
                };
                let idx = add_node(tree, node, class, env, line)?;
                for st in &rest[1..] {
                    self.statement(tree, idx, st, env, depth, level + 1, budget)?;
                }
            }
            "switch" => {
                let value = match rest.first() {
                    Some(v) => self.value(v, env, budget)?,
                    None => return Err(at(&env.file, line, "switch: missing value")),
                };
                let chosen = self.switch_case(&rest[1..], &value, env, budget)?;
                let Some(st) = chosen else {
                    return Err(at(
                        &env.file,
                        line,
                        format!("switch: no case matches '{value}'"),
                    ));
                };
                return self.statement(tree, node, st, env, depth, level + 1, budget);
            }
            "importScene" => {
                let mut vals = Vec::new();
                for r in rest {
                    vals.push(self.value(r, env, budget)?);
                }
                if vals.is_empty() {
                    return Err(at(&env.file, line, "importScene: missing file name"));
                }
                let path = vals.remove(0);
                let file = env.file.clone();
                self.import(
                    tree,
                    node,
                    &path,
                    &vals,
                    Some((&file, line)),
                    depth + 1,
                    level + 1,
                    budget,
                )?;
            }
            method => {
                let mut args = Vec::new();
                for r in rest {
                    args.push(self.value(r, env, budget)?);
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

    /// The statement of the first of `cases` whose label is `value`.
    fn switch_case<'s>(
        &self,
        cases: &'s [Sexp],
        value: &str,
        env: &Env,
        budget: &mut Budget,
    ) -> Result<Option<&'s Sexp>, SceneError> {
        for case in cases {
            let citems = match case {
                Sexp::List(ci, _) if ci.len() == 2 => ci,
                _ => {
                    return Err(at(
                        &env.file,
                        case.line(),
                        "switch: each case is (label statement)",
                    ))
                }
            };
            let label = self.value(&citems[0], env, budget)?;
            if label == value {
                return Ok(Some(&citems[1]));
            }
        }
        Ok(None)
    }

    /// Evaluates one argument to text, of at most [`MAX_VALUE_BYTES`].
    fn value(&self, v: &Sexp, env: &Env, budget: &mut Budget) -> Result<String, SceneError> {
        budget.step(&env.file, v.line())?;
        let text = self.value_unchecked(v, env, budget)?;
        budget.bytes(text.len(), &env.file, v.line())?;
        if text.len() > MAX_VALUE_BYTES {
            return Err(at(
                &env.file,
                v.line(),
                format!("a value longer than {MAX_VALUE_BYTES} bytes"),
            ));
        }
        Ok(text)
    }

    fn value_unchecked(
        &self,
        v: &Sexp,
        env: &Env,
        budget: &mut Budget,
    ) -> Result<String, SceneError> {
        match v {
            Sexp::Atom(a, line) => env.subst(a, *line),
            Sexp::List(items, line) => {
                let head = match items.first() {
                    Some(Sexp::Atom(h, _)) => h.as_str(),
                    _ => return Err(at(&env.file, *line, "expected (eval ...) or (join ...)")),
                };
                let mut parts = Vec::new();
                let mut len = 0;
                for it in &items[1..] {
                    let t = self.value(it, env, budget)?;
                    len += t.len() + 3;
                    if len > MAX_VALUE_BYTES {
                        return Err(at(
                            &env.file,
                            *line,
                            format!("a value longer than {MAX_VALUE_BYTES} bytes"),
                        ));
                    }
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
        eval_expr(self, text)
    }

    pub(super) fn lookup(
        &self,
        name: &str,
        index: Option<usize>,
        key: &str,
    ) -> Result<String, String> {
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

/// The number of `$names` on a scene file's top-level `templ` line, 0
/// without one.
fn templ_arity(sexps: &[Sexp]) -> usize {
    let Some(Sexp::List(body, _)) = sexps.get(1) else {
        return 0;
    };
    body.iter()
        .find_map(|st| match st {
            Sexp::List(items, _) => match items.first() {
                Some(Sexp::Atom(h, _)) if h == "templ" || h == "template" => Some(items.len() - 1),
                _ => None,
            },
            Sexp::Atom(..) => None,
        })
        .unwrap_or(0)
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

/// `(templ $a $b ...)`: binds the file's arguments to the names.
fn templ(env: &mut Env, rest: &[Sexp], line: usize) -> Result<(), SceneError> {
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
    Ok(())
}

/// `(nd Class ...)`: a new node of `class` under `node`, placed at its
/// parent's pose; its index.
fn add_node(
    tree: &mut SceneTree,
    node: usize,
    class: String,
    env: &Env,
    line: usize,
) -> Result<usize, SceneError> {
    let parent_world = tree
        .nodes
        .get(node)
        .map(|n| n.world)
        .unwrap_or_else(Isometry3::identity);
    let idx = tree.nodes.len();
    if idx >= MAX_NODES {
        return Err(at(
            &env.file,
            line,
            format!("the scene has more than {MAX_NODES} nodes"),
        ));
    }
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
    Ok(idx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Vector3;

    fn lib_with(files: &[(&str, &str)]) -> Result<SceneLibrary, SceneError> {
        SceneLibrary::from_files(files.iter().copied())
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
    fn a_file_takes_only_the_arguments_its_templ_line_declares() {
        let lib = lib_with(&[
            ("plain.rsg", "(RSG 0 1)\n((nd Transform))"),
            (
                "t.rsg",
                "(RSG 0 1)\n((templ $a)\n(nd Transform (setName $a)))",
            ),
            ("imp.rsg", "(RSG 0 1)\n(\n(importScene plain.rsg 1))"),
        ])
        .expect("parse");
        assert_eq!(lib.declared_args("plain.rsg"), Some(0));
        assert_eq!(lib.declared_args("t.rsg"), Some(1));
        assert_eq!(lib.declared_args("nope.rsg"), None);
        assert!(lib.instantiate("plain.rsg", &[]).is_ok());
        let e = lib
            .instantiate("plain.rsg", &["1".into(), "2".into()])
            .expect_err("no templ line");
        assert!(
            matches!(
                e,
                SceneError::Arguments {
                    declared: 0,
                    given: 2,
                    ..
                }
            ),
            "{e}"
        );
        let e = lib
            .instantiate("imp.rsg", &[])
            .expect_err("import with an argument");
        assert!(e.to_string().starts_with("imp.rsg:3:"), "{e}");
        assert!(lib.instantiate("t.rsg", &["x".into()]).is_ok());
        assert!(lib.instantiate("t.rsg", &[]).is_err());
    }

    #[test]
    fn later_files_replace_earlier_ones_of_the_same_path() {
        let lib = lib_with(&[
            ("a.rsg", "(RSG 0 1)\n((nd Transform (setName first)))"),
            ("t.ron", r#"{"T": {"x": 1, "y": 2}}"#),
            ("notes.txt", "not a scene"),
            (
                "a.rsg",
                "(RSG 0 1)\n((nd Transform (setName (eval T.x + T.y))))",
            ),
            ("t.ron", r#"{"T": {"x": 10, "y": 20}}"#),
        ])
        .expect("parse");
        assert_eq!(lib.paths().collect::<Vec<_>>(), ["a.rsg"]);
        let t = lib.instantiate("a.rsg", &[]).expect("instantiate");
        assert_eq!(t.nodes[1].name.as_deref(), Some("30"));
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
