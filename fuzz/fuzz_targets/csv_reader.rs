//! Fuzzes the CSV / changelog reader (see `checks::check_csv`).
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_csv(data));
