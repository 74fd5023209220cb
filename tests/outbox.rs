//! An agent connection's sending side (`net::outbox`) over a real local
//! socket: the frames a client gets when it reads late, and the end of a
//! connection whose client went away.

use bytes::Bytes;
use rcss3d::net::outbox::{outbox, Outbox, OutboxWriter, PushError};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};

async fn pair(capacity: usize) -> (Outbox, OutboxWriter, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap());
    let (client, accepted) = tokio::join!(client, listener.accept());
    let (_, write_half) = accepted.unwrap().0.into_split();
    let (out, writer) = outbox(write_half, capacity);
    (out, writer, client.unwrap())
}

/// Frame `i`: a 4-byte length, then `len` copies of the byte `i`.
fn frame(i: u8, len: usize) -> Bytes {
    let mut f = (len as u32).to_be_bytes().to_vec();
    f.extend(std::iter::repeat_n(i, len));
    Bytes::from(f)
}

#[tokio::test]
async fn frames_a_slow_client_gets_arrive_whole_and_in_order_and_the_queue_is_bounded() {
    let (out, writer, mut client) = pair(4).await;
    let task = tokio::spawn(writer.run());
    // Far more than the socket buffers hold while the client reads
    // nothing: the first frames go out at once, then one in part, then
    // four wait and the rest are refused.
    let mut taken = Vec::new();
    let mut refused = 0;
    for i in 0..80u8 {
        match out.push(frame(i, 250_000)) {
            Ok(()) => taken.push(i),
            Err(e) => {
                assert_eq!(e, PushError::Full);
                refused += 1;
            }
        }
    }
    assert!(refused > 0, "a client that does not read fills the queue");
    drop(out);
    let mut got = Vec::new();
    let mut len = [0u8; 4];
    while client.read_exact(&mut len).await.is_ok() {
        let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
        client.read_exact(&mut body).await.unwrap();
        assert!(
            body.iter().all(|&b| b == body[0]),
            "frame {} mixed",
            body[0]
        );
        got.push(body[0]);
    }
    assert_eq!(
        got, taken,
        "every frame taken arrives once, whole, in order"
    );
    assert_eq!(task.await.unwrap(), "closed by server");
}

#[tokio::test]
async fn a_client_that_went_away_ends_the_writer_with_the_write_error() {
    let (out, writer, client) = pair(4).await;
    let task = tokio::spawn(writer.run());
    drop(client);
    let mut pushes = 0;
    while out.push(frame(1, 1000)) != Err(PushError::Closed) {
        pushes += 1;
        assert!(pushes < 10_000, "writes to a closed peer never failed");
        tokio::task::yield_now().await;
    }
    let reason = task.await.unwrap();
    assert!(reason.starts_with("write failed"), "{reason}");
}
