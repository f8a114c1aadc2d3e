//! The fuzz targets' properties (`fuzz/checks.rs`) under proptest, so CI replays them on every
//! run: random event-time texts and random CSV bytes built from the characters that matter
//! (separators, quotes, line ends, invalid UTF-8, multi-byte characters), plus the inputs the
//! fuzzer found crashing, as regression tests.

#[path = "../fuzz/checks.rs"]
mod checks;

use proptest::prelude::*;

/// Pieces of event-time texts: digits, separators, offsets, fractions, multi-byte characters.
fn time_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("2024-03-01".to_string()),
        Just("9999-12-31".to_string()),
        Just("0000-01-01".to_string()),
        Just("T".to_string()),
        Just(" ".to_string()),
        Just("23:59:59".to_string()),
        Just("00:00".to_string()),
        Just(".".to_string()),
        Just("Z".to_string()),
        Just("+".to_string()),
        Just("-".to_string()),
        Just(":".to_string()),
        Just("€".to_string()),
        Just("é".to_string()),
        "[0-9]{1,4}",
        "-?[0-9]{1,20}",
    ];
    prop::collection::vec(piece, 1..6).prop_map(|p| p.concat())
}

/// CSV bytes: a changelog header, then cells, separators, quotes and line ends.
fn csv_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"+I".to_vec()),
        Just(b"-U".to_vec()),
        Just(b"a".to_vec()),
        Just(b"12:00".to_vec()),
        Just(b"7".to_vec()),
        Just(b",".to_vec()),
        Just(b",".to_vec()),
        Just(b"\"".to_vec()),
        Just(b"\"\"".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(vec![0xff]),
        Just("€".as_bytes().to_vec()),
    ];
    let header = prop_oneof![
        Just(b"op,k,t,v\n".to_vec()),
        Just(b"k,t\n".to_vec()),
        Just(Vec::new()),
    ];
    (any::<u8>(), header, prop::collection::vec(piece, 0..40)).prop_map(|(size, header, body)| {
        let mut data = vec![size];
        data.extend(header);
        data.extend(body.concat());
        data
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn event_time_parser_never_panics_and_round_trips(text in time_text()) {
        checks::check_event_time(&text);
    }

    #[test]
    fn csv_reader_never_panics_and_reports_lines_in_order(data in csv_bytes()) {
        checks::check_csv(&data);
    }
}

/// Texts that crashed the parser or broke its round trip: each now an error or a round trip.
#[test]
fn event_time_regressions() {
    for text in ["2024-01-01T10:00+€1", "2024-01-01T10:00-é1"] {
        checks::check_event_time(text);
    }
}
