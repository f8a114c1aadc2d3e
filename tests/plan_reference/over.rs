//! OVER aggregations (issue 12) against the reference interpreter, in both modes: ROWS and
//! RANGE frames, bounded and unbounded, partitioned by a column or not, over out-of-order rows
//! (event times 0..20 s, many equal) whose watermark delay (0..4 s) makes some of them late in
//! final mode; random batching, 1, 2 and 4 workers, exact tables at every system time and the
//! same refused rows (checked by the window aggregations' `check`).

use proptest::prelude::*;

use differential_temporal::expr::{col, count_star};
use differential_temporal::plan::{OverFrame, RelExpr};

use super::window::{check, scan};
use super::{aggs, append_only};

/// The frame of `shape`: ROWS 0..2 or unbounded, RANGE 0..3 s or unbounded.
fn frame(shape: u8, size: u64) -> OverFrame {
    match shape {
        0 => OverFrame::Rows(Some(size)),
        1 => OverFrame::Rows(None),
        2 => OverFrame::Range(Some(size as i64 * 1000)),
        _ => OverFrame::Range(None),
    }
}

/// An OVER aggregation over `A`, partitioned by `k`, by `s` or not at all, with the aggregates
/// an OVER window takes (DISTINCT included).
fn over_plan(shape: u8, size: u64, partition: u8, delay_s: i64) -> RelExpr {
    let input = scan(delay_s);
    let exprs = vec![
        count_star(),
        col("v").sum(),
        col("v").min(),
        col("s").max(),
        col("d").avg(),
        col("v").count().distinct(),
    ];
    let aggregates = aggs(&input, exprs);
    let partition = match partition {
        0 => vec![0],
        1 => vec![1],
        _ => vec![],
    };
    input
        .over(partition, 4, frame(shape, size), aggregates)
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn over_aggregations_equal_the_reference(
        shape in 0u8..4,
        size in 0u64..3,
        partition in 0u8..3,
        delay_s in 0i64..4,
        a in append_only(16),
    ) {
        check(&over_plan(shape, size, partition, delay_s), a)?;
    }
}

/// Each frame over fixed rows, two in order then two out of order, with equal event times.
#[test]
fn every_frame_runs() {
    use differential_temporal::operators::{Change, RowKind};
    let row = |seq: u64, k, v, t: i64| {
        let spec = super::RowSpec {
            k: Some(k),
            s: Some("a"),
            v: Some(v),
            d: Some(100),
            ts: Some(t),
        };
        (seq / 2, Change::new(seq, RowKind::Insert, spec.row()))
    };
    let a = vec![
        row(2, 1, 3, 2),
        row(3, 1, 4, 7),
        row(4, 1, 5, 4),
        row(5, 2, 6, 7),
        row(6, 1, 7, 1),
        row(7, 1, 8, 7),
    ];
    for shape in 0..4 {
        check(&over_plan(shape, 1, shape % 3, 0), a.clone()).unwrap();
    }
}

/// A retraction that reaches an OVER aggregation (its input declared append-only, the stream
/// not) is refused at its `seq` by the rendered operator and by the reference alike, in both
/// modes, and counts as no row: the reference dropped it silently (its count of -1 was held
/// as 0), so the two refused different rows.
#[test]
fn a_retraction_into_an_over_aggregation_is_refused_by_the_reference_too() {
    use differential_temporal::operators::{Change, RowKind};
    let change = |seq: u64, kind, v, t: i64| {
        let spec = super::RowSpec {
            k: Some(1),
            s: Some("a"),
            v: Some(v),
            d: Some(100),
            ts: Some(t),
        };
        (seq / 2, Change::new(seq, kind, spec.row()))
    };
    let a = vec![
        change(2, RowKind::Insert, 3, 2),
        change(3, RowKind::Insert, 4, 7),
        change(4, RowKind::Delete, 3, 2),
        change(5, RowKind::Insert, 6, 8),
    ];
    let plan = over_plan(1, 0, 0, 0);
    let inputs = std::collections::BTreeMap::from([("A".to_string(), a.clone())]);
    let refused = differential_temporal::plan::reference::evaluate(&plan, &inputs).unwrap();
    let refused: Vec<(u64, &str)> = (refused.refused.iter())
        .map(|r| (r.seq, r.reason.as_str()))
        .collect();
    assert_eq!(
        refused,
        [(
            4,
            "a -D row into an OVER aggregation, which consumes inserts only"
        )]
    );
    check(&plan, a).unwrap();
}
