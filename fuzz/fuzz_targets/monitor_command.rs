//! Monitor (trainer) commands: one frame payload through
//! `monitor::command::parse_commands`, as the monitor server does.
//!
//! Beyond "never panics": non-UTF-8 input is exactly one `NotText` error,
//! and every result can be shown in a log line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rcss3d::monitor::command::{parse_commands, MonitorCommandError};

fuzz_target!(|data: &[u8]| {
    let results = parse_commands(data);
    if std::str::from_utf8(data).is_err() {
        assert_eq!(results, vec![Err(MonitorCommandError::NotText)]);
        return;
    }
    for r in &results {
        match r {
            Ok(c) => {
                let _ = c.changes_state();
                let _ = format!("{c:?}");
            }
            Err(e) => {
                assert_ne!(*e, MonitorCommandError::NotText);
                let _ = e.to_string();
            }
        }
    }
});
