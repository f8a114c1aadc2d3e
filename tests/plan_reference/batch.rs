//! Batch execution (issue 48): a plan that reads no processing time, run in incremental mode
//! with all its input at one system time, gives the streaming run's final table and refuses
//! the same rows, on 1 and 2 workers: random plans of every template but the lookup join,
//! window aggregations and assignments, and the merges of an upsert changelog, over random
//! inputs whose rows of one system time keep
//! their order (`seq`).

use std::collections::BTreeMap;

use proptest::prelude::*;

use differential_temporal::operators::SysTime;
use differential_temporal::plan::reference::Inputs;
use differential_temporal::plan::RelExpr;
use differential_temporal::render::ExecutionMode;

use super::inputs::upsert_changelog;
use super::{
    append_only, case, inputs_of, normalize, refused_seqs, run, table_at, templates, window,
};

/// `inputs` with every change at system time 0, in the same order.
fn at_one_time(inputs: &Inputs) -> Inputs {
    (inputs.iter())
        .map(|(name, stream)| {
            let changes = stream.iter().map(|(_, change)| (0, change.clone()));
            (name.clone(), changes.collect())
        })
        .collect()
}

/// `plan` over `inputs` streaming (on 1 worker) and in batch (on 1 and 2 workers): the same
/// final table and the same refused rows.
fn check_batch(plan: &RelExpr, inputs: &Inputs) -> Result<(), TestCaseError> {
    prop_assert!(!plan.reads_processing_time(), "{}", plan.explain());
    let (streaming, streaming_refused) = run(plan, inputs, 1, ExecutionMode::Incremental);
    let batch_inputs = at_one_time(inputs);
    for workers in [1, 2] {
        let (batch, refused) = run(plan, &batch_inputs, workers, ExecutionMode::Incremental);
        prop_assert!(
            batch.iter().all(|(_, t, _)| *t == 0),
            "batch emits at 0 only"
        );
        prop_assert_eq!(
            table_at(&batch, SysTime::MAX),
            table_at(&streaming, SysTime::MAX),
            "batch on {} workers\n{}",
            workers,
            plan.explain()
        );
        prop_assert_eq!(refused_seqs(&refused), refused_seqs(&streaming_refused));
    }
    Ok(())
}

/// The templates that read no processing time: all but the lookup joins (10 and 19).
fn batch_template() -> impl Strategy<Value = u8> {
    let templates = (0..10).chain(11..19).chain([20, 21, 22]);
    prop::sample::select(templates.collect::<Vec<u8>>())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn batch_equals_the_streaming_final_table(
        template in batch_template(),
        (_, flag, threshold, a, b, c) in case(0..1),
    ) {
        let plan = templates::plan(template, flag, threshold);
        check_batch(&plan, &inputs_of(&plan, a, b, c))?;
    }

    #[test]
    fn batch_windows_equal_the_streaming_final_table(
        shape in 0u8..5,
        offset_s in 0i64..3,
        by_s in any::<bool>(),
        delay_s in 0i64..4,
        assign in any::<bool>(),
        a in append_only(14),
    ) {
        let plan = match assign && shape < 4 {
            true => window::assign_plan(shape, offset_s, delay_s, by_s),
            false => window::window_plan(shape, offset_s, by_s, delay_s, 0),
        };
        check_batch(&plan, &BTreeMap::from([("A".to_string(), a)]))?;
    }

    #[test]
    fn batch_merges_of_an_upsert_changelog_equal_the_streaming_final_table(
        form in 0u8..7,
        threshold in -3i64..4,
        u in upsert_changelog(14),
    ) {
        let plan = normalize::upsert_plan(form, threshold);
        check_batch(&plan, &BTreeMap::from([("U".to_string(), u)]))?;
    }
}

/// The lookup join, which reads processing time, is what batch execution leaves to streaming.
#[test]
fn the_lookup_join_reads_processing_time() {
    assert!(templates::plan(10, false, -1).reads_processing_time());
    assert!(templates::plan(19, true, 1).reads_processing_time());
    assert!(!templates::plan(8, true, 1).reads_processing_time());
}
