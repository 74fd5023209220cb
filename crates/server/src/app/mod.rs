//! The application: one running server. [`run`] draws the seed, builds the
//! simulation and starts its thread ([`driver`]: the clock, the sync
//! barrier's wait, the framing of percepts, the snapshots for monitors and
//! the match log), opens the match log, starts the agent accept loop
//! ([`crate::net::server`]), the monitor server ([`crate::monitor::serve`])
//! and any extensions (the web monitor), waits for the match to end or a
//! shutdown, and returns the run summary with the match results.
//! When [`run`] returns, every task it started has ended: the listeners
//! join their connection tasks ([`crate::net::connections`]).

use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tracing::{info, warn, Instrument};

use crate::config::Config;
use crate::net::inputs::Input;
use crate::net::server::accept_agents;

pub mod driver;
pub mod latency;

pub use driver::RunSummary;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The configuration is out of range (one built in code; a file's is
    /// checked when it is read).
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// The world or the robot models could not be built.
    #[error("cannot build the simulation: {0}")]
    Sim(#[from] crate::sim::cycle::SimError),
    /// The match log could not be opened (the error names the path).
    #[error("cannot open the match log")]
    Log(#[from] crate::monitor::log::LogError),
    /// The simulation thread could not be started.
    #[error("cannot start the simulation thread")]
    ThreadStart(#[source] std::io::Error),
    /// The simulation thread panicked (its panic message went to the log).
    #[error("the simulation thread panicked")]
    ThreadPanicked,
}

/// What an extra consumer of the world (the web monitor) gets when it is
/// attached to a running server: the snapshot channel the monitor port
/// follows (same snapshots, same cadence), the monitor command queue, and
/// the server's stop flag (turns true when the server stops).
pub struct Attachment {
    /// Latest world snapshot, as the monitor port sees it.
    pub snapshots: crate::monitor::server::SnapshotReceiver,
    /// Commands for the simulation, carried out like monitor commands.
    pub commands: mpsc::Sender<crate::monitor::MonitorRequest>,
    /// Turns true when the server stops.
    pub stop: watch::Receiver<bool>,
}

/// An extra service run beside the agent and monitor ports; the server
/// awaits its future after stopping.
pub type Extension = Box<
    dyn FnOnce(Attachment) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>
        + Send,
>;

/// Runs a whole server on two bound listeners until `shutdown` completes,
/// a monitor sends `(killsim)` or the referee ends the match with
/// `AutomaticQuit`. Returns the run summary after the log is finished;
/// the caller prints its results if it wants them on stdout.
pub async fn run(
    cfg: Arc<Config>,
    agents: TcpListener,
    monitors: TcpListener,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<RunSummary, ServerError> {
    run_with(cfg, agents, monitors, Vec::new(), shutdown).await
}

/// [`run`] with extra services attached to the snapshot channel and the
/// monitor command queue (see [`Attachment`]).
pub async fn run_with(
    cfg: Arc<Config>,
    agents: TcpListener,
    monitors: TcpListener,
    extensions: Vec<Extension>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<RunSummary, ServerError> {
    use driver::Outputs;

    cfg.validate("the configuration")?;
    let seed = cfg.seed.unwrap_or_else(crate::config::random_seed);
    info!(seed, "random seed (replay with --seed {seed})");
    let sim = crate::sim::cycle::Simulation::new(cfg.sim_config(), seed)?;
    let field = cfg.field_params();
    let log = match &cfg.monitor.log {
        Some(path) => Some(crate::monitor::log::LogWriter::spawn(
            path,
            &cfg.monitor,
            &field,
            seed,
        )?),
        None => None,
    };
    let (snap_tx, snap_rx) = watch::channel(None);
    let (input_tx, input_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = watch::channel(false);
    let (cycle_tx, cycle) = watch::channel(0);
    let outputs = Outputs {
        cycle: cycle_tx,
        snapshots: snap_tx,
        log,
        monitor_step: u64::from(cfg.monitor.monitor_step),
        log_step: u64::from(cfg.monitor.log_step),
    };
    let sim_cfg = cfg.clone();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let span = tracing::Span::current();
    std::thread::Builder::new()
        .name("simulation".into())
        .spawn(move || {
            let _g = span.enter();
            let _latency = crate::app::latency::apply_logged(&sim_cfg.latency);
            let summary = driver::run(sim, sim_cfg, input_rx, outputs);
            let _ = done_tx.send(summary);
        })
        .map_err(ServerError::ThreadStart)?;

    // Monitor commands arrive on a tokio channel; forward them in order.
    let (mon_tx, mut mon_rx) = mpsc::channel::<crate::monitor::MonitorRequest>(1024);
    let fwd_inputs = input_tx.clone();
    let forwarder = spawn_in_span(async move {
        while let Some(req) = mon_rx.recv().await {
            if fwd_inputs.send(Input::Monitor(req)).is_err() {
                break;
            }
        }
    });
    let extension_tasks: Vec<_> = extensions
        .into_iter()
        .map(|ext| {
            spawn_in_span(ext(Attachment {
                snapshots: snap_rx.clone(),
                commands: mon_tx.clone(),
                stop: stop_rx.clone(),
            }))
        })
        .collect();
    let mut mon_stop = stop_rx.clone();
    let monitor_task = spawn_in_span(crate::monitor::serve(
        monitors,
        snap_rx,
        mon_tx,
        Arc::new(cfg.monitor.clone()),
        field,
        async move {
            let _ = mon_stop.wait_for(|s| *s).await;
        },
    ));
    let agent_task = spawn_in_span(accept_agents(
        agents,
        input_tx.clone(),
        cfg.clone(),
        cycle,
        stop_rx,
    ));

    tokio::pin!(shutdown);
    let mut done_rx = done_rx;
    let summary = tokio::select! {
        s = &mut done_rx => s,
        _ = &mut shutdown => {
            info!("shutdown requested");
            let _ = input_tx.send(Input::Shutdown);
            (&mut done_rx).await
        }
    };
    let _ = stop_tx.send(true);
    let _ = agent_task.await;
    let _ = monitor_task.await;
    for task in extension_tasks {
        let _ = task.await;
    }
    // Every sender of monitor commands is gone with the tasks above.
    let _ = forwarder.await;
    let summary = summary.map_err(|_| ServerError::ThreadPanicked)?;
    // The results summary a tournament script wants, in a file if
    // configured (the binary prints it).
    if let Some(path) = &cfg.monitor.summary_path {
        if let Err(e) = summary.results.write_file(path) {
            warn!(path = %path.display(), cause = %e, "cannot write the results summary");
        }
    }
    Ok(summary)
}

/// `tokio::spawn` of `task` in the current span, as the simulation thread
/// runs in it: a caller (a test capturing one server's log lines) finds
/// every line of the server under its span.
fn spawn_in_span<F>(task: F) -> tokio::task::JoinHandle<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    tokio::spawn(task.in_current_span())
}
