//! The web monitor: the page in a real browser (live and replay), the
//! WebSocket stream's behaviour with many, slow and bad viewers, and the
//! trainer buttons. Servers run on real loopback sockets.

#[path = "../util/mod.rs"]
mod util;

mod browser;
mod chrome;
mod harness;
mod origin;
mod pixels;
mod shutdown;
mod stall;
mod stream;
