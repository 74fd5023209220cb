//! The simulation thread: the loop around [`Simulation`] that runs the
//! cycle phases (read, send, step, wait, prepare; docs/protocol.md#the-cycle)
//! in real-time or agentSyncMode. The simulation itself reads no clock and
//! does no I/O; this loop is where its typed inputs and outputs meet the
//! wall clock, the connections and the match log.
//!
//! The simulation runs on its own OS thread so physics never blocks the
//! network runtime; inputs ([`Input`]) arrive over one `std::sync::mpsc`
//! channel, percepts are framed here and leave through each connection's
//! bounded [`Outbox`] (written from this thread when the socket takes them
//! at once; a full queue drops whole frames), snapshots go to monitors
//! over a `watch` channel and to the match log over its own thread's
//! channel.

use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tracing::{info, info_span, trace, warn};

use crate::config::Config;
use crate::limited;
use crate::log_limit::LogLimit;
use crate::monitor::log::{LogHandle, MatchSummary};
use crate::net::inputs::{InFlight, Input};
use crate::net::outbox::{Outbox, PushError};
use crate::sim::cycle::{AgentStatus, ConnId, Simulation, Stage};
use crate::sim::snapshot::WorldSnapshot;

/// Where the simulation's outputs go.
pub struct Outputs {
    /// The cycle counter, for connections' per-cycle budgets.
    pub cycle: watch::Sender<u64>,
    /// Latest snapshot for monitors (every monitor step).
    pub snapshots: watch::Sender<Option<Arc<WorldSnapshot>>>,
    /// The match log, if any.
    pub log: Option<LogHandle>,
    /// Cycles between monitor snapshots, at least 1 (validated with the
    /// configuration).
    pub monitor_step: u64,
    /// Cycles between log frames, at least 1.
    pub log_step: u64,
}

/// How the run ended.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Cycles simulated.
    pub cycles: u64,
    /// Seed of the run.
    pub seed: u64,
    /// Final snapshot.
    pub last: Arc<WorldSnapshot>,
    /// The match results (teams, score, fouls, seed) for the binary to
    /// print and a tournament script to read.
    pub results: MatchSummary,
}

struct Conn {
    out: Outbox,
    status: watch::Sender<AgentStatus>,
    pending: Arc<InFlight>,
    dropped: u64,
}

/// Runs the cycle loop until a shutdown input, a `killsim`, or the
/// referee's automatic quit. Blocks the calling thread.
pub fn run(
    sim: Simulation,
    cfg: Arc<Config>,
    inputs: Receiver<Input>,
    outputs: Outputs,
) -> RunSummary {
    let step = Duration::from_secs_f32(cfg.step);
    info!(
        seed = sim.seed(),
        sync = cfg.sync_mode,
        real_time = cfg.real_time,
        "simulation running"
    );
    let mut d = Driver {
        sim,
        conns: BTreeMap::new(),
        sync_timeout: cfg.sync_timeout_ms.map(Duration::from_millis),
        cfg,
        inputs,
        outputs,
        stop: false,
        summary: StageSummary::default(),
        monitor_log: LogLimit::for_clients(),
        slow_log: LogLimit::for_clients(),
        late_log: LogLimit::for_clients(),
    };
    let mut pace = Pace {
        step,
        next_tick: Instant::now() + step,
        due: None,
    };
    publish(&d.sim, &mut d.outputs, true);
    loop {
        let span = info_span!("cycle", n = d.sim.cycle() + 1);
        let _enter = span.enter();
        let t0 = Instant::now();
        let late = pace
            .due
            .map_or(Duration::ZERO, |due| t0.saturating_duration_since(due));
        // R: read phase.
        d.read_waiting();
        // A `(killsim)` ends the wait at the barrier too.
        if d.cfg.sync_mode && !d.stop && !d.sim.quit_requested() {
            d.sync_wait();
        }
        if d.stop || d.sim.quit_requested() {
            break;
        }
        let t_read = t0.elapsed();
        // S: send phase.
        let t1 = Instant::now();
        d.send_percepts();
        let t_send = t1.elapsed();
        // X + P: step and prepare.
        if d.step(t_read, t_send, late) {
            break;
        }
        // W: real-time wait.
        if d.cfg.real_time {
            pace.wait();
        }
    }
    d.finish()
}

/// The simulation thread's state between phases.
struct Driver {
    sim: Simulation,
    conns: BTreeMap<ConnId, Conn>,
    cfg: Arc<Config>,
    sync_timeout: Option<Duration>,
    inputs: Receiver<Input>,
    outputs: Outputs,
    /// A shutdown input or `killsim` came, or the inputs' senders are gone.
    stop: bool,
    summary: StageSummary,
    monitor_log: LogLimit,
    /// Lines about agents that do not keep up, thinned over all of them (a
    /// client opening connection after connection that never read).
    slow_log: LogLimit,
    late_log: LogLimit,
}

/// Real-time pacing.
struct Pace {
    step: Duration,
    next_tick: Instant,
    /// When the coming cycle was due (real time only): how late its send
    /// phase starts is the lateness agents see.
    due: Option<Instant>,
}

impl Pace {
    /// Sleeps until the next tick. Excess wall time is discarded: at most
    /// one step per cycle, the simulation just runs slower.
    fn wait(&mut self) {
        let now = Instant::now();
        self.due = Some(self.next_tick);
        if self.next_tick > now {
            std::thread::sleep(self.next_tick - now);
            self.next_tick += self.step;
        } else {
            self.next_tick = now + self.step;
        }
    }
}

impl Driver {
    /// Takes one input.
    fn take(&mut self, input: Input) {
        self.stop |= handle(&mut self.sim, &mut self.conns, &mut self.monitor_log, input);
    }

    /// Takes every input already waiting.
    fn read_waiting(&mut self) {
        while let Ok(input) = self.inputs.try_recv() {
            self.take(input);
        }
    }

    /// Sync mode: takes inputs until every agent in lockstep has answered
    /// (or the sync timeout leaves the late ones behind).
    fn sync_wait(&mut self) {
        let started = Instant::now();
        while !self.sim.barrier_satisfied() && !self.stop && !self.sim.quit_requested() {
            let input = match self.sync_timeout {
                None => self.inputs.recv().ok(),
                Some(limit) => {
                    let left = limit.saturating_sub(started.elapsed());
                    match self.inputs.recv_timeout(left) {
                        Ok(i) => Some(i),
                        Err(RecvTimeoutError::Timeout) => {
                            let late = self.sim.unsynced_agents();
                            if !late.is_empty() {
                                // Left behind until they answer again:
                                // the others lose one timeout, not one
                                // per cycle.
                                limited!(self.late_log.admit(Instant::now()), warn!(
                                    ?late,
                                    timeout_ms = limit.as_millis() as u64,
                                    "sync timeout: running without these agents until they answer again"
                                ));
                                self.sim.leave_behind_unsynced();
                                continue;
                            }
                            // Nobody to wait for: idle without a timeout.
                            self.inputs.recv().ok()
                        }
                        Err(RecvTimeoutError::Disconnected) => None,
                    }
                }
            };
            let Some(input) = input else {
                self.stop = true;
                break;
            };
            self.take(input);
            self.read_waiting();
        }
    }

    /// S: the percepts prepared last cycle framed into each connection's
    /// outbox.
    fn send_percepts(&mut self) {
        for (conn, percept) in self.sim.take_outgoing() {
            let Some(c) = self.conns.get_mut(&conn) else {
                continue;
            };
            let Some(frame) = crate::framing::encode(&percept) else {
                continue;
            };
            match c.out.push(frame) {
                Ok(()) => self.sim.frame_delivered(conn),
                Err(PushError::Full) => {
                    c.dropped += 1;
                    if c.dropped == 1 || c.dropped.is_multiple_of(500) {
                        limited!(
                            self.slow_log.admit(Instant::now()),
                            warn!(
                                conn,
                                dropped = c.dropped,
                                "agent is not reading; frame dropped"
                            )
                        );
                    }
                }
                Err(PushError::Closed) => {}
            }
        }
    }

    /// X + P: the step, its report carried out, the snapshot published,
    /// the timing recorded. `true` when the referee quits.
    fn step(&mut self, t_read: Duration, t_send: Duration, late: Duration) -> bool {
        let t2 = Instant::now();
        // Two system calls per cycle, only while the cycle trace is on.
        let trace_on = tracing::enabled!(tracing::Level::TRACE);
        let cpu2 = trace_on.then(crate::procfs::thread_cpu_time).flatten();
        let mut stages = StageClock::default();
        let report = self.sim.step(|stage| stages.enter(stage));
        let stages = stages.times();
        let t_step = t2.elapsed();
        // CPU the step used: far below its wall time means the thread
        // waited for the processor (another process, the hypervisor).
        let step_cpu = cpu2
            .and_then(|a| Some(crate::procfs::thread_cpu_time()?.saturating_sub(a)))
            .unwrap_or_default();
        for (conn, status) in report.status {
            if let Some(c) = self.conns.get(&conn) {
                c.status.send_replace(status);
            }
        }
        for conn in report.close {
            self.conns.remove(&conn);
        }
        self.outputs.cycle.send_replace(self.sim.cycle());
        publish(&self.sim, &mut self.outputs, false);
        trace!(
            read_us = t_read.as_micros() as u64,
            send_us = t_send.as_micros() as u64,
            step_us = t_step.as_micros() as u64,
            step_cpu_us = step_cpu.as_micros() as u64,
            late_us = late.as_micros() as u64,
            physics_us = stages.physics_us,
            referee_us = stages.referee_us,
            perception_us = stages.perception_us,
            "cycle timing"
        );
        self.summary.add(t_send, &stages, t_step, late);
        if self.summary.cycles >= SUMMARY_EVERY {
            self.summary.log_and_reset();
        }
        report.quit
    }

    /// The last snapshot to monitors and the log, the log completed.
    fn finish(mut self) -> RunSummary {
        let sim = &self.sim;
        let last = Arc::new(sim.snapshot());
        info!(cycles = sim.cycle(), "simulation stopped");
        self.outputs.snapshots.send_replace(Some(last.clone()));
        if let Some(log) = self.outputs.log.take() {
            match log.finish(Some(last.clone())) {
                Ok(stats) => info!(
                    lines = stats.lines,
                    bytes = stats.bytes,
                    "match log complete"
                ),
                Err(e) => warn!(cause = %e, "match log could not be completed"),
            }
        }
        RunSummary {
            cycles: sim.cycle(),
            seed: sim.seed(),
            results: MatchSummary::from_snapshot(&last, sim.seed()),
            last,
        }
    }
}

/// Hands a snapshot to monitors (every monitor step) and to the log (which
/// keeps its own cadence).
fn publish(sim: &Simulation, outputs: &mut Outputs, force: bool) {
    let c = sim.cycle();
    let to_monitor = force || c.is_multiple_of(outputs.monitor_step);
    let to_log = outputs.log.is_some() && (force || c.is_multiple_of(outputs.log_step));
    if !(to_monitor || to_log) {
        return;
    }
    let snap = Arc::new(sim.snapshot());
    if to_log {
        if let Some(log) = outputs.log.as_mut() {
            log.frame(snap.clone());
        }
    }
    if to_monitor {
        outputs.snapshots.send_replace(Some(snap));
    }
}

/// Wall time of the stages of one step, microseconds.
#[derive(Debug, Default, Clone, Copy)]
struct StageTimes {
    /// Rapier step, blow-up guard, accelerometers.
    physics_us: u64,
    /// The referee and the clocks.
    referee_us: u64,
    /// Building every agent's frame (vision included).
    perception_us: u64,
}

/// The instants at which a step entered its stages. Only the driver reads
/// the clock, and nothing measured flows back into the simulation, so the
/// timings cannot affect determinism.
#[derive(Default)]
struct StageClock {
    physics: Option<Instant>,
    referee: Option<Instant>,
    perception: Option<Instant>,
    done: Option<Instant>,
}

impl StageClock {
    fn enter(&mut self, stage: Stage) {
        let now = Some(Instant::now());
        match stage {
            Stage::Physics => self.physics = now,
            Stage::Referee => self.referee = now,
            Stage::Perception => self.perception = now,
            Stage::Done => self.done = now,
        }
    }

    fn times(&self) -> StageTimes {
        let us = |from: Option<Instant>, to: Option<Instant>| match (from, to) {
            (Some(a), Some(b)) => b.saturating_duration_since(a).as_micros() as u64,
            _ => 0,
        };
        StageTimes {
            physics_us: us(self.physics, self.referee),
            referee_us: us(self.referee, self.perception),
            perception_us: us(self.perception, self.done),
        }
    }
}

/// Cycles between two stage-timing summary lines (debug level).
const SUMMARY_EVERY: u64 = 1500;

/// Mean stage times over a window of cycles, for the periodic summary.
#[derive(Default)]
struct StageSummary {
    cycles: u64,
    send: Duration,
    step: Duration,
    physics_us: u64,
    referee_us: u64,
    perception_us: u64,
    /// Latest start of a cycle after it was due (real time).
    max_late: Duration,
}

impl StageSummary {
    fn add(&mut self, send: Duration, stages: &StageTimes, step: Duration, late: Duration) {
        self.cycles += 1;
        self.max_late = self.max_late.max(late);
        self.send += send;
        self.step += step;
        self.physics_us += stages.physics_us;
        self.referee_us += stages.referee_us;
        self.perception_us += stages.perception_us;
    }

    fn log_and_reset(&mut self) {
        let n = self.cycles.max(1);
        tracing::debug!(
            cycles = self.cycles,
            step_us = (self.step.as_micros() as u64) / n,
            physics_us = self.physics_us / n,
            referee_us = self.referee_us / n,
            perception_us = self.perception_us / n,
            send_us = (self.send.as_micros() as u64) / n,
            max_late_us = self.max_late.as_micros() as u64,
            "mean stage times per cycle"
        );
        *self = StageSummary::default();
    }
}

/// Applies one input; returns true for a shutdown. `monitor_log` thins
/// the lines of monitor commands (a trainer may send hundreds a second).
fn handle(
    sim: &mut Simulation,
    conns: &mut BTreeMap<ConnId, Conn>,
    monitor_log: &mut LogLimit,
    input: Input,
) -> bool {
    match input {
        Input::Connected {
            conn,
            peer,
            out,
            status,
            pending,
        } => {
            conns.insert(
                conn,
                Conn {
                    out,
                    status,
                    pending,
                    dropped: 0,
                },
            );
            sim.connect(conn, peer);
        }
        Input::Message {
            conn,
            commands,
            parse_error,
        } => {
            if let Some(c) = conns.get(&conn) {
                c.pending.processed();
            }
            sim.receive(conn, commands, parse_error);
            // A `scene` ends the connection's join deadline now, not after
            // the step.
            for (conn, status) in sim.take_status() {
                if let Some(c) = conns.get(&conn) {
                    c.status.send_replace(status);
                }
            }
        }
        Input::Gone { conn, reason } => {
            conns.remove(&conn);
            sim.disconnect(conn, &reason);
        }
        Input::Monitor(req) => {
            limited!(
                monitor_log.admit(Instant::now()),
                info!(from = %command_source(req.monitor), command = ?req.command, "monitor command")
            );
            sim.monitor_command(req.command);
        }
        Input::Shutdown => return true,
    }
    false
}

/// Who sent a monitor command, as the log lines of its connection name it:
/// `monitor N` for the monitor port's connections, `web viewer N` for the
/// web monitor's page viewers (ids from
/// [`VIEWER_ID_BASE`](crate::web::server::VIEWER_ID_BASE) up).
fn command_source(id: u64) -> String {
    match id.checked_sub(crate::web::server::VIEWER_ID_BASE) {
        Some(viewer) => format!("web viewer {viewer}"),
        None => format!("monitor {id}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_sources_are_named_as_their_connections() {
        assert_eq!(command_source(3), "monitor 3");
        assert_eq!(
            command_source(crate::web::server::VIEWER_ID_BASE + 1),
            "web viewer 1"
        );
    }
}
