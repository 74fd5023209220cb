//! The server process seen from /proc at each end of the measuring
//! window: CPU per thread, peak and current RSS (read through
//! [`rcss3d::procfs`]).

use std::collections::BTreeMap;
use std::path::Path;

use rcss3d::procfs::{status_kib, Stat};

/// One look at a process.
#[derive(Clone, Debug, Default)]
pub(crate) struct ProcSample {
    /// Whole-process CPU ticks (includes exited threads).
    pub(crate) ticks: u64,
    /// Per thread: tid -> (name, ticks).
    pub(crate) threads: BTreeMap<u32, (String, u64)>,
    pub(crate) hwm_kb: Option<u64>,
    pub(crate) rss_kb: Option<u64>,
}

pub(crate) fn sample_proc(pid: u32) -> Option<ProcSample> {
    let ticks = Stat::read(Path::new(&format!("/proc/{pid}/stat")))?.cpu_ticks;
    let mut threads = BTreeMap::new();
    if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for e in dir.flatten() {
            let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if let Some(s) = Stat::read(&e.path().join("stat")) {
                threads.insert(tid, (s.comm, s.cpu_ticks));
            }
        }
    }
    Some(ProcSample {
        ticks,
        threads,
        hwm_kb: status_kib(pid, "VmHWM"),
        rss_kb: status_kib(pid, "VmRSS"),
    })
}

/// CPU ticks this load generator has used.
pub(crate) fn self_cpu_ticks() -> u64 {
    Stat::read(Path::new("/proc/self/stat"))
        .map(|s| s.cpu_ticks)
        .unwrap_or(0)
}
