//! Operating-system settings that keep the real-time cycle on time: a
//! fixed real-time priority for the simulation thread and a request that
//! idle processors poll instead of halting.
//!
//! A real-time match wakes the simulation thread every 20 ms. Between
//! cycles it sleeps, and two things can make a wake-up late that the
//! server's own code cannot: a busy processor where the thread waits its
//! turn behind other programs (the agents, on a small machine), and an
//! idle processor that halted and takes long to come back (in a virtual
//! machine a halt hands the processor to the host). The first is answered
//! by `SCHED_FIFO` for the simulation thread: a runnable real-time thread
//! preempts every ordinary one. The second by Linux's CPU latency request
//! (`/dev/cpu_dma_latency` held open with the value 0): while it is held,
//! idle processors poll rather than halt. Polling counts as idle time, not
//! as the server's, but keeps the processor busy for its host; that and
//! the privilege both need (root, or `CAP_SYS_NICE` and write access to
//! the device) is why both are opt-in (`--low-latency`).
//!
//! Neither changes what is simulated; a setting that cannot be had is
//! logged and the server runs without it.

use std::fs::File;

use serde::Deserialize;
use thiserror::Error;

/// Scheduling requests for the simulation thread (config key `latency`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LatencyConfig {
    /// Run the simulation thread under `SCHED_FIFO` with this priority
    /// (1–99). Default `None`: the ordinary scheduler.
    pub sim_fifo_priority: Option<u8>,
    /// Hold the CPU latency request at 0 (idle processors poll instead of
    /// halting) for the server's lifetime. Default false.
    pub keep_cpus_awake: bool,
}

impl LatencyConfig {
    /// The `--low-latency` settings: both requests, `SCHED_FIFO` priority
    /// 10 unless one is configured.
    pub fn low_latency(&self) -> LatencyConfig {
        LatencyConfig {
            sim_fifo_priority: Some(self.sim_fifo_priority.unwrap_or(10)),
            keep_cpus_awake: true,
        }
    }

    /// Checks the priority's range.
    pub fn validate(&self) -> Result<(), String> {
        match self.sim_fifo_priority {
            Some(p) if !(1..=99).contains(&p) => {
                Err(format!("sim_fifo_priority must be in 1..=99, got {p}"))
            }
            _ => Ok(()),
        }
    }
}

/// A scheduling request the system refused.
#[derive(Debug, Error)]
pub enum LatencyError {
    /// `sched_setscheduler` failed (usually: no `CAP_SYS_NICE`).
    #[error("SCHED_FIFO priority {priority} for the simulation thread: {source}")]
    Priority {
        /// The requested priority.
        priority: u8,
        /// The system's error.
        source: std::io::Error,
    },
    /// `/dev/cpu_dma_latency` could not be opened or written.
    #[error("CPU latency request ({path}): {source}")]
    CpuLatency {
        /// The device path.
        path: &'static str,
        /// The system's error.
        source: std::io::Error,
    },
    /// The platform has neither request.
    #[error("not supported on this platform")]
    Unsupported,
}

/// The device through which Linux takes a CPU latency request.
pub const CPU_LATENCY_DEVICE: &str = "/dev/cpu_dma_latency";

/// Holds what was granted; the CPU latency request ends when it drops.
#[derive(Debug, Default)]
pub struct LatencyGuard {
    cpu_latency: Option<File>,
    /// The `SCHED_FIFO` priority the calling thread now runs at.
    pub fifo_priority: Option<u8>,
}

impl LatencyGuard {
    /// Whether idle processors are asked to poll.
    pub fn keeps_cpus_awake(&self) -> bool {
        self.cpu_latency.is_some()
    }
}

/// Applies `cfg` to the calling thread and the system, each request on its
/// own: the guard holds what was granted, the errors say what was not.
pub fn apply(cfg: &LatencyConfig) -> (LatencyGuard, Vec<LatencyError>) {
    let mut guard = LatencyGuard::default();
    let mut errors = Vec::new();
    if let Some(priority) = cfg.sim_fifo_priority {
        match set_fifo_priority(priority) {
            Ok(()) => guard.fifo_priority = Some(priority),
            Err(e) => errors.push(e),
        }
    }
    if cfg.keep_cpus_awake {
        match hold_cpu_latency_zero() {
            Ok(f) => guard.cpu_latency = Some(f),
            Err(e) => errors.push(e),
        }
    }
    (guard, errors)
}

/// Applies `cfg` and logs the outcome: what was granted at info level,
/// each refusal as a warning (the server goes on without it).
pub fn apply_logged(cfg: &LatencyConfig) -> LatencyGuard {
    let (guard, errors) = apply(cfg);
    for e in &errors {
        tracing::warn!("low-latency setting not applied: {e}");
    }
    if guard.fifo_priority.is_some() || guard.keeps_cpus_awake() {
        tracing::info!(
            fifo_priority = ?guard.fifo_priority,
            keep_cpus_awake = guard.keeps_cpus_awake(),
            "simulation thread latency settings"
        );
    }
    guard
}

#[cfg(target_os = "linux")]
fn set_fifo_priority(priority: u8) -> Result<(), LatencyError> {
    let param = libc::sched_param {
        sched_priority: i32::from(priority),
    };
    // SAFETY: pid 0 is the calling thread; `param` outlives the call.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if r == 0 {
        Ok(())
    } else {
        Err(LatencyError::Priority {
            priority,
            source: std::io::Error::last_os_error(),
        })
    }
}

#[cfg(not(target_os = "linux"))]
fn set_fifo_priority(_priority: u8) -> Result<(), LatencyError> {
    Err(LatencyError::Unsupported)
}

#[cfg(target_os = "linux")]
fn hold_cpu_latency_zero() -> Result<File, LatencyError> {
    use std::io::Write;
    let err = |source| LatencyError::CpuLatency {
        path: CPU_LATENCY_DEVICE,
        source,
    };
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(CPU_LATENCY_DEVICE)
        .map_err(err)?;
    // The request is a native-endian i32 in microseconds; it lasts while
    // the file stays open.
    f.write_all(&0i32.to_ne_bytes()).map_err(err)?;
    Ok(f)
}

#[cfg(not(target_os = "linux"))]
fn hold_cpu_latency_zero() -> Result<File, LatencyError> {
    Err(LatencyError::Unsupported)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calling thread's scheduling policy (`SCHED_OTHER`, `SCHED_FIFO`, ...).
    #[cfg(target_os = "linux")]
    fn current_policy() -> i32 {
        // SAFETY: pid 0 is the calling thread; no memory is passed.
        unsafe { libc::sched_getscheduler(0) }
    }

    #[test]
    fn nothing_requested_changes_nothing() {
        let (guard, errors) = apply(&LatencyConfig::default());
        assert!(errors.is_empty());
        assert_eq!(guard.fifo_priority, None);
        assert!(!guard.keeps_cpus_awake());
    }

    #[test]
    fn low_latency_keeps_a_configured_priority() {
        let cfg = LatencyConfig {
            sim_fifo_priority: Some(30),
            keep_cpus_awake: false,
        };
        assert_eq!(
            cfg.low_latency(),
            LatencyConfig {
                sim_fifo_priority: Some(30),
                keep_cpus_awake: true
            }
        );
        assert_eq!(
            LatencyConfig::default().low_latency().sim_fifo_priority,
            Some(10)
        );
    }

    #[test]
    fn priority_out_of_range_is_invalid() {
        for p in [0u8, 100, 255] {
            let cfg = LatencyConfig {
                sim_fifo_priority: Some(p),
                keep_cpus_awake: false,
            };
            assert!(cfg.validate().is_err(), "{p}");
        }
        assert!(LatencyConfig {
            sim_fifo_priority: Some(99),
            keep_cpus_awake: true
        }
        .validate()
        .is_ok());
    }

    /// On a thread of its own (the policy is per thread): either the
    /// thread now runs under SCHED_FIFO, or the refusal is a permission
    /// error reported as such and the thread's policy is unchanged.
    #[cfg(target_os = "linux")]
    #[test]
    fn fifo_priority_is_granted_or_refused_without_change() {
        let (policy, granted, err) = std::thread::spawn(|| {
            let before = current_policy();
            let (guard, errors) = apply(&LatencyConfig {
                sim_fifo_priority: Some(5),
                keep_cpus_awake: false,
            });
            let after = current_policy();
            (
                (before, after),
                guard.fifo_priority,
                errors.into_iter().next(),
            )
        })
        .join()
        .expect("thread ran");
        match (granted, err) {
            (Some(5), None) => assert_eq!(policy.1, libc::SCHED_FIFO),
            (None, Some(LatencyError::Priority { source, .. })) => {
                assert_eq!(source.kind(), std::io::ErrorKind::PermissionDenied);
                assert_eq!(policy.0, policy.1);
            }
            other => panic!("unexpected outcome {other:?}"),
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn cpu_latency_request_is_held_or_refused() {
        let (guard, errors) = apply(&LatencyConfig {
            sim_fifo_priority: None,
            keep_cpus_awake: true,
        });
        match errors.as_slice() {
            [] => assert!(guard.keeps_cpus_awake()),
            [LatencyError::CpuLatency { path, .. }] => {
                assert_eq!(*path, CPU_LATENCY_DEVICE);
                assert!(!guard.keeps_cpus_awake());
            }
            other => panic!("unexpected errors {other:?}"),
        }
    }
}
