//! No client can starve the others: floods on the agent port and on the
//! monitor port against the server binary (real-time mode, as in a
//! match). An honest agent keeps getting its frames with no gap over 1 s,
//! the server's peak RSS (VmHWM from /proc) stays under 64 MB, and the log
//! stays small. Also: what one agent connection can make the server hold,
//! and the monitor command budget per step.

mod util;

#[path = "monitor/util.rs"]
mod monitor_util;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rcss3d::net::client::frame;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use util::honest::Honest;
use util::process::ServerProcess;
use util::{Scratch, TestAgent};

/// Peak RSS the server may reach during a flood.
const MAX_PEAK_RSS_KB: u64 = 64 * 1024;

/// Longest wait of the honest agent for its next frame.
const MAX_GAP: Duration = Duration::from_secs(1);

/// How long each flood lasts.
const FLOOD: Duration = Duration::from_secs(3);

/// The tests that start a server binary run one at a time, so their gap
/// and memory figures are not those of the other tests' servers.
static ONE_SERVER_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The server binary (real-time mode) with `extra` RON fields, its output
/// (the `info` log) in a file.
struct Server {
    process: ServerProcess,
    log: PathBuf,
    _dir: Scratch,
}

impl Server {
    fn spawn(tag: &str, extra: &str) -> Server {
        let dir = Scratch::new(&format!("flood-{tag}"));
        let conf = dir.0.join("server.ron");
        std::fs::write(&conf, format!("(seed: 7, {extra})")).expect("config");
        // Logs go to stderr, the results summary to stdout: both to one file.
        let log = dir.0.join("server.log");
        let out = std::fs::File::create(&log).expect("log file");
        let stdout = out.try_clone().expect("log file");
        let process = ServerProcess::start_with_stdout(Some(stdout), |c| {
            c.arg("--config")
                .arg(&conf)
                .env("RUST_LOG", "info")
                .env("NO_COLOR", "1")
                .stderr(out);
        });
        Server {
            process,
            log,
            _dir: dir,
        }
    }

    /// A field of /proc/PID/status in kB.
    fn status_kb(&self, field: &str) -> u64 {
        rcss3d::procfs::status_kib(self.process.child.id(), field).expect("status field")
    }

    /// SIGTERM, wait (10 s at most), and return the log.
    fn finish(mut self) -> String {
        let _ = self.process.terminate(Duration::from_secs(10));
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// The server binary with the honest agent playing, half a second (25
/// frames) in:
/// the server, the agent, and the server's RSS before the test's clients
/// come.
async fn honest_match(tag: &str, extra: &str) -> (Server, Honest, u64) {
    let server = Server::spawn(tag, extra);
    let honest = Honest::start(server.process.agent_addr(), "Honest").await;
    honest.played(25).await;
    let before_kb = server.status_kb("VmRSS");
    (server, honest, before_kb)
}

/// How long the machine itself stalled this process while a measurement
/// ran: the longest a thread overslept a 10 ms sleep. On a machine shared
/// with other work a frame gap can be the machine's, not the server's; the
/// gap checks allow for what this probe saw (and print it).
struct StallProbe {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Duration>,
}

impl StallProbe {
    fn start() -> StallProbe {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut worst = Duration::ZERO;
            while !flag.load(Ordering::Acquire) {
                let t = Instant::now();
                // The oversleep of this sleep is the thing measured.
                std::thread::sleep(Duration::from_millis(10));
                worst = worst.max(t.elapsed().saturating_sub(Duration::from_millis(10)));
            }
            worst
        });
        StallProbe { stop, thread }
    }

    fn finish(self) -> Duration {
        self.stop.store(true, Ordering::Release);
        self.thread.join().expect("stall probe")
    }
}

/// Runs `make` clients in a loop until `until`: each one connects and
/// writes `payload` over and over until the server closes it.
fn flooders(
    port: u16,
    count: usize,
    payload: Bytes,
    until: Instant,
) -> Vec<tokio::task::JoinHandle<usize>> {
    (0..count)
        .map(|_| {
            let payload = payload.clone();
            tokio::spawn(async move {
                let mut connections = 0;
                while Instant::now() < until {
                    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)).await else {
                        // The flooding client's own pause before it retries
                        // a refused connection (part of the client tested).
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    };
                    connections += 1;
                    while Instant::now() < until {
                        let w =
                            tokio::time::timeout(Duration::from_millis(500), s.write_all(&payload));
                        match w.await {
                            Ok(Ok(())) => {}
                            _ => break,
                        }
                    }
                }
                connections
            })
        })
        .collect()
}

/// Runs `count` clients in a loop until `until`: each connects, asks for a
/// robot and leaves as soon as its first frame comes.
fn scene_churn(port: u16, count: usize, until: Instant) -> Vec<tokio::task::JoinHandle<usize>> {
    (0..count)
        .map(|_| {
            tokio::spawn(async move {
                let mut connections = 0;
                while Instant::now() < until {
                    let mut a = TestAgent::connect(([127, 0, 0, 1], port).into()).await;
                    connections += 1;
                    a.send("(scene rsg/agent/nao/nao_hetero.rsg 0)").await;
                    let _ = a.try_recv(Duration::from_millis(500)).await;
                }
                connections
            })
        })
        .collect()
}

/// Writes `message` over and over until `until`, each write with a
/// deadline (the server may stop reading, which blocks writes). False if
/// the server closed the connection.
async fn write_until(s: &mut TcpStream, message: &[u8], until: Instant) -> bool {
    while Instant::now() < until {
        let w = tokio::time::timeout(Duration::from_millis(200), s.write_all(message));
        if let Ok(Err(_)) = w.await {
            return false;
        }
    }
    true
}

/// Waits for the connections of a memory test: how many the server never
/// cut off, and their sockets (open until dropped, so the server still
/// holds what they cost while the test reads its peak).
async fn held_open(
    tasks: Vec<tokio::task::JoinHandle<(bool, TcpStream)>>,
) -> (usize, Vec<TcpStream>) {
    let mut still_open = 0;
    let mut sockets = Vec::new();
    for t in tasks {
        let (open, s) = t.await.expect("connection task");
        still_open += usize::from(open);
        sockets.push(s);
    }
    (still_open, sockets)
}

/// `(x)` repeated to `len` bytes.
fn xs(len: usize) -> Vec<u8> {
    b"(x)".iter().copied().cycle().take(len / 3 * 3).collect()
}

/// Log lines other than the server's start and stop lines.
fn count_lines(log: &str) -> usize {
    log.lines().filter(|l| !l.trim().is_empty()).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_port_flood_neither_stalls_an_honest_agent_nor_grows_memory() {
    let _serial = ONE_SERVER_AT_A_TIME.lock().await;
    let (server, honest, before_kb) = honest_match("agents", "").await;
    let probe = StallProbe::start();
    let until = Instant::now() + FLOOD;
    let mut tasks = Vec::new();
    // Four clients sending frames of just under 1 MiB of `(x)`, as fast as
    // they can, reconnecting whenever they are cut off.
    tasks.extend(flooders(
        server.process.agent_port,
        4,
        Bytes::from(frame(&xs((1 << 20) - 16)).repeat(10)),
        until,
    ));
    // Two at the default frame limit (16 KiB) but far over the element
    // limit, and two with many small messages of unknown commands.
    tasks.extend(flooders(
        server.process.agent_port,
        2,
        frame(&xs(16 * 1024 - 4)),
        until,
    ));
    tasks.extend(flooders(
        server.process.agent_port,
        2,
        Bytes::from(frame(&xs(900)).repeat(64)),
        until,
    ));
    // Two that have a robot built and leave at once, over and over.
    tasks.extend(scene_churn(server.process.agent_port, 2, until));
    let mut connections = 0;
    for t in tasks {
        connections += t.await.expect("flooder");
    }
    let peak_kb = server.status_kb("VmHWM");
    let util::honest::HonestReport {
        max_gap: gap,
        frames,
    } = honest.finish().await;
    let stall = probe.finish();
    let log = server.finish();
    let lines = count_lines(&log);
    println!(
        "agent flood: {connections} flooding connections in {FLOOD:?}; honest agent \
         {frames} frames, max gap {gap:?} (machine stalls up to {stall:?}); RSS before \
         {before_kb} kB, peak {peak_kb} kB; {lines} log lines ({} bytes)",
        log.len()
    );
    assert!(frames > 100, "{frames} frames in {FLOOD:?}");
    assert!(
        gap < MAX_GAP + stall,
        "the honest agent waited {gap:?} for a frame (machine stalls {stall:?})"
    );
    assert!(peak_kb < MAX_PEAK_RSS_KB, "peak RSS {peak_kb} kB");
    assert!(lines < 200, "{lines} log lines:\n{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_monitor_command_flood_neither_stalls_an_honest_agent_nor_grows_memory() {
    let _serial = ONE_SERVER_AT_A_TIME.lock().await;
    let (server, honest, before_kb) =
        honest_match("monitors", "monitor: (trainer_secret: Some(\"s3cret\"))").await;
    let probe = StallProbe::start();
    let until = Instant::now() + FLOOD;
    let flood = "(kickOff Left)(dropBall)(ball (pos 0 0 1))".repeat(100);
    let mut tasks = Vec::new();
    // An authenticated trainer: every command is carried out. And one
    // without the secret: every command is refused.
    for auth in [true, false] {
        let port = server.process.monitor_port;
        let payload = frame(flood.as_bytes()).repeat(20);
        tasks.push(tokio::spawn(async move {
            let mut frames = 0usize;
            let mut s = TcpStream::connect(("127.0.0.1", port))
                .await
                .expect("monitor");
            if auth {
                s.write_all(&frame(b"(auth s3cret)")).await.expect("auth");
            }
            // The server stops reading a monitor over its budget: writes
            // then block, so each write gets a deadline.
            while Instant::now() < until {
                let w = tokio::time::timeout(Duration::from_millis(200), s.write_all(&payload));
                match w.await {
                    Ok(Ok(())) => frames += 20,
                    Ok(Err(_)) => break,
                    Err(_) => {}
                }
            }
            frames
        }));
    }
    let mut sent = 0;
    for t in tasks {
        sent += t.await.expect("monitor flooder");
    }
    let peak_kb = server.status_kb("VmHWM");
    let util::honest::HonestReport {
        max_gap: gap,
        frames,
    } = honest.finish().await;
    let stall = probe.finish();
    let log = server.finish();
    let lines = count_lines(&log);
    let applied: u64 = log
        .lines()
        .filter(|l| l.contains("monitor command"))
        .filter_map(|l| {
            // A line without `skipped=` follows none left out.
            let Some(i) = l.find("skipped=") else {
                return Some(1);
            };
            l[i + 8..]
                .split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()
                .map(|n| n + 1)
        })
        .sum();
    println!(
        "monitor flood: {sent} frames of 300 commands written in {FLOOD:?} (mostly into \
         socket buffers); honest agent {frames} frames, max gap {gap:?} (machine stalls \
         up to {stall:?}); RSS before {before_kb} kB, peak {peak_kb} kB; {lines} log lines \
         ({} bytes); about {applied} commands carried out",
        log.len()
    );
    assert!(frames > 100, "{frames} frames in {FLOOD:?}");
    assert!(
        gap < MAX_GAP + stall,
        "the honest agent waited {gap:?} for a frame (machine stalls {stall:?})"
    );
    assert!(peak_kb < MAX_PEAK_RSS_KB, "peak RSS {peak_kb} kB");
    assert!(lines < 200, "{lines} log lines:\n{log}");
    assert!(
        log.contains("trainer command without `(auth SECRET)`: refused"),
        "refusals logged"
    );
    // 32 commands per monitor step (2 cycles) is 800 per second at most.
    assert!(
        applied <= 800 * (FLOOD.as_secs() + 2),
        "{applied} commands carried out"
    );
}

/// Counts the heap bytes allocated and not yet freed by the current thread,
/// so a test can measure what one decoded message holds.
mod heap {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    pub struct Counting;

    thread_local! {
        static LIVE: Cell<isize> = const { Cell::new(0) };
        static PEAK: Cell<isize> = const { Cell::new(0) };
    }

    fn add(n: isize) {
        let _ = LIVE.try_with(|l| {
            let v = l.get() + n;
            l.set(v);
            let _ = PEAK.try_with(|p| p.set(p.get().max(v)));
        });
    }

    // SAFETY: every call is forwarded to the system allocator unchanged;
    // the counters are thread-local cells without destructors.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            add(layout.size() as isize);
            // SAFETY: same layout as the caller's.
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            add(-(layout.size() as isize));
            // SAFETY: `ptr` came from `alloc` with this layout.
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            add(new_size as isize - layout.size() as isize);
            // SAFETY: forwarded unchanged.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    /// Live bytes of this thread now, and resets the peak to it.
    pub fn live() -> isize {
        let v = LIVE.with(Cell::get);
        PEAK.with(|p| p.set(v));
        v
    }

    /// Highest live bytes since the last [`live`].
    pub fn peak() -> isize {
        PEAK.with(Cell::get)
    }
}

#[global_allocator]
static HEAP: heap::Counting = heap::Counting;

/// What one message can make the server hold while it waits for the
/// simulation: its decoded commands, for the worst messages of the
/// default frame limit. The README's per-connection figure builds on it.
const MAX_DECODED_BYTES: isize = 64 * 1024;

#[test]
fn a_decoded_message_holds_a_bounded_amount_of_memory() {
    let limit = rcss3d::config::Config::default().max_agent_frame;
    let say = format!("(say {})", "a".repeat(limit - 10));
    let mut worst: Vec<(&str, Vec<u8>)> = vec![
        ("(x) repeated", xs(limit)),
        ("() repeated", b"()".repeat(limit / 2)),
        ("x repeated", b"x ".repeat(limit / 2)),
        ("(he1 1) repeated", b"(he1 1)".repeat(limit / 7)),
        ("one long say", say.into_bytes()),
    ];
    let mut mixed = xs(1000);
    mixed.extend(format!("(say {})", "b".repeat(limit - 1100)).bytes());
    worst.push(("(x) and a long say", mixed));
    for (what, payload) in worst {
        assert!(payload.len() <= limit, "{what}: {} bytes", payload.len());
        let before = heap::live();
        let parsed = rcss3d::sexp::parse(&payload);
        let commands = rcss3d::command::decode_all(&parsed);
        drop(parsed);
        let peak = heap::peak() - before;
        let held = heap::live() - before;
        println!(
            "{what}: {} commands, {held} bytes held, {peak} bytes at the peak",
            commands.len()
        );
        assert!(held <= MAX_DECODED_BYTES, "{what}: {held} bytes held");
        assert!(
            peak <= 4 * MAX_DECODED_BYTES,
            "{what}: {peak} bytes at the peak"
        );
        drop(commands);
    }
}

/// What one monitor frame can make the server hold while its commands wait
/// for their turn (the budget per monitor step): the decoded commands of
/// the worst frames of the default limit.
const MAX_DECODED_MONITOR_BYTES: isize = 96 * 1024;

#[test]
fn a_decoded_monitor_frame_holds_a_bounded_amount_of_memory() {
    let limit = rcss3d::monitor::MonitorConfig::default().max_command_frame;
    let worst: Vec<(&str, Vec<u8>)> = vec![
        ("(x) repeated", xs(limit)),
        ("() repeated", b"()".repeat(limit / 2)),
        ("x repeated", b"x ".repeat(limit / 2)),
        ("(dropBall) repeated", b"(dropBall)".repeat(limit / 10)),
        (
            "(ball (pos 1 2 3)) repeated",
            b"(ball (pos 1 2 3))".repeat(limit / 18),
        ),
        (
            "(kickOff xxxxx...) repeated",
            format!("(kickOff {})", "x".repeat(200))
                .repeat(limit / 210)
                .into_bytes(),
        ),
    ];
    for (what, payload) in worst {
        assert!(payload.len() <= limit, "{what}: {} bytes", payload.len());
        let before = heap::live();
        let commands = rcss3d::monitor::parse_commands(&payload);
        let peak = heap::peak() - before;
        let held = heap::live() - before;
        println!(
            "monitor {what}: {} commands, {held} bytes held, {peak} bytes at the peak",
            commands.len()
        );
        assert!(
            held <= MAX_DECODED_MONITOR_BYTES,
            "{what}: {held} bytes held"
        );
        assert!(
            peak <= 2 * MAX_DECODED_MONITOR_BYTES,
            "{what}: {peak} bytes at the peak"
        );
        drop(commands);
    }
}

/// The README's figure for what one agent connection can make the server
/// hold at most, with the default settings.
const MAX_PER_CONNECTION_KB: u64 = 1300;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_agent_connection_holds_a_bounded_amount_of_memory() {
    let _serial = ONE_SERVER_AT_A_TIME.lock().await;
    const N: usize = 16;
    let (server, honest, before_kb) = honest_match("memory", "").await;
    // Each connection does the worst it can without being cut off: it has
    // a robot in a team, never reads its frames (they queue up to
    // `agent_queue`), and sends the largest messages the limits allow, as
    // fast as TCP goes.
    let mut payload = xs(1000);
    payload.extend(format!("(say {})(syn)", "c".repeat(15_000)).bytes());
    let message = frame(&payload);
    let until = Instant::now() + FLOOD;
    let mut tasks = Vec::new();
    for i in 0..N {
        let port = server.process.agent_port;
        let message = message.clone();
        // Eight more players for the honest agent's team, eight for the
        // other; legal teams (at most 7 robots of a type, 3 types or more).
        let (team, unum) = if i < 8 {
            ("Honest", i + 2)
        } else {
            ("Other", i - 7)
        };
        let robot_type = i % 5;
        tasks.push(tokio::spawn(async move {
            let mut s = TcpStream::connect(("127.0.0.1", port))
                .await
                .expect("connect");
            let scene = format!("(scene rsg/agent/nao/nao_hetero.rsg {robot_type})");
            s.write_all(&frame(scene.as_bytes())).await.expect("scene");
            // The robot exists once its first frame comes (read whole,
            // then never again).
            let mut len = [0u8; 4];
            s.read_exact(&mut len).await.expect("first frame");
            let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
            s.read_exact(&mut body).await.expect("first frame");
            let init = format!("(init (unum {unum})(teamname {team}))");
            s.write_all(&frame(init.as_bytes())).await.expect("init");
            let open = write_until(&mut s, &message, until).await;
            (open, s)
        }));
    }
    let (still_open, sockets) = held_open(tasks).await;
    let peak_kb = server.status_kb("VmHWM");
    drop(sockets);
    let util::honest::HonestReport {
        max_gap: gap,
        frames,
    } = honest.finish().await;
    let log = server.finish();
    let joined = log.matches("agent joined").count();
    assert_eq!(joined, N + 1, "every worst-case client joined a team");
    let per_conn = peak_kb.saturating_sub(before_kb) / N as u64;
    println!(
        "{N} connections at their worst for {FLOOD:?} ({still_open} never cut off): RSS \
         before {before_kb} kB, peak {peak_kb} kB, {per_conn} kB per connection; honest \
         agent {frames} frames, max gap {gap:?}"
    );
    assert_eq!(still_open, N, "a connection within the limits was closed");
    assert!(
        per_conn <= MAX_PER_CONNECTION_KB,
        "{per_conn} kB per connection"
    );
}

/// The README's figure for what one monitor connection can make the server
/// hold at most, with the default settings.
const MAX_PER_MONITOR_KB: u64 = 400;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_monitor_connection_holds_a_bounded_amount_of_memory() {
    let _serial = ONE_SERVER_AT_A_TIME.lock().await;
    const N: usize = 16;
    let (server, honest, before_kb) = honest_match("monitor-memory", "").await;
    // Each monitor never reads (its queue of frames stays full) and sends
    // the largest frames of the most elements the limits allow.
    let probe = StallProbe::start();
    let worst = frame(&b"()".repeat(32 * 1024 - 8));
    let until = Instant::now() + FLOOD;
    let mut tasks = Vec::new();
    for _ in 0..N {
        let port = server.process.monitor_port;
        let worst = worst.clone();
        tasks.push(tokio::spawn(async move {
            let mut s = TcpStream::connect(("127.0.0.1", port))
                .await
                .expect("monitor");
            let open = write_until(&mut s, &worst, until).await;
            (open, s)
        }));
    }
    let (still_open, sockets) = held_open(tasks).await;
    let peak_kb = server.status_kb("VmHWM");
    drop(sockets);
    let util::honest::HonestReport {
        max_gap: gap,
        frames,
    } = honest.finish().await;
    let stall = probe.finish();
    let _ = server.finish();
    let per_conn = peak_kb.saturating_sub(before_kb) / N as u64;
    println!(
        "{N} monitors at their worst for {FLOOD:?} ({still_open} never cut off): RSS before \
         {before_kb} kB, peak {peak_kb} kB, {per_conn} kB per connection; honest agent \
         {frames} frames, max gap {gap:?}"
    );
    assert_eq!(still_open, N, "a monitor within the limits was closed");
    assert!(
        gap < MAX_GAP + stall,
        "the honest agent waited {gap:?} for a frame (machine stalls {stall:?})"
    );
    assert!(
        per_conn <= MAX_PER_MONITOR_KB,
        "{per_conn} kB per connection"
    );
}

#[tokio::test]
async fn a_monitor_gets_a_bounded_number_of_commands_handled_and_killsim_still_arrives() {
    use rcss3d::monitor::{MonitorCommand, MonitorConfig};
    let cfg = MonitorConfig::default();
    let budget = cfg
        .commands_per_step
        .expect("the default monitor has a command budget");
    // The test takes each command as soon as it is forwarded, so only the
    // monitor's budget slows them down.
    let mut server = monitor_util::MonitorFeed::start(cfg).await;
    server.publish(monitor_util::snapshot(0, [0.0, 0.0], vec![]));
    let mut s = TcpStream::connect(server.addr).await.expect("monitor");
    // 600 commands, then `(killsim)`; no monitor step happens (a sync-mode
    // server waiting for its agents): the budget comes back every 40 ms.
    let t0 = Instant::now();
    s.write_all(&frame("(dropBall)".repeat(300).as_bytes()))
        .await
        .expect("send");
    for _ in 0..100 {
        s.write_all(&frame(b"(dropBall)(dropBall)(dropBall)"))
            .await
            .expect("send");
    }
    s.write_all(&frame(b"(killsim)")).await.expect("send");
    let mut handled = 0usize;
    let mut at_400ms = None;
    loop {
        let r = tokio::time::timeout(Duration::from_secs(5), server.commands.recv())
            .await
            .expect("commands keep coming")
            .expect("open");
        if at_400ms.is_none() && t0.elapsed() >= Duration::from_millis(400) {
            at_400ms = Some(handled);
        }
        if r.command == MonitorCommand::KillSim {
            break;
        }
        handled += 1;
    }
    let took = t0.elapsed();
    assert_eq!(handled, 600);
    // 32 at once, then 32 every 40 ms at most: 352 in the first 400 ms.
    let early = at_400ms.unwrap_or(handled);
    assert!(
        early <= budget * (400 / 40 + 1),
        "{early} commands handled in the first 400 ms"
    );
    // 601 commands at 32 per 40 ms: about 0.75 s.
    assert!(took < Duration::from_secs(2), "(killsim) took {took:?}");
    assert!(
        took >= Duration::from_millis(600),
        "budget not applied: {took:?}"
    );
    server.stop().await;
}
