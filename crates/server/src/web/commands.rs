//! What the page sends: small JSON objects, decoded here into trainer
//! commands (live) or playback controls (replay), and the access rule for
//! trainer commands (the monitor port's: refused when it is read-only or
//! needs a secret, since the page cannot authenticate).

use serde_json::Value;

use crate::monitor::{MonitorCommand, MonitorConfig};
use crate::rules::{PlayMode, Side};

/// Largest accepted playback speed factor.
pub const MAX_SPEED: f32 = 8.0;
/// Smallest accepted playback speed factor.
pub const MIN_SPEED: f32 = 0.25;

/// One message of the page.
#[derive(Debug, Clone, PartialEq)]
pub enum PageCommand {
    /// A trainer command for the live simulation.
    Trainer(MonitorCommand),
    /// Replay: start playing.
    Play,
    /// Replay: stop playing.
    Pause,
    /// Replay: move by this many frames (negative = back).
    Step(i64),
    /// Replay: show this frame.
    Seek(u64),
    /// Replay: playback speed factor (clamped to 0.25-8).
    Speed(f32),
}

/// Decodes `{"cmd": ...}`. The error text goes back to the page.
pub fn parse(text: &str) -> Result<PageCommand, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let cmd = v
        .get("cmd")
        .and_then(Value::as_str)
        .ok_or("missing \"cmd\"")?;
    let side = || match v.get("side").and_then(Value::as_str) {
        Some("Left") => Ok(Side::Left),
        Some("Right") => Ok(Side::Right),
        other => Err(format!("side must be \"Left\" or \"Right\", got {other:?}")),
    };
    Ok(match cmd {
        "kickOff" => PageCommand::Trainer(MonitorCommand::KickOff(Some(side()?))),
        "dropBall" => PageCommand::Trainer(MonitorCommand::DropBall),
        "playMode" => {
            let name = v.get("mode").and_then(Value::as_str).unwrap_or("");
            let mode = PlayMode::ALL
                .iter()
                .find(|m| m.name() == name)
                .ok_or_else(|| format!("unknown play mode {name:?}"))?;
            PageCommand::Trainer(MonitorCommand::PlayMode(*mode))
        }
        "play" => PageCommand::Play,
        "pause" => PageCommand::Pause,
        "step" => PageCommand::Step(
            v.get("delta")
                .and_then(Value::as_i64)
                .ok_or("step needs an integer \"delta\"")?,
        ),
        "seek" => PageCommand::Seek(
            v.get("frame")
                .and_then(Value::as_u64)
                .ok_or("seek needs a frame number \"frame\"")?,
        ),
        "speed" => {
            let s = v
                .get("value")
                .and_then(Value::as_f64)
                .filter(|s| s.is_finite())
                .ok_or("speed needs a number \"value\"")? as f32;
            PageCommand::Speed(s.clamp(MIN_SPEED, MAX_SPEED))
        }
        other => return Err(format!("unknown command {other:?}")),
    })
}

/// Whether trainer commands from the page are accepted, and why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrainerAccess {
    /// Commands go to the simulation.
    Allowed,
    /// Commands are refused for this reason.
    Refused(&'static str),
}

impl TrainerAccess {
    /// The monitor port's rule applied to the page.
    pub fn of(cfg: &MonitorConfig) -> TrainerAccess {
        if cfg.read_only {
            TrainerAccess::Refused("the monitor port is read-only")
        } else if cfg.trainer_secret.is_some() {
            TrainerAccess::Refused(
                "the monitor port needs a trainer secret, which the web page cannot send",
            )
        } else {
            TrainerAccess::Allowed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_messages_decode_to_commands() {
        assert_eq!(
            parse(r#"{"cmd":"kickOff","side":"Right"}"#),
            Ok(PageCommand::Trainer(MonitorCommand::KickOff(Some(
                Side::Right
            ))))
        );
        assert_eq!(
            parse(r#"{"cmd":"dropBall"}"#),
            Ok(PageCommand::Trainer(MonitorCommand::DropBall))
        );
        assert_eq!(
            parse(r#"{"cmd":"playMode","mode":"PlayOn"}"#),
            Ok(PageCommand::Trainer(MonitorCommand::PlayMode(
                PlayMode::PlayOn
            )))
        );
        assert_eq!(
            parse(r#"{"cmd":"seek","frame":12}"#),
            Ok(PageCommand::Seek(12))
        );
        assert_eq!(
            parse(r#"{"cmd":"step","delta":-1}"#),
            Ok(PageCommand::Step(-1))
        );
        assert_eq!(
            parse(r#"{"cmd":"speed","value":100}"#),
            Ok(PageCommand::Speed(8.0))
        );
        assert_eq!(
            parse(r#"{"cmd":"speed","value":0}"#),
            Ok(PageCommand::Speed(0.25))
        );
        for bad in [
            "",
            "[]",
            r#"{"cmd":"kickOff","side":"Up"}"#,
            r#"{"cmd":"playMode","mode":"Nope"}"#,
            r#"{"cmd":"seek","frame":-3}"#,
            r#"{"cmd":"killsim"}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn trainer_access_follows_the_monitor_port() {
        let mut cfg = MonitorConfig::default();
        assert_eq!(TrainerAccess::of(&cfg), TrainerAccess::Allowed);
        cfg.trainer_secret = Some("s".into());
        assert!(matches!(TrainerAccess::of(&cfg), TrainerAccess::Refused(_)));
        cfg.trainer_secret = None;
        cfg.read_only = true;
        assert!(matches!(TrainerAccess::of(&cfg), TrainerAccess::Refused(_)));
    }
}
