//! The relational forms of the measured operations: the same workloads as packed [`Row`]s
//! through a plan built with the Table API and rendered with [`RenderContext`], against the
//! same baselines as their hand-typed forms.
//!
//! * `table_group_by`: `events(k BIGINT, ts TIMESTAMP(3), payload BIGINT)` (the dedup
//!   workload's rows), `SELECT k, COUNT(*) AS cnt, SUM(payload) AS total GROUP BY k`.
//! * `table_temporal_join`: probes `(k, ts, payload)` with rowtime `ts` (watermark delay
//!   5 s) joined `FOR SYSTEM_TIME AS OF ts` with `rates(k, ts, rate)` (primary key `k`,
//!   rowtime `ts`), INNER, final mode: the workload of `temporal_join_final`.
//! * `table_asof_join`: the same probes and rates, `probes ASOF JOIN rates MATCH_CONDITION
//!   (ts >= ts0) ON k = k0`, incremental mode (the ASOF join has no other).

use std::collections::BTreeMap;
use std::ops::Range;

use differential_dataflow::VecCollection;
use differential_temporal::expr::{col, count_star, Expr};
use differential_temporal::operators::keyed_merge::Rejected;
use differential_temporal::operators::{Change, RowKind, SysTime};
use differential_temporal::plan::{JoinKind, RelExpr};
use differential_temporal::render::{Collection, ExecutionMode, RenderContext};
use differential_temporal::repr::{DataType, Datum, IntPacker, Row, Schema};
use differential_temporal::table::TableEnv;
use timely::dataflow::Scope;

use crate::dataflows::{drive, Run, Sink};
use crate::report::{kind_code, text, REFUSED};
use crate::workload::{self, share, Shape, Stream, JITTER_MS};

/// `(k BIGINT, ts TIMESTAMP(3), <value> BIGINT)` with rowtime `ts` delayed by `delay_ms`, and
/// primary key `k` if `keyed`.
pub fn schema(value: &str, delay_ms: i64, keyed: bool) -> Schema {
    let mut builder = Schema::builder()
        .column("k", DataType::BigInt.not_null())
        .column("ts", DataType::Timestamp(3).not_null())
        .column(value, DataType::BigInt.not_null())
        .rowtime("ts", delay_ms);
    if keyed {
        builder = builder.primary_key(["k"]);
    }
    builder.build().expect("a valid schema")
}

/// The row `(k, ts, value)`, packed on the stack as integers and a timestamp (what a source
/// that knows its schema does), not matched as datums.
pub fn row(k: u64, time_ms: i64, value: u64) -> Row {
    let mut packer = IntPacker::new();
    packer.push_int(k as i64);
    packer.push_timestamp_millis(time_ms);
    packer.push_int(value as i64);
    packer.finish()
}

/// The integers of `row`'s columns (a timestamp as its milliseconds, a string as its
/// [`text`] hash).
pub fn integers<const N: usize>(row: &Row) -> [u64; N] {
    let mut out = [REFUSED; N];
    let mut datums = row.iter();
    for slot in &mut out {
        let Some(datum) = datums.next() else {
            break;
        };
        *slot = match datum {
            Datum::Int(v) => v as u64,
            Datum::Timestamp(ts) => ts.millis as u64,
            Datum::Str(s) => text(s),
            _ => REFUSED,
        };
    }
    out
}

/// Builds `query` over a fresh environment with `tables` registered as collections, append-only
/// unless their flag says they are changelogs.
pub fn plan(
    tables: &[(&str, Schema, bool)],
    query: impl Fn(&TableEnv) -> differential_temporal::table::Table,
) -> RelExpr {
    let env = TableEnv::new();
    for (name, schema, changelog) in tables {
        env.register_collection(name, schema.clone(), *changelog)
            .expect("distinct names");
    }
    query(&env).plan().expect("the query binds").clone()
}

/// Renders `plan` over `sources` in `mode`; the refused rows are digested as `[REFUSED, seq]`.
pub fn render<'s>(
    scope: Scope<'s, SysTime>,
    sources: BTreeMap<String, VecCollection<'s, SysTime, Change<Row>>>,
    mode: ExecutionMode,
    plan: &RelExpr,
    sink: &Sink,
) -> Collection<'s> {
    let mut ctx = RenderContext::new(scope, sources, mode);
    let output = ctx.render(plan).expect("the plan renders");
    let refused = differential_dataflow::collection::concatenate(scope, ctx.refused);
    sink.observe(refused, |r: &Rejected| [REFUSED, r.seq]);
    output
}

/// The generator of `stream`'s keyed rows as `+I (k, ts, payload)` changes.
pub fn events(
    stream: Stream,
    keys: u64,
) -> impl Fn(Range<u64>, usize, usize, &mut Vec<Change<Row>>) + Send + Sync + 'static {
    move |range, index, peers, out| {
        out.extend(share(range, index, peers).map(|i| {
            let e = workload::event(stream, i, keys);
            Change::new(i, RowKind::Insert, row(e.key, e.time, e.payload))
        }))
    }
}

/// `table_group_by` (see the module docs).
pub fn group_by(workers: usize, shape: Shape) -> Run {
    let keys = shape.keys();
    let plan = plan(&[("events", schema("payload", 0, false), false)], |env| {
        env.from("events").group_by([col("k")]).select([
            col("k"),
            count_star().alias("cnt"),
            col("payload").sum().alias("total"),
        ])
    });
    drive(
        workers,
        shape,
        events(Stream::Dedup, keys),
        move |events, sink| {
            let scope = events.scope();
            let sources = BTreeMap::from([("events".to_string(), events)]);
            let table = render(scope, sources, ExecutionMode::Incremental, &plan, sink);
            // Each group's row `(k, cnt, total)`, inserted and retracted as it changes.
            sink.observe(table.into_table(), integers::<3>);
        },
    )
}

/// `table_temporal_join`, or with `asof` `table_asof_join` (see the module docs).
pub fn temporal_join(workers: usize, shape: Shape, asof: bool) -> Run {
    let probe_keys = shape.build_keys();
    let on: Expr = col("k").eq(col("k0"));
    let plan = plan(
        &[
            ("probes", schema("payload", JITTER_MS, false), false),
            ("rates", schema("rate", 0, true), false),
        ],
        |env| {
            let (probes, rates) = (env.from("probes"), env.from("rates"));
            let joined = match asof {
                true => {
                    let on = on.clone().and(col("ts").ge(col("ts0")));
                    probes.asof_join(&rates, on, JoinKind::Inner, None)
                }
                false => probes.temporal_join(&rates, on.clone(), JoinKind::Inner),
            };
            joined.select([col("k"), col("ts"), col("payload"), col("rate")])
        },
    );
    let mode = match asof {
        true => ExecutionMode::Incremental,
        false => ExecutionMode::Final,
    };
    drive(
        workers,
        shape,
        events(Stream::Probe, probe_keys),
        move |probes, sink| {
            let scope = probes.scope();
            let rates = build_side(scope, shape);
            let sources =
                BTreeMap::from([("probes".to_string(), probes), ("rates".to_string(), rates)]);
            let joined = render(scope, sources, mode, &plan, sink);
            // The digest of the hand-typed join: key, seq, kind, time, payload, rate.
            sink.observe(joined.into_changelog(), |c: &Change<Row>| {
                let [k, time, payload, rate] = integers::<4>(&c.row);
                [k, c.seq, kind_code(c.kind), time, payload, rate]
            });
        },
    )
}

/// The rates, this worker's share, entered at epoch 0 (as the hand-typed join's build side).
pub fn build_side<'s>(
    scope: Scope<'s, SysTime>,
    shape: Shape,
) -> VecCollection<'s, SysTime, Change<Row>> {
    use differential_dataflow::input::Input;
    let (index, peers) = (scope.index(), scope.peers());
    let versions = share(0..workload::build_versions(&shape), index, peers).map(move |v| {
        let (key, time, rate) = workload::build_version(v, &shape);
        Change::new(v, RowKind::Insert, row(key, time, rate))
    });
    let (input, rates) = scope.new_collection_from(versions);
    drop(input);
    rates
}
