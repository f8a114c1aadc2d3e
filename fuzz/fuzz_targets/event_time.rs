//! Fuzzes the event-time parser (see `checks::check_event_time`).
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        checks::check_event_time(text);
    }
});
