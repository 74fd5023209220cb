//! The two monitors: one that kicks off and asks for full states, one that
//! stops reading for a while.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rcss3d::net::client::AgentClient;

use crate::wire::{balanced, recv};

#[derive(Default)]
pub(crate) struct MonitorStats {
    pub(crate) frames: AtomicU64,
    pub(crate) unbalanced: AtomicU64,
    pub(crate) max_gap_us: AtomicU64,
    pub(crate) full_states: AtomicU64,
    pub(crate) kickoffs: AtomicU64,
    pub(crate) frames_after_stall: AtomicU64,
    pub(crate) ended: Mutex<Option<String>>,
}

/// `(play_mode N)` of a monitor frame.
pub(crate) fn play_mode(frame: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(frame).ok()?;
    let i = text.find("(play_mode ")? + 11;
    let end = i + text[i..].find(')')?;
    text[i..end].parse().ok()
}

/// A monitor. The driver (`kick == true`) kicks off when the game waits
/// in BeforeKickOff and asks for a full state every 30 s. With a stall
/// window it stops reading during it.
pub(crate) async fn monitor(
    addr: SocketAddr,
    stats: Arc<MonitorStats>,
    kick: bool,
    stall: Option<(Instant, Duration)>,
    measure_from: Instant,
    until: Instant,
    run_start: Instant,
) {
    let result: std::io::Result<()> = async {
        let mut s = AgentClient::connect(addr).await?;
        let mut last: Option<Instant> = None;
        let mut waiting_since: Option<Instant> = None;
        let mut last_full_req = Instant::now();
        let mut stalled = false;
        loop {
            if Instant::now() >= until {
                return Ok(());
            }
            if let Some((at, len)) = stall {
                let now = Instant::now();
                if now >= at && now < at + len {
                    // Stop reading; the server must not stall or grow.
                    tokio::time::sleep_until((at + len).into()).await;
                    stalled = true;
                    last = None;
                    continue;
                }
            }
            let f = match tokio::time::timeout_at(until.into(), recv(&mut s)).await {
                Ok(r) => r?,
                Err(_) => return Ok(()),
            };
            let t = Instant::now();
            stats.frames.fetch_add(1, Ordering::Relaxed);
            if stalled {
                stats.frames_after_stall.fetch_add(1, Ordering::Relaxed);
            }
            if !balanced(&f) {
                stats.unbalanced.fetch_add(1, Ordering::Relaxed);
            }
            if f.windows(9).any(|w| w == b"(RSG 0 1)") {
                stats.full_states.fetch_add(1, Ordering::Relaxed);
            }
            if let (Some(p), true) = (last, t >= measure_from) {
                stats
                    .max_gap_us
                    .fetch_max((t - p).as_micros() as u64, Ordering::Relaxed);
            }
            last = Some(t);
            if kick && t >= measure_from {
                // BeforeKickOff (0) or GameOver after a half: kick off again.
                match play_mode(&f) {
                    Some(0) => {
                        let since = *waiting_since.get_or_insert(t);
                        if t - since > Duration::from_secs(2) {
                            s.send("(kickOff Left)").await?;
                            stats.kickoffs.fetch_add(1, Ordering::Relaxed);
                            waiting_since = None;
                        }
                    }
                    Some(_) => waiting_since = None,
                    None => {}
                }
                if t - last_full_req > Duration::from_secs(30) {
                    s.send("(reqfullstate)").await?;
                    last_full_req = t;
                }
            }
        }
    }
    .await;
    let why = match result {
        Ok(()) => "run over".to_string(),
        Err(e) => format!("{:.1} s: {e}", run_start.elapsed().as_secs_f64()),
    };
    if let Ok(mut e) = stats.ended.lock() {
        *e = Some(why);
    }
}
