//! The CI soak. Runs the `soak` tool (`tools/src/bin/soak/`) against the real server
//! binary (22 honest agents in real-time mode, the chaos client, two
//! monitors of which one stops reading) and checks its report.
//!
//! `cargo test` runs the 20 s smoke run: everything below but the memory
//! growth, which needs minutes to show. The soak proper is ignored by
//! default and has its own CI step:
//! `cargo test -p rcss3d-tools --test soak -- --ignored`.
//! `RCSS3D_SOAK_SECS` sets its length (default 180 s; `0` skips it). The
//! full 30-minute run is
//! `cargo run --release -p rcss3d-tools --bin soak -- --server-bin target/release/rcss3d`.
//!
//! Asserted: no panic and no crash, RSS growth under 10 % (the soak
//! proper), the honest
//! agents' frames never interrupted for more than 1 s, none missed and no
//! honest agent dropped, the log valid to its last line, a clean exit
//! within 2 s of SIGTERM.
//! The cycle rate is printed, not asserted: this runs the debug build, on
//! whatever the CI machine has free.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

/// The server binary of the same build: `cargo test` at the workspace
/// root builds it beside the soak tool; a run of this package alone
/// (`cargo test -p rcss3d-tools`) builds it first.
fn server_binary() -> PathBuf {
    let soak = PathBuf::from(env!("CARGO_BIN_EXE_soak"));
    let server = soak.with_file_name(format!("rcss3d{}", std::env::consts::EXE_SUFFIX));
    if !server.exists() {
        let profile = soak
            .parent()
            .and_then(|d| d.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or("debug");
        let mut build = Command::new(env!("CARGO"));
        build.args(["build", "-p", "rcss3d", "--bin", "rcss3d"]);
        if profile == "release" {
            build.arg("--release");
        }
        if let Some(target) = soak.parent().and_then(|d| d.parent()) {
            build.arg("--target-dir").arg(target);
        }
        let status = build.status().expect("run cargo build for the server");
        assert!(status.success(), "building the rcss3d server failed");
    }
    server
}

fn soak_secs() -> u64 {
    std::env::var("RCSS3D_SOAK_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(180)
}

/// Longest allowed wait of an honest agent for its next frame, ms.
/// Default 1000. `RCSS3D_SOAK_MAX_GAP_MS` raises it on a machine so
/// overloaded that the server gets a fraction of a core (the report shows
/// the server's CPU share and the load average).
fn max_gap_ms() -> f64 {
    std::env::var("RCSS3D_SOAK_MAX_GAP_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000.0)
}

/// Length of the smoke run: the soak's 10 s warm-up, then 10 s with the
/// second monitor stalled from its start.
const SMOKE_SECS: u64 = 20;

#[test]
fn soak_smoke_run_with_chaos_clients_and_a_stalled_monitor() {
    soak(SMOKE_SECS, false);
}

#[test]
#[ignore = "minutes long: its own CI step, `cargo test -p rcss3d-tools --test soak -- --ignored`"]
fn soak_with_chaos_clients_and_a_stalled_monitor() {
    let secs = soak_secs();
    if secs == 0 {
        eprintln!("RCSS3D_SOAK_SECS=0: soak skipped");
        return;
    }
    soak(secs, true);
}

/// Runs the soak tool for `secs` and checks its report; the RSS growth
/// only if `memory` (a run shorter than a minute or so shows the
/// allocator settling, not a leak).
fn soak(secs: u64, memory: bool) {
    let log = std::env::temp_dir().join(format!("rcss3d-soak-test-{}.log", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_soak"))
        .args(["--minutes", &format!("{}", secs as f64 / 60.0)])
        .arg("--server-bin")
        .arg(server_binary())
        .arg("--log")
        .arg(&log)
        .env("RUST_LOG", "info")
        .output()
        .expect("run the soak binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The whole report, so a CI failure shows every figure.
    println!("{stdout}");
    eprintln!("{stderr}");
    let r: BTreeMap<&str, &str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("RESULT "))
        .filter_map(|l| l.split_once(' '))
        .collect();
    assert!(
        !r.is_empty(),
        "the soak printed no RESULT lines (exit {})",
        out.status
    );
    let num = |k: &str| -> f64 {
        r.get(k)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("RESULT {k} missing or not a number"))
    };
    let flag = |k: &str| r.get(k).copied() == Some("true");

    assert_eq!(num("panics"), 0.0, "panics in the server");
    assert!(!flag("crashed"), "the server exited during the run");
    assert!(
        flag("clean_exit"),
        "the server did not exit cleanly after SIGTERM"
    );
    assert!(
        num("stop_secs") < 2.0,
        "shutdown took {} s",
        num("stop_secs")
    );
    if memory {
        assert!(
            num("rss_growth_pct") < 10.0,
            "RSS grew {} %",
            num("rss_growth_pct")
        );
    }
    assert!(
        num("max_gap_ms") < max_gap_ms(),
        "an honest agent waited {} ms for a frame (limit {} ms; server CPU {} % of a core, load {})",
        num("max_gap_ms"),
        max_gap_ms(),
        num("server_cpu_pct"),
        r.get("load_avg_end").copied().unwrap_or("?")
    );
    assert_eq!(num("missed_frames"), 0.0, "honest agents missed frames");
    assert_eq!(
        num("agents_disconnected_early"),
        0.0,
        "honest agents were disconnected"
    );
    assert!(num("cycles") > 0.0, "the simulation did not run");
    assert!(num("monitor_frames") > 0.0, "the monitor got nothing");
    // The monitor that stopped reading may be served again or dropped
    // over a limit; either is fine, so it is only shown.
    println!(
        "stalled monitor: {} frames after it read again",
        num("stalled_monitor_frames_after")
    );
    assert!(
        flag("log_valid"),
        "the match log is not valid to its last line"
    );
    let _ = std::fs::remove_file(&log);
}
