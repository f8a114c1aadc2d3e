//! Changelog modes (issue 46, item 13): over random plans and inputs, every node's changelog
//! mode in each execution mode ([`RelExpr::in_execution`]) holds for what the node emits (an
//! append-only node never retracts), and in incremental mode the final table is the same
//! however the inputs are cut into epochs (`--epoch-bytes`). The plans are those of the other
//! templates and a temporal join's rows (which retract in incremental mode when a build
//! version arrives late) read by each kind of consumer: an OVER aggregation and a
//! deduplication (refused in incremental mode), a window aggregation, a GROUP BY, a filter, a
//! window table function.

use std::collections::BTreeMap;

use proptest::prelude::*;

use differential_temporal::expr::{col, count_star, lit};
use differential_temporal::operators::SysTime;
use differential_temporal::plan::reference::{evaluate, snapshot, Inputs};
use differential_temporal::plan::{DedupOrder, Keep, OverFrame, RelExpr, WindowSpec};
use differential_temporal::render::ExecutionMode;

use super::{
    aggs, append_only, bind, changelog, check_plan, grouped, inputs_of, plan, run, table_at,
};

/// A temporal join of A with B (a changelog) or with B's inserts deduplicated (template 8 or
/// 9, unprojected), read by the consumer `consumer` (0 to 5, see the module docs).
fn over_join(consumer: u8, flag: bool, threshold: i64) -> RelExpr {
    let join = plan(if flag { 8 } else { 9 }, flag, threshold.abs());
    match consumer {
        0 => {
            let aggregates = aggs(&join, vec![count_star(), col("v").sum()]);
            join.over(vec![0], 4, OverFrame::Rows(None), aggregates)
                .unwrap()
        }
        1 => join
            .dedup(vec![0], Keep::Last, DedupOrder::EventTime)
            .unwrap(),
        2 => {
            let exprs = vec![
                count_star(),
                col("v").sum(),
                col("v").min(),
                col("v0").max(),
            ];
            let aggregates = aggs(&join, exprs);
            join.window_agg(4, WindowSpec::tumble(5_000), vec![0], aggregates, 0)
                .unwrap()
        }
        3 => grouped(join, flag, threshold),
        4 => {
            let predicate = bind(&join, col("v0").gt(lit(threshold)));
            join.filter(predicate)
                .unwrap()
                .project(vec![0, 2, 7], None)
                .unwrap()
        }
        _ => join.window_assign(4, WindowSpec::tumble(5_000)).unwrap(),
    }
}

/// `inputs` cut into epochs of `block` changes each, in their order (`seq`), as the commands
/// cut files into blocks: change `i` of each input enters at epoch `i / block`.
fn rebatched(inputs: &Inputs, block: usize) -> Inputs {
    inputs
        .iter()
        .map(|(name, stream)| {
            let mut changes: Vec<_> = stream.iter().map(|(_, ch)| ch.clone()).collect();
            changes.sort_by_key(|ch| ch.seq);
            let stream = (changes.into_iter().enumerate())
                .map(|(i, ch)| ((i / block) as SysTime, ch))
                .collect();
            (name.clone(), stream)
        })
        .collect()
}

/// Every node of `plan` in `mode` rendered alone over `inputs` on 2 workers: a node whose mode
/// is append-only there has no net retraction of any row at any system time.
fn modes_hold(plan: &RelExpr, inputs: &Inputs, mode: ExecutionMode) -> Result<(), TestCaseError> {
    let exact = plan.in_execution(mode).unwrap();
    let mut nodes = Vec::new();
    exact.visit(&mut |node| nodes.push(node.clone()));
    for node in nodes.iter().filter(|n| n.mode.is_append_only()) {
        let (out, _) = run(node, inputs, 2, mode);
        let mut net: BTreeMap<_, isize> = BTreeMap::new();
        for (row, time, diff) in out {
            *net.entry((time, row)).or_default() += diff;
        }
        let retracted = net.into_iter().find(|(_, diff)| *diff < 0);
        prop_assert!(
            retracted.is_none(),
            "{} is append-only in {:?} mode but retracts {:?}\n{}",
            node.kind_name(),
            mode,
            retracted,
            exact.explain()
        );
    }
    Ok(())
}

/// `plan` over `inputs`: in each mode, a refusal in incremental mode only (of a node that
/// consumes inserts only, or of an aggregate that cannot retract, over the temporal join's
/// rows), by the reference and by rendering alike; else every node's mode holds, the rendered
/// plan equals the reference, and the final table is the same for blocks of 1, 2 and 5 changes.
fn check_modes(plan: &RelExpr, inputs: &Inputs) -> Result<(), TestCaseError> {
    modes_hold(plan, inputs, ExecutionMode::Final)?;
    if let Err(e) = plan.in_execution(ExecutionMode::Incremental) {
        let message = e.to_string();
        prop_assert!(
            message.contains("produced by node TemporalJoin in the incremental mode")
                || message.starts_with("Reduce: the aggregate")
                || message.starts_with("WindowAggregate: the aggregate"),
            "{}",
            message
        );
        prop_assert_eq!(evaluate(plan, inputs).map(|_| ()), Err(e));
        return Ok(());
    }
    modes_hold(plan, inputs, ExecutionMode::Incremental)?;
    check_plan(plan, inputs, "modes")?;
    let expected = snapshot(&evaluate(plan, inputs).unwrap().stream, SysTime::MAX);
    for block in [1, 2, 5] {
        let (out, _) = run(
            plan,
            &rebatched(inputs, block),
            1,
            ExecutionMode::Incremental,
        );
        prop_assert_eq!(
            table_at(&out, SysTime::MAX),
            expected.clone(),
            "blocks of {} changes\n{}",
            block,
            plan.explain()
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A temporal join's rows read by each kind of consumer.
    #[test]
    fn temporal_join_consumers_keep_their_modes(
        consumer in 0u8..6,
        flag in any::<bool>(),
        threshold in -3i64..4,
        a in append_only(12),
        b in changelog(10),
    ) {
        let plan = over_join(consumer, flag, threshold);
        let inputs = inputs_of(&plan, a, b, Vec::new());
        check_modes(&plan, &inputs)?;
    }

    /// The other templates, but the lookup joins (10 and 19: their result depends on the
    /// system time a probe row arrives at, so on the blocks).
    #[test]
    fn every_template_keeps_its_modes(
        template in prop::sample::select((0u8..10).chain(11..19).chain([20, 21, 22]).collect::<Vec<_>>()),
        flag in any::<bool>(),
        threshold in -3i64..4,
        a in append_only(10),
        b in changelog(8),
        c in changelog(8),
    ) {
        let plan = plan(template, flag, threshold);
        let inputs = inputs_of(&plan, a, b, c);
        check_modes(&plan, &inputs)?;
    }
}

/// The query shape: an OVER aggregation over a temporal join is refused in incremental
/// mode (where a late build version retracts joined rows), by name, and planned in final mode,
/// where the join is append-only.
#[test]
fn an_over_aggregation_of_an_incremental_temporal_join_is_refused() {
    let plan = over_join(0, true, 0);
    let err = plan.in_execution(ExecutionMode::Incremental).unwrap_err();
    assert_eq!(
        err.to_string(),
        "OverAggregate: OverAggregate doesn't support consuming update and delete changes which is produced by node TemporalJoin in the incremental mode (a build version arriving late retracts the rows joined with the version it supersedes); run it in the final mode (`--mode final`), which emits each joined row once"
    );
    let exact = plan.in_execution(ExecutionMode::Final).unwrap();
    assert!(exact.inputs()[0].mode.is_append_only());
}
