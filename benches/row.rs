//! The packed `Row` against a row of text cells (`Vec<Option<String>>`, the commands' row until
//! they moved onto packed rows) and against a plain Rust struct of the same fields, and the CSV
//! source into typed rows against the text source.
//!
//! Workload: 5 columns `(id BIGINT, qty BIGINT, price DECIMAL(10, 2), ts TIMESTAMP(3),
//! code STRING)` with an 8-character code; 10k distinct rows per operation batch. `pack`
//! builds a row from values (the text row formats each cell), `unpack` reads every field back
//! as a value (the text row parses its cells), `clone` and `hash` (SipHash) are per row.
//! `csv_parse` reads 100k lines of that shape from a file's blocks: typed rows by the schema
//! (`io::TypedSource`: BIGINT, DECIMAL(10, 2), TIMESTAMP(3) as `2023-11-14 22:13:20.000`,
//! STRING) vs text rows (`csv::Schema`, the commands' pass-through of cells, packed as STRING
//! datums).
//!
//! ```text
//! cargo bench --bench row -- --quick
//! ```

use std::hash::{BuildHasher, RandomState};
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use differential_temporal::csv::{InputSpec, Schema as TextSchema};
use differential_temporal::io::TypedSource;
use differential_temporal::repr::{DataType, Datum, Row, Schema, Ts};

/// Rows per measured batch.
const ROWS: usize = 10_000;
/// Lines of the CSV file.
const LINES: usize = 100_000;

/// The same five fields as a plain struct.
#[derive(Clone, Hash)]
struct Plain {
    id: i64,
    qty: i64,
    price: i128,
    ts: i64,
    code: String,
}

fn values() -> Vec<Plain> {
    (0..ROWS as i64)
        .map(|i| Plain {
            id: i * 7919,
            qty: i % 1000,
            price: i128::from((i * 37) % 1_000_000),
            ts: 1_700_000_000_000 + i * 1000,
            code: format!("C{:07}", i),
        })
        .collect()
}

fn pack(p: &Plain) -> Row {
    Row::pack([
        Datum::Int(p.id),
        Datum::Int(p.qty),
        Datum::Decimal(p.price),
        Datum::Timestamp(Ts {
            millis: p.ts,
            nanos_of_milli: 0,
        }),
        Datum::Str(&p.code),
    ])
}

fn text(p: &Plain) -> Vec<Option<String>> {
    vec![
        Some(p.id.to_string()),
        Some(p.qty.to_string()),
        Some(format!("{}.{:02}", p.price / 100, p.price % 100)),
        Some(p.ts.to_string()),
        Some(p.code.clone()),
    ]
}

fn rows(c: &mut Criterion) {
    let plain = values();
    let packed: Vec<Row> = plain.iter().map(pack).collect();
    let texts: Vec<Vec<Option<String>>> = plain.iter().map(text).collect();
    let hasher = RandomState::new();

    let mut group = c.benchmark_group("row");
    group.throughput(Throughput::Elements(ROWS as u64));
    group.bench_function("pack/row", |b| {
        b.iter(|| plain.iter().map(pack).collect::<Vec<_>>())
    });
    group.bench_function("pack/text", |b| {
        b.iter(|| plain.iter().map(text).collect::<Vec<_>>())
    });
    group.bench_function("pack/struct", |b| b.iter(|| black_box(&plain).clone()));
    group.bench_function("unpack/row", |b| {
        b.iter(|| {
            let mut sum = 0i128;
            for row in &packed {
                for datum in row.iter() {
                    sum += match datum {
                        Datum::Int(v) => v as i128,
                        Datum::Decimal(v) => v,
                        Datum::Timestamp(t) => t.millis as i128,
                        Datum::Str(s) => s.len() as i128,
                        _ => 0,
                    };
                }
            }
            sum
        })
    });
    group.bench_function("unpack/text", |b| {
        b.iter(|| {
            let mut sum = 0i128;
            for row in &texts {
                let cell = |i: usize| row[i].as_deref().unwrap_or("");
                sum += cell(0).parse::<i64>().unwrap_or(0) as i128;
                sum += cell(1).parse::<i64>().unwrap_or(0) as i128;
                let (whole, cents) = cell(2).split_once('.').unwrap_or(("0", "0"));
                sum +=
                    whole.parse::<i128>().unwrap_or(0) * 100 + cents.parse::<i128>().unwrap_or(0);
                sum += cell(3).parse::<i64>().unwrap_or(0) as i128;
                sum += cell(4).len() as i128;
            }
            sum
        })
    });
    group.bench_function("unpack/struct", |b| {
        b.iter(|| {
            let mut sum = 0i128;
            for p in black_box(&plain) {
                sum += p.id as i128 + p.qty as i128 + p.price + p.ts as i128 + p.code.len() as i128;
            }
            sum
        })
    });
    group.bench_function("clone/row", |b| b.iter(|| packed.clone()));
    group.bench_function("clone/text", |b| b.iter(|| texts.clone()));
    group.bench_function("clone/struct", |b| b.iter(|| plain.clone()));
    group.bench_function("hash/row", |b| {
        b.iter(|| {
            packed
                .iter()
                .map(|r| hasher.hash_one(r))
                .fold(0, u64::wrapping_add)
        })
    });
    group.bench_function("hash/text", |b| {
        b.iter(|| {
            texts
                .iter()
                .map(|r| hasher.hash_one(r))
                .fold(0, u64::wrapping_add)
        })
    });
    group.bench_function("hash/struct", |b| {
        b.iter(|| {
            plain
                .iter()
                .map(|r| hasher.hash_one(r))
                .fold(0, u64::wrapping_add)
        })
    });
    group.finish();
}

fn csv_parse(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.csv");
    let mut file = String::from("id,qty,price,ts,code\n");
    for i in 0..LINES as i64 {
        file.push_str(&format!(
            "{},{},{}.{:02},{},C{:07}\n",
            i * 7919,
            i % 1000,
            i % 10_000,
            i % 100,
            chrono::DateTime::from_timestamp_millis(1_700_000_000_000 + i * 1000)
                .unwrap()
                .format("%Y-%m-%d %H:%M:%S%.3f"),
            i
        ));
    }
    std::fs::write(&path, file).unwrap();
    let path = path.to_str().unwrap();
    let schema = Schema::builder()
        .column("id", DataType::BigInt.not_null())
        .column("qty", DataType::BigInt.nullable())
        .column("price", DataType::decimal(10, 2).unwrap().nullable())
        .column("ts", DataType::Timestamp(3).nullable())
        .column("code", DataType::STRING.nullable())
        .build()
        .unwrap();
    let (typed, _) = TypedSource::open(path, Some(schema)).unwrap();
    let spec = InputSpec {
        path: path.to_string(),
        key: vec![],
        nullable_key: false,
        time: None,
    };
    let text = TextSchema::open(&spec, 0).unwrap();
    let mut splitter = typed.blocks(1 << 20).unwrap();
    let mut blocks = Vec::new();
    while let Some(block) = splitter.next_owned(|_| true).unwrap() {
        blocks.push(block);
    }

    let mut group = c.benchmark_group("csv_parse");
    group.throughput(Throughput::Elements(LINES as u64));
    group.sample_size(10);
    group.bench_function("typed_rows", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(LINES);
            for block in &blocks {
                typed.parse_block(block, |r| out.push(r.expect("a typed row")));
            }
            out
        })
    });
    group.bench_function("text_rows", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(LINES);
            for block in &blocks {
                text.parse_block(block, |r| out.push(r.expect("a text row")));
            }
            out
        })
    });
    group.finish();
}

criterion_group!(benches, rows, csv_parse);
criterion_main!(benches);
