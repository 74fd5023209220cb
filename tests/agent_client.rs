//! The agent client that the tests and tools share (`rcss3d::net::client`),
//! against a scripted peer on a loopback socket: the bytes it puts on the
//! wire and the whole frames it reads back, whatever the reads cut.

use std::io::{self, Write};
use std::time::Duration;

use rcss3d::net::client::{frame, AgentClient, BlockingAgentClient};
use tokio::io::AsyncWriteExt;

#[test]
fn frames_carry_a_big_endian_length() {
    // The wire format spelled out byte by byte: this checks the encoder,
    // so it cannot use it to build the expectation.
    assert_eq!(
        &frame(b"(syn)")[..],
        &[0, 0, 0, 5, b'(', b's', b'y', b'n', b')']
    );
    assert_eq!(&frame(b"")[..], &[0, 0, 0, 0]);
}

#[test]
fn the_blocking_client_reads_whole_frames() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        let bytes = [frame(b"(a)").to_vec(), frame(b"(bc)").to_vec()].concat();
        s.write_all(&bytes).expect("write");
    });
    let mut c = BlockingAgentClient::connect(addr, Duration::from_secs(5)).expect("connect");
    assert_eq!(&c.recv().expect("a")[..], b"(a)");
    assert_eq!(&c.recv().expect("bc")[..], b"(bc)");
    server.join().expect("server");
    let end = c.recv().expect_err("closed");
    assert_eq!(end.kind(), io::ErrorKind::UnexpectedEof);
}

#[tokio::test]
async fn frames_split_across_reads_arrive_whole() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.expect("accept");
        let bytes = [frame(b"(a)").to_vec(), frame(b"(bc)").to_vec()].concat();
        for part in bytes.chunks(3) {
            s.write_all(part).await.expect("write");
            s.flush().await.expect("flush");
            // A stand-in server writing in pieces: the pause between them
            // is the thing tested (frames split across reads).
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    let mut c = AgentClient::connect(addr).await.expect("connect");
    assert_eq!(c.recv().await.expect("a").as_deref(), Some(&b"(a)"[..]));
    assert_eq!(c.recv().await.expect("bc").as_deref(), Some(&b"(bc)"[..]));
    server.await.expect("server");
    assert_eq!(c.recv().await.expect("closed"), None);
}
