//! Messages for configuration errors a person can act on: an unknown key
//! or variant names the section it was found in and the closest known
//! name ("did you mean `sync_mode`?"), or the section where that key
//! lives, instead of every name the section has.

use serde::de::DeserializeOwned;

use crate::app::latency::LatencyConfig;
use crate::monitor::MonitorConfig;
use crate::perception::vision::VisionConfig;
use crate::rules::teams::TeamsConfig;
use crate::rules::RulesConfig;
use crate::sim::world::{ContactConfig, DragConfig, JointConfig, PhysicsConfig, SolverConfig};

/// The text of a RON error: unknown keys and variants rewritten as above,
/// anything else as RON words it.
pub(super) fn message(code: &ron::Error) -> String {
    match code {
        ron::Error::NoSuchStructField {
            expected,
            found,
            outer,
        } => {
            let place = section(outer.as_deref());
            let hint = match closest(found, expected) {
                Some(name) => format!("; did you mean `{name}`?"),
                None => elsewhere(found, outer.as_deref())
                    .map(|s| format!("; it is a key of `{s}`: `{}`", written_in(s, found)))
                    .unwrap_or_else(|| {
                        "; conf/server.ron lists every key with its default".to_owned()
                    }),
            };
            format!("unknown key `{found}` in {place}{hint}")
        }
        ron::Error::NoSuchEnumVariant {
            expected,
            found,
            outer,
        } => {
            let place = outer
                .as_deref()
                .map_or_else(String::new, |o| format!(" of `{o}`"));
            match closest(found, expected) {
                Some(name) => format!("unknown value `{found}`{place}; did you mean `{name}`?"),
                None => format!(
                    "unknown value `{found}`{place}; expected one of {}",
                    expected.join(", ")
                ),
            }
        }
        other => other.to_string(),
    }
}

/// Where a struct's keys are written, by the struct's Rust name.
fn section(outer: Option<&str>) -> String {
    let name = match outer {
        None | Some("Config") => return "the top level".to_owned(),
        Some("MonitorConfig") => "monitor",
        Some("VisionConfig") => "vision",
        Some("RulesConfig") => "rules",
        Some("TeamsConfig") => "teams",
        Some("LatencyConfig") => "latency",
        Some("PhysicsConfig") => "physics",
        Some("SolverConfig") => "physics.solver",
        Some("JointConfig") => "physics.joints",
        Some("ContactConfig") => "physics.contacts",
        Some("DragConfig") => "physics.drag",
        Some(other) => other,
    };
    format!("`{name}`")
}

/// The known name nearest to `found` by edit distance (case-insensitive),
/// when it is near enough to be a slip: at most a third of its length,
/// and at least 1 and at most 3 edits.
fn closest<'a>(found: &str, expected: &[&'a str]) -> Option<&'a str> {
    let limit = (found.chars().count() / 3).clamp(1, 3);
    expected
        .iter()
        .map(|name| (edit_distance(found, name), *name))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name)
}

/// Levenshtein distance over characters, ignoring ASCII case.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

/// A section: its path in a file, its struct's Rust name, and its keys.
type Section = (&'static str, &'static str, fn() -> &'static [&'static str]);

/// The section (other than `outer`) that has a key named `found`.
fn elsewhere(found: &str, outer: Option<&str>) -> Option<&'static str> {
    let sections: [Section; 10] = [
        ("monitor", "MonitorConfig", keys::<MonitorConfig>),
        ("vision", "VisionConfig", keys::<VisionConfig>),
        ("rules", "RulesConfig", keys::<RulesConfig>),
        ("teams", "TeamsConfig", keys::<TeamsConfig>),
        ("latency", "LatencyConfig", keys::<LatencyConfig>),
        ("physics", "PhysicsConfig", keys::<PhysicsConfig>),
        ("physics.solver", "SolverConfig", keys::<SolverConfig>),
        ("physics.joints", "JointConfig", keys::<JointConfig>),
        ("physics.contacts", "ContactConfig", keys::<ContactConfig>),
        ("physics.drag", "DragConfig", keys::<DragConfig>),
    ];
    sections
        .iter()
        .filter(|(_, rust, _)| Some(*rust) != outer)
        .find(|(_, _, keys)| keys().contains(&found))
        .map(|(name, _, _)| *name)
}

/// How `key` is written in the section at `path` (`physics.joints` ->
/// `physics: (joints: (key: ...))`).
fn written_in(path: &str, key: &str) -> String {
    let mut text = format!("{key}: ...");
    for part in path.rsplit('.') {
        text = format!("{part}: ({text})");
    }
    text
}

/// A struct's keys, as its deserializer names them when it meets a key it
/// does not know.
fn keys<T: DeserializeOwned>() -> &'static [&'static str] {
    match ron::from_str::<T>("(unknown_key_probe: 0)").map_err(|e| e.code) {
        Err(ron::Error::NoSuchStructField { expected, .. }) => expected,
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("sync_mod", "sync_mode"), 1);
        assert_eq!(edit_distance("SYNC_MODE", "sync_mode"), 0);
        assert_eq!(edit_distance("seed", "step"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn closest_takes_slips_only() {
        let names = ["sync_mode", "sync_timeout_ms", "seed", "step"];
        assert_eq!(closest("sync_mod", &names), Some("sync_mode"));
        assert_eq!(closest("sed", &names), Some("seed"));
        assert_eq!(closest("log", &names), None);
    }

    #[test]
    fn keys_of_a_section_are_found() {
        assert!(keys::<MonitorConfig>().contains(&"log"));
        assert!(keys::<Config>().contains(&"sync_mode"));
        assert_eq!(elsewhere("log", None), Some("monitor"));
        assert_eq!(
            elsewhere("motor_gain", Some("PhysicsConfig")),
            Some("physics.joints")
        );
        assert_eq!(
            written_in("physics.joints", "motor_gain"),
            "physics: (joints: (motor_gain: ...))"
        );
    }
}
