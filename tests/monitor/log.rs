//! The match log: line rules of docs/protocol.md#match-log, determinism, gzip, and
//! whole lines while the writer is running.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rcss3d::monitor::client::{validate_message, TrackedScene};
use rcss3d::monitor::log::{LogReader, SCENE_CHANGE_FULL_STATE_GAP};
use rcss3d::monitor::{FieldParams, FrameKind, LogWriter, MatchSummary, MonitorConfig};
use rcss3d::rules::{PlayMode, Side};
use rcss3d::sim::snapshot::{FoulRecord, WorldSnapshot};

use crate::util::{full_match_robots, robot, snapshot};

/// A scripted 20 s match, one snapshot per cycle: robots join (one before
/// init, then initialised), kick-off, a goal, a foul, a robot leaves.
fn scripted_match() -> Vec<WorldSnapshot> {
    let mut out = Vec::new();
    for c in 0..1000u64 {
        let t = c as f32 * 0.02;
        let shift = t * 0.1;
        let mut robots = Vec::new();
        let mut version = 0;
        if c >= 30 {
            version = 1;
            let (side, unum) = if c >= 40 {
                (Some(Side::Left), 1)
            } else {
                (None, 0)
            };
            robots.push(robot(1, side, unum, 0, -3.0 + shift, 0.0, 0.0));
        }
        if (50..900).contains(&c) {
            version = 2;
            robots.push(robot(2, Some(Side::Right), 1, 4, 3.0 - shift, 1.0, 3.0));
        }
        if c >= 900 {
            version = 3;
        }
        let mut s = snapshot(c, [shift, 0.0], robots);
        s.structure_version = version;
        if c >= 100 {
            s.game.play_mode = if c < 105 {
                PlayMode::KickOffLeft
            } else {
                PlayMode::PlayOn
            };
            s.game.game_time = (c - 100) as f32 * 0.02;
        }
        if c >= 503 {
            s.game.score_left = 1;
            s.game.play_mode = PlayMode::GoalLeft;
        }
        if c >= 611 {
            s.game.fouls.push(FoulRecord {
                kind: 2,
                side: Side::Right,
                unum: 1,
            });
        }
        out.push(s);
    }
    out
}

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes the scripted match with the default cadence (every 10th cycle).
fn write_log(cfg: &MonitorConfig, seed: u64) -> Vec<u8> {
    let out = Shared::default();
    let mut w = LogWriter::to_writer(Box::new(out.clone()), cfg, &FieldParams::default(), seed);
    let snaps = scripted_match();
    for s in snaps
        .iter()
        .filter(|s| s.cycle % u64::from(cfg.log_step) == 0)
    {
        w.write_frame(s).unwrap();
    }
    w.finish(snaps.last()).unwrap();
    let bytes = out.0.lock().unwrap().clone();
    bytes
}

/// Every line obeys docs/protocol.md#log-lines; deltas apply to the previous
/// line; changes appear in the first line after they happen.
fn check_log(text: &str, step_cycles: u64) {
    assert!(text.ends_with('\n'), "file ends with a complete line");
    let mut scene = TrackedScene::default();
    let mut last_full_time = f32::NEG_INFINITY;
    let mut last_structure = None;
    let snaps = scripted_match();
    let mut logged = snaps.iter().filter(|s| s.cycle % step_cycles == 0);
    let lines: Vec<&str> = text.split('\n').collect();
    let lines = &lines[..lines.len() - 1];
    for (i, line) in lines.iter().enumerate() {
        assert!(
            !line.is_empty() && !line.starts_with('[') && !line.contains('\r'),
            "line {i}"
        );
        let kind = validate_message(line).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        scene
            .apply(line)
            .unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        let is_final = i == lines.len() - 1;
        let snap = if is_final {
            snaps.last().unwrap()
        } else {
            logged.next().unwrap()
        };
        if i == 0 {
            assert_eq!(kind, FrameKind::Full, "line 1 is a full state");
            assert!(line.contains("(RuleHalfTime 300)(play_modes "));
            assert_eq!(scene.environment.get("seed").map(String::as_str), Some("7"));
        } else {
            assert!(!line.contains("(seed"), "seed only in line 1");
        }
        // The log shows the robots in a team; a change of them brings a
        // full state, at most one per SCENE_CHANGE_FULL_STATE_GAP.
        let structure = snap
            .robots
            .iter()
            .filter(|r| r.side.is_some())
            .map(|r| (r.id, r.side, r.unum))
            .collect::<Vec<_>>();
        if last_structure.as_ref() != Some(&structure)
            && snap.server_time - last_full_time >= SCENE_CHANGE_FULL_STATE_GAP - 1e-3
        {
            assert_eq!(kind, FrameKind::Full, "line {}: structure change", i + 1);
        }
        if kind == FrameKind::Full {
            last_full_time = snap.server_time;
            last_structure = Some(structure);
            assert_eq!(
                scene.robots().len(),
                snap.robots.iter().filter(|r| r.side.is_some()).count()
            );
        }
        assert!(
            snap.server_time - last_full_time <= 3.0 + 1e-4,
            "line {}: full state too old",
            i + 1
        );
        // The line shows the snapshot's game state exactly.
        assert!((scene.game.time - snap.game.game_time).abs() < 1e-4);
        assert_eq!(scene.game.play_mode, u32::from(snap.game.play_mode.index()));
        assert_eq!(scene.game.score_left, snap.game.score_left);
        assert_eq!(scene.game.fouls.len(), snap.game.fouls.len());
        let ball = scene.ball_position().unwrap();
        assert!((ball - snap.ball.translation.vector).norm() < 0.006);
    }
    assert!(logged.next().is_none());
}

#[test]
fn log_lines_validate_against_the_log_format() {
    let cfg = MonitorConfig::default();
    let log = write_log(&cfg, 7);
    check_log(std::str::from_utf8(&log).unwrap(), 10);
    // The library's checker agrees and finds the seed.
    let checked = rcss3d::monitor::client::check_log(std::str::from_utf8(&log).unwrap()).unwrap();
    assert_eq!(checked.seed, Some(7));
    assert_eq!(checked.lines, 101);
    assert!(checked.full_states >= 7);
    assert_eq!(checked.last.game.score_left, 1);
    // A cut in the middle of a line, a blank line or a delta first are
    // each rejected with the line number.
    let text = std::str::from_utf8(&log).unwrap();
    assert!(rcss3d::monitor::client::check_log(&text[..text.len() - 10]).is_err());
    let blank = text.replacen('\n', "\n\n", 1);
    let e = rcss3d::monitor::client::check_log(&blank)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 2: blank line"), "{e}");
    let second = &text[text.find('\n').unwrap() + 1..];
    assert!(rcss3d::monitor::client::check_log(second).is_err());
    // The goal appears in the line where it happens (cycle 510 > 503).
    let text = String::from_utf8(log).unwrap();
    let goal_line = text
        .lines()
        .position(|l| l.contains("(score_left 1)"))
        .unwrap();
    assert!(text
        .lines()
        .nth(goal_line)
        .unwrap()
        .contains("(play_mode 13)"));
    // 0.04 s cadence also validates.
    let fast = MonitorConfig {
        log_step: 2,
        ..MonitorConfig::default()
    };
    check_log(std::str::from_utf8(&write_log(&fast, 7)).unwrap(), 2);
}

#[test]
fn identical_matches_give_byte_identical_logs() {
    let cfg = MonitorConfig::default();
    let a = write_log(&cfg, 7);
    let b = write_log(&cfg, 7);
    assert!(a == b, "logs differ");
    let c = write_log(&cfg, 8);
    assert!(a != c, "the seed is in the log");
}

#[test]
fn gzip_logs_decompress_and_are_deterministic() {
    let dir = std::env::temp_dir().join(format!("rcss3d-monitor-gz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = MonitorConfig {
        log_compress: true,
        ..MonitorConfig::default()
    };
    let plain = write_log(&MonitorConfig::default(), 7);
    let mut files = Vec::new();
    for k in 0..2 {
        let path = dir.join(format!("m{k}.log"));
        let mut w = LogWriter::create(&path, &cfg, &FieldParams::default(), 7).unwrap();
        assert_eq!(w.path(), dir.join(format!("m{k}.log.gz")));
        let snaps = scripted_match();
        for s in snaps.iter().filter(|s| s.cycle % 10 == 0) {
            w.write_frame(s).unwrap();
        }
        w.finish(snaps.last()).unwrap();
        files.push(std::fs::read(dir.join(format!("m{k}.log.gz"))).unwrap());
    }
    assert!(files[0] == files[1], "gz logs differ");
    let mut text = Vec::new();
    // One gzip member per second of the match, read one after the other.
    flate2::read::MultiGzDecoder::new(&files[0][..])
        .read_to_end(&mut text)
        .unwrap();
    assert!(text == plain, "gz content differs from the plain log");
    assert!(files[0].len() * 5 < plain.len());
    let _ = std::fs::remove_dir_all(&dir);
}

/// While the log thread runs, a reader of the file sees only complete
/// lines, plain and gzip (a gzip log is a sequence of complete members).
#[test]
fn a_running_log_holds_only_complete_lines() {
    let dir = std::env::temp_dir().join(format!("rcss3d-monitor-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for compress in [false, true] {
        let cfg = MonitorConfig {
            log_compress: compress,
            ..MonitorConfig::default()
        };
        let path = dir.join("live.log");
        let mut handle = LogWriter::spawn(&path, &cfg, &FieldParams::default(), 3).unwrap();
        let real = if compress {
            dir.join("live.log.gz")
        } else {
            path.clone()
        };
        let snaps = scripted_match();
        let mut offered = 0;
        for s in snaps.iter().take(400) {
            if handle.frame(Arc::new(s.clone())) {
                offered += 1;
            }
            if s.cycle % 50 == 0 {
                // Reads the file at whatever point the writer thread has
                // reached after a pause (the sampling is the thing tested:
                // no partial line is ever visible).
                std::thread::sleep(Duration::from_millis(20));
                let bytes = std::fs::read(&real).unwrap();
                let text = if compress {
                    // The members written so far (the last one may be
                    // being written as the file is read).
                    let mut out = Vec::new();
                    LogReader::new(std::io::Cursor::new(bytes))
                        .unwrap()
                        .read_to_end(&mut out)
                        .expect("gzip members while running");
                    out
                } else {
                    bytes
                };
                if !text.is_empty() {
                    assert_eq!(text.last(), Some(&b'\n'), "partial line while running");
                    for line in std::str::from_utf8(&text).unwrap().lines() {
                        validate_message(line).unwrap();
                    }
                }
            }
        }
        assert_eq!(offered, 40);
        let stats = handle.finish(None).unwrap();
        assert_eq!(stats.lines, 41, "40 frames and the final full state");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn match_summary_text() {
    let mut s = snapshot(30_000, [0.0, 0.0], vec![]);
    s.game.team_left = Some(Arc::from("Alpha"));
    s.game.team_right = Some(Arc::from("Beta"));
    s.game.score_left = 2;
    s.game.score_right = 1;
    s.game.game_time = 600.0;
    s.game.fouls = vec![
        FoulRecord {
            kind: 1,
            side: Side::Right,
            unum: 3,
        },
        FoulRecord {
            kind: 2,
            side: Side::Right,
            unum: 4,
        },
        FoulRecord {
            kind: 2,
            side: Side::Left,
            unum: 5,
        },
    ];
    let text = MatchSummary::from_snapshot(&s, 42).to_text();
    assert_eq!(
        text,
        "teams: Alpha Beta\nscore: 2 1\nfouls: 1 2\ngame_time: 600.00\nserver_time: 600.00\ncycles: 30000\nseed: 42\n"
    );
    let _ = full_match_robots;
}

/// The first lines of an empty-field log have the reference log's shape
/// (plus our `(seed N)`, which RoboViz ignores).
#[test]
fn log_lines_match_the_reference_log() {
    let reference = crate::util::transcript("sync_sparkmonitor_log_first8.txt");
    let out = Shared::default();
    let mut w = LogWriter::to_writer(
        Box::new(out.clone()),
        &MonitorConfig::default(),
        &FieldParams::default(),
        5,
    );
    for c in [0u64, 10, 20] {
        w.write_frame(&snapshot(c, [0.0, 0.0], vec![])).unwrap();
    }
    w.finish(None).unwrap();
    let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].contains("direct_free_kick_right)(seed 5)(time 0)"));
    crate::eqnice!(
        crate::util::shape(&reference[0]),
        crate::util::shape(&lines[0].replace("(seed 5)", ""))
    );
    // The reference's first delta after a mesh is created repeats every
    // `setVisible` (a harmless quirk); its later deltas are ours exactly.
    crate::eqnice!(reference[2], lines[1]);
    crate::eqnice!(reference[3], lines[2]);
}
