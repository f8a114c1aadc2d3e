//! Generation: exact sequences, random values within their bounds, null rates, determinism
//! across workers and batching, and the throttle.

use std::time::{Duration, Instant};

use super::*;
use crate::repr::{ColumnType, Field};

fn schema(columns: &[(&str, ColumnType)]) -> Schema {
    Schema::new(
        columns
            .iter()
            .map(|(n, t)| Field::new(*n, t.clone()))
            .collect(),
    )
    .unwrap()
}

/// Every row of `source`, by walking its blocks as `peers` workers would (each making rows
/// `i % peers == worker`) and merging them by `seq`.
fn read(source: &DatagenSource, peers: u64) -> Vec<(u64, Row)> {
    let mut rows = Vec::new();
    for worker in 0..peers {
        let mut blocks = source.blocks();
        while let Some(block) = blocks.next_block() {
            source.generate_block(&block, (worker, peers), |c| {
                let c = c.unwrap();
                assert_eq!(c.kind, RowKind::Insert);
                assert_eq!(c.seq % peers, worker, "row {} is worker {worker}'s", c.seq);
                assert_eq!(c.seq / source.block_rows(), block.index);
                rows.push((c.seq, c.row));
            });
        }
        assert_eq!(
            blocks.blocks_seen(),
            source.rows().div_ceil(source.block_rows())
        );
    }
    rows.sort_by_key(|(seq, _)| *seq);
    rows
}

fn fast(source: DatagenSource) -> DatagenSource {
    source.with_rows_per_second(u64::MAX)
}

#[test]
fn sequences_are_exact_and_bound_the_rows() {
    let s = schema(&[
        ("id", DataType::BigInt.not_null()),
        ("small", DataType::TinyInt.nullable()),
        ("d", DataType::decimal(6, 2).unwrap().nullable()),
        ("x", DataType::Double.nullable()),
        ("s", DataType::STRING.nullable()),
    ]);
    let fields = vec![
        FieldGenerator::new(Generator::Sequence {
            start: 1,
            end: 1000,
        }),
        FieldGenerator::new(Generator::Sequence {
            start: -5,
            end: 120,
        }),
        FieldGenerator::new(Generator::Sequence {
            start: 10,
            end: 5000,
        }),
        FieldGenerator::new(Generator::Sequence {
            start: 0,
            end: 9999,
        }),
        FieldGenerator::new(Generator::Sequence {
            start: 7,
            end: 9999,
        }),
    ];
    // The shortest sequence (-5..=120, 126 values) bounds the table below number-of-rows.
    let source = fast(DatagenSource::new("t", s, fields, Some(500)).unwrap()).with_block_rows(10);
    assert_eq!(source.rows(), 126);
    let rows = read(&source, 1);
    assert_eq!(rows.len(), 126);
    for (i, (seq, row)) in rows.iter().enumerate() {
        let i64i = i as i64;
        assert_eq!(*seq, i as u64);
        assert_eq!(row.get(0), Some(Datum::Int(1 + i64i)));
        assert_eq!(row.get(1), Some(Datum::Int(-5 + i64i)));
        assert_eq!(row.get(2), Some(Datum::Decimal((10 + i as i128) * 100)));
        assert_eq!(row.get(3), Some(Datum::Float(i as f64)));
        assert_eq!(row.get(4), Some(Datum::Str(&(7 + i).to_string())));
    }
}

#[test]
fn random_values_stay_within_bounds() {
    let s = schema(&[
        ("n", DataType::Int.not_null()),
        ("f", DataType::Double.not_null()),
        ("d", DataType::decimal(4, 1).unwrap().not_null()),
        ("s", DataType::STRING.not_null()),
        ("v", DataType::Varchar(20).not_null()),
        ("b", DataType::Boolean.not_null()),
        ("ts", DataType::Timestamp(3).not_null()),
        ("day", DataType::Date.not_null()),
        ("any", DataType::BigInt.not_null()),
    ]);
    let anchor = Ts::from_millis(1_700_000_000_000);
    let fields = vec![
        FieldGenerator::new(Generator::Int { min: -3, max: 3 }),
        FieldGenerator::new(Generator::Float { min: 0.5, max: 1.5 }),
        FieldGenerator::new(Generator::Float {
            min: -20.0,
            max: 20.0,
        }),
        FieldGenerator::new(Generator::String {
            length: DEFAULT_STRING_LENGTH,
            var_len: false,
        }),
        FieldGenerator::new(Generator::String {
            length: 20,
            var_len: true,
        }),
        FieldGenerator::new(Generator::Bool),
        FieldGenerator::new(Generator::Past {
            max_past_ms: 60_000,
        }),
        FieldGenerator::new(Generator::Past {
            max_past_ms: 10 * MILLIS_PER_DAY,
        }),
        FieldGenerator::new(Generator::Int {
            min: i64::MIN,
            max: i64::MAX,
        }),
    ];
    let source = fast(DatagenSource::new("r", s, fields, Some(2000)).unwrap()).with_anchor(anchor);
    let rows = read(&source, 1);
    assert_eq!(rows.len(), 2000);
    let (mut seen_ints, mut trues, mut lengths) = (
        std::collections::BTreeSet::new(),
        0,
        std::collections::BTreeSet::new(),
    );
    let today = (anchor.millis / MILLIS_PER_DAY) as i32;
    for (_, row) in &rows {
        let Some(Datum::Int(n)) = row.get(0) else {
            panic!()
        };
        assert!((-3..=3).contains(&n));
        seen_ints.insert(n);
        let Some(Datum::Float(f)) = row.get(1) else {
            panic!()
        };
        assert!((0.5..1.5).contains(&f));
        let Some(Datum::Decimal(d)) = row.get(2) else {
            panic!()
        };
        assert!((-200..=200).contains(&d));
        let Some(Datum::Str(s)) = row.get(3) else {
            panic!()
        };
        assert_eq!(s.len(), 100);
        assert!(s
            .bytes()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        let Some(Datum::Str(v)) = row.get(4) else {
            panic!()
        };
        assert!((1..=20).contains(&v.len()));
        lengths.insert(v.len());
        let Some(Datum::Bool(b)) = row.get(5) else {
            panic!()
        };
        trues += usize::from(b);
        let Some(Datum::Timestamp(ts)) = row.get(6) else {
            panic!()
        };
        assert!(ts.millis <= anchor.millis && ts.millis > anchor.millis - 60_000);
        let Some(Datum::Date(day)) = row.get(7) else {
            panic!()
        };
        assert!(day <= today && day >= today - 10);
        assert!(matches!(row.get(8), Some(Datum::Int(_))));
    }
    assert_eq!(
        seen_ints.len(),
        7,
        "every value of [-3, 3] appears in 2000 draws"
    );
    assert!((900..1100).contains(&trues), "{trues} trues of 2000");
    assert!(
        lengths.len() > 10,
        "var-len gives many lengths: {lengths:?}"
    );
}

#[test]
fn null_rates_zero_and_one() {
    let s = schema(&[
        ("never", DataType::Int.nullable()),
        ("always", DataType::STRING.nullable()),
        ("half", DataType::Int.nullable()),
    ]);
    let fields = vec![
        FieldGenerator::new(Generator::Int { min: 0, max: 9 }),
        FieldGenerator {
            generator: Generator::String {
                length: 5,
                var_len: false,
            },
            null_rate: 1.0,
        },
        FieldGenerator {
            generator: Generator::Int { min: 0, max: 9 },
            null_rate: 0.5,
        },
    ];
    let source = fast(DatagenSource::new("n", s, fields, Some(1000)).unwrap());
    let rows = read(&source, 1);
    assert!(rows.iter().all(|(_, r)| !r.get(0).unwrap().is_null()));
    assert!(rows.iter().all(|(_, r)| r.get(1).unwrap().is_null()));
    let nulls = rows
        .iter()
        .filter(|(_, r)| r.get(2).unwrap().is_null())
        .count();
    assert!(
        (400..600).contains(&nulls),
        "{nulls} NULLs of 1000 at rate 0.5"
    );
}

#[test]
fn rows_do_not_depend_on_workers_or_blocks() {
    let make = |block_rows| {
        let s = schema(&[
            ("k", DataType::Int.nullable()),
            ("s", DataType::Varchar(8).nullable()),
        ]);
        let fields = vec![
            FieldGenerator {
                generator: Generator::Int { min: 0, max: 100 },
                null_rate: 0.1,
            },
            FieldGenerator::new(Generator::String {
                length: 8,
                var_len: true,
            }),
        ];
        fast(DatagenSource::new("same", s, fields, Some(777)).unwrap()).with_block_rows(block_rows)
    };
    let one = read(&make(1024), 1);
    assert_eq!(one.len(), 777);
    assert_eq!(read(&make(1024), 2), one);
    assert_eq!(read(&make(10), 2), one);
    assert_eq!(read(&make(3), 3), one);
    // Another table name is another seed.
    let other = make(1024);
    let renamed = DatagenSource::new(
        "other",
        other.schema().clone(),
        other.fields.clone(),
        Some(777),
    )
    .unwrap();
    assert_ne!(read(&fast(renamed), 1), one);
}

#[test]
fn refusals() {
    let s = |ty: ColumnType| schema(&[("c", ty)]);
    let err = |ty: ColumnType, g: Generator, rows: Option<u64>| {
        DatagenSource::new("t", s(ty), vec![FieldGenerator::new(g)], rows).unwrap_err()
    };
    let cases = [
        (
            DataType::Int,
            Generator::Int { min: 5, max: 1 },
            Some(1),
            "column 'c': lower bound (5) must not be greater than upper bound (1)",
        ),
        (
            DataType::BigInt,
            Generator::Sequence { start: 5, end: 1 },
            None,
            "column 'c': The start value (5) cannot be greater than the end value (1).",
        ),
        (
            DataType::TinyInt,
            Generator::Sequence { start: 1, end: 200 },
            None,
            "column 'c': the values [1, 200] do not fit its type TINYINT ([-128, 127])",
        ),
        (
            DataType::Boolean,
            Generator::Sequence { start: 1, end: 2 },
            None,
            "column 'c': a sequence generator cannot make values of type BOOLEAN",
        ),
        (
            DataType::Varchar(2),
            Generator::Sequence { start: 1, end: 100 },
            None,
            "column 'c': the values [1, 100] do not fit its type VARCHAR(2) (up to 3 characters)",
        ),
    ];
    for (ty, generator, rows, expected) in cases {
        assert_eq!(err(ty.nullable(), generator, rows), expected);
    }
    let not_null = DatagenSource::new(
        "t",
        s(DataType::Int.not_null()),
        vec![FieldGenerator {
            generator: Generator::Int { min: 0, max: 1 },
            null_rate: 0.5,
        }],
        Some(1),
    );
    assert_eq!(
        not_null.unwrap_err(),
        "column 'c': a NOT NULL column cannot have a null rate"
    );
}

/// Without a row count or a sequence the table is unbounded: its rows go on past any count,
/// each the same function of its index as in a bounded table of that name.
#[test]
fn a_table_without_a_row_count_or_a_sequence_is_unbounded() {
    let s = schema(&[("v", DataType::Int.nullable())]);
    let v = || vec![FieldGenerator::new(Generator::Int { min: 0, max: 9 })];
    let unbounded = DatagenSource::new("t", s.clone(), v(), None).unwrap();
    assert!(!unbounded.is_bounded());
    assert_eq!(unbounded.rows(), u64::MAX);
    let bounded = DatagenSource::new("t", s, v(), Some(10)).unwrap();
    assert!(bounded.is_bounded());
    let rows = |source: &DatagenSource, range: std::ops::Range<u64>| {
        let mut made = Vec::new();
        source.generate_rows(range, (0, 1), |c| made.push(c.unwrap()));
        made
    };
    assert_eq!(rows(&unbounded, 0..10), rows(&bounded, 0..10));
    let far = rows(&unbounded, 1_000_000_000_000..1_000_000_000_003);
    let seqs: Vec<u64> = far.iter().map(|c| c.seq).collect();
    assert_eq!(
        seqs,
        [1_000_000_000_000, 1_000_000_000_001, 1_000_000_000_002]
    );
}

#[test]
fn throttles_between_blocks() {
    let s = schema(&[("id", DataType::BigInt.not_null())]);
    let fields = vec![FieldGenerator::new(Generator::Sequence {
        start: 0,
        end: 299,
    })];
    // 300 rows at 1000 a second in blocks of 100: block 2 is due 0.2 s after the start.
    let source = DatagenSource::new("slow", s, fields, None)
        .unwrap()
        .with_rows_per_second(1000)
        .with_block_rows(100);
    let started = Instant::now();
    assert_eq!(read(&source, 1).len(), 300);
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(200), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// A random DECIMAL with Flink's default bounds (the smallest positive double to the largest)
/// draws within what the type holds, not at its edge.
#[test]
fn random_decimals_within_the_type() {
    let s = schema(&[("d", DataType::decimal(5, 2).unwrap().not_null())]);
    let fields = vec![FieldGenerator::new(Generator::Float {
        min: f64::from_bits(1),
        max: f64::MAX,
    })];
    let source = fast(DatagenSource::new("d", s, fields, Some(500)).unwrap());
    let values: std::collections::BTreeSet<i128> = read(&source, 1)
        .iter()
        .map(|(_, r)| match r.get(0) {
            Some(Datum::Decimal(d)) => d,
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(
        values.iter().all(|d| (0..=99_999).contains(d)),
        "{values:?}"
    );
    assert!(
        values.len() > 400,
        "{} distinct values of 500",
        values.len()
    );
}
