//! The relational layer against hand-written Rust over the same data.
//!
//! * `expr/filter_project`: `WHERE a > 10 AND c < 500.0` then `a * 2 + b, c * 1.5` over
//!   `(a BIGINT, b BIGINT, c DOUBLE, s STRING)` rows: compiled expressions over packed rows
//!   (decode, evaluate, pack each output row) against a `Vec` of structs and the same
//!   arithmetic written out.
//! * `group_by/count`: `SELECT k, COUNT(*) GROUP BY k` (100k keys) as a Table API plan rendered
//!   on 1 and 2 timely workers (input fed in one epoch, run to completion) against a sequential
//!   `HashMap` fold.
//!
//! Rows per iteration: `TABLE_BENCH_ROWS` (default 10M, as the issue asks; 1M runs ten times
//! faster for a quick look).
//!
//! ```text
//! cargo bench --bench table
//! TABLE_BENCH_ROWS=1000000 cargo bench --bench table -- --quick
//! ```

use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use differential_dataflow::input::InputSession;
use differential_temporal::expr::{bind_scalar, col, count_star, lit, FunctionRegistry, RowArena};
use differential_temporal::operators::{Change, RowKind, SysTime};
use differential_temporal::render::{ExecutionMode, RenderContext};
use differential_temporal::repr::{DataType, Datum, DatumVec, Row, Schema};
use differential_temporal::table::TableEnv;
use timely::dataflow::ProbeHandle;

/// Keys of the GROUP BY.
const KEYS: i64 = 100_000;

fn rows() -> usize {
    std::env::var("TABLE_BENCH_ROWS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000_000)
}

/// The same fields as a struct.
struct Plain {
    a: i64,
    b: i64,
    c: f64,
    s: String,
}

fn plain(n: usize) -> Vec<Plain> {
    (0..n as i64)
        .map(|i| Plain {
            a: i % 100,
            b: i * 7,
            c: (i % 1000) as f64,
            s: format!("s{}", i % 17),
        })
        .collect()
}

fn schema() -> Schema {
    Schema::builder()
        .column("a", DataType::BigInt.not_null())
        .column("b", DataType::BigInt.not_null())
        .column("c", DataType::Double.not_null())
        .column("s", DataType::STRING.not_null())
        .build()
        .unwrap()
}

fn filter_project(c: &mut Criterion) {
    let n = rows();
    let data = plain(n);
    let packed: Vec<Row> = data
        .iter()
        .map(|p| {
            Row::pack([
                Datum::Int(p.a),
                Datum::Int(p.b),
                Datum::Float(p.c),
                Datum::Str(&p.s),
            ])
        })
        .collect();
    let schema = schema();
    let registry = FunctionRegistry::new();
    let bind = |e| bind_scalar(&e, &schema, &registry).unwrap().compile();
    let predicate = bind(col("a").gt(lit(10i64)).and(col("c").lt(lit(500.0f64))));
    let outputs = [
        bind(col("a").mul(lit(2i64)).add(col("b"))),
        bind(col("c").mul(lit(1.5f64))),
    ];

    let mut group = c.benchmark_group("expr");
    group
        .sample_size(10)
        .throughput(Throughput::Elements(n as u64));
    group.bench_function("filter_project/compiled", |b| {
        let (mut datums, arena) = (DatumVec::new(), RowArena::new());
        b.iter(|| {
            let mut out = Vec::with_capacity(n);
            for row in &packed {
                let datums = datums.borrow_with(row);
                if predicate.eval(&datums, &arena).unwrap() != Datum::Bool(true) {
                    continue;
                }
                let mut projected = Row::new();
                let mut packer = projected.packer();
                for e in &outputs {
                    packer.push(e.eval(&datums, &arena).unwrap());
                }
                out.push(projected);
            }
            out
        })
    });
    group.bench_function("filter_project/hand_written", |b| {
        b.iter(|| {
            black_box(&data)
                .iter()
                .filter(|p| p.a > 10 && p.c < 500.0)
                .map(|p| (p.a * 2 + p.b, p.c * 1.5))
                .collect::<Vec<_>>()
        })
    });
    group.finish();
}

/// `SELECT k, COUNT(*) GROUP BY k` on `workers` timely workers over `input` (dealt
/// round-robin), in one epoch; returns the groups counted and the time taken.
fn group_by_dataflow(workers: usize, input: Arc<Vec<Row>>) -> (usize, Duration) {
    let env = TableEnv::new();
    let schema = Schema::builder()
        .column("k", DataType::BigInt.not_null())
        .build()
        .unwrap();
    env.register_collection("t", schema, false).unwrap();
    let plan = env
        .from("t")
        .group_by([col("k")])
        .select([col("k"), count_star().alias("cnt")])
        .plan()
        .unwrap()
        .clone();
    let start = Instant::now();
    let groups = timely::execute(timely::Config::process(workers), move |worker| {
        let (index, peers) = (worker.index(), worker.peers());
        let mut session = InputSession::<SysTime, Change<Row>, isize>::new();
        let probe = ProbeHandle::new();
        let count = std::rc::Rc::new(std::cell::Cell::new(0usize));
        let seen = std::rc::Rc::clone(&count);
        worker.dataflow::<SysTime, _, _>(|scope| {
            let sources = BTreeMap::from([("t".to_string(), session.to_collection(scope))]);
            let mut ctx = RenderContext::new(scope, sources, ExecutionMode::Incremental);
            ctx.render(&plan)
                .unwrap()
                .into_table()
                .inspect(move |(_, _, diff)| seen.set((seen.get() as isize + diff) as usize))
                .probe_with(&probe);
        });
        for (i, row) in input.iter().enumerate().skip(index).step_by(peers) {
            session.insert(Change::new(i as u64, RowKind::Insert, row.clone()));
        }
        session.advance_to(1);
        session.flush();
        worker.step_while(|| probe.less_than(session.time()));
        count.get()
    })
    .unwrap()
    .join()
    .into_iter()
    .map(|r| r.unwrap())
    .sum();
    (groups, start.elapsed())
}

fn group_by(c: &mut Criterion) {
    let n = rows();
    let keys: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % KEYS).collect();
    let input = Arc::new(
        keys.iter()
            .map(|k| Row::pack_one(Datum::Int(*k)))
            .collect::<Vec<_>>(),
    );

    let mut group = c.benchmark_group("group_by");
    group
        .sample_size(10)
        .throughput(Throughput::Elements(n as u64));
    for workers in [1, 2] {
        group.bench_with_input(
            BenchmarkId::new("count/table", workers),
            &workers,
            |b, &w| {
                b.iter_custom(|iters| {
                    (0..iters)
                        .map(|_| {
                            let (groups, took) = group_by_dataflow(w, Arc::clone(&input));
                            assert_eq!(groups as i64, KEYS.min(n as i64));
                            took
                        })
                        .sum()
                })
            },
        );
    }
    group.bench_function("count/hash_map", |b| {
        b.iter(|| {
            let mut counts: HashMap<i64, u64> = HashMap::new();
            for k in black_box(&keys) {
                *counts.entry(*k).or_insert(0) += 1;
            }
            counts.len()
        })
    });
    group.finish();
}

criterion_group!(benches, filter_project, group_by);
criterion_main!(benches);
