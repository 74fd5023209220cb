//! The layers as the compiler sees them: each crate of the workspace
//! depends only on crates below it (README, "Architecture"), and the
//! simulation's crate pulls in no async runtime and no command-line
//! parsing, however indirectly.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

/// The workspace's crates from the bottom up; a crate may depend on those
/// before it, never on one after it.
const LAYERS: [&str; 6] = [
    "rcss3d-core",
    "rcss3d-server",
    "rcss3d-clients",
    "rcss3d-cli",
    "rcss3d",
    "rcss3d-tools",
];

/// Crates the simulation must not reach: its callers' runtime, command
/// line and error reporting.
const NOT_IN_CORE: [&str; 4] = ["tokio", "clap", "anyhow", "tracing-subscriber"];

fn cargo(args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn every_crate_depends_only_on_crates_below_it() {
    let metadata: Value =
        serde_json::from_str(&cargo(&["metadata", "--no-deps", "--format-version", "1"]))
            .expect("cargo metadata is JSON");
    let rank: BTreeMap<&str, usize> = LAYERS.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut seen = Vec::new();
    let mut wrong = Vec::new();
    for package in metadata["packages"].as_array().expect("packages") {
        let name = package["name"].as_str().expect("name");
        let Some(&level) = rank.get(name) else {
            continue;
        };
        seen.push(name.to_owned());
        for dep in package["dependencies"].as_array().expect("dependencies") {
            // Tests may use any crate (the root package's tests replay
            // recordings with the tools' library): only what the code
            // itself links counts.
            if dep["kind"].as_str() == Some("dev") {
                continue;
            }
            let dep_name = dep["name"].as_str().expect("dependency name");
            let Some(&dep_level) = rank.get(dep_name) else {
                continue;
            };
            if dep_level >= level {
                wrong.push(format!("{name} -> {dep_name}"));
            }
        }
    }
    seen.sort();
    let mut all: Vec<String> = LAYERS.iter().map(|s| s.to_string()).collect();
    all.sort();
    assert_eq!(seen, all, "the workspace's crates are the layers");
    assert!(wrong.is_empty(), "arrows pointing up: {wrong:?}");
}

#[test]
fn the_simulation_crate_has_no_runtime_and_no_command_line() {
    let tree = cargo(&[
        "tree",
        "-p",
        "rcss3d-core",
        "-e",
        "normal",
        "--prefix",
        "none",
    ]);
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.contains(&"rapier3d"), "{tree}");
    for banned in NOT_IN_CORE.iter().chain(&LAYERS[1..]) {
        assert!(
            !names.contains(banned),
            "rcss3d-core depends on {banned}:\n{tree}"
        );
    }
}
