//! The honest agents: they play and measure the gaps between frames.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rcss3d::net::client::AgentClient;

use crate::wire::{agent_now, recv, ServerClock};
use crate::{LATE_AFTER, NAO, STEP};

#[derive(Default)]
pub(crate) struct AgentStats {
    pub(crate) frames: AtomicU64,
    pub(crate) max_gap_us: AtomicU64,
    pub(crate) late: AtomicU64,
    /// Frames whose clock moved by more than one step on the server's
    /// float clock (a frame this agent did not get).
    pub(crate) skipped: AtomicU64,
    pub(crate) connected: AtomicBool,
    /// When (seconds into the run) and why the connection ended.
    pub(crate) ended: Mutex<Option<(f64, String)>>,
    /// (seconds since the run started, server time) of every frame; kept
    /// for the first agent only, to measure the cycle rate.
    pub(crate) clock: Mutex<Vec<(f64, f64)>>,
}

pub(crate) async fn honest_agent(
    addr: SocketAddr,
    team: &'static str,
    unum: usize,
    stats: Arc<AgentStats>,
    run_start: Instant,
    measure_from: Arc<Mutex<Option<Instant>>>,
    keep_clock: bool,
) {
    let result: std::io::Result<()> = async {
        let mut s = AgentClient::connect(addr).await?;
        s.send(&format!("(scene {NAO} {})", unum % 5)).await?;
        stats.connected.store(true, Ordering::Relaxed);
        let mut last: Option<Instant> = None;
        let mut server_clock = ServerClock::default();
        let mut n: u64 = 0;
        loop {
            let f = recv(&mut s).await?;
            let t = Instant::now();
            n += 1;
            let measuring = measure_from
                .lock()
                .ok()
                .and_then(|m| *m)
                .is_some_and(|m| t >= m);
            if let (Some(prev), true) = (last, measuring) {
                let gap = t - prev;
                stats
                    .max_gap_us
                    .fetch_max(gap.as_micros() as u64, Ordering::Relaxed);
                if gap > LATE_AFTER {
                    stats.late.fetch_add(1, Ordering::Relaxed);
                }
            }
            last = Some(t);
            stats.frames.fetch_add(1, Ordering::Relaxed);
            if let Some(now) = agent_now(&f) {
                let steps = server_clock.steps_to(now, STEP as f32);
                if measuring && steps.is_some_and(|n| n > 1) {
                    stats.skipped.fetch_add(1, Ordering::Relaxed);
                }
                if keep_clock {
                    if let Ok(mut c) = stats.clock.lock() {
                        c.push(((t - run_start).as_secs_f64(), now));
                    }
                }
            }
            let reply = match n {
                1 => format!("(init (unum {unum})(teamname {team}))(syn)"),
                3 => {
                    let x = if team == "SoakLeft" { -1.0 } else { 1.0 } * (1.0 + unum as f64);
                    format!("(beam {x:.1} {:.1} 0)(syn)", (unum as f64 - 6.0) * 1.2)
                }
                _ => {
                    // Slow head and arm swings: real motor traffic every cycle.
                    let phase = (n as f64 * 0.05 + unum as f64).sin();
                    format!(
                        "(he1 {:.2})(he2 {:.2})(lae1 {:.2})(rae1 {:.2})(syn)",
                        phase,
                        -phase * 0.5,
                        phase * 0.8,
                        -phase * 0.8
                    )
                }
            };
            s.send(&reply).await?;
        }
    }
    .await;
    let why = match result {
        Ok(()) => "ended".to_string(),
        Err(e) => e.to_string(),
    };
    if let Ok(mut e) = stats.ended.lock() {
        *e = Some((run_start.elapsed().as_secs_f64(), why));
    }
}
