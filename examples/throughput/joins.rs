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
//! * `table_equi_join`: a regular join on updating inputs, `orders JOIN dims ON k = k0`, over
//!   the changes of [`equi_step`]: per row an order inserted, the order of `keys` rows earlier
//!   deleted, and one dimension row's rate updated (`-U`/`+U`), which re-joins that key's live
//!   orders. Baseline: a symmetric hash join (live orders per key, the rates in an array),
//!   emitting the same changes.

use std::collections::BTreeMap;

use differential_temporal::expr::{call, col, lit, Expr};
use differential_temporal::plan::JoinKind;
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::{DataType, Datum};

use differential_temporal::operators::{Change, RowKind};
use differential_temporal::repr::Row;

use crate::dataflows::{drive, Run};
use crate::relational::{build_side, events, integers, plan, render, row, schema};
use crate::workload::{equi_step, share, KeyedRow, Shape, Stream, BASE_MS, JITTER_MS};

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
            ("probes", schema("payload", JITTER_MS, false), false),
            ("rates", schema("rate", 0, false), false),
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

/// `table_equi_join` (see the module docs).
pub fn equi_join(workers: usize, shape: Shape) -> Run {
    let keys = shape.keys();
    let plan = plan(
        &[
            ("orders", schema("payload", 0, false), true),
            ("dims", schema("rate", 0, false), true),
        ],
        |env| {
            let joined = env
                .from("orders")
                .join(&env.from("dims"), col("k").eq(col("k0")));
            joined.select([col("k"), col("ts"), col("payload"), col("rate")])
        },
    );
    // Each row's changes, tagged `true` for the dimension table.
    let generate = move |range, index, peers, out: &mut Vec<(bool, Change<Row>)>| {
        let order =
            |seq, kind, e: KeyedRow| (false, Change::new(seq, kind, row(e.key, e.time, e.payload)));
        for i in share(range, index, peers) {
            let step = equi_step(i, keys);
            out.push(order(i, RowKind::Insert, step.insert));
            out.extend(step.delete.map(|e| order(i, RowKind::Delete, e)));
            let (key, old, new) = step.dim;
            out.push((
                true,
                Change::new(i, RowKind::UpdateBefore, row(key, BASE_MS, old)),
            ));
            out.push((
                true,
                Change::new(i, RowKind::UpdateAfter, row(key, BASE_MS, new)),
            ));
        }
    };
    drive(workers, shape, generate, move |changes, sink| {
        use differential_dataflow::input::Input;
        let scope = changes.scope();
        let (index, peers) = (scope.index(), scope.peers());
        let loaded = share(0..keys, index, peers).map(move |k| {
            let rate = crate::workload::dim_rate(k, 0, keys);
            Change::new(k, RowKind::Insert, row(k, BASE_MS, rate))
        });
        let (input, loaded) = scope.new_collection_from(loaded);
        drop(input);
        let orders = changes.clone().flat_map(|(dim, c)| (!dim).then_some(c));
        let dims = changes.flat_map(|(dim, c)| dim.then_some(c)).concat(loaded);
        let sources = BTreeMap::from([("orders".to_string(), orders), ("dims".to_string(), dims)]);
        let joined = render(scope, sources, ExecutionMode::Incremental, &plan, sink);
        sink.observe(joined.into_table(), integers::<4>);
    })
}
