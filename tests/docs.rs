//! The manual, the design notes and the results file link to each other and
//! to the code; the code cites sections of the design notes. Every such
//! link must resolve: the file exists, and an `#anchor` names a heading of
//! the target as GitHub spells heading anchors.
//!
//! Checked: relative links in `README.md`, `RESULTS.md` and `docs/*.md`;
//! citations of `*.md` files in the Rust sources (`src/`, `crates/`, `tests/`,
//! `benches/`, `examples/`, `tools/`, `fuzz/`), which are paths from the
//! repository root, e.g. `docs/protocol.md#sync-mode`. The library cites
//! design notes only, never the results file: what the code does must be
//! explained where it stays true.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The manual's size limit: a manual a user reads, not a diary.
const README_MAX_BYTES: usize = 30 * 1024;

/// Directories whose Rust files may cite Markdown files.
const SOURCE_DIRS: &[&str] = &[
    "src", "crates", "tests", "benches", "examples", "tools", "fuzz",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown files whose links are checked, relative to the root.
fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("README.md"), PathBuf::from("RESULTS.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("readable docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| {
            p.strip_prefix(root())
                .expect("under the root")
                .to_path_buf()
        })
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// Lines of a Markdown text outside fenced code blocks, with their numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut in_fence = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            out.push((i + 1, line));
        }
    }
    out
}

/// GitHub's anchor for a heading's text: lower case, letters, digits, `-`
/// and `_` kept, spaces turned into `-`, everything else dropped.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every anchor a Markdown text defines; a repeated heading gets `-1`,
/// `-2`, ... as on GitHub.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = anchor_of(line[hashes..].trim().trim_end_matches('#'));
        let n = seen.entry(base.clone()).or_insert(0);
        out.push(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// The targets of inline links and images, `[text](target)`, with line numbers.
fn link_targets(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (number, line) in prose_lines(text) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            out.push((number, target.to_string()));
            rest = &after[end..];
        }
    }
    out
}

/// Checks one link target written in `from` (relative to the root); the
/// target's path is taken relative to `base`. Returns what is wrong.
fn check_target(base: &Path, target: &str) -> Option<String> {
    let (path, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let file = base.join(path);
    if !file.exists() {
        return Some(format!("{} does not exist", file.display()));
    }
    let anchor = anchor.filter(|a| !a.is_empty())?;
    if file.extension().is_none_or(|x| x != "md") {
        return None;
    }
    let text = fs::read_to_string(&file).ok()?;
    if anchors(&text).iter().any(|a| a == anchor) {
        None
    } else {
        Some(format!("no heading for #{anchor} in {}", file.display()))
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// Citations of Markdown files in a source text: a path made of letters,
/// digits and `_./-` ending in `.md`, with an optional `#anchor`.
fn citations(text: &str) -> Vec<(usize, String)> {
    let is_path = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let is_anchor = |c: char| c.is_ascii_alphanumeric() || "_-".contains(c);
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut from = 0;
        while let Some(at) = line[from..].find(".md") {
            let end = from + at + 3;
            from = end;
            if line[end..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric())
            {
                continue;
            }
            let start = line[..end - 3]
                .char_indices()
                .rev()
                .take_while(|&(_, c)| is_path(c))
                .last()
                .map_or(end - 3, |(j, _)| j);
            let stem = &line[start..end - 3];
            if stem.trim_matches(|c| c == '.' || c == '/').is_empty() {
                continue;
            }
            let mut cited = line[start..end].to_string();
            if let Some(rest) = line[end..].strip_prefix('#') {
                let anchor: String = rest.chars().take_while(|&c| is_anchor(c)).collect();
                cited.push('#');
                cited.push_str(&anchor);
            }
            out.push((i + 1, cited));
        }
    }
    out
}

#[test]
fn every_link_in_the_manual_the_design_notes_and_the_results_resolves() {
    let root = root();
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = fs::read_to_string(root.join(&file)).expect("readable Markdown file");
        let base = root
            .join(&file)
            .parent()
            .expect("a directory")
            .to_path_buf();
        for (line, target) in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let target = if let Some(anchor) = target.strip_prefix('#') {
                format!("{}#{anchor}", file.file_name().unwrap().to_string_lossy())
            } else {
                target
            };
            if let Some(why) = check_target(&base, &target) {
                broken.push(format!("{}:{line}: ({target}): {why}", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_markdown_file_the_code_cites_exists_with_its_section() {
    let root = root();
    let mut files = Vec::new();
    for dir in SOURCE_DIRS {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    let this_file = root.join("tests").join("docs.rs");
    let mut broken = Vec::new();
    for file in files.iter().filter(|f| **f != this_file) {
        let text = fs::read_to_string(file).expect("readable source file");
        let shown = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        for (line, cited) in citations(&text) {
            if (shown.starts_with("src") || shown.starts_with("crates"))
                && cited.starts_with("RESULTS.md")
            {
                broken.push(format!(
                    "{shown}:{line}: ({cited}): the library cites the design notes in docs/, not the results file"
                ));
            } else if let Some(why) = check_target(&root, &cited) {
                broken.push(format!("{shown}:{line}: ({cited}): {why}"));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "{} broken citations (paths are from the repository root, e.g. docs/protocol.md#sync-mode):\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn the_readme_stays_a_manual_of_at_most_30_kb() {
    let size = fs::metadata(root().join("README.md"))
        .expect("README.md")
        .len() as usize;
    assert!(
        size <= README_MAX_BYTES,
        "README.md is {size} bytes, over {README_MAX_BYTES}: move design notes to docs/ and measurements to RESULTS.md"
    );
}

#[test]
fn anchors_follow_github() {
    assert_eq!(anchor_of("Sync mode"), "sync-mode");
    assert_eq!(anchor_of("`init`: join a team"), "init-join-a-team");
    assert_eq!(
        anchor_of("Speed, 2-core machine (dist)"),
        "speed-2-core-machine-dist"
    );
    assert_eq!(
        anchors("# A\n```\n# not a heading\n```\n## A\n### b_c\n"),
        ["a", "a-1", "b_c"]
    );
    assert_eq!(
        citations("//! (docs/protocol.md#sync-mode), see RESULTS.md. x.mdx"),
        [
            (1, "docs/protocol.md#sync-mode".to_string()),
            (1, "RESULTS.md".to_string())
        ]
    );
}
