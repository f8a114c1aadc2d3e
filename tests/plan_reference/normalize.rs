//! The merge-engine node over an upsert changelog (`+I`, `+U` without its `-U`, `-D`, keys
//! colliding, NULL a key): the normalization of an upsert source (rule A12, Flink's
//! ChangelogNormalize; issue 46) alone, under a filter and under a GROUP BY, and the
//! `deduplicate`, `first_row` (Fluss and Paimon) and `versioned` merge engines (issue 11) over
//! the same writes; random batching, 1, 2 and 4 workers, in both modes, the exact table at
//! every system time and the same refused (ignored) writes as the reference interpreter.

use std::collections::BTreeMap;

use proptest::prelude::*;

use differential_temporal::expr::{col, count_star, lit};
use differential_temporal::operators::{Change, RowKind, Seq, SysTime};
use differential_temporal::plan::reference::{evaluate, evaluate_final, Inputs};
use differential_temporal::plan::RelExpr;
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::Row;

use super::inputs::{schema_b, upsert_changelog, RowSpec};
use super::{aggs, bind, check_against};

/// The upsert source `U`: B's columns, primary key `k`.
fn scan_u() -> RelExpr {
    RelExpr::scan("U", schema_b(), true)
}

/// The plan of `form` over `U`: its normalization alone (0), filtered by `v > threshold` (1),
/// counted per `s` (2); merged by `deduplicate` (3), Fluss `first_row` (4), Paimon `first-row`
/// (5) or `versioned` on `v` (6).
pub(super) fn upsert_plan(form: u8, threshold: i64) -> RelExpr {
    let normalized = scan_u().normalized_by_key().unwrap();
    let options: &[(&str, &str)] = match form {
        0 => return normalized,
        1 => {
            let predicate = bind(&normalized, col("v").gt(lit(threshold)));
            return normalized.filter(predicate).unwrap();
        }
        2 => {
            let aggregates = aggs(&normalized, vec![count_star(), col("v").sum()]);
            return normalized.reduce(vec![1], aggregates).unwrap();
        }
        3 => &[("merge-engine", "deduplicate")],
        4 => &[("table.merge-engine", "first_row")],
        5 => &[("merge-engine", "first-row")],
        _ => &[
            ("table.merge-engine", "versioned"),
            ("table.merge-engine.versioned.ver-column", "v"),
        ],
    };
    let options: Vec<(String, String)> = (options.iter())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    scan_u().merge_engine(&["k".to_string()], &options).unwrap()
}

/// `plan` over `u` in both modes against the reference on 1, 2 and 4 workers: the same table
/// at every system time and at the end, the same refused writes.
fn check(plan: &RelExpr, u: Stream) -> Result<(), TestCaseError> {
    let inputs: Inputs = BTreeMap::from([("U".to_string(), u)]);
    let last = inputs["U"].iter().map(|(t, _)| *t).max().unwrap_or(0);
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

type Stream = Vec<(SysTime, Change<Row>)>;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn merge_engines_over_an_upsert_changelog_equal_the_reference(
        form in prop::sample::select(vec![0u8, 0, 1, 2, 3, 4, 5, 6]),
        threshold in -3i64..4,
        u in upsert_changelog(14),
    ) {
        check(&upsert_plan(form, threshold), u)?;
    }
}

/// The normalization over fixed writes, exactly: key 1's `+I` then `+U` become `+I`, then
/// `-U`/`+U`; the `-D` of key 2 (no row) is ignored; key 2's `+U` becomes `+I`; key 1's `-D`
/// (other values) deletes the row held; key 2's `+U` of the row it holds changes nothing.
#[test]
fn the_normalization_runs() {
    let row = |k, s, v| {
        let spec = RowSpec {
            k: Some(k),
            s: Some(s),
            v: Some(v),
            d: None,
            ts: Some(1),
        };
        spec.row()
    };
    let change = |epoch: SysTime, seq: Seq, kind, row| (epoch, Change::new(seq, kind, row));
    let u = vec![
        change(0, 2, RowKind::Insert, row(1, "a", 1)),
        change(0, 3, RowKind::UpdateAfter, row(1, "b", 2)),
        change(1, 4, RowKind::Delete, row(2, "a", 0)),
        change(1, 5, RowKind::UpdateAfter, row(2, "c", 3)),
        change(2, 6, RowKind::Delete, row(1, "x", 9)),
        change(2, 7, RowKind::UpdateAfter, row(2, "c", 3)),
    ];
    let plan = upsert_plan(0, 0);
    let inputs = Inputs::from([("U".to_string(), u.clone())]);
    let expected = evaluate(&plan, &inputs).unwrap();
    let got: Vec<_> = (expected.stream.iter())
        .map(|(t, c)| (*t, c.seq, c.kind, c.row.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 2, RowKind::Insert, row(1, "a", 1)),
            (0, 3, RowKind::UpdateBefore, row(1, "a", 1)),
            (0, 3, RowKind::UpdateAfter, row(1, "b", 2)),
            (1, 5, RowKind::Insert, row(2, "c", 3)),
            (2, 6, RowKind::Delete, row(1, "b", 2)),
        ]
    );
    let refused: Vec<Seq> = expected.refused.iter().map(|r| r.seq).collect();
    assert_eq!(refused, vec![4]);
    for form in 0..7 {
        check(&upsert_plan(form, 0), u.clone()).unwrap();
    }
}
