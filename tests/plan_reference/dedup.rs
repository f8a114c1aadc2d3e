//! Deduplication in final mode (rules A9, A13) against the reference interpreter, in both
//! modes: keep-first by rowtime waits for the watermark in final mode (with and without a state
//! TTL on its emitted flags), the other forms render as in incremental mode; alone and under a
//! GROUP BY that reads its changelog, over out-of-order rows (event times 0..20 s, many equal)
//! whose watermark delay (0..4 s) makes some of them late; random batching, 1, 2 and 4 workers,
//! exact tables at every system time and the same refused rows (the window tests' `check`).

use proptest::prelude::*;

use differential_temporal::expr::{col, count_star};
use differential_temporal::operators::{Change, SysTime};
use differential_temporal::plan::{DedupOrder, Keep, RelExpr};
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::Row;

use super::window::{check_in, scan};
use super::{aggs, append_only};

/// A deduplication of `A` by `k` or `s`: keep-first by rowtime with a state TTL of `ttl_s`
/// seconds (0: none), or keep-last by rowtime, or keep-first by arrival; under a count per `v`
/// when `grouped`.
fn dedup_plan(form: u8, by_s: bool, delay_s: i64, ttl_s: i64, grouped: bool) -> RelExpr {
    let key = vec![if by_s { 1 } else { 0 }];
    let (keep, order) = match form {
        0 => (Keep::First, DedupOrder::EventTime),
        1 => (Keep::Last, DedupOrder::EventTime),
        _ => (Keep::First, DedupOrder::Arrival),
    };
    let mut dedup = scan(delay_s).dedup(key, keep, order).unwrap();
    if form == 0 {
        dedup = dedup.with_event_time_ttl(ttl_s * 1000).unwrap();
    }
    if !grouped {
        return dedup;
    }
    let aggregates = aggs(&dedup, vec![count_star(), col("k").sum()]);
    dedup.reduce(vec![2], aggregates).unwrap()
}

/// `dedup_plan(form, .., ttl_s, ..)` over `a` in both modes, or in final mode alone with a
/// state TTL (which needs the watermark).
fn check(form: u8, plan: &RelExpr, ttl_s: i64, a: Stream) -> Result<(), TestCaseError> {
    let modes: &[ExecutionMode] = match form == 0 && ttl_s > 0 {
        true => &[ExecutionMode::Final],
        false => &[ExecutionMode::Incremental, ExecutionMode::Final],
    };
    check_in(plan, a, modes)
}

type Stream = Vec<(SysTime, Change<Row>)>;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn final_mode_deduplication_equals_the_reference(
        form in prop::sample::select(vec![0u8, 0, 0, 1, 2]),
        by_s in any::<bool>(),
        delay_s in 0i64..4,
        ttl_s in prop::sample::select(vec![0i64, 0, 1, 3, 6]),
        grouped in any::<bool>(),
        a in append_only(16),
    ) {
        check(form, &dedup_plan(form, by_s, delay_s, ttl_s, grouped), ttl_s, a)?;
    }
}

/// Keep-first on the watermark over fixed rows, delay 0, exactly: epoch 0 holds key 1 at 5 s
/// then 3 s (3 s replaces 5 s) and key 2 at 7 s; under the watermark 7 s at epoch 1, key 1's
/// row at 3 s is emitted, key 2's row at 2 s is late, and key 1's row at 9 s is ignored, or,
/// with a TTL of 1 s (key 1's flag gone once the watermark passes 4 s), a first row again;
/// key 2's row at 7 s is emitted under the watermark 9 s at epoch 2, key 3's at 12 s at the end.
#[test]
fn keep_first_on_the_watermark_runs() {
    use differential_temporal::operators::{RowKind, Seq};
    use differential_temporal::plan::reference::{evaluate_final, Inputs};
    let row = |seq: Seq, epoch: SysTime, k, t: i64| {
        let spec = super::RowSpec {
            k: Some(k),
            s: Some("a"),
            v: Some(1),
            d: Some(100),
            ts: Some(t),
        };
        (epoch, Change::new(seq, RowKind::Insert, spec.row()))
    };
    let a = vec![
        row(2, 0, 1, 5),
        row(3, 0, 1, 3),
        row(4, 0, 2, 7),
        row(5, 1, 2, 2),
        row(6, 1, 1, 9),
        row(7, 2, 3, 12),
    ];
    for (ttl_s, emitted) in [
        (0, vec![(1, 3), (2, 4), (3, 7)]),
        (1, vec![(1, 3), (2, 4), (3, 6), (3, 7)]),
    ] {
        let plan = dedup_plan(0, false, 0, ttl_s, false);
        let inputs = Inputs::from([("A".to_string(), a.clone())]);
        let expected = evaluate_final(&plan, &inputs).unwrap();
        let got: Vec<(SysTime, Seq)> = (expected.stream.iter())
            .map(|(t, c)| {
                assert_eq!(c.kind, RowKind::Insert);
                (*t, c.seq)
            })
            .collect();
        assert_eq!(got, emitted, "TTL {ttl_s} s");
        let refused: Vec<Seq> = expected.refused.iter().map(|r| r.seq).collect();
        assert_eq!(refused, vec![5]);
        for grouped in [false, true] {
            let plan = dedup_plan(0, false, 0, ttl_s, grouped);
            check(0, &plan, ttl_s, a.clone()).unwrap();
        }
    }
}

/// A state TTL is measured on the watermark: rendering it in incremental mode is an error.
#[test]
fn a_state_ttl_needs_the_final_mode() {
    use differential_dataflow::input::InputSession;
    use differential_temporal::render::RenderContext;
    let plan = dedup_plan(0, false, 0, 3, false);
    let err = timely::execute_directly(move |worker| {
        worker.dataflow::<SysTime, _, _>(|scope| {
            let mut input = InputSession::<SysTime, Change<Row>, isize>::new();
            let sources = [("A".to_string(), input.to_collection(scope))].into();
            let mut ctx = RenderContext::new(scope, sources, ExecutionMode::Incremental);
            ctx.render(&plan).err().map(|e| e.to_string())
        })
    });
    assert_eq!(
        err.as_deref(),
        Some("Dedup: a deduplication state TTL is measured on the watermark: it needs the final mode")
    );
}
