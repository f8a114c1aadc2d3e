//! [`CounterFold::outputs_differ`] against the rows it claims differ.

use proptest::prelude::*;

use super::{CounterFold, Counters};
use crate::expr::{bind_aggregate, col, count_star, AggregateExpr, Expr, FunctionRegistry};
use crate::repr::{DataType, Datum, Row, Schema};
use differential_temporal_operators::group_aggregate::GroupFold;

/// The counters of `aggregates` over a nullable BIGINT `x` and a nullable DECIMAL(4, 1) `d`.
fn fold(aggregates: &[Expr]) -> CounterFold<8> {
    let schema = Schema::builder()
        .column("x", DataType::BigInt.nullable())
        .column("d", DataType::decimal(4, 1).unwrap().nullable())
        .build()
        .unwrap();
    let registry = FunctionRegistry::new();
    let bound: Vec<AggregateExpr> = aggregates
        .iter()
        .map(|a| bind_aggregate(a, &schema, &registry).unwrap())
        .collect();
    CounterFold::new(Counters::new(&bound).expect("counters"))
}

/// Some of COUNT(*), COUNT, SUM and AVG of `x` and SUM and AVG of `d` (at most seven words).
fn aggregates() -> impl Strategy<Value = Vec<Expr>> {
    let all = vec![
        count_star(),
        col("x").count(),
        col("x").sum(),
        col("x").avg(),
        col("d").sum(),
        col("d").avg(),
    ];
    prop::sample::subsequence(all, 1..=6).prop_shuffle()
}

/// The fold's methods for a BIGINT key.
fn differ(fold: &CounterFold<8>, a: &[i64; 8], b: &[i64; 8]) -> bool {
    GroupFold::<i64>::outputs_differ(fold, a, b)
}

fn output(fold: &CounterFold<8>, state: &[i64; 8]) -> Result<Row, String> {
    GroupFold::<i64>::output(fold, &7, state)
}

/// A row `(x, d)`: NULL, small, or at BIGINT's ends (so that a SUM overflows).
fn rows() -> impl Strategy<Value = Vec<(Row, isize)>> {
    let x = prop_oneof![
        Just(None),
        (-3i64..4).prop_map(Some),
        Just(Some(i64::MAX)),
        Just(Some(i64::MIN)),
    ];
    let d = prop::option::of(-20i128..20);
    let row = (x, d).prop_map(|(x, d)| {
        Row::pack([
            x.map_or(Datum::Null, Datum::Int),
            d.map_or(Datum::Null, Datum::Decimal),
        ])
    });
    prop::collection::vec(
        (row, prop_oneof![3 => Just(1isize), 1 => Just(-1isize)]),
        1..6,
    )
}

/// The state of a group of `rows` and its row count.
fn state(fold: &CounterFold<8>, rows: &[(Row, isize)]) -> ([i64; 8], isize) {
    let mut state = GroupFold::<i64>::init(fold);
    for (row, diff) in rows {
        GroupFold::<i64>::update(fold, &mut state, row, *diff).expect("no 128-bit overflow");
    }
    (state, rows.iter().map(|(_, diff)| diff).sum())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Groups with rows whose states are said to output different rows do (or one of them has
    /// no row: its SUM overflows).
    #[test]
    fn differing_states_output_different_rows(
        aggregates in aggregates(),
        a in rows(),
        b in rows(),
    ) {
        let fold = fold(&aggregates);
        let ((a, a_rows), (b, b_rows)) = (state(&fold, &a), state(&fold, &b));
        prop_assume!(a_rows > 0 && b_rows > 0);
        if differ(&fold, &a, &b) {
            if let (Ok(a), Ok(b)) = (output(&fold, &a), output(&fold, &b)) {
                prop_assert_ne!(a, b);
            }
        }
    }
}

/// A different count tells; two states of one AVG, whose value the count and total give
/// only together, do not.
#[test]
fn counts_tell_averages_do_not() {
    let counted = fold(&[count_star(), col("x").avg()]);
    let row = |x: i64| Row::pack([Datum::Int(x), Datum::Null]);
    let (one, _) = state(&counted, &[(row(2), 1)]);
    let (two, _) = state(&counted, &[(row(2), 1), (row(2), 1)]);
    assert!(differ(&counted, &one, &two));
    assert!(!differ(&counted, &one, &one));
    let avg = fold(&[col("x").avg()]);
    let (one, _) = state(&avg, &[(row(2), 1)]);
    let (two, _) = state(&avg, &[(row(2), 1), (row(2), 1)]);
    assert_ne!(one, two);
    assert!(!differ(&avg, &one, &two));
    assert_eq!(output(&avg, &one), output(&avg, &two));
}
