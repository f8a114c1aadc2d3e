//! Merge engines: writes per second of each engine as a dataflow (`merge_engine` over
//! `keyed_merge`, 1 and 2 worker threads) beside a sequential `HashMap` fold of the same rule,
//! at 1M writes over 10k and 1M keys.
//!
//! ```text
//! cargo bench --bench merge_engines                 # the full matrix
//! cargo bench --bench merge_engines -- 10k_keys     # a subset (criterion filter)
//! MERGE_BENCH_WRITES=200000 cargo bench --bench merge_engines
//! ```
//!
//! Input: writes `[key, value, version]` (text cells, as the CSV layer gives them) from a fixed
//! seed; versions are random, so about half of the versioned / sequenced writes lose. Before
//! timing, each configuration's final table is asserted equal to the baseline's.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use differential_temporal::merge_engine::{merge_engine, KeyState, MergeEngine, Row};
use differential_temporal::merge_options::{merge_engine_from_options, parse_option};
use differential_temporal::operators::keyed_merge::MergeRule;
use differential_temporal::operators::{Change, RowKind};
use differential_temporal::row::pack_cells;
use timely::dataflow::ProbeHandle;

const SEED: u64 = 0x5eed_da7a_2026_1129;
/// Writes entered per system time (epoch).
const EPOCH: usize = 100_000;

/// The engines measured, as users configure them.
const ENGINES: [(&str, &[&str]); 5] = [
    (
        "versioned",
        &[
            "table.merge-engine=versioned",
            "table.merge-engine.versioned.ver-column=ts",
        ],
    ),
    ("first_row", &["table.merge-engine=first_row"]),
    (
        "deduplicate",
        &["merge-engine=deduplicate", "sequence.field=ts"],
    ),
    ("partial-update", &["merge-engine=partial-update"]),
    (
        "aggregation",
        &[
            "merge-engine=aggregation",
            "fields.v.aggregate-function=sum",
            "fields.ts.aggregate-function=max",
        ],
    ),
];

type Write = (u64, Change<Row>);

/// `n` insert writes over `keys` keys: `[key, value, version]`, value and version random.
fn workload(n: usize, keys: u64) -> Vec<Write> {
    let mut x = SEED;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|seq| {
            let key = next() % keys;
            let cells = [key, next() % 100, next() % 1_000_000].map(|v| v.to_string());
            let row = pack_cells(cells.iter().map(|c| Some(c.as_str())));
            (key, Change::new(seq as u64, RowKind::Insert, row))
        })
        .collect()
}

fn engine(options: &[&str]) -> MergeEngine {
    let options: Vec<_> = options.iter().map(|o| parse_option(o).unwrap()).collect();
    let header: Vec<String> = ["k", "v", "ts"].map(String::from).to_vec();
    let schema = differential_temporal::repr::Schema::strings(&header);
    merge_engine_from_options(&options, &schema, &["k".to_string()]).unwrap()
}

/// The baseline: a sequential fold of the same rule into a `HashMap`; returns the final table.
fn baseline(engine: &MergeEngine, writes: &[Write]) -> HashMap<u64, Row> {
    let mut state: HashMap<u64, KeyState> = HashMap::new();
    let mut out = Vec::new();
    for (key, change) in writes {
        let mut slot = state.remove(key);
        // Refusals (ignored later rows of first_row) leave the state unchanged.
        let _refused = engine.merge(&mut slot, change.kind, &change.row, &mut out);
        out.clear();
        if let Some(s) = slot {
            state.insert(*key, s);
        }
    }
    state
        .into_iter()
        .filter_map(|(k, s)| Some((k, s.row?)))
        .collect()
}

/// Runs the dataflow on `workers` threads; with `collect`, returns the final table.
fn dataflow(
    engine: &MergeEngine,
    writes: &Arc<Vec<Write>>,
    workers: usize,
    collect: bool,
) -> HashMap<u64, Row> {
    let (engine, writes) = (engine.clone(), Arc::clone(writes));
    let guards = timely::execute(timely::Config::process(workers), move |worker| {
        let (index, peers) = (worker.index(), worker.peers());
        let mut input = differential_dataflow::input::InputSession::<u64, Write, isize>::new();
        let probe = ProbeHandle::new();
        let table = std::rc::Rc::new(std::cell::RefCell::new(HashMap::new()));
        let sink = std::rc::Rc::clone(&table);
        let engine = engine.clone();
        worker.dataflow::<u64, _, _>(|scope| {
            merge_engine(input.to_collection(scope), engine)
                .changelog
                .inspect(move |((k, c), _, _): &((u64, Change<Row>), u64, isize)| {
                    if collect {
                        let mut t = sink.borrow_mut();
                        if c.kind.is_accumulate() {
                            t.insert(*k, c.row.clone());
                        } else if c.kind == RowKind::Delete {
                            t.remove(k);
                        }
                    }
                })
                .probe_with(&probe);
        });
        for (epoch, chunk) in writes.chunks(EPOCH).enumerate() {
            for (p, w) in chunk.iter().enumerate() {
                if p % peers == index {
                    input.insert(w.clone());
                }
            }
            input.advance_to(epoch as u64 + 1);
            input.flush();
            worker.step_while(|| probe.less_than(input.time()));
        }
        drop(input);
        while worker.step() {}
        table.take()
    })
    .expect("timely workers start");
    guards
        .join()
        .into_iter()
        .flat_map(|r| r.expect("worker finished"))
        .collect()
}

fn bench(c: &mut Criterion) {
    let n: usize = std::env::var("MERGE_BENCH_WRITES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let mut group = c.benchmark_group("merge_engines");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(n as u64));
    for (keys, label) in [(10_000u64, "10k_keys"), (1_000_000, "1M_keys")] {
        let writes = Arc::new(workload(n, keys));
        for (name, options) in ENGINES {
            let engine = engine(options);
            let expected = baseline(&engine, &writes);
            for workers in [1, 2] {
                assert_eq!(
                    dataflow(&engine, &writes, workers, true),
                    expected,
                    "{name} {label} {workers}w"
                );
            }
            let id = |variant: &str| BenchmarkId::new(format!("{name}/{label}"), variant);
            group.bench_function(id("hashmap_baseline"), |b| {
                b.iter(|| baseline(&engine, &writes).len())
            });
            for workers in [1, 2] {
                group.bench_function(id(&format!("dataflow_{workers}w")), |b| {
                    b.iter(|| dataflow(&engine, &writes, workers, false).len())
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
