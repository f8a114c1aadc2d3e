//! Fuzzes the event-time parser: no input panics, and a parsed value rendered in its own form
//! parses back to the same instant.
#![no_main]

use differential_temporal::time::parse_with_format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok((t, format)) = parse_with_format(text) {
        let shown = format.render(t);
        let back = parse_with_format(&shown).map(|(t, _)| t);
        assert_eq!(back, Ok(t), "{text:?} rendered as {shown:?}");
        // Any other instant renders without panicking.
        let _ = format.render(t.wrapping_mul(31).wrapping_add(i64::MIN / 3));
    }
});
