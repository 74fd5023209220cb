//! Property tests for the bytes -> frames -> S-expressions ->
//! commands path. The same properties run for much longer under
//! `cargo fuzz` (fuzz/fuzz_targets/); these keep them in every `cargo test`.
//!
//! * printing a generated [`Sexp`] and parsing it back is the identity;
//! * any bytes give a result (items + optional error), never a panic, and
//!   what was parsed prints and re-parses to itself;
//! * any bytes through `decode_all` never panic;
//! * framing: `encode` then the codec, with the stream cut anywhere, gives
//!   the payloads back; a length above the limit is an error, not an
//!   allocation.

use bytes::BytesMut;
use proptest::prelude::*;
use tokio_util::codec::Decoder;

use rcss3d::command::{decode_all, Command};
use rcss3d::framing::{codec, encode};
use rcss3d::sexp::{parse, ParseError, Sexp};

// ---------------------------------------------------------------------------
// Generators

/// Atom text. Mostly what agents send (names, numbers, paths), sometimes
/// anything: spaces, parentheses, quotes, backslashes, `;`, non-ASCII. The
/// printer must quote and escape whatever would not read back as one atom.
/// NUL is left out: it ends a frame (docs/protocol.md#agent-message-syntax), so no parsed
/// atom can hold one.
fn atom_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-zA-Z][a-zA-Z0-9_]{0,7}",
        2 => "-?[0-9]{1,4}(\\.[0-9]{1,5})?(e-?[0-9]{1,2})?",
        1 => "[a-z]{1,4}(/[a-z_.]{1,6}){1,3}",
        2 => "[ -~]{0,8}",
        1 => "[()\"\\\\;' \t\r\n#a]{0,6}",
        1 => "[^\u{0}]{0,6}",
    ]
}

fn sexp() -> impl Strategy<Value = Sexp> {
    let leaf = atom_text().prop_map(Sexp::Atom);
    // Depth at most 8, well under the parser's limit of 64.
    leaf.prop_recursive(8, 64, 6, |inner| {
        prop::collection::vec(inner, 0..6).prop_map(Sexp::List)
    })
}

/// Bytes that look like agent messages often enough to reach deep into
/// the parser: the syntactically special bytes are over-represented.
fn message_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    let special = prop::sample::select(vec![
        b'(', b')', b'"', b'\\', b';', b'\'', b' ', b'\n', b'\t', 0u8, 0xff, b'#',
    ]);
    let token = prop_oneof![
        3 => special.prop_map(|b| vec![b]),
        2 => prop::sample::select(vec![
            "he1", "lle7", "syn", "say", "beam", "init", "scene", "unum", "teamname",
            "0.5", "-1e-05", "nan", "inf", "rsg/agent/nao/nao_hetero.rsg",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        1 => any::<u8>().prop_map(|b| vec![b]),
    ];
    prop::collection::vec(token, 0..64).prop_map(|ts| ts.concat())
}

fn offset(e: &ParseError) -> usize {
    match *e {
        ParseError::UnbalancedClose { offset }
        | ParseError::Unterminated { offset }
        | ParseError::UnterminatedString { offset }
        | ParseError::TooDeep { offset }
        | ParseError::TooManyNodes { offset } => offset,
    }
}

/// Parsing never panics (the caller ran it), errors point inside the
/// input, and everything parsed prints and re-parses to itself.
fn check_parse_result(input: &[u8]) -> Result<(), TestCaseError> {
    let parsed = parse(input);
    if let Some(e) = &parsed.error {
        prop_assert!(offset(e) < input.len(), "{e} outside {} bytes", input.len());
    }
    for item in &parsed.items {
        let text = item.to_string();
        let again = parse(text.as_bytes());
        prop_assert_eq!(again.error, None, "printed {:?}", text);
        prop_assert_eq!(&again.items, &vec![item.clone()], "printed {:?}", text);
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// S-expressions

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn print_then_parse_is_the_identity(e in sexp()) {
        let text = e.to_string();
        let parsed = parse(text.as_bytes());
        prop_assert_eq!(parsed.error, None, "printed {:?}", text);
        prop_assert_eq!(parsed.items, vec![e], "printed {:?}", text);
    }

    #[test]
    fn several_printed_expressions_parse_back_in_order(es in prop::collection::vec(sexp(), 0..5)) {
        // Agents write commands back to back, with or without spaces.
        let joined: String = es.iter().map(|e| format!("{e} ")).collect();
        let parsed = parse(joined.as_bytes());
        prop_assert_eq!(parsed.error, None);
        prop_assert_eq!(parsed.items, es);
    }

    #[test]
    fn random_bytes_give_a_result_never_a_panic(input in prop::collection::vec(any::<u8>(), 0..256)) {
        check_parse_result(&input)?;
    }

    #[test]
    fn message_like_bytes_give_a_result_never_a_panic(input in message_like_bytes()) {
        check_parse_result(&input)?;
    }

    #[test]
    fn random_bytes_through_decode_all_never_panic(input in message_like_bytes()) {
        let parsed = parse(&input);
        let commands = decode_all(&parsed);
        prop_assert_eq!(commands.len(), parsed.items.len());
        for c in &commands {
            match c {
                Ok(Command::Hinge { speed, .. }) => prop_assert!(!speed.is_nan()),
                Ok(_) => {}
                Err(e) => { let _ = e.to_string(); }
            }
        }
    }

    #[test]
    fn generated_trees_through_decode_all_never_panic(es in prop::collection::vec(sexp(), 0..6)) {
        let text = es.iter().map(ToString::to_string).collect::<Vec<_>>().join(" ");
        let parsed = parse(text.as_bytes());
        prop_assert_eq!(decode_all(&parsed).len(), es.len());
    }
}

#[test]
fn nesting_deeper_than_the_limit_is_an_error_not_a_crash() {
    let text = format!("{}syn{}", "(".repeat(10_000), ")".repeat(10_000));
    let parsed = parse(text.as_bytes());
    assert!(
        matches!(parsed.error, Some(ParseError::TooDeep { .. })),
        "{parsed:?}"
    );
}

// ---------------------------------------------------------------------------
// Framing

/// Feeds `stream` to a fresh codec in chunks ending at `cuts` (sorted
/// positions), as a socket would deliver it. Returns the frames and
/// whether the codec reported an error.
fn decode_in_chunks(stream: &[u8], cuts: &[usize], max: usize) -> (Vec<Vec<u8>>, bool) {
    let mut c = codec(max);
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    let mut start = 0;
    for &end in cuts.iter().chain(std::iter::once(&stream.len())) {
        let end = end.clamp(start, stream.len());
        buf.extend_from_slice(&stream[start..end]);
        start = end;
        loop {
            match c.decode(&mut buf) {
                Ok(Some(f)) => frames.push(f.to_vec()),
                Ok(None) => break,
                Err(_) => return (frames, true),
            }
        }
    }
    (frames, false)
}

fn cuts_for(len: usize) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0..=len, 0..12).prop_map(|mut v| {
        v.sort_unstable();
        v
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn framing_round_trip_with_arbitrary_splits(
        (payloads, cuts) in prop::collection::vec(prop::collection::vec(any::<u8>(), 1..300), 0..8)
            .prop_flat_map(|ps| {
                let len: usize = ps.iter().map(|p| p.len() + 4).sum();
                (Just(ps), cuts_for(len))
            })
    ) {
        let stream: Vec<u8> = payloads
            .iter()
            .flat_map(|p| encode(p).expect("non-empty payload").to_vec())
            .collect();
        let (frames, error) = decode_in_chunks(&stream, &cuts, 1024);
        prop_assert!(!error);
        prop_assert_eq!(frames, payloads);
    }

    #[test]
    fn framing_oversized_length_is_an_error(
        max in 0usize..2048,
        excess in 1u32..u32::MAX / 2,
        before in prop::collection::vec(any::<u8>(), 1..64),
        cut in 0usize..80,
    ) {
        // One good frame, then a prefix announcing more than the limit
        // (up to 2 GiB) followed by only a few bytes. That prefix is
        // written by hand: the encoder only writes the length it is given.
        prop_assume!(before.len() <= max);
        let announced = (max as u32).saturating_add(excess);
        let mut stream = encode(&before).expect("non-empty").to_vec();
        stream.extend_from_slice(&announced.to_be_bytes());
        stream.extend_from_slice(b"(say");
        let (frames, error) = decode_in_chunks(&stream, &[cut], max);
        prop_assert!(error, "announced {} with limit {}", announced, max);
        prop_assert_eq!(frames, vec![before]);
    }

    #[test]
    fn framing_random_bytes_never_panic(stream in prop::collection::vec(any::<u8>(), 0..200), cuts in cuts_for(200), max in 0usize..256) {
        let _ = decode_in_chunks(&stream, &cuts, max);
    }
}

#[test]
fn framing_empty_payload_is_not_encoded() {
    assert_eq!(encode(b""), None);
}
