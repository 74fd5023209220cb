//! The value ranges a configuration must keep, checked once: when a file
//! is read and when a server starts with a configuration built in code.
//! Nothing downstream patches a value that slipped through.

use super::{Config, ConfigError};

impl Config {
    /// Checks value ranges.
    pub fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let bad = |message: String| {
            Err(ConfigError::Invalid {
                path: path.to_owned(),
                message,
            })
        };
        if !(self.step > 0.0 && self.step <= 1.0) {
            return bad(format!("step must be in (0, 1] seconds, got {}", self.step));
        }
        if self.max_agent_frame < 64 {
            return bad(format!(
                "max_agent_frame must be >= 64, got {}",
                self.max_agent_frame
            ));
        }
        if let Err(e) = switchable_secs("agent_idle_timeout_secs", self.agent_idle_timeout_secs) {
            return bad(e);
        }
        if self.sync_timeout_ms == Some(0) {
            // Not an old spelling of "off" (this key never had one), but
            // what "no timeout" is written as elsewhere: here it would
            // leave every agent behind at once.
            let message = "sync_timeout_ms: 0 would wait for no agent at all; write \
                           `sync_timeout_ms: None` to wait forever, or a number of milliseconds";
            return bad(message.into());
        }
        if let Err(e) = zero_is_not_none(
            "max_agent_bytes_per_sec",
            self.max_agent_bytes_per_sec,
            "no limit",
        ) {
            return bad(e);
        }
        if let Err(e) = zero_is_not_none("seed", self.seed, "a random seed") {
            return bad(e);
        }
        if self.agent_queue == 0 {
            return bad("agent_queue must be >= 1".into());
        }
        if let Err(e) = self.monitor_ranges() {
            return bad(format!("monitor: {e}"));
        }
        if let Err(e) = self.physics_ranges() {
            return bad(format!("physics: {e}"));
        }
        if let Err(e) = self.vision_ranges() {
            return bad(format!("vision: {e}"));
        }
        if let Err(e) = self.rules.validate() {
            return bad(format!("rules: {e}"));
        }
        if let Err(e) = self.latency.validate() {
            return bad(format!("latency: {e}"));
        }
        Ok(())
    }

    /// The monitor section's counts that must be at least 1 and durations
    /// that must be finite and not negative.
    fn monitor_ranges(&self) -> Result<(), String> {
        let m = &self.monitor;
        for (key, n) in [
            ("monitor_step", m.monitor_step as usize),
            ("log_step", m.log_step as usize),
            ("queue_frames", m.queue_frames),
        ] {
            if n == 0 {
                return Err(format!("{key} must be >= 1"));
            }
        }
        for (key, secs) in [
            ("log_full_state_secs", m.log_full_state_secs),
            ("admission_wait_secs", m.admission_wait_secs),
            ("auth_failure_delay_secs", m.auth_failure_delay_secs),
        ] {
            if !(secs.is_finite() && secs >= 0.0) {
                return Err(format!("{key} must be a number >= 0, got {secs}"));
            }
        }
        switchable_secs("stall_timeout_secs", m.stall_timeout_secs)?;
        switchable_secs("evict_lag_secs", m.evict_lag_secs)?;
        zero_is_not_none(
            "commands_per_step",
            m.commands_per_step.map(|n| n as u64),
            "no limit",
        )?;
        zero_is_not_none(
            "max_auth_failures",
            m.max_auth_failures.map(u64::from),
            "no limit",
        )?;
        zero_is_not_none(
            "send_buffer_bytes",
            m.send_buffer_bytes.map(|n| n as u64),
            "the system's buffer",
        )
    }

    /// The physics solver's counts that must be at least 1, and the
    /// contacts' surface layers (depths: finite, not negative).
    fn physics_ranges(&self) -> Result<(), String> {
        let s = &self.physics.solver;
        for (key, n) in [
            ("solver.substeps", s.substeps),
            ("solver.iterations", s.iterations),
            ("solver.internal_pgs_iterations", s.internal_pgs_iterations),
        ] {
            if n == 0 {
                return Err(format!("{key} must be >= 1"));
            }
        }
        if !(self.physics.gravity.is_finite()) {
            return Err(format!(
                "gravity must be a number, got {}",
                self.physics.gravity
            ));
        }
        let c = &self.physics.contacts;
        for (key, depth) in [
            ("contacts.ball_ground_layer", c.ball_ground_layer),
            ("contacts.robot_ground_layer", c.robot_ground_layer),
        ] {
            if !(depth.is_finite() && depth >= 0.0) {
                return Err(format!("{key} must be a depth >= 0 (m), got {depth}"));
            }
        }
        Ok(())
    }

    /// Vision's angles, noise and interval.
    fn vision_ranges(&self) -> Result<(), String> {
        let v = &self.vision;
        zero_is_not_none("interval", v.interval.map(u64::from), "no vision")?;
        if v.h_view_cone > 360 || v.v_view_cone > 360 {
            return Err(format!(
                "view cones must be at most 360 degrees, got {} x {}",
                v.h_view_cone, v.v_view_cone
            ));
        }
        for (key, x) in [
            ("calibration_error", v.calibration_error),
            ("sigma_distance", v.sigma_distance),
            ("sigma_horizontal", v.sigma_horizontal),
            ("sigma_vertical", v.sigma_vertical),
            ("min_distance", v.min_distance),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(format!("{key} must be a number >= 0, got {x}"));
            }
        }
        Ok(())
    }
}

/// A setting whose `None` means `none_means` (no limit, the system's
/// value, ...), which `0` used to mean: the old spelling is refused with a
/// message saying so rather than read as a zero.
fn zero_is_not_none(key: &str, value: Option<u64>, none_means: &str) -> Result<(), String> {
    match value {
        Some(0) => Err(format!(
            "{key}: 0 no longer means {none_means}; write `{key}: None`"
        )),
        _ => Ok(()),
    }
}

/// A duration that can be switched off: `None` is off, a value must be a
/// number of seconds above 0. `0`, the spelling of "off" before `None`,
/// is refused with a message saying so rather than read as a zero wait.
fn switchable_secs(key: &str, secs: Option<f32>) -> Result<(), String> {
    match secs {
        Some(0.0) => Err(format!(
            "{key}: 0 no longer switches it off; write `{key}: None`"
        )),
        Some(s) if !(s.is_finite() && s > 0.0) => Err(format!(
            "{key} must be a number of seconds > 0 (or None for off), got {s}"
        )),
        _ => Ok(()),
    }
}
