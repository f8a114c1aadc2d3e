//! Engines over typed rows (issue 11): the cells were parsed once at ingest, the engines compare
//! and compute as the columns' types and emit values of those types.

use super::*;
use crate::repr::cast::parse_datum;
use crate::repr::{Datum, Ts};

/// A typed row from comma-separated cells read as `types` (an empty cell is NULL).
fn typed(types: &[DataType], cells: &str) -> Row {
    let mut scratch = Vec::new();
    let mut row = Row::new();
    let mut packer = row.packer();
    for (cell, ty) in cells.split(',').zip(types) {
        match cell {
            "" => packer.push(Datum::Null),
            text => packer.push(parse_datum(text, ty, &mut scratch).unwrap()),
        }
    }
    row
}

/// Typed inserts keyed by the first cell's text, in input order.
fn typed_inserts(types: &[DataType], rows: &[&str]) -> Vec<(String, Change<Row>)> {
    rows.iter()
        .enumerate()
        .map(|(seq, cells)| {
            let key = cells.split(',').next().unwrap_or_default().to_string();
            (
                key,
                Change::new(seq as u64, RowKind::Insert, typed(types, cells)),
            )
        })
        .collect()
}

fn decimal(p: u8, s: u8) -> DataType {
    DataType::decimal(p, s).unwrap()
}

fn typed_agg(name: &str, function: AggFunction, ty: DataType) -> Option<FieldAgg> {
    Some(FieldAgg::new(name, function, ty))
}

#[test]
fn sum_over_decimal_keeps_its_scale_and_max_over_bigint_compares_numbers() {
    let types = [DataType::BigInt, DataType::BigInt, decimal(10, 2)];
    let engine = MergeEngine::Aggregation(Aggregation {
        fields: vec![
            None,
            typed_agg("v", AggFunction::Max, DataType::BigInt),
            typed_agg("d", AggFunction::Sum, decimal(10, 2)),
        ],
        sequence: Vec::new(),
        deletes: AggDeletes::Retract,
    });
    // As text, "9" > "10"; as BIGINT the maximum is 10 whatever the order.
    for rows in [["1,10,1.5", "1,9,2.25"], ["1,9,2.25", "1,10,1.5"]] {
        let (log, refused) = run2(&engine, &typed_inserts(&types, &rows));
        assert!(refused.is_empty(), "{refused:?}");
        // 1.50 + 2.25 = 3.75: the unscaled value 375 at the column's scale 2.
        let row = Row::pack([Datum::Int(1), Datum::Int(10), Datum::Decimal(375)]);
        assert_eq!(table(&log), vec![row]);
    }
}

#[test]
fn typed_arithmetic_stays_in_the_type() {
    let types = [
        DataType::BigInt,
        DataType::Int,
        decimal(4, 1),
        DataType::Double,
        DataType::Boolean,
        DataType::BigInt,
    ];
    let engine = MergeEngine::Aggregation(Aggregation {
        fields: vec![
            None,
            typed_agg("s", AggFunction::Sum, DataType::Int),
            typed_agg("p", AggFunction::Product, decimal(4, 1)),
            typed_agg("x", AggFunction::Sum, DataType::Double),
            typed_agg("b", AggFunction::BoolAnd, DataType::Boolean),
            typed_agg("n", AggFunction::Count, DataType::BigInt),
        ],
        sequence: Vec::new(),
        deletes: AggDeletes::Retract,
    });
    let ws = typed_inserts(
        &types,
        &[
            "1,2147483646,1.5,0.25,true,7",
            "1,1,2.5,0.5,false,",
            // INT overflow: the write is refused, the row keeps the earlier sums.
            "1,1,1.0,1,true,1",
            // 3.8 * 500.0 = 1900.0 has five digits: DECIMAL(4, 1) overflows.
            "1,,500.0,,,",
        ],
    );
    let (log, refused) = run2(&engine, &ws);
    // 1.5 * 2.5 = 3.75, rounded HALF_UP to scale 1: 3.8.
    let row = Row::pack([
        Datum::Int(1),
        Datum::Int(2147483647),
        Datum::Decimal(38),
        Datum::Float(0.75),
        Datum::Bool(false),
        Datum::Int(1),
    ]);
    assert_eq!(table(&log), vec![row]);
    let reasons: Vec<_> = refused
        .iter()
        .map(|(_, seq, r)| (*seq, r.as_str()))
        .collect();
    assert_eq!(
        reasons,
        vec![
            (
                2,
                "column 's': integer overflow: the result is out of the range of INT"
            ),
            (3, "column 'p': value out of range for DECIMAL(4, 1)"),
        ]
    );
}

#[test]
fn versioned_on_a_timestamp_version_column() {
    let types = [DataType::BigInt, DataType::STRING, DataType::Timestamp(3)];
    let engine = versioned(2, OrderType::Timestamp(3), Deletes::Ignore);
    let ws = typed_inserts(
        &types,
        &[
            "1,a,2024-01-01 10:00:00.5",
            // Half a millisecond earlier: below the stored version, ignored.
            "1,b,2024-01-01 10:00:00.4995",
            "1,c,2024-01-01 10:00:00.500",
            "1,d,",
        ],
    );
    let (log, refused) = run2(&engine, &ws);
    let ts = Datum::Timestamp(Ts {
        millis: 1_704_103_200_500,
        nanos_of_milli: 0,
    });
    let row = |b| Row::pack([Datum::Int(1), Datum::Str(b), ts]);
    assert_eq!(
        log_rows(&log),
        vec![
            (RowKind::Insert, row("a")),
            // A tie: the later write wins.
            (RowKind::UpdateBefore, row("a")),
            (RowKind::UpdateAfter, row("c")),
        ]
    );
    assert_eq!(refused, below("versioned", &[("1", 1), ("1", 3)]));
}

#[test]
fn partial_update_with_a_typed_sequence_group() {
    // k, g (INT sequence of a and b), a STRING, b DECIMAL(5, 1), c BIGINT (non-NULL overwrites)
    let types = [
        DataType::Int,
        DataType::Int,
        DataType::STRING,
        decimal(5, 1),
        DataType::BigInt,
    ];
    let group = SequenceGroup {
        sequence: vec![field(1, "g", OrderType::Int)],
        fields: vec![2, 3],
        remove_record_on_retract: false,
    };
    let engine = MergeEngine::PartialUpdate(
        PartialUpdate::new(5, vec![0], vec![group], PartialDeletes::Reject).with_aggregates(vec![
            None,
            None,
            None,
            typed_agg("b", AggFunction::Sum, decimal(5, 1)),
            None,
        ]),
    );
    let ws = typed_inserts(&types, &["1,9,x,1.5,7", "1,10,y,2.25,", "1,2,z,0.1,8"]);
    let (log, refused) = run2(&engine, &ws);
    assert!(refused.is_empty(), "{refused:?}");
    // 10 > 9 > 2 as INT: `y` wins the group; every write's `b` is summed at scale 1 (2.25 is
    // read as 2.3 at ingest); `c` takes the last non-NULL value.
    let row = Row::pack([
        Datum::Int(1),
        Datum::Int(10),
        Datum::Str("y"),
        Datum::Decimal(39),
        Datum::Int(8),
    ]);
    assert_eq!(table(&log), vec![row]);
}
