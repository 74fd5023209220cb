//! An agent in a team that answers every frame, on a thread and runtime
//! of its own, so the hostile clients of the same test cannot delay it: a
//! gap it sees is the server's.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::TestAgent;

/// What the honest agent saw.
#[derive(Debug, Clone, Copy)]
pub struct HonestReport {
    /// Longest wait between two frames (5 s if a frame never came).
    pub max_gap: Duration,
    /// Frames received.
    pub frames: usize,
}

/// The running agent; [`Honest::finish`] stops it.
pub struct Honest {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<HonestReport>,
    /// Frames received so far.
    frames: tokio::sync::watch::Receiver<usize>,
}

impl Honest {
    /// Joins `team` as number 1 (robot type 0) and returns once it is in
    /// the team. It answers every frame with a head that keeps turning, so
    /// monitors and the match log have deltas to send.
    pub async fn start(addr: SocketAddr, team: &'static str) -> Honest {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let (frames_tx, frames) = tokio::sync::watch::channel(0);
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let mut a = TestAgent::connect(addr).await;
                a.join(team, 1, 0).await;
                // The frame that named its number is answered too (in sync
                // mode the next one waits for it).
                a.send("(syn)").await;
                let _ = ready_tx.send(());
                let mut last = Instant::now();
                let mut report = HonestReport {
                    max_gap: Duration::ZERO,
                    frames: 0,
                };
                while !flag.load(Ordering::Acquire) {
                    if a.try_recv(Duration::from_secs(5)).await.is_none() {
                        report.max_gap = Duration::from_secs(5);
                        break;
                    }
                    report.frames += 1;
                    frames_tx.send_replace(report.frames);
                    report.max_gap = report.max_gap.max(last.elapsed());
                    last = Instant::now();
                    let v = (report.frames as f64 * 0.05).sin();
                    a.send(&format!("(he1 {v:.3})(syn)")).await;
                }
                report
            })
        });
        ready_rx.await.expect("honest agent joined");
        Honest {
            stop,
            thread,
            frames,
        }
    }

    /// Waits until the agent has received `n` more frames (in real time,
    /// 50 a second of match), failing the test after 60 s.
    pub async fn played(&self, n: usize) {
        let mut frames = self.frames.clone();
        let until = *frames.borrow_and_update() + n;
        tokio::time::timeout(Duration::from_secs(60), frames.wait_for(|f| *f >= until))
            .await
            .unwrap_or_else(|_| panic!("the honest agent got fewer than {n} frames in 60 s"))
            .expect("honest agent running");
    }

    /// Stops the agent and returns what it saw.
    pub async fn finish(self) -> HonestReport {
        self.stop.store(true, Ordering::Release);
        tokio::task::spawn_blocking(move || self.thread.join().expect("honest agent"))
            .await
            .expect("join")
    }
}
