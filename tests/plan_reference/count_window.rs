//! Windows over a processing-time attribute (issue 12) against the reference interpreter:
//! row-count window aggregations (Flink's `Tumble::over(rows(n))` and
//! `Slide::over(rows(n)).every(rows(m))`): tumbling, overlapping and gapped sliding windows,
//! grouped by a column or not, with order-dependent aggregates, the same rows in both modes;
//! and processing-time TUMBLE, HOP, CUMULATE and SESSION windows over the rows stamped by a
//! processing-time clock (random start and tick), the rows of processing-time window TVFs, a
//! window over their `window_time`, processing-time OVER (ROWS and RANGE), and the stamps
//! alone. Random batching, 1, 2
//! and 4 workers, both modes, exact tables at every system time.

use std::collections::BTreeMap;
use std::time::Duration;

use proptest::prelude::*;

use differential_temporal::expr::{col, count_star};
use differential_temporal::operators::{Change, SysTime};
use differential_temporal::plan::reference::{evaluate, evaluate_final, Inputs};
use differential_temporal::plan::{OverFrame, ProcessingClock, RelExpr, WindowSpec};
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

/// `a`'s rows with a `pt` value (read only once stamped).
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

/// Over `P` stamped by a clock from `start_ms` by `tick_s` seconds, partitioned or grouped by
/// `s` or not: the processing-time window `shape` (0 TUMBLE, 1 HOP, 2 CUMULATE, 3 SESSION;
/// seconds), the rows of a TUMBLE (4) or HOP (5) window TVF, OVER `ROWS 1 PRECEDING` (6) or
/// `RANGE 2 s PRECEDING` (7), or a TUMBLE over the `window_time` (the proctime attribute) of a
/// HOP TVF's rows (8).
fn proctime_plan(shape: u8, by_s: bool, start_ms: i64, tick_s: u64) -> RelExpr {
    let tick = Duration::from_secs(tick_s);
    let clock = ProcessingClock::new(Ts::from_millis(start_ms), tick).unwrap();
    let input = scan().stamp_proctime(5, clock).unwrap();
    let group = if by_s { vec![1] } else { vec![] };
    let spec = match shape {
        0 | 4 => WindowSpec::tumble(5_000),
        1 | 5 | 8 => WindowSpec::hop(6_000, 2_000),
        2 => WindowSpec::cumulate(6_000, 2_000),
        _ => WindowSpec::session(2_000),
    };
    match shape {
        4 | 5 => return input.window_assign(5, spec).unwrap(),
        6 | 7 => {
            let frame =
                [OverFrame::Rows(Some(1)), OverFrame::Range(Some(2_000))][shape as usize - 6];
            let aggregates = aggs(&input, vec![count_star(), col("v").sum(), col("v").max()]);
            return input.over(group, 5, frame, aggregates).unwrap();
        }
        _ => {}
    }
    let (input, time) = match shape {
        8 => (input.window_assign(5, spec).unwrap(), 8),
        _ => (input, 5),
    };
    let spec = if shape == 8 {
        WindowSpec::tumble(4_000)
    } else {
        spec
    };
    // The rows of a final-mode window TVF carry no arrival order (`seq`), so a window over them
    // (shape 8) folds order-independent aggregates only.
    let last = match shape {
        8 => col("v").max(),
        _ => col("s").listagg(","),
    };
    let exprs = vec![count_star(), col("v").sum(), last];
    let aggregates = aggs(&input, exprs);
    input.window_agg(time, spec, group, aggregates, 0).unwrap()
}

/// `plan` over `a` (its rows with a `pt`) against the reference of each mode, at every system
/// time up to the last row's and at the end (final mode fires the windows left open when the
/// input ends, at a system time the reference and the operator may count differently).
fn check(plan: &RelExpr, a: Vec<(SysTime, Change<Row>)>) -> Result<(), TestCaseError> {
    let inputs: Inputs = BTreeMap::from([("P".to_string(), with_pt(a))]);
    let last = inputs["P"].iter().map(|(t, _)| *t).max().unwrap_or(0);
    for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
        let expected = match mode {
            ExecutionMode::Incremental => evaluate(plan, &inputs).unwrap(),
            ExecutionMode::Final => evaluate_final(plan, &inputs).unwrap(),
        };
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

    #[test]
    fn proctime_windows_equal_the_reference(
        shape in 0u8..9,
        by_s in any::<bool>(),
        start_ms in 0i64..3_000,
        tick_s in 1u64..4,
        a in append_only(16),
    ) {
        check(&proctime_plan(shape, by_s, start_ms, tick_s), a.clone())?;
        let clock = ProcessingClock::new(Ts::from_millis(start_ms), Duration::from_secs(tick_s));
        check(&scan().stamp_proctime(5, clock.unwrap()).unwrap(), a)?;
    }
}
