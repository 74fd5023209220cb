//! Readings of a Linux process from `/proc`: CPU time and memory. The load
//! generator, the soak tool, the physics benchmark and the flood tests
//! measure the server with these, and the driver's cycle trace reports the
//! thread CPU time of each step; nothing read here flows into the
//! simulation.
//! Elsewhere than Linux every reading is `None`.

use std::path::Path;
use std::sync::OnceLock;

/// Clock ticks per second of the CPU times in `/proc/*/stat`
/// (`sysconf(_SC_CLK_TCK)`, read once).
pub fn clock_ticks_per_sec() -> f64 {
    static TICKS: OnceLock<f64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        // SAFETY: sysconf only reads a system constant.
        let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        if t > 0 {
            t as f64
        } else {
            100.0
        }
    })
}

/// CPU time the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`):
/// with the wall time of the same stretch it tells work from waiting for
/// the processor. `None` where the clock is not available.
pub fn thread_cpu_time() -> Option<std::time::Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if r != 0 || ts.tv_sec < 0 || ts.tv_nsec < 0 {
        return None;
    }
    Some(std::time::Duration::new(
        ts.tv_sec as u64,
        ts.tv_nsec as u32,
    ))
}

/// One `/proc/.../stat` file: the command name and the CPU time used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// The command (thread) name, without its parentheses.
    pub comm: String,
    /// User + system time, in clock ticks.
    pub cpu_ticks: u64,
}

impl Stat {
    /// Reads a stat file (`/proc/PID/stat`, `/proc/PID/task/TID/stat`,
    /// `/proc/thread-self/stat`).
    pub fn read(path: &Path) -> Option<Stat> {
        Stat::parse(&std::fs::read_to_string(path).ok()?)
    }

    /// Parses the text of a stat file. The command name may contain spaces
    /// and parentheses, so the fields are counted after its last `)`.
    pub fn parse(text: &str) -> Option<Stat> {
        let open = text.find('(')?;
        let close = text.rfind(')')?;
        let comm = text.get(open + 1..close)?.to_owned();
        let fields: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
        // Fields 14 and 15 (utime, stime) are the 12th and 13th after it.
        let utime: u64 = fields.get(11)?.parse().ok()?;
        let stime: u64 = fields.get(12)?.parse().ok()?;
        Some(Stat {
            comm,
            cpu_ticks: utime + stime,
        })
    }

    /// The CPU time in seconds.
    pub fn cpu_secs(&self) -> f64 {
        self.cpu_ticks as f64 / clock_ticks_per_sec()
    }
}

/// CPU seconds (user + system) process `pid` has used so far.
pub fn cpu_secs(pid: u32) -> Option<f64> {
    Stat::read(Path::new(&format!("/proc/{pid}/stat"))).map(|s| s.cpu_secs())
}

/// A `kB` field of `/proc/PID/status` (`VmRSS`, `VmHWM`), in KiB.
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    parse_status_kib(&text, field)
}

fn parse_status_kib(text: &str, field: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// The machine's 1-minute load average, as written in `/proc/loadavg`.
pub fn load_avg() -> Option<String> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_count_after_the_last_parenthesis() {
        let text = "42 (tokio (rt) x) S 1 42 42 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 3";
        let s = Stat::parse(text).expect("parses");
        assert_eq!(s.comm, "tokio (rt) x");
        assert_eq!(s.cpu_ticks, 325);
        assert_eq!(Stat::parse("42 (x) S 1"), None);
    }

    #[test]
    fn status_fields_match_whole_names() {
        let text = "Name:\trcss3d\nVmHWM:\t   13000 kB\nVmRSS:\t   12000 kB\n";
        assert_eq!(parse_status_kib(text, "VmRSS"), Some(12000));
        assert_eq!(parse_status_kib(text, "VmHWM"), Some(13000));
        assert_eq!(parse_status_kib(text, "Vm"), None);
    }

    #[test]
    fn this_process_is_measured() {
        if !Path::new("/proc/self/stat").exists() {
            return;
        }
        assert!(clock_ticks_per_sec() > 0.0);
        assert!(cpu_secs(std::process::id()).is_some());
        assert!(thread_cpu_time().is_some());
        assert!(status_kib(std::process::id(), "VmRSS").is_some_and(|kib| kib > 0));
    }

    #[test]
    fn thread_cpu_time_counts_work_and_not_sleep() {
        use std::time::{Duration, Instant};
        let Some(before_sleep) = thread_cpu_time() else {
            return;
        };
        std::thread::sleep(Duration::from_millis(50));
        let after_sleep = thread_cpu_time().expect("the clock worked a moment ago");
        let work = Instant::now();
        let mut x = 0u64;
        while work.elapsed() < Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let worked = work.elapsed();
        let after_work = thread_cpu_time().expect("the clock worked a moment ago");
        assert!(after_sleep - before_sleep < Duration::from_millis(25));
        assert!(after_work > after_sleep);
        assert!(after_work - after_sleep <= worked + Duration::from_millis(1));
    }
}
