//! One scripted agent per thread: join, beam, then joint speeds and
//! `(syn)` every frame; agent 0 opens and closes the measuring window.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use bytes::Bytes;
use rcss3d::net::client::{frame, BlockingAgentClient};

use crate::sample::{sample_proc, self_cpu_ticks, ProcSample};
use crate::{Cli, JOINTS, LATE_FACTOR, SCENE, STEP};

/// Shared between the agents of one run.
pub(crate) struct Shared {
    pub(crate) n: usize,
    pub(crate) cycles: u64,
    pub(crate) seconds: Option<f64>,
    /// Frames in the window, set by the clock agent when it closes it.
    pub(crate) measured: std::sync::atomic::AtomicU64,
    pub(crate) warmup: u64,
    pub(crate) ready: AtomicUsize,
    /// 0 = starting/warm-up, 1 = measuring, 2 = stop.
    pub(crate) phase: AtomicU8,
    pub(crate) failed: AtomicBool,
    pub(crate) server_pid: Option<u32>,
    pub(crate) start: Mutex<Option<Mark>>,
    pub(crate) end: Mutex<Option<Mark>>,
    pub(crate) first_connect: Mutex<Option<Instant>>,
    /// Whether the first agent has its side; the others connect after it
    /// when the agents play a match (team A takes the left side).
    pub(crate) first_joined: (Mutex<bool>, std::sync::Condvar),
}

impl Shared {
    /// Waits until the first agent has its side.
    fn wait_first_joined(&self) {
        let (lock, cvar) = &self.first_joined;
        let mut joined = lock.lock().unwrap();
        while !*joined {
            joined = cvar.wait(joined).unwrap();
        }
    }

    /// The first agent has its side (or gave up): the others may connect.
    pub(crate) fn set_first_joined(&self) {
        let (lock, cvar) = &self.first_joined;
        *lock.lock().unwrap() = true;
        cvar.notify_all();
    }
}

pub(crate) const PHASE_WARMUP: u8 = 0;
pub(crate) const PHASE_MEASURE: u8 = 1;
pub(crate) const PHASE_STOP: u8 = 2;

pub(crate) struct AgentSpec {
    pub(crate) index: usize,
    pub(crate) team: String,
    pub(crate) unum: u8,
    pub(crate) robot_type: u8,
    pub(crate) beam: (f32, f32, f32),
}

#[derive(Debug, Default, Clone)]
pub(crate) struct AgentResult {
    pub(crate) connected_at: Option<Instant>,
    pub(crate) on_field_at: Option<Instant>,
    pub(crate) side: Option<String>,
    pub(crate) frames: u64,
    pub(crate) max_frame_bytes: usize,
    /// Measuring window only.
    pub(crate) window_frames: u64,
    pub(crate) late_gaps: u64,
    /// Game time (s) of the frames that ended a late gap, the first few.
    pub(crate) late_at: Vec<f64>,
    pub(crate) max_gap: Duration,
    pub(crate) skipped_cycles: u64,
    pub(crate) error: Option<String>,
    /// The server closed the connection once the robot was playing.
    pub(crate) server_closed: bool,
}

/// One framed message, ready to write.
pub(crate) fn encode(payload: &str) -> Vec<u8> {
    frame(payload.as_bytes()).to_vec()
}

/// The pre-encoded joint messages of one agent, one per phase of the period.
///
/// With `legs` false the leg joints are held (speed 0), so the robot
/// keeps standing: the referee lifts a robot that falls and does not get
/// up off the field as incapable.
pub(crate) fn joint_messages(
    robot_type: u8,
    unum: u8,
    amplitude: f32,
    period: usize,
    legs: bool,
) -> Vec<Vec<u8>> {
    let joints = if robot_type == 4 { 24 } else { 22 };
    let phase = 0.37 * f32::from(unum);
    let w = std::f32::consts::TAU / period.max(1) as f32;
    (0..period.max(1))
        .map(|k| {
            let mut s = String::with_capacity(512);
            for (i, name) in JOINTS[..joints].iter().enumerate() {
                let leg = name.starts_with("lle") || name.starts_with("rle");
                let amp = if leg && !legs {
                    0.0
                } else if i < 2 {
                    0.4 * amplitude
                } else {
                    amplitude
                };
                let v = amp * (w * k as f32 + phase + 0.5 * i as f32).sin();
                let _ = write!(s, "({name} {v:.4})");
            }
            s.push_str("(syn)");
            encode(&s)
        })
        .collect()
}

/// The agent's connection: frames in, pre-framed messages out.
pub(crate) struct Wire(BlockingAgentClient);

impl Wire {
    pub(crate) fn read_frame(&mut self) -> Result<Bytes> {
        self.0.recv().context("reading a frame")
    }

    pub(crate) fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.0.send_raw(bytes).context("sending")
    }
}

/// `(time (now X))` at the start of a frame.
pub(crate) fn sim_time(frame: &[u8]) -> Option<f64> {
    let head = &frame[..frame.len().min(48)];
    let key = b"(now ";
    let i = head.windows(key.len()).position(|w| w == key)? + key.len();
    let j = head[i..].iter().position(|&b| b == b')')? + i;
    std::str::from_utf8(&head[i..j]).ok()?.parse().ok()
}

/// The side from a GS that announces the identity, e.g. `(team left)`.
pub(crate) fn announced_side(frame: &[u8]) -> Option<&'static str> {
    let gs = frame.windows(4).position(|w| w == b"(GS ")?;
    let rest = &frame[gs..frame.len().min(gs + 120)];
    if rest.windows(11).any(|w| w == b"(team left)") {
        Some("left")
    } else if rest.windows(12).any(|w| w == b"(team right)") {
        Some("right")
    } else {
        None
    }
}

pub(crate) fn connect(addr: SocketAddr, deadline: Instant, timeout: Duration) -> Result<Wire> {
    loop {
        match BlockingAgentClient::connect(addr, Duration::from_secs(2)) {
            Ok(c) => {
                c.stream().set_read_timeout(Some(timeout))?;
                return Ok(Wire(c));
            }
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(e).with_context(|| format!("cannot connect to {addr}")),
        }
    }
}

pub(crate) fn run_agent(
    spec: AgentSpec,
    addr: SocketAddr,
    cli: &Cli,
    shared: &Shared,
) -> AgentResult {
    let mut res = AgentResult::default();
    let result = agent_body(&spec, addr, cli, shared, &mut res);
    if spec.index == 0 {
        shared.set_first_joined();
    }
    if let Err(e) = result {
        // A stand-in team's match may end while an agent is still joining
        // (its robot already on the field): the server closing it then is
        // as normal as in the match.
        if cli.plays() && closed_by_server(&e) {
            res.server_closed = true;
            return res;
        }
        res.error = Some(format!("{} {}: {e:#}", spec.team, spec.unum));
        shared.failed.store(true, Ordering::SeqCst);
        shared.phase.store(PHASE_STOP, Ordering::SeqCst);
    }
    res
}

pub(crate) fn agent_body(
    spec: &AgentSpec,
    addr: SocketAddr,
    cli: &Cli,
    shared: &Shared,
    res: &mut AgentResult,
) -> Result<()> {
    let timeout = Duration::from_secs_f64(cli.timeout);
    if spec.index != 0 {
        shared.wait_first_joined();
    }
    let deadline = Instant::now() + Duration::from_secs_f64(cli.connect_timeout);
    let mut wire = connect(addr, deadline, timeout)?;
    note_connected(shared, res);
    let messages = joint_messages(
        spec.robot_type,
        spec.unum,
        cli.amplitude,
        cli.period,
        !cli.plays(),
    );
    join_and_beam(spec, &mut wire, shared, res)?;
    shared.ready.fetch_add(1, Ordering::SeqCst);

    let clock = spec.index == 0;
    let mut k: usize = 0;
    let mut warm = 0u64;
    let mut window_start: Option<Instant> = None;
    let mut measured = 0u64;
    let mut last_at: Option<Instant> = None;
    let mut last_t: Option<f64> = None;
    let late = Duration::from_secs_f64(STEP * LATE_FACTOR);
    // Enough to match a run's late frames with the server's cycle trace.
    const MAX_LATE_TIMES: usize = 20;
    loop {
        // A stand-in team's match ends when the server closes it.
        let frame = match wire
            .send(&messages[k % messages.len()])
            .and_then(|()| wire.read_frame())
        {
            Ok(frame) => frame,
            Err(e) if cli.plays() && closed_by_server(&e) => {
                res.server_closed = true;
                break;
            }
            Err(e) => return Err(e),
        };
        k += 1;
        let at = Instant::now();
        res.frames += 1;
        res.max_frame_bytes = res.max_frame_bytes.max(frame.len());
        let phase = shared.phase.load(Ordering::Acquire);
        if phase == PHASE_STOP {
            break;
        }
        let t = sim_time(&frame);
        if phase == PHASE_MEASURE {
            res.window_frames += 1;
            if let Some(prev) = last_at {
                let gap = at - prev;
                if gap > late {
                    res.late_gaps += 1;
                    if let Some(t) = t {
                        if res.late_at.len() < MAX_LATE_TIMES {
                            res.late_at.push(t);
                        }
                    }
                }
                res.max_gap = res.max_gap.max(gap);
            }
            if let (Some(a), Some(b)) = (last_t, t) {
                // Printed times have 2 decimals and drift by 0.01; a
                // difference above 1.75 steps means a whole frame is missing.
                let d = b - a;
                if d > 1.75 * STEP {
                    res.skipped_cycles += ((d / STEP).round() as u64).saturating_sub(1);
                }
            }
            last_at = Some(at);
            last_t = t;
        }
        if clock {
            match phase {
                PHASE_WARMUP if shared.ready.load(Ordering::Acquire) == shared.n => {
                    warm += 1;
                    if warm >= shared.warmup {
                        window_start = Some(at);
                        *shared.start.lock().unwrap() = Some(mark(shared, t));
                        last_at = Some(at);
                        last_t = t;
                        shared.phase.store(PHASE_MEASURE, Ordering::Release);
                    }
                }
                PHASE_MEASURE => {
                    measured += 1;
                    let done = match (shared.seconds, window_start) {
                        (Some(limit), Some(t0)) => (at - t0).as_secs_f64() >= limit,
                        _ => measured >= shared.cycles,
                    };
                    if done {
                        shared.measured.store(measured, Ordering::Release);
                        *shared.end.lock().unwrap() = Some(mark(shared, t));
                        shared.phase.store(PHASE_STOP, Ordering::Release);
                        break;
                    }
                }
                _ => {}
            }
        } else if phase == PHASE_MEASURE && last_at.is_none() {
            last_at = Some(at);
            last_t = t;
        }
    }
    Ok(())
}

/// Records when the agent connected, and the run's first connection.
fn note_connected(shared: &Shared, res: &mut AgentResult) {
    let now = Instant::now();
    res.connected_at = Some(now);
    {
        let mut fc = shared.first_connect.lock().unwrap();
        if fc.is_none_or(|t| now < t) {
            *fc = Some(now);
        }
    }
}

/// The agent's lifecycle up to the field: scene, first frame, init, wait
/// for the team, beam.
fn join_and_beam(
    spec: &AgentSpec,
    wire: &mut Wire,
    shared: &Shared,
    res: &mut AgentResult,
) -> Result<()> {
    let syn = encode("(syn)");
    wire.send(&encode(&format!("(scene {SCENE} {})", spec.robot_type)))?;
    wire.read_frame()?;
    res.frames += 1;
    wire.send(&encode(&format!(
        "(init (unum {})(teamname {}))(syn)",
        spec.unum, spec.team
    )))?;
    let mut waited = 0;
    loop {
        let frame = wire.read_frame()?;
        res.frames += 1;
        if let Some(side) = announced_side(&frame) {
            res.side = Some(side.to_owned());
            if spec.index == 0 {
                shared.set_first_joined();
            }
            break;
        }
        waited += 1;
        if waited > 250 {
            bail!(
                "no team after init (robot type {} refused?)",
                spec.robot_type
            );
        }
        wire.send(&syn)?;
    }
    let (x, y, rot) = spec.beam;
    wire.send(&encode(&format!("(beam {x:.2} {y:.2} {rot:.1})(syn)")))?;
    wire.read_frame()?;
    res.frames += 1;
    res.on_field_at = Some(Instant::now());
    Ok(())
}

/// Whether an error is the server closing the connection (end of file,
/// reset, broken pipe), not a failure of this agent.
fn closed_by_server(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|e| {
            use std::io::ErrorKind::*;
            matches!(
                e.kind(),
                UnexpectedEof | ConnectionReset | ConnectionAborted | BrokenPipe
            )
        })
}

/// What the clock agent records at each end of the window.
#[derive(Clone, Debug)]
pub(crate) struct Mark {
    pub(crate) at: Instant,
    pub(crate) sim_time: Option<f64>,
    pub(crate) server: Option<ProcSample>,
    pub(crate) self_ticks: u64,
}

pub(crate) fn mark(shared: &Shared, sim_time: Option<f64>) -> Mark {
    Mark {
        at: Instant::now(),
        sim_time,
        server: shared.server_pid.and_then(sample_proc),
        self_ticks: self_cpu_ticks(),
    }
}
