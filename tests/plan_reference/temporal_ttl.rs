//! The state TTLs of the temporal join (final mode, in event time on the combined watermark,
//! rule B13) and of the lookup join (in system times, rule B17) against the reference
//! interpreter: random probe rows and build changelogs (event times 0..20 s, keys 0..3 with
//! NULLs), watermark delays that make some rows late, INNER and LEFT, with and without a
//! residual, the lookup join's build side with or without a rowtime (which orders the versions
//! of one system time); random batching, 1, 2 and 4 workers, exact tables at every system time
//! and the same refused rows (late probe rows and late build versions included).

use std::collections::BTreeMap;

use proptest::prelude::*;

use differential_temporal::expr::col;
use differential_temporal::operators::{RowKind, SysTime};
use differential_temporal::plan::reference::{evaluate, evaluate_final, Inputs};
use differential_temporal::plan::{join_schema, JoinKind, RelExpr};
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::{Rowtime, Schema};

use super::{append_only, bind, changelog, check_against, schema_a, schema_b, Stream};

/// `schema` with its rowtime `ts` delayed by `delay_s` seconds.
fn delayed(schema: Schema, delay_s: i64) -> Schema {
    Schema {
        rowtime: Some(Rowtime {
            column: 4,
            delay_ms: delay_s * 1000,
        }),
        ..schema
    }
}

fn kind(left: bool) -> JoinKind {
    match left {
        true => JoinKind::Left,
        false => JoinKind::Inner,
    }
}

/// `v <= v0` over the joined row of `probe` and `build`, if `residual`.
fn residual(
    probe: &RelExpr,
    build: &RelExpr,
    kind: JoinKind,
    residual: bool,
) -> Option<differential_temporal::expr::ScalarExpr> {
    let joined = join_schema(&probe.schema, &build.schema, kind);
    let plan = RelExpr::scan("J", joined, false);
    residual.then(|| bind(&plan, col("v").le(col("v0"))))
}

fn inputs(a: Stream, b: Stream) -> Inputs {
    BTreeMap::from([("A".to_string(), a), ("B".to_string(), b)])
}

/// The last system time of `inputs`.
fn last(inputs: &Inputs) -> SysTime {
    inputs
        .values()
        .flatten()
        .map(|(t, _)| *t)
        .max()
        .unwrap_or(0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn temporal_join_state_ttl_equals_the_reference(
        left in any::<bool>(),
        with_residual in any::<bool>(),
        delay_s in 0i64..4,
        ttl_s in 1i64..8,
        a in append_only(14),
        b in changelog(10),
    ) {
        let probe = RelExpr::scan("A", delayed(schema_a(), delay_s), false);
        let build = RelExpr::scan("B", delayed(schema_b(), delay_s), true);
        let r = residual(&probe, &build, kind(left), with_residual);
        let plan = probe
            .temporal_join(build, vec![0], vec![0], kind(left), r)
            .unwrap()
            .with_event_time_ttl(ttl_s * 1000)
            .unwrap();
        let inputs = inputs(a, b);
        let expected = evaluate_final(&plan, &inputs).unwrap();
        // The probe rows left when the inputs end fire at a later system time the reference
        // and the operator may count differently: compared up to the last row the join reads
        // (a key and a rowtime, and a version: no `-U`), and at the end.
        let joined = (inputs.values().flatten())
            .filter(|(_, ch)| ch.kind != RowKind::UpdateBefore)
            .filter(|(_, ch)| !ch.row.iter().take(5).step_by(4).any(|d| d.is_null()))
            .map(|(t, _)| *t)
            .max()
            .unwrap_or(0);
        let times = (0..=joined).chain([SysTime::MAX]);
        check_against(&plan, &inputs, ExecutionMode::Final, &expected, times, "final mode")?;
    }

    #[test]
    fn lookup_join_state_ttl_equals_the_reference(
        left in any::<bool>(),
        with_residual in any::<bool>(),
        build_rowtime in any::<bool>(),
        ttl in 0u64..4,
        a in append_only(14),
        b in changelog(10),
    ) {
        let probe = RelExpr::scan("A", schema_a(), false);
        let build_schema = match build_rowtime {
            true => schema_b(),
            false => Schema { rowtime: None, ..schema_b() },
        };
        let build = RelExpr::scan("B", build_schema, true);
        let r = residual(&probe, &build, kind(left), with_residual);
        let plan = probe
            .lookup_join(build, vec![0], vec![0], kind(left), r)
            .unwrap()
            .with_state_ttl(ttl)
            .unwrap();
        let inputs = inputs(a, b);
        let expected = evaluate(&plan, &inputs).unwrap();
        let times = 0..=last(&inputs);
        check_against(&plan, &inputs, ExecutionMode::Incremental, &expected, times, "lookup")?;
    }
}

/// A temporal join's state TTL is measured on the watermark: rendering it in incremental
/// mode is an error, and the plan shows it.
#[test]
fn a_temporal_join_ttl_needs_the_final_mode() {
    use differential_dataflow::input::InputSession;
    use differential_temporal::operators::Change;
    use differential_temporal::render::RenderContext;
    use differential_temporal::repr::Row;
    let probe = RelExpr::scan("A", schema_a(), false);
    let build = RelExpr::scan("B", schema_b(), true);
    let plan = probe
        .temporal_join(build, vec![0], vec![0], JoinKind::Left, None)
        .unwrap()
        .with_event_time_ttl(5000)
        .unwrap();
    assert!(
        plan.explain().contains("state_ttl=5000ms"),
        "{}",
        plan.explain()
    );
    let err = timely::execute_directly(move |worker| {
        worker.dataflow::<SysTime, _, _>(|scope| {
            let mut inputs: Vec<InputSession<SysTime, Change<Row>, isize>> =
                vec![InputSession::new(), InputSession::new()];
            let sources = [
                ("A".to_string(), inputs[0].to_collection(scope)),
                ("B".to_string(), inputs[1].to_collection(scope)),
            ]
            .into();
            let mut ctx = RenderContext::new(scope, sources, ExecutionMode::Incremental);
            ctx.render(&plan).err().map(|e| e.to_string())
        })
    });
    assert_eq!(
        err.as_deref(),
        Some("TemporalJoin: a temporal join's state TTL is measured on the watermark: it needs the final mode")
    );
}
