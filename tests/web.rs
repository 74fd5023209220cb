//! The web monitor: the page in a real browser (live and replay), the
//! WebSocket stream's behaviour with many, slow and bad viewers, and the
//! trainer buttons. Servers run on real loopback sockets.

#[path = "util/mod.rs"]
mod util;

#[path = "web/browser.rs"]
mod browser;
#[path = "web/chrome.rs"]
mod chrome;
#[path = "web/harness.rs"]
mod harness;
#[path = "web/pixels.rs"]
mod pixels;
#[path = "web/stream.rs"]
mod stream;
