//! The plan proptests' inputs: the schemas of tables A, B and C, and random append-only and
//! updating change streams of their rows (NULLs included), cut into random epochs.

use differential_temporal::operators::{Change, RowKind, Seq, SysTime};
use differential_temporal::repr::{DataType, Datum, Row, Schema, Ts};
use proptest::prelude::*;

/// `A(k BIGINT, s STRING, v BIGINT, d DECIMAL(10,2), ts TIMESTAMP(3))`, all nullable but ts,
/// rowtime ts (delay 1 h): the append-only input.
pub(crate) fn schema_a() -> Schema {
    Schema::builder()
        .column("k", DataType::BigInt.nullable())
        .column("s", DataType::STRING.nullable())
        .column("v", DataType::BigInt.nullable())
        .column("d", DataType::decimal(10, 2).unwrap().nullable())
        .column("ts", DataType::Timestamp(3).nullable())
        .rowtime("ts", 3_600_000)
        .build()
        .unwrap()
}

/// `B`: the same columns as a changelog with primary key `k` (a versioned table).
pub(crate) fn schema_b() -> Schema {
    Schema::builder()
        .column("k", DataType::BigInt.nullable())
        .column("s", DataType::STRING.nullable())
        .column("v", DataType::BigInt.nullable())
        .column("d", DataType::decimal(10, 2).unwrap().nullable())
        .column("ts", DataType::Timestamp(3).nullable())
        .primary_key(["k"])
        .rowtime("ts", 3_600_000)
        .build()
        .unwrap()
}

/// `C`: the same columns as an updating table without key (inserts and retractions).
pub(crate) fn schema_c() -> Schema {
    Schema {
        rowtime: None,
        ..schema_a()
    }
}

#[derive(Clone, Debug)]
pub(crate) struct RowSpec {
    pub(crate) k: Option<i64>,
    pub(crate) s: Option<&'static str>,
    pub(crate) v: Option<i64>,
    pub(crate) d: Option<i64>,
    pub(crate) ts: Option<i64>,
}

impl RowSpec {
    /// The row `(k, s, v, d, ts)`.
    pub(crate) fn row(&self) -> Row {
        Row::pack([
            self.k.map_or(Datum::Null, Datum::Int),
            self.s.map_or(Datum::Null, Datum::Str),
            self.v.map_or(Datum::Null, Datum::Int),
            self.d.map_or(Datum::Null, |d| Datum::Decimal(d as i128)),
            self.ts.map_or(Datum::Null, |t| {
                Datum::Timestamp(Ts {
                    millis: t * 1000,
                    nanos_of_milli: 0,
                })
            }),
        ])
    }
}

pub(crate) fn row_spec() -> impl Strategy<Value = RowSpec> {
    let opt = |p: u32| prop::bool::weighted(p as f64 / 100.0);
    (
        (opt(90), 0i64..4),
        (opt(85), prop::sample::select(vec!["a", "b", "c", "ä"])),
        (opt(85), -5i64..6),
        (opt(85), -500i64..500),
        (opt(97), 0i64..20),
    )
        .prop_map(|((hk, k), (hs, s), (hv, v), (hd, d), (ht, t))| RowSpec {
            k: hk.then_some(k),
            s: hs.then_some(s),
            v: hv.then_some(v),
            d: hd.then_some(d),
            ts: ht.then_some(t),
        })
}

/// An append-only input: rows with increasing `seq` (their lines) and non-decreasing epochs.
pub(crate) fn append_only(max_rows: usize) -> impl Strategy<Value = Vec<(SysTime, Change<Row>)>> {
    prop::collection::vec((row_spec(), 0u64..3), 0..max_rows).prop_map(|rows| {
        let mut epoch = 0;
        rows.into_iter()
            .enumerate()
            .map(|(i, (spec, step))| {
                epoch += step;
                (
                    epoch,
                    Change::new(i as Seq + 2, RowKind::Insert, spec.row()),
                )
            })
            .collect()
    })
}

/// A changelog: inserts, and retractions (`-D`, or a `-U` then `+U` update) of live rows.
pub(crate) fn changelog(max_rows: usize) -> impl Strategy<Value = Vec<(SysTime, Change<Row>)>> {
    prop::collection::vec(
        (row_spec(), 0u64..3, 0u8..4, any::<prop::sample::Index>()),
        0..max_rows,
    )
    .prop_map(|steps| {
        let (mut epoch, mut seq) = (0, 1);
        let mut live: Vec<Row> = Vec::new();
        let mut out = Vec::new();
        let mut push = |epoch, kind, row: Row, out: &mut Vec<_>| {
            seq += 1;
            out.push((epoch, Change::new(seq, kind, row)));
        };
        for (spec, step, action, which) in steps {
            epoch += step;
            if live.is_empty() || action < 2 {
                live.push(spec.row());
                push(epoch, RowKind::Insert, spec.row(), &mut out);
            } else {
                let old = live.remove(which.index(live.len()));
                if action == 2 {
                    push(epoch, RowKind::Delete, old, &mut out);
                } else {
                    push(epoch, RowKind::UpdateBefore, old, &mut out);
                    live.push(spec.row());
                    push(epoch, RowKind::UpdateAfter, spec.row(), &mut out);
                }
            }
        }
        out
    })
}

/// An upsert changelog (as Kafka's upsert connector or a Debezium topic without before-images
/// writes it): each change a `+I`, `+U` or `-D` of a random row (keys 0..4 or NULL, so keys
/// collide), with no `-U` before a `+U`; so a `+U` of a key without a row, a `+I` of a key
/// that has one, and a `-D` of a key without a row (or with other values) all occur.
pub(crate) fn upsert_changelog(
    max_rows: usize,
) -> impl Strategy<Value = Vec<(SysTime, Change<Row>)>> {
    let kind = prop::sample::select(vec![
        RowKind::Insert,
        RowKind::UpdateAfter,
        RowKind::UpdateAfter,
        RowKind::Delete,
    ]);
    prop::collection::vec((row_spec(), 0u64..3, kind), 0..max_rows).prop_map(|steps| {
        let mut epoch = 0;
        (steps.into_iter().enumerate())
            .map(|(i, (spec, step, kind))| {
                epoch += step;
                (epoch, Change::new(i as Seq + 2, kind, spec.row()))
            })
            .collect()
    })
}
