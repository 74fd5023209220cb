//! Agent messages: one frame payload through `sexp::parse` and
//! `command::decode_all`, exactly as a connection handler does.
//!
//! Beyond "never panics": every parsed top-level expression printed with
//! `Display` must parse back to itself, errors stay inside the payload,
//! and a decoded hinge speed is never NaN.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rcss3d::command::{decode_all, Command};
use rcss3d::sexp::{parse, ParseError};

fuzz_target!(|data: &[u8]| {
    let parsed = parse(data);
    if let Some(e) = &parsed.error {
        let offset = match *e {
            ParseError::UnbalancedClose { offset }
            | ParseError::Unterminated { offset }
            | ParseError::UnterminatedString { offset }
            | ParseError::TooDeep { offset }
            | ParseError::TooManyNodes { offset } => offset,
        };
        assert!(
            offset < data.len(),
            "error offset {offset} outside a {}-byte payload",
            data.len()
        );
        let _ = e.to_string();
    }
    for item in &parsed.items {
        let text = item.to_string();
        let again = parse(text.as_bytes());
        assert_eq!(again.error, None, "printed form {text:?} does not parse");
        assert_eq!(
            again.items,
            vec![item.clone()],
            "printed form {text:?} reads back differently"
        );
    }
    let commands = decode_all(&parsed);
    assert_eq!(commands.len(), parsed.items.len());
    for c in &commands {
        match c {
            Ok(Command::Hinge { speed, .. }) => assert!(!speed.is_nan()),
            Ok(_) => {}
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
});
