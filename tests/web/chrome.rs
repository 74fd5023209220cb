//! Headless Chromium driven over the DevTools protocol: open a page, run
//! JavaScript in it, take a screenshot. Debian's `chromium` package (CI
//! installs it). Without it a test that needs a browser prints that it did
//! not run and passes, so a fresh machine's `cargo test` passes; under CI
//! (`CI=true`) it fails instead, never passing silently there.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The browser binary: `$CHROMIUM`, else the first of the usual names on
/// the PATH; `None` if there is none.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).find_map(|dir| {
        ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .map(|name| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// Whether this run is under CI (`CI` set to anything but `false`/`0`),
/// where the browser tests are mandatory.
fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The browser for `test`, or `None` after printing that the test did not
/// run because there is none. Under CI a missing browser fails the test.
pub fn chromium_or_skip(test: &str) -> Option<PathBuf> {
    if let Some(p) = find_chromium() {
        return Some(p);
    }
    assert!(
        !under_ci(),
        "Chromium not found, and CI is set: the web monitor's browser tests are mandatory \
         there. Install Debian's package (`apt-get install -y chromium`; .ci/run does) or \
         set CHROMIUM=/path/to/chromium"
    );
    // Straight to the process's stderr: the test harness captures
    // `println!` and `eprintln!` of passing tests, and this must be seen.
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: did not run, no Chromium found (install Debian's `chromium` or set \
         CHROMIUM=/path/to/chromium; under CI=true this is a failure)"
    );
    None
}

/// One headless browser with one page.
pub struct Chrome {
    child: Child,
    profile: PathBuf,
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    session: String,
    next_id: u64,
}

impl Chrome {
    /// Starts Chromium with a fresh profile and a `width` x `height` page.
    pub async fn start(binary: &Path, width: u32, height: u32) -> Chrome {
        let profile = std::env::temp_dir().join(format!(
            "rcss3d-chrome-{}-{:x}",
            std::process::id(),
            rand_suffix()
        ));
        let _ = std::fs::remove_dir_all(&profile);
        std::fs::create_dir_all(&profile).expect("profile dir");
        let child = Command::new(binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--enable-unsafe-swiftshader",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--hide-scrollbars",
                "--mute-audio",
                "--remote-debugging-port=0",
                "--remote-debugging-address=127.0.0.1",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("--window-size={width},{height}"))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let url = browser_url(&profile).await;
        let (ws, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .expect("DevTools connection");
        let mut chrome = Chrome {
            child,
            profile,
            ws,
            session: String::new(),
            next_id: 1,
        };
        let target = chrome
            .call("Target.createTarget", json!({"url": "about:blank"}))
            .await;
        let target_id = target["targetId"].as_str().expect("targetId").to_owned();
        let attached = chrome
            .call(
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
            )
            .await;
        chrome.session = attached["sessionId"]
            .as_str()
            .expect("sessionId")
            .to_owned();
        chrome.call("Page.enable", json!({})).await;
        chrome
            .call(
                "Emulation.setDeviceMetricsOverride",
                json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
            )
            .await;
        chrome
    }

    /// Sends one command (to the page once attached) and returns its result.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        self.ws
            .send(Message::Text(msg.to_string().into()))
            .await
            .expect("DevTools send");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let next = tokio::time::timeout_at(deadline, self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("no answer to {method} within 60 s"));
            let Some(Ok(Message::Text(text))) = next else {
                match next {
                    Some(Ok(_)) => continue,
                    other => panic!("DevTools connection ended: {other:?}"),
                }
            };
            let v: Value = serde_json::from_str(text.as_str()).expect("DevTools JSON");
            if v["id"].as_u64() == Some(id) {
                if let Some(err) = v.get("error") {
                    panic!("{method} failed: {err}");
                }
                return v["result"].clone();
            }
        }
    }

    pub async fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url})).await;
    }

    /// Evaluates a JavaScript expression in the page and returns its value.
    pub async fn eval(&mut self, expr: &str) -> Value {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
            )
            .await;
        if let Some(ex) = r.get("exceptionDetails") {
            panic!("`{expr}` threw: {ex}");
        }
        r["result"]["value"].clone()
    }

    /// `window.rcss3d.state()`, or null before the page script ran.
    pub async fn state(&mut self) -> Value {
        self.eval("window.rcss3d ? window.rcss3d.state() : null")
            .await
    }

    /// Polls the page state until `cond` holds; panics with the last state.
    pub async fn wait_state(&mut self, what: &str, cond: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let s = self.state().await;
            if !s.is_null() && cond(&s) {
                return s;
            }
            if Instant::now() > deadline {
                panic!("the page never showed: {what}; last state: {s:#}");
            }
            // The page's state is only read by asking Chromium: this polls
            // the browser, not the server.
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A PNG screenshot of the page.
    pub async fn screenshot(&mut self) -> Vec<u8> {
        let r = self
            .call("Page.captureScreenshot", json!({"format": "png"}))
            .await;
        base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().expect("screenshot data"))
            .expect("base64 screenshot")
    }
}

impl Drop for Chrome {
    fn drop(&mut self) {
        // Only the process this test started.
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// A different number per call (a fresh profile directory per browser).
fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u8(0);
    h.finish()
}

/// The browser's DevTools WebSocket URL, from the `DevToolsActivePort` file
/// Chromium writes into its profile.
async fn browser_url(profile: &Path) -> String {
    let file = profile.join("DevToolsActivePort");
    let mut url = None;
    crate::util::process::DirWatch::new(profile)
        .until_async(Duration::from_secs(30), || {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let mut lines = text.lines();
            if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                url = Some(format!("ws://127.0.0.1:{port}{path}"));
            }
            url.is_some()
        })
        .await;
    url.expect("Chromium opens its DevTools port within 30 s")
}
