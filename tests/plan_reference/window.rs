//! Window aggregations and window assignments (a window TVF's rows, alone and under a window
//! Top-N; issue 12) against the reference interpreter, in both modes: TUMBLE,
//! HOP and CUMULATE windows with and without offset and SESSION windows, grouped by a column
//! or by the window alone, over out-of-order rows (event times 0..20 s) whose watermark delay
//! (0..4 s) makes some of them late, with an allowed lateness of 0..4 s in final mode; random batching, 1, 2 and 4
//! workers, exact tables at every system time and the same refused rows.

use std::collections::BTreeMap;

use proptest::prelude::*;

use differential_temporal::expr::{col, count_star};
use differential_temporal::operators::{Change, Seq, SysTime};
use differential_temporal::plan::reference::{evaluate, evaluate_final, Inputs};
use differential_temporal::plan::{RelExpr, SortKey, WindowSpec};
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::{Row, Rowtime, Schema};

use super::{aggs, append_only, check_against, schema_a};

/// `A` with a watermark delay of `delay_s` seconds.
pub(super) fn scan(delay_s: i64) -> RelExpr {
    let schema = Schema {
        rowtime: Some(Rowtime {
            column: 4,
            delay_ms: delay_s * 1000,
        }),
        ..schema_a()
    };
    RelExpr::scan("A", schema, false)
}

/// The window of `shape` (sizes in seconds, an offset of `offset_s`).
fn spec(shape: u8, offset_s: i64) -> WindowSpec {
    let spec = match shape {
        0 => WindowSpec::tumble(5_000),
        1 => WindowSpec::hop(6_000, 2_000),
        2 => WindowSpec::hop(5_000, 3_000),
        3 => WindowSpec::cumulate(6_000, 2_000),
        _ => WindowSpec::session(2_000),
    };
    spec.with_offset(offset_s * 1000)
}

/// A window aggregation over `A`: grouped by `s` or by the window alone, with aggregates of
/// every kind (order-dependent ones see arrival order, the input being append-only).
pub(super) fn window_plan(
    shape: u8,
    offset_s: i64,
    by_s: bool,
    delay_s: i64,
    lateness_s: i64,
) -> RelExpr {
    let input = scan(delay_s);
    let exprs = vec![
        count_star(),
        col("v").sum(),
        col("v").min(),
        col("s").max(),
        col("d").avg(),
        col("v").count().distinct(),
        col("k").first_value(),
        col("s").listagg(","),
    ];
    let aggregates = aggs(&input, exprs);
    let group = if by_s { vec![1] } else { vec![] };
    input
        .window_agg(
            4,
            spec(shape, offset_s),
            group,
            aggregates,
            lateness_s * 1000,
        )
        .unwrap()
}

/// A window assignment over `A` (a window TVF's rows: TUMBLE, HOP or CUMULATE), alone or
/// under a window Top-N (the 2 greatest `v` per `window_start, window_end`, with the rank).
pub(super) fn assign_plan(shape: u8, offset_s: i64, delay_s: i64, top_n: bool) -> RelExpr {
    let rows = scan(delay_s)
        .window_assign(4, spec(shape, offset_s))
        .unwrap();
    if !top_n {
        return rows;
    }
    let window = vec![rows.schema.len() - 3, rows.schema.len() - 2];
    rows.top_n(window, vec![SortKey::new(2, true, None)], 2, Some("rn"))
        .unwrap()
}

type Stream = Vec<(SysTime, Change<Row>)>;

pub(super) fn check(plan: &RelExpr, a: Stream) -> Result<(), TestCaseError> {
    check_in(plan, a, &[ExecutionMode::Incremental, ExecutionMode::Final])
}

/// [`check`] in `modes` only (a plan that renders in final mode only).
pub(super) fn check_in(
    plan: &RelExpr,
    a: Stream,
    modes: &[ExecutionMode],
) -> Result<(), TestCaseError> {
    let inputs: Inputs = BTreeMap::from([("A".to_string(), a)]);
    let last = inputs["A"].iter().map(|(t, _)| *t).max().unwrap_or(0);
    // The last system time with a row with an event time: final mode fires the windows left
    // open when the input ends, at a later system time the reference and the operator may
    // count differently, so final mode is compared up to it and at the end.
    let timed = (inputs["A"].iter())
        .filter(|(_, ch)| !ch.row.get(4).is_some_and(|d| d.is_null()))
        .map(|(t, _)| *t)
        .max()
        .unwrap_or(0);
    for &mode in modes {
        let expected = match mode {
            ExecutionMode::Incremental => evaluate(plan, &inputs).unwrap(),
            ExecutionMode::Final => evaluate_final(plan, &inputs).unwrap(),
        };
        let compared = match mode {
            ExecutionMode::Incremental => last,
            ExecutionMode::Final => timed,
        };
        let times = (0..=compared).chain([SysTime::MAX]);
        check_against(plan, &inputs, mode, &expected, times, &format!("{mode:?}"))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn window_aggregations_equal_the_reference(
        shape in 0u8..5,
        offset_s in 0i64..3,
        by_s in any::<bool>(),
        delay_s in 0i64..4,
        lateness_s in 0i64..4,
        a in append_only(14),
    ) {
        check(&window_plan(shape, offset_s, by_s, delay_s, lateness_s), a)?;
    }

    #[test]
    fn window_assignments_equal_the_reference(
        shape in 0u8..4,
        offset_s in 0i64..3,
        delay_s in 0i64..4,
        top_n in any::<bool>(),
        a in append_only(14),
    ) {
        check(&assign_plan(shape, offset_s, delay_s, top_n), a)?;
    }
}

/// Each window shape once over fixed out-of-order rows, one row an epoch: the row at 1 s after
/// 12 s is late (the delay is 0) and beyond the lateness of 2 s for its windows; the window
/// assignment of each shape but SESSION too.
#[test]
fn every_window_shape_runs() {
    let row = |seq: Seq, k, s, v, t: i64| {
        let spec = super::RowSpec {
            k: Some(k),
            s: Some(s),
            v: Some(v),
            d: Some(100),
            ts: Some(t),
        };
        (
            seq - 2,
            Change::new(
                seq,
                differential_temporal::operators::RowKind::Insert,
                spec.row(),
            ),
        )
    };
    let a = vec![
        row(2, 1, "a", 3, 2),
        row(3, 2, "b", 4, 7),
        row(4, 1, "a", 5, 4),
        row(5, 2, "a", 6, 12),
        row(6, 3, "b", 7, 1),
        row(7, 1, "b", 8, 11),
    ];
    for shape in 0..5 {
        check(
            &window_plan(shape, shape as i64 % 2, shape % 2 == 0, 0, 2),
            a.clone(),
        )
        .unwrap();
        if shape < 4 {
            let plan = assign_plan(shape, shape as i64 % 2, 0, shape % 2 == 1);
            check(&plan, a.clone()).unwrap();
        }
    }
}
