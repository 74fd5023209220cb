//! How far behind a monitor connection is, and whether its program has
//! been seen to read at all.
//!
//! The server cannot see the peer's reads, but TCP shows their effect.
//! On Linux, `TCP_INFO` gives the receive window the peer advertises
//! (`tcpi_snd_wnd`), the bytes it has acknowledged (`tcpi_bytes_acked`)
//! and the bytes still in the server's own queue (`tcpi_notsent_bytes`):
//!
//! * once a peer's buffer fills with unread data, its window shrinks and
//!   the server's queue grows: the sum against the widest window seen is
//!   the backlog (small backlogs do not show: a receiver keeps its window
//!   while it has spare room);
//! * the window's right edge (acknowledged + window) moves on only as far
//!   as the peer can buffer unless its program reads: past
//!   [`PROOF_OF_READING`] bytes it has read.
//!
//! Each connection's socket task records when it wrote each message
//! ([`Backlog`]) and publishes the time of the oldest one still unread and
//! whether the peer has been seen to read ([`Progress`]); the accept loop
//! reads these when it needs a slot, and is woken when a connection starts
//! to lag. Elsewhere, or when the kernel does not tell, only writes that
//! block count.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpStream;
use tokio::sync::Notify;

/// What the peer's kernel reports about one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerWindow {
    /// The receive window the peer advertises, bytes.
    pub window: u64,
    /// Bytes written by the server that are still in its own send queue
    /// (not sent, since the peer's window is closed).
    pub not_sent: u64,
    /// The window's unit: the peer advertises multiples of this.
    pub granule: u64,
    /// Bytes the peer has acknowledged.
    pub acked: u64,
}

/// The window's right edge may move this far (bytes) past where it
/// started before the peer must have read: more than a peer can buffer
/// with the system's default limits (`net.core.rmem_max` 208 KiB, doubled
/// by the kernel, plus its window).
pub const PROOF_OF_READING: u64 = 1 << 20;

/// Reads the peer's window of `stream`; `None` where the kernel does not
/// tell.
#[cfg(target_os = "linux")]
pub fn peer_window(stream: &TcpStream) -> Option<PeerWindow> {
    use std::os::fd::AsRawFd;
    let fd = stream.as_raw_fd();
    // SAFETY: `tcp_info` is plain data, zeroes are a valid value.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `fd` is an open socket owned by `stream` for this call; the
    // kernel writes at most `len` bytes into `info` and sets `len`.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    // Kernels before 5.4 do not fill `tcpi_snd_wnd`.
    let needed = std::mem::offset_of!(libc::tcp_info, tcpi_snd_wnd) + 4;
    if r != 0 || (len as usize) < needed {
        return None;
    }
    Some(PeerWindow {
        window: u64::from(info.tcpi_snd_wnd),
        not_sent: u64::from(info.tcpi_notsent_bytes),
        granule: 1u64 << (info.tcpi_snd_rcv_wscale & 0x0f),
        acked: info.tcpi_bytes_acked,
    })
}

/// Reads the peer's window of `stream`; `None` where the kernel does not
/// tell.
#[cfg(not(target_os = "linux"))]
pub fn peer_window(_stream: &TcpStream) -> Option<PeerWindow> {
    None
}

/// No time recorded.
const NONE: u64 = u64::MAX;

/// One connection's lag, shared between its socket task (writer) and the
/// accept loop (reader).
#[derive(Debug)]
pub struct Progress {
    epoch: Instant,
    /// When the connection was admitted.
    admitted: Instant,
    /// Micros since `epoch` when the oldest message the peer has not read
    /// was written, the newest one aside; [`NONE`] when caught up.
    oldest_unread: AtomicU64,
    /// Micros since `epoch` when the write in progress began; [`NONE`]
    /// when no write is waiting for room.
    writing_since: AtomicU64,
    /// The peer has been seen to read.
    reads: AtomicBool,
    /// Notified when the connection starts to lag (see
    /// [`Progress::notify_lag`]).
    lag_signal: Option<Arc<Notify>>,
}

impl Progress {
    /// A connection admitted now that has nothing unread; times are kept
    /// as micros since `epoch`.
    pub fn new(epoch: Instant) -> Progress {
        Progress {
            epoch,
            admitted: Instant::now(),
            oldest_unread: AtomicU64::new(NONE),
            writing_since: AtomicU64::new(NONE),
            reads: AtomicBool::new(false),
            lag_signal: None,
        }
    }

    /// Notifies `signal` whenever the connection starts to lag (a message
    /// left unread, a write that has to wait), so that a newcomer waiting
    /// for a slot learns when to look again for a connection to close.
    pub fn notify_lag(mut self, signal: Arc<Notify>) -> Progress {
        self.lag_signal = Some(signal);
        self
    }

    /// When the connection was admitted.
    pub fn admitted(&self) -> Instant {
        self.admitted
    }

    /// Since when the connection lags: the older of its oldest unread
    /// message and its blocked write; `None` when it keeps up.
    pub fn lagging_since(&self) -> Option<Instant> {
        let a = self.oldest_unread.load(Ordering::Relaxed);
        let b = self.writing_since.load(Ordering::Relaxed);
        match a.min(b) {
            NONE => None,
            t => Some(self.epoch + Duration::from_micros(t)),
        }
    }

    /// Stores `v` in `a` (one of the two times); signals when that starts
    /// a lag. Only the connection's socket task writes them.
    fn set(&self, a: &AtomicU64, v: u64) {
        let kept_up = self.lagging_since().is_none();
        a.store(v, Ordering::Relaxed);
        if kept_up && v != NONE {
            if let Some(signal) = &self.lag_signal {
                signal.notify_one();
            }
        }
    }

    /// How long the connection has been open at `now`.
    pub fn age(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.admitted)
    }

    /// Records that the peer has been seen to read.
    pub fn reads(&self) {
        self.reads.store(true, Ordering::Relaxed);
    }

    /// Whether the peer has been seen to read.
    pub fn seen_reading(&self) -> bool {
        self.reads.load(Ordering::Relaxed)
    }

    fn micros(&self, t: Instant) -> u64 {
        u64::try_from(t.saturating_duration_since(self.epoch).as_micros()).unwrap_or(NONE - 1)
    }

    /// A write begins (`Some`) or has ended (`None`).
    pub fn writing(&self, since: Option<Instant>) {
        let v = since.map_or(NONE, |t| self.micros(t));
        self.set(&self.writing_since, v);
    }

    /// The oldest unread message (the newest aside) was written at `at`;
    /// `None`: caught up.
    pub fn unread_since(&self, at: Option<Instant>) {
        let v = at.map_or(NONE, |t| self.micros(t));
        self.set(&self.oldest_unread, v);
    }

    /// How long this connection has left a message unread (the newest
    /// aside) or a write blocked, at `now`; zero when it keeps up.
    pub fn lag(&self, now: Instant) -> Duration {
        let now = self.micros(now);
        let since = |a: &AtomicU64| match a.load(Ordering::Relaxed) {
            NONE => 0,
            t => now.saturating_sub(t),
        };
        Duration::from_micros(since(&self.oldest_unread).max(since(&self.writing_since)))
    }
}

/// Messages at most this far back are remembered; older unread ones
/// count as written when the oldest remembered one was.
const REMEMBERED: usize = 4096;

/// The messages written to one connection, for finding the oldest one
/// its peer has not read.
#[derive(Debug, Default)]
pub struct Backlog {
    /// Bytes written so far.
    written: u64,
    /// (byte offset where the message ends, when it was written), oldest
    /// first; only messages that may still be unread.
    messages: VecDeque<(u64, Instant)>,
    /// The largest window the peer has advertised.
    widest: u64,
    /// The window's first right edge (acknowledged + window).
    first_edge: Option<u64>,
    /// The right edge has moved past [`PROOF_OF_READING`].
    pub seen_reading: bool,
}

impl Backlog {
    /// Records a message of `bytes` written at `at`.
    pub fn wrote(&mut self, bytes: usize, at: Instant) {
        self.written += bytes as u64;
        if self.messages.len() >= REMEMBERED {
            // Merge the two oldest: the run keeps the older time.
            if let Some((_, first)) = self.messages.pop_front() {
                if let Some(m) = self.messages.front_mut() {
                    m.1 = first;
                }
            }
        }
        self.messages.push_back((self.written, at));
    }

    /// Takes a reading of the peer's window and returns when the oldest
    /// message it has not read was written, not counting the newest
    /// message (a peer that reads acknowledges its last read only with
    /// the next one); `None` when caught up.
    pub fn update(&mut self, peer: PeerWindow) -> Option<Instant> {
        self.widest = self.widest.max(peer.window);
        let edge = peer.acked + peer.window;
        let first = *self.first_edge.get_or_insert(edge);
        self.seen_reading |= edge.saturating_sub(first) > PROOF_OF_READING;
        // Unread: what has arrived and not been read, and what has not
        // left this side. The window is rounded to its granule.
        let unread = (self.widest - peer.window + peer.not_sent).saturating_sub(peer.granule);
        let read = self.written.saturating_sub(unread);
        while self.messages.front().is_some_and(|m| m.0 <= read) {
            self.messages.pop_front();
        }
        let n = self.messages.len();
        (n >= 2).then(|| self.messages[0].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(window: u64, not_sent: u64) -> PeerWindow {
        PeerWindow {
            window,
            not_sent,
            granule: 128,
            acked: 0,
        }
    }

    #[test]
    fn a_right_edge_far_past_its_start_shows_reading() {
        let mut b = Backlog::default();
        let at = |acked| PeerWindow {
            window: 65536,
            not_sent: 0,
            granule: 1024,
            acked,
        };
        b.update(at(0));
        b.update(at(PROOF_OF_READING / 2));
        assert!(!b.seen_reading);
        b.update(at(PROOF_OF_READING + 1));
        assert!(b.seen_reading);
    }

    #[test]
    fn a_peer_that_reads_is_caught_up_and_one_that_does_not_falls_behind() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut reader = Backlog::default();
        let mut idle = Backlog::default();
        assert_eq!(reader.update(window(65536, 0)), None);
        assert_eq!(idle.update(window(65536, 0)), None);
        let mut idle_unread = 0;
        for k in 0..50u64 {
            reader.wrote(1000, at(40 * k));
            idle.wrote(1000, at(40 * k));
            idle_unread += 1000;
            // Sampled before the next write: the reader has only the
            // message just written outstanding.
            assert_eq!(reader.update(window(65536 - 1000, 0)), None, "{k}");
            let behind = idle.update(window(65536u64.saturating_sub(idle_unread), 0));
            if k >= 1 {
                assert_eq!(behind, Some(at(0)), "{k}");
            }
        }
        // Once the peer's window is shut, the unsent bytes count.
        let shut = idle.update(window(0, 20_000));
        assert_eq!(shut, Some(at(0)));
    }

    #[test]
    fn the_window_rounding_is_forgiven() {
        let t0 = Instant::now();
        let mut b = Backlog::default();
        b.update(window(65536, 0));
        b.wrote(50, t0);
        b.wrote(50, t0 + Duration::from_millis(40));
        // 100 bytes outstanding, shown as one 128-byte granule.
        assert_eq!(b.update(window(65536 - 128, 0)), None);
    }

    #[test]
    fn lag_counts_unread_messages_and_blocked_writes() {
        let t0 = Instant::now();
        let p = Progress::new(t0);
        assert_eq!(p.lag(t0 + Duration::from_secs(5)), Duration::ZERO);
        p.unread_since(Some(t0 + Duration::from_secs(1)));
        assert_eq!(p.lag(t0 + Duration::from_secs(3)), Duration::from_secs(2));
        p.writing(Some(t0));
        assert_eq!(p.lag(t0 + Duration::from_secs(3)), Duration::from_secs(3));
        p.writing(None);
        p.unread_since(None);
        assert_eq!(p.lag(t0 + Duration::from_secs(9)), Duration::ZERO);
    }

    #[tokio::test]
    async fn starting_to_lag_is_signalled_once() {
        let t0 = Instant::now();
        let signal = Arc::new(Notify::new());
        let p = Progress::new(t0).notify_lag(signal.clone());
        assert_eq!(p.lagging_since(), None);
        p.writing(Some(t0 + Duration::from_secs(1)));
        // The signal was left for the next waiter.
        signal.notified().await;
        assert_eq!(p.lagging_since(), Some(t0 + Duration::from_secs(1)));
        // Still lagging: no new signal.
        p.unread_since(Some(t0 + Duration::from_secs(2)));
        let again = signal.notified();
        tokio::pin!(again);
        assert!(futures::poll!(again.as_mut()).is_pending());
        assert_eq!(p.lagging_since(), Some(t0 + Duration::from_secs(1)));
        p.writing(None);
        p.unread_since(None);
        assert_eq!(p.lagging_since(), None);
    }

    #[test]
    fn long_backlogs_keep_the_oldest_time() {
        let t0 = Instant::now();
        let mut b = Backlog::default();
        b.update(window(1 << 30, 0));
        for k in 0..(REMEMBERED as u64 + 100) {
            b.wrote(10, t0 + Duration::from_millis(k));
        }
        assert_eq!(b.update(window(1 << 29, 0)), Some(t0));
    }

    #[tokio::test]
    async fn the_kernel_reports_a_window_on_loopback() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let _client = TcpStream::connect(addr).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        if cfg!(target_os = "linux") {
            let w = peer_window(&server).expect("TCP_INFO on Linux");
            assert!(w.window > 0 && w.not_sent == 0 && w.granule >= 1, "{w:?}");
        }
    }
}
