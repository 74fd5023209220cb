//! The web monitor: open a URL, watch the match in 3D. No viewer to
//! install; the page (HTML, CSS and JavaScript drawing with WebGL, written
//! for this project) is embedded in the binary.
//!
//! * live: `rcss3d --web-port 8080` serves the page and a WebSocket stream
//!   of the snapshots the monitor port gets ([`live`] attaches to the
//!   server through [`crate::app::Attachment`]); trainer buttons
//!   send monitor commands under the monitor port's access rule;
//! * replay: `rcss3d replay FILE --web-port 8080` serves the same page for
//!   a match log, with play, pause, step, seek and speed ([`replay()`]).
//!
//! Files: [`view`] (the picture and its binary message), [`shapes`] (robot
//! part shapes from the model files, field dimensions), [`mod@replay`] (log
//! reading), [`commands`] (what the page sends), [`server`] (HTTP and
//! WebSocket fan-out), [`listener`] (connection cap), [`assets`] (the
//! embedded page).

pub mod assets;
pub mod commands;
pub mod listener;
pub mod replay;
pub mod server;
pub mod shapes;
pub mod view;

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use thiserror::Error;
use tokio::net::TcpListener;

use crate::app::{Attachment, Extension};
use crate::config::Config;
use commands::TrainerAccess;
use shapes::{FieldView, RobotShapes};

pub use server::WebConfig;

/// Why the web monitor could not start.
#[derive(Debug, Error)]
pub enum WebError {
    /// The port could not be bound.
    #[error("cannot listen for web viewers on {addr}: {source}")]
    Bind {
        /// The address tried.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// The robot model files could not be read (the page draws robots
    /// from their shapes).
    #[error("cannot read the robot models for the web monitor: {0}")]
    Models(#[from] crate::sim::scene::SceneError),
    /// The match log could not be read.
    #[error(transparent)]
    Replay(#[from] replay::ReplayError),
}

/// Binds `addr` and returns the live web monitor as a server extension
/// (pass it to [`crate::app::run_with`]).
pub async fn live(addr: SocketAddr, cfg: &Config) -> Result<Extension, WebError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| WebError::Bind { addr, source })?;
    live_on(listener, cfg, WebConfig::default())
}

/// The live web monitor on a bound listener, with explicit limits.
pub fn live_on(listener: TcpListener, cfg: &Config, web: WebConfig) -> Result<Extension, WebError> {
    let shapes = Arc::new(RobotShapes::load(&cfg.resolved_models_dir())?);
    let field = FieldView::from_config(cfg);
    let access = TrainerAccess::of(&cfg.monitor);
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(url = %page_url(addr), "web monitor");
    }
    Ok(Box::new(move |a: Attachment| {
        Box::pin(server::serve_live(
            listener,
            a.snapshots,
            a.commands,
            access,
            field,
            shapes,
            web,
            a.stop,
        ))
    }))
}

/// What `rcss3d replay` plays and where.
#[derive(Debug, Clone)]
pub struct ReplayArgs {
    /// The match log (plain text, or gzip whatever its name).
    pub file: PathBuf,
    /// Port of the page.
    pub web_port: u16,
    /// Address to listen on (default: the configuration's `bind`).
    pub bind: Option<IpAddr>,
}

/// Reads the log, then serves it until `shutdown` completes.
pub async fn replay(
    args: &ReplayArgs,
    cfg: &Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), WebError> {
    let addr = SocketAddr::new(args.bind.unwrap_or(cfg.bind), args.web_port);
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| WebError::Bind { addr, source })?;
    replay_on(listener, args, cfg, WebConfig::default(), shutdown).await
}

/// [`replay()`] on a bound listener, with explicit limits.
pub async fn replay_on(
    listener: TcpListener,
    args: &ReplayArgs,
    cfg: &Config,
    web: WebConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), WebError> {
    let shapes = RobotShapes::load(&cfg.resolved_models_dir())?;
    let fallback = FieldView::from_config(cfg);
    let path = args.file.clone();
    let log = {
        let shapes = shapes.clone();
        // Reading a long log takes seconds of CPU: off the runtime.
        tokio::task::spawn_blocking(move || replay::load(&path, &shapes, fallback))
            .await
            .map_err(|e| replay::ReplayError::Io {
                path: args.file.clone(),
                source: std::io::Error::other(e.to_string()),
            })??
    };
    let name = args
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    tracing::info!(
        frames = log.frames.len(),
        period_secs = %format_args!("{:.3}", log.period),
        skipped = log.skipped,
        file = %args.file.display(),
        "match log read"
    );
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(url = %page_url(addr), "web log player");
    }
    server::serve_replay(listener, Arc::new(log), &shapes, &name, web, shutdown).await;
    Ok(())
}

/// The URL to open for a bound address (`0.0.0.0` shown as localhost).
fn page_url(addr: SocketAddr) -> String {
    if addr.ip().is_unspecified() {
        format!("http://localhost:{}/", addr.port())
    } else {
        format!("http://{addr}/")
    }
}
