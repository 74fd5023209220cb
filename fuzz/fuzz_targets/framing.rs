//! Framing: arbitrary byte streams through the agent codec
//! (`rcss3d::framing::codec`), cut into chunks at arbitrary points.
//!
//! Input layout: bytes 0-1 = max frame length (u16, big-endian), byte 2 =
//! seed of the chunk sizes, the rest = the byte stream as it would arrive
//! on a socket. The stream is decoded three ways (all at once, one byte at
//! a time, in pseudo-random chunks) and each way must give exactly the
//! frames, and the error, of a ten-line reference decoder. Every decoded
//! frame must also survive `encode` -> decode.
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use rcss3d::framing::{codec, encode};
use tokio_util::codec::Decoder;

/// What the reference decoder says about a stream.
#[derive(Debug, PartialEq)]
struct Outcome {
    frames: Vec<Vec<u8>>,
    /// A length prefix above the limit was seen (the connection closes).
    too_big: bool,
}

/// The 4-byte big-endian length prefix, written out by hand.
fn reference(stream: &[u8], max: usize) -> Outcome {
    let mut frames = Vec::new();
    let mut rest = stream;
    while rest.len() >= 4 {
        let n = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        if n > max {
            return Outcome {
                frames,
                too_big: true,
            };
        }
        if rest.len() - 4 < n {
            break;
        }
        frames.push(rest[4..4 + n].to_vec());
        rest = &rest[4 + n..];
    }
    Outcome {
        frames,
        too_big: false,
    }
}

/// Feeds `chunks` to a fresh codec as a socket would deliver them.
fn decode_chunks<'a>(chunks: impl Iterator<Item = &'a [u8]>, max: usize) -> Outcome {
    let mut c = codec(max);
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        loop {
            match c.decode(&mut buf) {
                Ok(Some(f)) => frames.push(f.to_vec()),
                Ok(None) => break,
                Err(_) => {
                    return Outcome {
                        frames,
                        too_big: true,
                    }
                }
            }
        }
    }
    // End of stream: whatever it says about a partial frame, no panic.
    let _ = c.decode_eof(&mut buf);
    Outcome {
        frames,
        too_big: false,
    }
}

/// Pseudo-random chunk sizes 1..=64 from a one-byte seed (xorshift).
fn chunk_sizes(seed: u8) -> impl FnMut() -> usize {
    let mut s = u32::from(seed) | 0x9e37_7900;
    move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        (s % 64) as usize + 1
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let max = usize::from(u16::from_be_bytes([data[0], data[1]]));
    let seed = data[2];
    let stream = &data[3..];

    let expected = reference(stream, max);
    assert_eq!(
        decode_chunks(std::iter::once(stream), max),
        expected,
        "whole stream"
    );
    assert_eq!(
        decode_chunks(stream.chunks(1), max),
        expected,
        "byte by byte"
    );
    let mut next = chunk_sizes(seed);
    let mut cuts = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        let n = next().min(rest.len());
        cuts.push(&rest[..n]);
        rest = &rest[n..];
    }
    assert_eq!(
        decode_chunks(cuts.into_iter(), max),
        expected,
        "random chunks"
    );

    // encode -> decode is the identity for every frame that fits.
    for f in &expected.frames {
        match encode(f) {
            None => assert!(f.is_empty(), "encode refused a non-empty payload"),
            Some(wire) => {
                assert_eq!(&wire[..4], &(f.len() as u32).to_be_bytes());
                let back = decode_chunks(std::iter::once(&wire[..]), max);
                assert_eq!(back.frames, vec![f.clone()]);
            }
        }
    }
});
