//! The WebSocket handshake's `Origin` rule: a page from another site is
//! refused before it can send a trainer command; the page's own origin
//! and clients that send no `Origin` (tools, scripts) are served.

use std::net::SocketAddr;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use rcss3d::rules::PlayMode;
use rcss3d::web::WebConfig;
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{Error, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::harness::{join_and_beam, one_at_a_time, WebServer};
use crate::util::test_config;

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

async fn connect_with_origin(addr: SocketAddr, origin: &str) -> Result<Ws, Error> {
    let mut request = format!("ws://{addr}/ws")
        .into_client_request()
        .expect("request");
    request
        .headers_mut()
        .insert("Origin", origin.parse().expect("header value"));
    tokio_tungstenite::connect_async(request)
        .await
        .map(|(ws, _)| ws)
}

async fn next_json(ws: &mut Ws) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("a message within 20 s")
            .expect("stream open")
            .expect("valid message");
        if let Message::Text(t) = msg {
            return serde_json::from_str(t.as_str()).expect("JSON");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_from_another_origin_is_refused_and_the_own_page_is_served() {
    let _turn = one_at_a_time().await;
    let server = WebServer::start(test_config(), WebConfig::default()).await;
    let agent = join_and_beam(&server, "Home", 1, 0, -3.0, 0.0)
        .await
        .autosync();
    let mut mon = server.monitor().await;

    for forged in [
        "http://evil.example",
        &format!("http://evil.example:{}", server.web_addr.port()),
        &format!(
            "http://{}:{}",
            server.web_addr.ip(),
            server.web_addr.port() + 1
        ),
        &format!("ws://{}", server.web_addr),
        "null",
    ] {
        match connect_with_origin(server.web_addr, forged).await {
            Err(Error::Http(response)) => assert_eq!(response.status(), 403, "{forged}"),
            Err(other) => panic!("{forged}: expected HTTP 403, got {other}"),
            Ok(_) => panic!("{forged}: a cross-origin WebSocket was accepted"),
        }
    }

    // The page's own origin: served, and its trainer command takes effect.
    let own = format!("http://{}", server.web_addr);
    let mut ws = connect_with_origin(server.web_addr, &own)
        .await
        .expect("same-origin WebSocket accepted");
    assert_eq!(next_json(&mut ws).await["type"], "hello");
    ws.send(Message::Text(
        json!({"cmd": "playMode", "mode": "PlayOn"})
            .to_string()
            .into(),
    ))
    .await
    .expect("send");
    assert_eq!(next_json(&mut ws).await["ok"], true);
    let mut seen = false;
    for _ in 0..300 {
        match tokio::time::timeout(Duration::from_secs(10), mon.next_message()).await {
            Ok(Ok(Some(_))) => {}
            other => panic!("monitor stream ended: {other:?}"),
        }
        if mon.scene().game.play_mode() == Some(PlayMode::PlayOn) {
            seen = true;
            break;
        }
    }
    assert!(seen, "the same-origin page's command did not take effect");
    drop(agent);
    server.stop().await;
}
