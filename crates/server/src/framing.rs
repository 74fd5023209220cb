//! The first layer of the data flow: 4-byte big-endian length prefix <->
//! message bytes (docs/protocol.md#framing), for agents and monitors alike.
//! The length counts the payload only. One function prefixes a payload
//! ([`encode`]), one codec cuts frames ([`codec`]; an incomplete frame is
//! the normal case: it waits for more bytes). A frame longer than the
//! configured limit is an error that closes only that connection.

use bytes::{BufMut, Bytes, BytesMut};
use tokio_util::codec::LengthDelimitedCodec;

/// A codec for one connection with an explicit inbound size limit, so a
/// client announcing 2 GiB cannot make the server allocate it.
pub fn codec(max_frame: usize) -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder()
        .big_endian()
        .length_field_length(4)
        .max_frame_length(max_frame)
        .new_codec()
}

/// Whether an I/O error only means that the peer went away (reset,
/// aborted, closed mid-frame): an ordinary disconnect, not bad input.
pub fn is_disconnect(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof | NotConnected
    )
}

/// Prefix + payload in one buffer, ready for a single write. The server
/// never sends an empty payload (RoboNewbie and RoboViz treat it as an
/// error), so an empty input yields `None`.
pub fn encode(payload: &[u8]) -> Option<Bytes> {
    if payload.is_empty() {
        return None;
    }
    let len = u32::try_from(payload.len()).ok()?;
    let mut buf = BytesMut::with_capacity(payload.len() + 4);
    buf.put_u32(len);
    buf.put_slice(payload);
    Some(buf.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_util::codec::Decoder;

    #[test]
    fn syn_on_the_wire() {
        assert_eq!(
            encode(b"(syn)").as_deref(),
            Some(&[0, 0, 0, 5, b'(', b's', b'y', b'n', b')'][..])
        );
        assert_eq!(encode(b""), None);
    }

    #[test]
    fn split_and_merged_frames() {
        let mut c = codec(1024);
        let mut buf = BytesMut::new();
        buf.extend_from_slice(&[0, 0, 0, 5, b'(', b's']);
        assert_eq!(c.decode(&mut buf).ok().flatten(), None);
        buf.extend_from_slice(b"yn)");
        buf.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 2, b'(', b')']);
        assert_eq!(
            c.decode(&mut buf).ok().flatten().as_deref(),
            Some(&b"(syn)"[..])
        );
        assert_eq!(c.decode(&mut buf).ok().flatten().as_deref(), Some(&b""[..]));
        assert_eq!(
            c.decode(&mut buf).ok().flatten().as_deref(),
            Some(&b"()"[..])
        );
    }

    #[test]
    fn huge_length_is_an_error() {
        let mut c = codec(1024);
        let mut buf = BytesMut::from(&[0x80u8, 0, 0, 0, b'('][..]);
        let err = c.decode(&mut buf).expect_err("over the limit");
        assert!(!is_disconnect(&err), "a bad frame is not a disconnect");
    }

    #[test]
    fn a_reset_is_a_disconnect() {
        use std::io::{Error, ErrorKind};
        assert!(is_disconnect(&Error::from(ErrorKind::ConnectionReset)));
        assert!(is_disconnect(&Error::from(ErrorKind::BrokenPipe)));
        assert!(!is_disconnect(&Error::from(ErrorKind::InvalidData)));
    }
}
