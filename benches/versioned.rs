//! Versioned table: build + snapshot as of one event time, against a sequential baseline.
//!
//! Compares, over 1M versions (random event times, arrival order = `seq`, 10% deletes) cut into
//! 10 epochs, with 10k keys (100 versions a key) and with 1M keys (about one version a key):
//!
//! * `dataflow/1` and `dataflow/2`: `VersionedTable::new(..).as_of(t)` on 1 and 2 worker
//!   threads, exact at every epoch (the output is collected and consolidated);
//! * `btreemap`: a sequential `BTreeMap` per key (event time -> winning version), then the
//!   snapshot as of `t` by one range lookup per key, computed once at the end.
//!
//! Both give the same snapshot (checked before timing). Throughput is versions per second.
//!
//! Run: `cargo bench --bench versioned` (add `-- --quick` for a shorter run).

use std::collections::BTreeMap;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use differential_temporal_operators::testing::{batch, content_at, run_unary, Epoch};
use differential_temporal_operators::versioned::VersionedTable;
use differential_temporal_operators::{Seq, Version};

/// Fixed seed of the workload generator.
const SEED: u64 = 0x5eed_cafe_f00d_0001;
/// Versions per workload.
const VERSIONS: usize = 1_000_000;
/// Epochs the versions are cut into.
const EPOCHS: usize = 10;
/// The event time the snapshot is read as of (event times are `0..VERSIONS`).
const AS_OF: i64 = VERSIONS as i64 / 2;

/// splitmix64: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// `VERSIONS` versions over `keys` keys: random event times, 10% deletes, seq = position.
fn workload(keys: u64) -> Vec<(u64, Version<i64, u64>)> {
    let mut rng = Rng(SEED ^ keys);
    (0..VERSIONS)
        .map(|seq| {
            let key = rng.next() % keys;
            let time = (rng.next() % VERSIONS as u64) as i64;
            let seq = seq as Seq;
            let version = if rng.next().is_multiple_of(10) {
                Version::delete(time, seq)
            } else {
                Version::row(time, seq, rng.next())
            };
            (key, version)
        })
        .collect()
}

/// The workload cut into `EPOCHS` epochs of equal size.
fn epochs(versions: &[(u64, Version<i64, u64>)]) -> Vec<Epoch<(u64, Version<i64, u64>)>> {
    let cuts: Vec<usize> = (1..EPOCHS).map(|i| i * versions.len() / EPOCHS).collect();
    batch(versions, &cuts)
}

/// The dataflow: versioned table and snapshot, content at the last epoch.
fn dataflow(workers: usize, epochs: Vec<Epoch<(u64, Version<i64, u64>)>>) -> Vec<(u64, u64)> {
    let last = (epochs.len() - 1) as u64;
    let out = run_unary(workers, epochs, |v| {
        VersionedTable::new(v, "T").as_of(AS_OF)
    });
    content_at(&out, last)
        .into_iter()
        .map(|(row, diff)| {
            assert_eq!(diff, 1);
            row
        })
        .collect()
}

/// The baseline: per key, event time -> (seq, row) of the greatest seq; then one range lookup.
fn btreemap(versions: &[(u64, Version<i64, u64>)]) -> Vec<(u64, u64)> {
    let mut table: BTreeMap<u64, BTreeMap<i64, (Seq, Option<u64>)>> = BTreeMap::new();
    for (key, v) in versions {
        let slot = table
            .entry(*key)
            .or_default()
            .entry(v.time)
            .or_insert((v.seq, None));
        if v.seq >= slot.0 {
            *slot = (v.seq, v.row);
        }
    }
    table
        .iter()
        .filter_map(|(k, times)| match times.range(..=AS_OF).next_back() {
            Some((_, (_, Some(row)))) => Some((*k, *row)),
            _ => None,
        })
        .collect()
}

fn versioned(c: &mut Criterion) {
    let mut group = c.benchmark_group("versioned_as_of");
    group.sample_size(10);
    group.throughput(Throughput::Elements(VERSIONS as u64));
    for keys in [10_000u64, 1_000_000] {
        let versions = workload(keys);
        let split = epochs(&versions);
        let expected = btreemap(&versions);
        assert_eq!(dataflow(2, split.clone()), expected, "dataflow = baseline");
        group.bench_with_input(BenchmarkId::new("btreemap", keys), &versions, |b, vs| {
            b.iter(|| btreemap(vs))
        });
        for workers in [1, 2] {
            let id = BenchmarkId::new(format!("dataflow/{workers}"), keys);
            group.bench_with_input(id, &split, |b, split| {
                b.iter_batched(
                    || split.clone(),
                    |s| dataflow(workers, s),
                    BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(benches, versioned);
criterion_main!(benches);
