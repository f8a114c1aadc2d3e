//! Probe throughput of the event-time temporal join, beside a sequential sort-merge as-of join.
//!
//! Workload (fixed seed): 100k keys x 10 versions on the build side, entered at system time 0;
//! 1M probe rows with uniformly random keys and event times (about 5% before the key's first
//! version), entered at system time 1. Measured: the time from entering the probe rows until
//! their results are complete (the build side is loaded before the clock starts), for the
//! incremental and the final mode on 1 and 2 worker threads; the baseline sorts the probe rows
//! and merges them with the sorted versions. Every variant's result (matched rows and a
//! checksum) is asserted equal to the baseline's before timing.
//!
//! Run: `cargo bench --bench temporal_join`. Environment: `TJ_PROBES=10000000` sets the number
//! of probe rows (default 1M); `TJ_ONCE=Final:2` (mode `Incremental`/`Final`, workers) runs
//! that variant once without criterion and prints its result and probe-phase time (for
//! `valgrind --tool=callgrind`, whose instruction counts are repeatable on a loaded machine).
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use differential_dataflow::input::InputSession;
use differential_temporal::operators::temporal_join::{
    arrange_probe, temporal_join, temporal_join_final, JoinConfig, JoinKind, Joined,
};
use differential_temporal::operators::watermark::watermarks;
use differential_temporal::operators::{arrange_versions, Change, RowKind, Version};
use timely::dataflow::ProbeHandle;

const SEED: u64 = 0x5EED_7E3A_0001;
const KEYS: u64 = 100_000;
const VERSIONS_PER_KEY: u64 = 10;
const PROBES: u64 = 1_000_000;

/// The number of probe rows: `TJ_PROBES` or [`PROBES`].
fn probes() -> u64 {
    std::env::var("TJ_PROBES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(PROBES)
}

/// A probe row: (event time, amount).
type Probe = (u64, u64);

/// splitmix64: a small deterministic generator.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

struct Workload {
    build: Vec<(u64, Version<u64, u64>)>,
    probes: Vec<(u64, Change<Probe>)>,
}

fn workload() -> Workload {
    let mut s = SEED;
    let mut build = Vec::with_capacity((KEYS * VERSIONS_PER_KEY) as usize);
    for k in 0..KEYS {
        for j in 0..VERSIONS_PER_KEY {
            let time = 50 + j * 100 + next(&mut s) % 100;
            let seq = build.len() as u64;
            build.push((k, Version::row(time, seq, next(&mut s) % 1_000)));
        }
    }
    let probes = (0..probes())
        .map(|i| {
            let k = next(&mut s) % KEYS;
            let t = next(&mut s) % 1_100;
            (k, Change::new(i, RowKind::Insert, (t, next(&mut s) % 100)))
        })
        .collect();
    Workload { build, probes }
}

/// (matched rows, checksum) of a result row; the checksum is order-independent.
fn digest(seq: u64, rate: u64) -> u64 {
    seq.wrapping_mul(0x9E37_79B9).wrapping_add(rate)
}

/// The baseline: sort the probe rows by (key, time), merge with the sorted versions.
fn sort_merge(w: &Workload) -> (u64, u64) {
    let mut build: Vec<(u64, u64, u64, u64)> = w
        .build
        .iter()
        .map(|(k, v)| (*k, v.time, v.seq, v.row.unwrap_or(0)))
        .collect();
    build.sort_unstable();
    let mut probes: Vec<(u64, u64, u64)> =
        w.probes.iter().map(|(k, c)| (*k, c.row.0, c.seq)).collect();
    probes.sort_unstable();
    let (mut i, mut last) = (0, None);
    let (mut matched, mut sum) = (0u64, 0u64);
    for (k, t, seq) in probes {
        while i < build.len() && (build[i].0, build[i].1) <= (k, t) {
            last = Some(i);
            i += 1;
        }
        if let Some(l) = last.filter(|l| build[*l].0 == k) {
            matched += 1;
            sum = sum.wrapping_add(digest(seq, build[l].3));
        }
    }
    (matched, sum)
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    Incremental,
    Final,
}

/// Runs the join on `workers` threads; returns (matched rows, checksum, probe-phase time).
fn dataflow(w: &Arc<Workload>, workers: usize, mode: Mode) -> (u64, u64, Duration) {
    let w = Arc::clone(w);
    let guards = timely::execute(timely::Config::process(workers), move |worker| {
        let (index, peers) = (worker.index(), worker.peers());
        let mut probe_in = InputSession::<u64, (u64, Change<Probe>), isize>::new();
        let mut build_in = InputSession::<u64, (u64, Version<u64, u64>), isize>::new();
        let probe = ProbeHandle::new();
        let (matched, sum) = (Rc::new(Cell::new(0u64)), Rc::new(Cell::new(0u64)));
        let (m, s) = (Rc::clone(&matched), Rc::clone(&sum));
        worker.dataflow::<u64, _, _>(|scope| {
            let p = probe_in.to_collection(scope);
            let b = build_in.to_collection(scope);
            let joined = match mode {
                Mode::Incremental => {
                    let p = arrange_probe(p, |r: &Probe| r.0, "Probe");
                    temporal_join(
                        p,
                        arrange_versions(b, "Build"),
                        JoinConfig::new(JoinKind::Inner).named("Join"),
                    )
                }
                Mode::Final => {
                    let p_wm = watermarks(
                        p.clone(),
                        |(_, c): &(u64, Change<Probe>)| c.row.0,
                        |m: &u64| *m,
                        "PWm",
                    );
                    let b_wm = watermarks(
                        b.clone(),
                        |(_, v): &(u64, Version<u64, u64>)| v.time,
                        |m: &u64| *m,
                        "BWm",
                    );
                    let b = arrange_versions(b, "Build");
                    temporal_join_final(
                        p,
                        |r: &Probe| r.0,
                        b,
                        (p_wm, b_wm),
                        JoinConfig::new(JoinKind::Inner).named("Join"),
                    )
                    .joined
                }
            };
            joined
                .inspect(
                    move |((_, c), _, r): &((u64, Joined<Probe, u64>), u64, isize)| {
                        m.set(m.get() + *r as u64);
                        s.set(s.get().wrapping_add(
                            digest(c.seq, c.row.1.unwrap_or(0)).wrapping_mul(*r as u64),
                        ));
                    },
                )
                .probe_with(&probe);
        });
        for (i, v) in w.build.iter().enumerate() {
            if i % peers == index {
                build_in.insert(v.clone());
            }
        }
        for t in [1, 2] {
            probe_in.advance_to(t);
            build_in.advance_to(t);
            probe_in.flush();
            build_in.flush();
            if t == 1 {
                worker.step_while(|| probe.less_than(&1));
                for (i, p) in w.probes.iter().enumerate() {
                    if i % peers == index {
                        probe_in.insert(p.clone());
                    }
                }
            }
        }
        let start = Instant::now();
        worker.step_while(|| probe.less_than(&2));
        drop((probe_in, build_in));
        while worker.step() {}
        (matched.get(), sum.get(), start.elapsed())
    })
    .expect("workers start");
    let results: Vec<_> = guards
        .join()
        .into_iter()
        .map(|r| r.expect("worker"))
        .collect();
    let matched = results.iter().map(|r| r.0).sum();
    let sum = results.iter().fold(0u64, |a, r| a.wrapping_add(r.1));
    let time = results.iter().map(|r| r.2).max().unwrap_or_default();
    (matched, sum, time)
}

fn bench(c: &mut Criterion) {
    let w = Arc::new(workload());
    if let Ok(once) = std::env::var("TJ_ONCE") {
        let (mode, workers) = once.split_once(':').expect("TJ_ONCE=Mode:workers");
        let mode = match mode {
            "Incremental" => Mode::Incremental,
            _ => Mode::Final,
        };
        let workers = workers.parse().expect("TJ_ONCE=Mode:workers");
        let (matched, sum, time) = dataflow(&w, workers, mode);
        println!("{mode:?} on {workers} workers: {matched} matched, checksum {sum}, {time:?}");
        return;
    }
    let expected = sort_merge(&w);
    let mut group = c.benchmark_group("temporal_join");
    group.sample_size(10);
    group.throughput(Throughput::Elements(probes()));
    group.bench_function(BenchmarkId::new("sort_merge_baseline", 1), |b| {
        b.iter(|| sort_merge(&w))
    });
    for mode in [Mode::Incremental, Mode::Final] {
        for workers in [1, 2] {
            let (matched, sum, _) = dataflow(&w, workers, mode);
            assert_eq!((matched, sum), expected, "{mode:?} on {workers} workers");
            let id = BenchmarkId::new(format!("{mode:?}"), workers);
            group.bench_function(id, |b| {
                b.iter_custom(|iters| (0..iters).map(|_| dataflow(&w, workers, mode).2).sum())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
