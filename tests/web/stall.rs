//! Header-stalling ("slowloris") clients beyond the web server's
//! connection cap: each sends part of a request's headers and waits. The
//! page is still served to a newcomer at once, and a connection that was
//! answered (a keep-alive page load) is not the one closed for it.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rcss3d::web::WebConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::harness::{one_at_a_time, WebServer};
use crate::util::test_config;

/// Sends `GET /` on `stream` and reads the whole response (headers and a
/// `Content-Length` body); returns its status line.
async fn get_page(stream: &mut TcpStream) -> String {
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: test\r\n\r\n")
        .await
        .expect("send");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let (head_end, length) = loop {
        let n = stream.read(&mut chunk).await.expect("read");
        assert!(n > 0, "closed before the response");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..i]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .expect("a content-length");
            break (i + 4, length);
        }
    };
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk).await.expect("read body");
        assert!(n > 0, "closed inside the body");
        buf.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&buf[..buf.iter().position(|b| *b == b'\r').unwrap_or(0)]).into_owned()
}

async fn fresh_page(addr: SocketAddr) -> String {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    get_page(&mut s).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_stalling_clients_beyond_the_cap_do_not_keep_the_page_from_being_served() {
    let _turn = one_at_a_time().await;
    let web = WebConfig::default();
    // The cap: the viewers and 64 page loads beside them.
    let cap = web.max_viewers + 64;
    let server = WebServer::start(test_config(), web).await;
    let addr = server.web_addr;
    // A page load that keeps its connection open.
    let mut kept = TcpStream::connect(addr).await.expect("connect");
    assert!(get_page(&mut kept).await.starts_with("HTTP/1.1 200"));

    let mut stalled = Vec::new();
    for _ in 0..cap + 80 {
        let mut s = TcpStream::connect(addr).await.expect("connect");
        s.write_all(b"GET / HTTP/1.1\r\nHost: te")
            .await
            .expect("send");
        stalled.push(s);
    }
    let t0 = Instant::now();
    let status = tokio::time::timeout(Duration::from_secs(5), fresh_page(addr))
        .await
        .expect("the page is served within 5 s");
    let took = t0.elapsed();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    // The answered connection was not the one closed.
    let again = tokio::time::timeout(Duration::from_secs(5), get_page(&mut kept))
        .await
        .expect("the kept connection answers");
    assert!(again.starts_with("HTTP/1.1 200"), "{again}");
    println!(
        "{} header-stalled connections (cap {cap}): the page served in {took:?}",
        stalled.len()
    );
    drop(stalled);
    drop(kept);
    server.stop().await;
}
