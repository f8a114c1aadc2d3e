//! Row-count window aggregations (Flink's `Tumble::over(rows(n))` and
//! `Slide::over(rows(n)).every(rows(m))` on a processing-time attribute; issue 12) against the
//! reference interpreter: tumbling, overlapping and gapped sliding windows, grouped by a
//! column or not, with order-dependent aggregates; random batching, 1, 2 and 4 workers, both
//! modes (which emit the same rows), exact tables at every system time.

use std::collections::BTreeMap;

use proptest::prelude::*;

use differential_temporal::expr::{col, count_star};
use differential_temporal::operators::{Change, SysTime};
use differential_temporal::plan::reference::{evaluate, Inputs};
use differential_temporal::plan::RelExpr;
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::{DataType, Datum, Field, Row, Schema, Ts};

use super::{aggs, append_only, check_against, schema_a};

/// `A`'s columns and `pt TIMESTAMP_LTZ(3) NOT NULL`, its processing-time attribute; no rowtime.
fn scan() -> RelExpr {
    let mut fields = schema_a().fields;
    fields.push(Field::new("pt", DataType::TimestampLtz(3).not_null()));
    let schema = Schema::new(fields).unwrap().with_proctime("pt").unwrap();
    RelExpr::scan("P", schema, false)
}

/// The row-count windows of `size` rows every `slide` rows, grouped by `s` or not.
fn count_plan(size: i64, slide: i64, by_s: bool) -> RelExpr {
    let input = scan();
    let exprs = vec![
        count_star(),
        col("v").sum(),
        col("k").first_value(),
        col("s").listagg(","),
        col("d").max(),
    ];
    let aggregates = aggs(&input, exprs);
    let group = if by_s { vec![1] } else { vec![] };
    input
        .count_window_agg(5, size, slide, group, aggregates)
        .unwrap()
}

/// `a`'s rows with a `pt` value (never read).
fn with_pt(a: Vec<(SysTime, Change<Row>)>) -> Vec<(SysTime, Change<Row>)> {
    let pt = Datum::Timestamp(Ts {
        millis: 0,
        nanos_of_milli: 0,
    });
    (a.into_iter())
        .map(|(t, ch)| {
            let row = Row::pack(ch.row.iter().chain([pt]));
            (t, Change::new(ch.seq, ch.kind, row))
        })
        .collect()
}

fn check(plan: &RelExpr, a: Vec<(SysTime, Change<Row>)>) -> Result<(), TestCaseError> {
    let inputs: Inputs = BTreeMap::from([("P".to_string(), with_pt(a))]);
    let last = inputs["P"].iter().map(|(t, _)| *t).max().unwrap_or(0);
    let expected = evaluate(plan, &inputs).unwrap();
    for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
        let times = (0..=last).chain([SysTime::MAX]);
        check_against(plan, &inputs, mode, &expected, times, &format!("{mode:?}"))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn count_window_aggregations_equal_the_reference(
        size in 1i64..4,
        slide in 1i64..4,
        by_s in any::<bool>(),
        a in append_only(16),
    ) {
        check(&count_plan(size, slide, by_s), a)?;
    }
}
