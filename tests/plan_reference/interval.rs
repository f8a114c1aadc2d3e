//! Interval joins (issue 13) against the reference interpreter, in both modes, and against the
//! regular join: `A JOIN R ON A.k = R.k AND A.ts BETWEEN R.ts - lo AND R.ts + hi` (or strict
//! `>`/`<` bounds, and a residual on values), INNER, LEFT, RIGHT, FULL, over out-of-order rows
//! with NULL keys and times whose watermark delays (0..4 s) make some of them late; random
//! batching, 1, 2 and 4 workers, exact tables at every system time and the same refused rows.
//! Where final mode refuses no row, its result equals the regular join's.

use std::collections::BTreeMap;

use proptest::prelude::*;

use differential_temporal::expr::{bind_scalar, col, lit, FunctionRegistry};
use differential_temporal::operators::{Change, SysTime};
use differential_temporal::plan::reference::{evaluate, evaluate_final, snapshot, Inputs};
use differential_temporal::plan::{equi_join_schema, JoinType, RelExpr};
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::{DataType, Datum, Row, Rowtime, Schema};

use super::{append_only, check_against, schema_a};

type Stream = Vec<(SysTime, Change<Row>)>;

/// An append-only `name` with the columns of `A` and a watermark delay of `delay_s` seconds.
fn scan(name: &str, delay_s: i64) -> RelExpr {
    let schema = Schema {
        rowtime: Some(Rowtime {
            column: 4,
            delay_ms: delay_s * 1000,
        }),
        ..schema_a()
    };
    RelExpr::scan(name, schema, false)
}

/// An interval literal of `s` seconds.
fn seconds(s: i64) -> differential_temporal::expr::Expr {
    lit((
        Datum::IntervalDayTime(s * 1000),
        DataType::IntervalDayTime.not_null(),
    ))
}

/// The join: window `[lo, lo + width]` seconds on `ts - ts0`, strict or not, a residual on
/// values or not.
fn interval_plan(
    join_type: JoinType,
    (lo, width): (i64, i64),
    strict: bool,
    values: bool,
    delays: (i64, i64),
) -> RelExpr {
    let (left, right) = (scan("A", delays.0), scan("R", delays.1));
    let joined = equi_join_schema(&left.schema, &right.schema, join_type);
    let (low, high) = (
        col("ts0").add(seconds(lo)),
        col("ts0").add(seconds(lo + width)),
    );
    let mut condition = match strict {
        false => col("ts").between(low, high),
        true => col("ts").gt(low).and(high.gt(col("ts"))),
    };
    if values {
        condition = condition.and(col("v").le(col("v0")));
    }
    let residual = bind_scalar(&condition, &joined, &FunctionRegistry::new()).unwrap();
    let plan = left
        .join(right, vec![0], vec![0], join_type, Some(residual))
        .unwrap();
    assert_eq!(plan.kind_name(), "IntervalJoin", "{}", plan.explain());
    plan
}

fn check(plan: &RelExpr, a: Stream, r: Stream) -> Result<(), TestCaseError> {
    let inputs: Inputs = BTreeMap::from([("A".to_string(), a), ("R".to_string(), r)]);
    let last = inputs
        .values()
        .flatten()
        .map(|(t, _)| *t)
        .max()
        .unwrap_or(0);
    // The last system time with a row that can match (a key and a time): final mode pads the
    // rows left when the inputs end, at a later system time the reference and the operator may
    // count differently, so final mode is compared up to it and at the end.
    let matchable = (inputs.values().flatten())
        .filter(|(_, ch)| {
            [0, 4]
                .iter()
                .all(|&c| !ch.row.get(c).is_some_and(|d| d.is_null()))
        })
        .map(|(t, _)| *t)
        .max()
        .unwrap_or(0);
    let regular = evaluate(plan, &inputs).unwrap();
    let fin = evaluate_final(plan, &inputs).unwrap();
    for (mode, expected) in [
        (ExecutionMode::Incremental, &regular),
        (ExecutionMode::Final, &fin),
    ] {
        let compared = match mode {
            ExecutionMode::Incremental => last,
            ExecutionMode::Final => matchable,
        };
        let times = (0..=compared).chain([SysTime::MAX]);
        check_against(plan, &inputs, mode, expected, times, &format!("{mode:?}"))?;
    }
    if fin.refused.is_empty() {
        prop_assert_eq!(
            snapshot(&fin.stream, SysTime::MAX),
            snapshot(&regular.stream, SysTime::MAX),
            "no late row: final mode is the regular join\n{}",
            plan.explain()
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn interval_joins_equal_the_reference(
        join_type in prop::sample::select(vec![JoinType::Inner, JoinType::Left, JoinType::Right, JoinType::Full]),
        window in (-4i64..3, 0i64..5),
        strict in any::<bool>(),
        values in any::<bool>(),
        delays in (0i64..4, 0i64..4),
        a in append_only(12),
        r in append_only(12),
    ) {
        check(&interval_plan(join_type, window, strict, values, delays), a, r)?;
    }
}
