//! Deduplication by event time, keep-last (Flink `ROW_NUMBER() .. ORDER BY rowtime DESC = 1`,
//! semantics rule A7) and keep-first (`ORDER BY rowtime ASC`, rule A8): our dataflow operator
//! against a plain sequential `HashMap` fold.
//!
//! Workload: 1M append-only rows `(key, (event time, value))` with uniformly random keys
//! (10k keys: ~100 rows per key, mostly replacements; 1M keys: mostly first rows), event times
//! random in `0..1M` (out of order, with ties), fed in 10 system times. Both sides produce the
//! full retract changelog; the dataflow runs on 1 and 2 worker threads.
//!
//! ```text
//! cargo bench --bench dedup
//! cargo bench --bench dedup -- keep_first     # a subset (criterion filter)
//! ```

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use differential_dataflow::input::InputSession;
use differential_temporal::operators::dedup::{DedupConfig, DedupOrder, Deduplicate, Keep};
use differential_temporal::operators::testing::{batch, run_unary};
use differential_temporal::operators::{Change, RowKind, SysTime};

/// Seed of the workload generator.
const SEED: u64 = 0x5eed_0de0_0001;
/// Rows per run.
const ROWS: usize = 1_000_000;
/// System times the rows are cut into.
const EPOCHS: usize = 10;

type Row = (u64, u64); // (event time, value)
type Input = (u64, Change<Row>);

/// The deduplications measured: criterion group name and configuration.
const MODES: [(&str, Keep); 2] = [
    ("dedup_keep_last_event_time", Keep::Last),
    ("dedup_keep_first_event_time", Keep::First),
];

/// SplitMix64: a small deterministic generator.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `ROWS` inserts over `keys` keys, in arrival (`seq`) order.
fn workload(keys: u64) -> Vec<Input> {
    let mut state = SEED ^ keys;
    (0..ROWS as u64)
        .map(|seq| {
            let key = next(&mut state) % keys;
            let time = next(&mut state) % ROWS as u64;
            let value = next(&mut state) % 1000;
            (key, Change::new(seq, RowKind::Insert, (time, value)))
        })
        .collect()
}

/// The baseline: one sequential pass with a `HashMap` of kept rows, emitting the changelog.
/// A row replaces the kept one iff its time is `>=` (keep last) or `<` (keep first).
fn baseline(keep: Keep, rows: &[Input]) -> Vec<Input> {
    let mut kept: HashMap<u64, Row> = HashMap::new();
    let mut out = Vec::with_capacity(rows.len());
    for (key, change) in rows {
        match kept.get_mut(key) {
            None => {
                kept.insert(*key, change.row);
                out.push((*key, change.clone()));
            }
            Some(old) if (keep == Keep::Last) == (change.row.0 >= old.0) => {
                out.push((*key, Change::new(change.seq, RowKind::UpdateBefore, *old)));
                out.push((
                    *key,
                    Change::new(change.seq, RowKind::UpdateAfter, change.row),
                ));
                *old = change.row;
            }
            Some(_) => {}
        }
    }
    out
}

/// Runs the dedup dataflow on `workers` threads over `rows` in `EPOCHS` system times; returns
/// the number of changelog rows it emitted.
fn dataflow(config: DedupConfig, workers: usize, rows: Arc<Vec<Input>>) -> usize {
    let per_epoch = rows.len().div_ceil(EPOCHS);
    let guards = timely::execute(timely::Config::process(workers), move |worker| {
        let (index, peers) = (worker.index(), worker.peers());
        let mut input = InputSession::<SysTime, Input, isize>::new();
        let count = Rc::new(Cell::new(0usize));
        let seen = Rc::clone(&count);
        let probe = worker.dataflow::<SysTime, _, _>(|scope| {
            input
                .to_collection(scope)
                .deduplicate(config, |r: &Row| r.0)
                .changelog
                .inspect_batch(move |_, batch| seen.set(seen.get() + batch.len()))
                .probe()
                .0
        });
        for (epoch, chunk) in rows.chunks(per_epoch).enumerate() {
            for row in chunk.iter().skip(index).step_by(peers) {
                input.insert(row.clone());
            }
            input.advance_to(epoch as SysTime + 1);
            input.flush();
            worker.step_while(|| probe.less_than(input.time()));
        }
        drop(input);
        while worker.step() {}
        count.get()
    })
    .expect("timely workers start");
    guards
        .join()
        .into_iter()
        .map(|r| r.expect("worker finished"))
        .sum()
}

fn bench(c: &mut Criterion) {
    for (group_name, keep) in MODES {
        let config = DedupConfig::new(keep, DedupOrder::EventTime);
        let mut group = c.benchmark_group(group_name);
        group.sample_size(10);
        group.throughput(Throughput::Elements(ROWS as u64));
        for keys in [10_000u64, 1_000_000] {
            let rows = workload(keys);
            // The dataflow's changelog equals the baseline's before anything is timed.
            let mut expected = baseline(keep, &rows);
            expected.sort();
            let cuts: Vec<usize> = (1..EPOCHS).map(|e| e * ROWS / EPOCHS).collect();
            let got = run_unary(2, batch(&rows, &cuts), move |c| {
                c.deduplicate(config, |r: &Row| r.0).changelog
            });
            let got: Vec<Input> = got.into_iter().map(|(d, _, _)| d).collect();
            assert!(got == expected, "dataflow and baseline differ");
            let emitted = expected.len();
            let rows = Arc::new(rows);

            group.bench_with_input(
                BenchmarkId::new("hashmap_baseline", keys),
                &rows,
                |b, rows| b.iter(|| assert_eq!(baseline(keep, rows).len(), emitted)),
            );
            for workers in [1, 2] {
                let id = BenchmarkId::new(format!("dataflow_{workers}w"), keys);
                group.bench_with_input(id, &rows, |b, rows| {
                    b.iter(|| assert_eq!(dataflow(config, workers, Arc::clone(rows)), emitted))
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
