//! Frame helpers of the soak's clients (agents and monitors alike use the
//! library's framed client, [`AgentClient`]).

use bytes::Bytes;
use rcss3d::net::client::AgentClient;

/// The next frame; the end of the connection is an error here.
pub(crate) async fn recv(s: &mut AgentClient) -> std::io::Result<Bytes> {
    s.recv()
        .await?
        .ok_or_else(|| std::io::ErrorKind::UnexpectedEof.into())
}

/// `(time (now X))` of an agent frame.
pub(crate) fn agent_now(frame: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(frame).ok()?;
    let i = text.find("(now ")? + 5;
    let end = i + text[i..].find(')')?;
    text[i..end].parse().ok()
}

/// Parentheses balance: never negative, zero at the end.
pub(crate) fn balanced(text: &[u8]) -> bool {
    let mut depth: i64 = 0;
    for &b in text {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}
