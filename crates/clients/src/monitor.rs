//! A light monitor client: connect to a server's monitor port, follow the
//! match (every message is checked against RoboViz's rules and applied to
//! a tracked copy of the scene), and send commands.
//!
//! ```no_run
//! # async fn demo() -> Result<(), rcss3d_clients::monitor::ClientError> {
//! use rcss3d_clients::monitor::MonitorClient;
//!
//! let mut monitor = MonitorClient::connect("127.0.0.1:3200").await?;
//! monitor.send("(kickOff Left)").await?;
//! while let Some(msg) = monitor.next_message().await? {
//!     let scene = monitor.scene();
//!     println!(
//!         "{:?} t={} score {}:{} ball {:?} robots {}",
//!         msg.kind,
//!         scene.game.time,
//!         scene.game.score_left,
//!         scene.game.score_right,
//!         scene.ball_position(),
//!         scene.robots().len()
//!     );
//! }
//! # Ok(())
//! # }
//! ```
//!
//! [`validate_message`] and [`TrackedScene::apply`] work on plain text as
//! well, so a match log can be checked line by line without a socket.

use futures::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpStream, ToSocketAddrs};
use tokio_util::codec::{FramedRead, LengthDelimitedCodec};

use rcss3d_server::monitor::follow::invalid;
pub use rcss3d_server::monitor::follow::{
    check_log, is_roboviz_mesh, validate_message, GameView, LogCheck, LogChecker, NodeKind,
    RobotView, SceneNode, StreamError as ClientError, TrackedScene,
};

use rcss3d_server::framing;
use rcss3d_server::monitor::frame::FrameKind;

/// Largest frame the client accepts from the server. A full state of a
/// full match is about 100 kB; this only guards against a corrupt length
/// prefix.
pub const MAX_SERVER_FRAME: usize = 64 * 1024 * 1024;

/// One message as received.
#[derive(Debug, Clone)]
pub struct Received {
    /// Full state or delta.
    pub kind: FrameKind,
    /// The payload text.
    pub text: String,
}

/// A monitor connection that tracks the scene.
pub struct MonitorClient {
    reader: FramedRead<OwnedReadHalf, LengthDelimitedCodec>,
    writer: OwnedWriteHalf,
    scene: TrackedScene,
}

impl MonitorClient {
    /// Connects to a monitor port.
    pub async fn connect(addr: impl ToSocketAddrs) -> Result<MonitorClient, ClientError> {
        let stream = TcpStream::connect(addr).await?;
        let _ = stream.set_nodelay(true);
        let (rd, wr) = stream.into_split();
        Ok(MonitorClient {
            reader: FramedRead::new(rd, framing::codec(MAX_SERVER_FRAME)),
            writer: wr,
            scene: TrackedScene::default(),
        })
    }

    /// Reads the next message, checks it ([`validate_message`]) and applies
    /// it to the tracked scene. `None` when the server closed the
    /// connection. A zero-length frame is an error (RoboViz would stop).
    pub async fn next_message(&mut self) -> Result<Option<Received>, ClientError> {
        let Some(frame) = self.reader.next().await else {
            return Ok(None);
        };
        let frame = frame?;
        if frame.is_empty() {
            return Err(invalid("zero-length frame"));
        }
        let text =
            String::from_utf8(frame.to_vec()).map_err(|_| invalid("payload is not UTF-8"))?;
        let kind = self.scene.apply(&text)?;
        Ok(Some(Received { kind, text }))
    }

    /// Sends one frame holding `commands` (one or more S-expressions).
    pub async fn send(&mut self, commands: &str) -> Result<(), ClientError> {
        self.send_bytes(commands.as_bytes()).await
    }

    /// Sends raw bytes as one frame (for tests of malformed input). An
    /// empty payload sends nothing: an empty frame holds no command.
    pub async fn send_bytes(&mut self, payload: &[u8]) -> Result<(), ClientError> {
        if let Some(frame) = framing::encode(payload) {
            self.writer.write_all(&frame).await?;
        }
        Ok(())
    }

    /// The scene as of the last message.
    pub fn scene(&self) -> &TrackedScene {
        &self.scene
    }
}
