//! Scene files: text through `sim::scene::parse_sexps`, then through the
//! whole loader: `SceneLibrary::load` + `instantiate` (templates, `def`,
//! `eval`, `switch`, `importScene`) and `ModelLibrary::resolve` (building a
//! robot model from the expanded tree).
//!
//! The loader reads a directory, so the input is written as `fuzz.rsg`
//! into a private temporary copy of the repository's `models/` and
//! `scenes/` trees (the data tables are there, and a fuzzed file may
//! import the real Nao files). A first line `;; a b c` (a comment to the
//! parser) gives the template arguments, so the fuzzer also explores what
//! an agent can put after `(scene <path> ...)`.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use rcss3d::sim::assets::ModelSource;
use rcss3d::sim::model::ModelLibrary;
use rcss3d::sim::scene::{parse_sexps, SceneLibrary};

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create fuzz scene dir");
    for e in std::fs::read_dir(from).expect("read source dir") {
        let p = e.expect("dir entry").path();
        let dest = to.join(p.file_name().expect("file name"));
        if p.is_dir() {
            copy_tree(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).expect("copy scene file");
        }
    }
}

/// The private scene directory, created once per process.
fn dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let d = std::env::temp_dir().join(format!("rcss3d-fuzz-scene-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        copy_tree(&repo.join("models"), &d);
        copy_tree(&repo.join("scenes"), &d.join("scenes"));
        d
    })
}

fuzz_target!(|data: &[u8]| {
    // Scene files are read with read_to_string: only UTF-8 gets this far.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let name: Arc<str> = Arc::from("fuzz.rsg");
    if parse_sexps(&name, text).is_err() {
        return;
    }
    let args: Vec<String> = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix(";;"))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    let d = dir();
    std::fs::write(d.join("fuzz.rsg"), text).expect("write fuzz.rsg");
    let Ok(lib) = SceneLibrary::load(d) else {
        return;
    };
    match lib.instantiate("fuzz.rsg", &args) {
        Ok(tree) => {
            let order = tree.depth_first();
            // Every node below the root, once.
            assert_eq!(
                order.len() + 1,
                tree.nodes.len(),
                "depth_first must visit every node once"
            );
            for &i in &order {
                let _ = tree.enclosing_transform(i);
                let _ = tree.resolve_path(i, "../x");
            }
        }
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    }
    if let Ok(models) = ModelLibrary::load(&ModelSource::Dir(d.to_path_buf())) {
        if let Err(e) = models.resolve("fuzz.rsg", &args) {
            let _ = e.to_string();
        }
    }
});
