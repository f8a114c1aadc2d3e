//! Fuzzes the CSV / changelog reader: cutting a byte stream into blocks, reading its header and
//! parsing every block (op column, key and event-time columns). No input panics, every row is
//! either a record or an error naming a line of the input, and rows come in line order.
#![no_main]

use differential_temporal::csv::{InputSpec, Schema, Splitter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the block size, so cut points move as the fuzzer mutates it.
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
    // Key: the first column that is not `op`; event time: the next one, if any.
    let columns: Vec<&String> = names.iter().filter(|n| *n != "op").collect();
    let spec = InputSpec {
        path: "fuzz.csv".to_string(),
        key: columns.first().map(|c| vec![c.to_string()]).unwrap_or_default(),
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
                    assert_eq!(r.row.len(), schema.columns.len());
                    assert_eq!(r.key.len(), schema.key.len());
                    r.seq
                }
                Err(e) => e.line,
            };
            assert!(line >= 2 && line <= lines, "line {line} of {lines}");
            assert!(line >= last, "line {line} after {last}");
            last = line;
        });
    }
});
