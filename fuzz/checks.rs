//! The properties the fuzz targets check, shared with the proptest fuzz in the normal test
//! suite (`tests/bad_input_fuzz.rs`, which includes this file), so a crash the fuzzer finds is
//! replayed by the same code in CI.

use differential_temporal::csv::{InputSpec, Schema, Splitter};
use differential_temporal::repr::time::parse_with_format;

/// The event-time parser on any text: it does not panic, and a parsed value rendered in its
/// own form parses back to the same instant; any other instant renders without panicking.
pub fn check_event_time(text: &str) {
    if let Ok((t, format)) = parse_with_format(text) {
        let shown = format.render(t);
        let back = parse_with_format(&shown).map(|(t, _)| t);
        assert_eq!(back, Ok(t), "{text:?} rendered as {shown:?}");
        for other in [i64::MIN, -1, i64::MAX, t.wrapping_mul(31)] {
            let _ = format.render(other);
        }
    }
}

/// The CSV / changelog reader on any bytes: the first byte picks the block size, the rest is
/// the file. Cutting it into blocks, reading its header (key: the first column other than `op`;
/// event time: the next one) and parsing every block does not panic; every row becomes a record
/// or an error naming a line of the input, in line order, and a record has one cell per column.
pub fn check_csv(data: &[u8]) {
    let Some((&size, bytes)) = data.split_first() else {
        return;
    };
    let mut splitter = Splitter::new(bytes, usize::from(size % 64) + 1);
    let Ok(Some(header)) = splitter.header() else {
        return;
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(header.bytes.as_slice());
    let mut record = csv::StringRecord::new();
    if !matches!(reader.read_record(&mut record), Ok(true)) {
        return;
    }
    let names: Vec<String> = record.iter().map(str::to_string).collect();
    let columns: Vec<&String> = names.iter().filter(|n| *n != "op").collect();
    let spec = InputSpec {
        path: "fuzz.csv".to_string(),
        key: columns
            .first()
            .map(|c| vec![c.to_string()])
            .unwrap_or_default(),
        nullable_key: false,
        time: columns.get(1).map(|c| c.to_string()),
    };
    let Ok(schema) = Schema::new(&spec, 0, names.clone()) else {
        return;
    };
    let lines = 1 + bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    let mut last = 0;
    while let Ok(Some(block)) = splitter.next_owned(|_| true) {
        schema.parse_block(&block, |row| {
            let line = match &row {
                Ok(r) => {
                    assert_eq!(r.row.iter().count(), schema.columns.len());
                    assert_eq!(r.key.iter().count(), schema.key.len());
                    r.seq
                }
                Err(e) => e.line,
            };
            assert!((2..=lines).contains(&line), "line {line} of {lines}");
            assert!(line >= last, "line {line} after line {last}");
            last = line;
        });
    }
}
