//! The joins of issue 13 in the report, as Table API plans over packed rows on the workload of
//! `table_temporal_join` (probes `(k, ts, payload)` with rowtime `ts`, watermark delay 5 s;
//! `rates(k, ts, rate)`, 10 versions per key, loaded at epoch 0):
//!
//! * `table_interval_join`: `probes JOIN rates ON k = k0 AND ts BETWEEN ts0 - INTERVAL '30'
//!   SECOND AND ts0 + INTERVAL '30' SECOND`, final mode (the watermark frees both sides' rows;
//!   no probe row is late). Baseline: per probe row, a binary search of its key's sorted
//!   versions for the window.
//! * `table_asof_nearest`: `probes ASOF JOIN rates MATCH_CONDITION (NEAREST(ts, ts0)) ON k = k0`,
//!   incremental. Baseline: per probe row, the nearest of its key's sorted versions (the
//!   earlier at equal distance).

use std::collections::BTreeMap;

use differential_temporal::expr::{call, col, lit, Expr};
use differential_temporal::plan::JoinKind;
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::{DataType, Datum};

use crate::dataflows::{drive, Run};
use crate::relational::{build_side, events, integers, plan, render, schema};
use crate::workload::{Shape, Stream, JITTER_MS};

/// The half-width of the interval join's window, in milliseconds.
pub const WINDOW_MS: i64 = 30_000;

/// `table_interval_join` (see the module docs).
pub fn interval_join(workers: usize, shape: Shape) -> Run {
    let window = || {
        lit((
            Datum::IntervalDayTime(WINDOW_MS),
            DataType::IntervalDayTime.not_null(),
        ))
    };
    let on = col("k")
        .eq(col("k0"))
        .and(col("ts").between(col("ts0").sub(window()), col("ts0").add(window())));
    run(
        workers,
        shape,
        ExecutionMode::Final,
        move |probes, rates| probes.join(rates, on.clone()),
    )
}

/// `table_asof_nearest` (see the module docs).
pub fn asof_nearest(workers: usize, shape: Shape) -> Run {
    let on: Expr = col("k")
        .eq(col("k0"))
        .and(call("NEAREST", [col("ts"), col("ts0")]));
    run(
        workers,
        shape,
        ExecutionMode::Incremental,
        move |probes, rates| probes.asof_join(rates, on.clone(), JoinKind::Inner, None),
    )
}

/// The join `join(probes, rates)` in `mode`, its rows digested as `[k, ts, payload, ts0, rate]`.
fn run(
    workers: usize,
    shape: Shape,
    mode: ExecutionMode,
    join: impl Fn(
        &differential_temporal::table::Table,
        &differential_temporal::table::Table,
    ) -> differential_temporal::table::Table,
) -> Run {
    let plan = plan(
        &[
            ("probes", schema("payload", JITTER_MS, false)),
            ("rates", schema("rate", 0, false)),
        ],
        |env| {
            let joined = join(&env.from("probes"), &env.from("rates"));
            joined.select([col("k"), col("ts"), col("payload"), col("ts0"), col("rate")])
        },
    );
    drive(
        workers,
        shape,
        events(Stream::Probe, shape.build_keys()),
        move |probes, sink| {
            let scope = probes.scope();
            let rates = build_side(scope, shape);
            let sources =
                BTreeMap::from([("probes".to_string(), probes), ("rates".to_string(), rates)]);
            let joined = render(scope, sources, mode, &plan, sink);
            sink.observe(joined.into_table(), integers::<5>);
        },
    )
}
