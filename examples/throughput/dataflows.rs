//! The measured dataflows: the library's operators on `workers` timely threads.
//!
//! Driver: each worker generates its share of an epoch's rows (row `i` on worker
//! `i % workers`) with the clock stopped, the workers meet at a barrier, then the clock runs
//! while the worker feeds its rows, advances its input and steps the dataflow until the probe
//! has passed the epoch. Epoch 0 is reserved for state loaded before the clock (the temporal
//! join's build side); the input is closed after the last epoch and the dataflow run to
//! completion (timed: final-mode rows fire then). `seconds` is the largest per-worker total,
//! `cpu_seconds` the workers' on-CPU time in the same sections, summed.
//! Every output record (and every refused row) is folded into a [`Digest`] by the sink.

use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;
use std::sync::{Arc, Barrier};

use differential_dataflow::input::{Input, InputSession};
use differential_dataflow::{Data, ExchangeData, VecCollection};
use differential_temporal::merge_engine::{
    merge_engine, Deletes, MergeEngine, OrderField, OrderType, Row, Versioned,
};
use differential_temporal::operators::dedup::{DedupConfig, DedupOrder, Deduplicate, Keep};
use differential_temporal::operators::group_aggregate::{group_aggregate, GroupFold};
use differential_temporal::operators::keyed_merge::RejectKind;
use differential_temporal::operators::temporal_join::{
    arrange_probe, late_versions, temporal_join, temporal_join_final, JoinConfig, JoinKind, Joined,
};
use differential_temporal::operators::watermark::{watermarks, TimeText};
use differential_temporal::operators::{
    arrange_versions, Change, RowKind, Seq, SysTime, Version, VersionedTable,
};
use timely::dataflow::ProbeHandle;

use crate::baseline::int_cells;
use crate::clock::Stopwatch;
use crate::report::{kind_code, Digest, REFUSED};
use crate::workload::{self, share, Shape, Stream, JITTER_MS};
use crate::{joins, nexmark, relational, windows, Op};

/// A dataflow's result: the digest of its output and the seconds it took.
pub struct Run {
    /// Digest of every output record, from all workers.
    pub digest: Digest,
    /// Wall-clock seconds of the timed part (the slowest worker's).
    pub seconds: f64,
    /// CPU seconds of the timed part, summed over the workers.
    pub cpu_seconds: f64,
}

/// Where a dataflow's outputs go: digested, and tracked by the probe the driver steps on.
pub struct Sink {
    digest: Rc<RefCell<Digest>>,
    probe: ProbeHandle<SysTime>,
}

impl Sink {
    /// Digests every record of `output` as `fields(record)`.
    pub fn observe<R: Data, const N: usize>(
        &self,
        output: VecCollection<'_, SysTime, R>,
        fields: impl Fn(&R) -> [u64; N] + 'static,
    ) {
        let digest = Rc::clone(&self.digest);
        output
            .inspect(move |(r, _, diff)| digest.borrow_mut().add(fields(r), *diff))
            .probe_with(&self.probe);
    }
}

/// Keep-last by event time, Flink `ORDER BY rowtime DESC` (rule A7).
const KEEP_LAST: DedupConfig = DedupConfig::new(Keep::Last, DedupOrder::EventTime);

/// A dedup / probe row: `(key, Change<(event time, payload)>)`.
type Keyed = (u64, Change<(i64, u64)>);

/// Runs `op` on `workers` threads over `shape`'s rows.
pub fn measure(op: Op, workers: usize, shape: Shape) -> Run {
    let keys = shape.keys();
    match op {
        Op::DedupKeepLast => drive(workers, shape, keyed(Stream::Dedup, keys), |rows, sink| {
            let merged = rows.deduplicate(KEEP_LAST, |r: &(i64, u64)| r.0);
            sink.observe(merged.changelog, |(k, c): &Keyed| {
                [*k, c.seq, kind_code(c.kind), c.row.0 as u64, c.row.1]
            });
            sink.observe(merged.rejected, |(_, r)| [REFUSED, r.seq]);
        }),
        Op::VersionedMerge => {
            let generate = move |range, index, peers, out: &mut Vec<(u64, Change<Row>)>| {
                out.extend(share(range, index, peers).map(|i| {
                    let (key, row) = workload::merge_write(i, keys);
                    (key, Change::new(i, RowKind::Insert, row))
                }))
            };
            drive(workers, shape, generate, |writes, sink| {
                let merged = merge_engine(writes, versioned_engine());
                sink.observe(merged.changelog, |(k, c): &(u64, Change<Row>)| {
                    let [_, payload, version] =
                        int_cells(&c.row).map(|v| v.map_or(REFUSED, |v| v as u64));
                    [*k, c.seq, kind_code(c.kind), version, payload]
                });
                // Writes that lose to a higher version are counted as ignored, not refused.
                let refused = (merged.rejected).filter(|(_, r)| r.kind != RejectKind::Ignored);
                sink.observe(refused, |(_, r)| [REFUSED, r.seq]);
            })
        }
        Op::TemporalJoinFinal | Op::TemporalJoinIncremental => {
            let probes = keyed(Stream::Probe, shape.build_keys());
            let final_mode = op == Op::TemporalJoinFinal;
            drive(workers, shape, probes, move |probes, sink| {
                let build = build_side(probes.scope(), shape);
                let joined = if final_mode {
                    let lateness = |m: &i64| m - JITTER_MS;
                    let p_wm =
                        watermarks(probes.clone(), |(_, c): &Keyed| c.row.0, lateness, "PWm");
                    let b_wm = watermarks(
                        build.clone(),
                        |(_, v): &(u64, Version<i64, u64>)| v.time,
                        |m: &i64| *m,
                        "BWm",
                    );
                    // Late build versions are reported, as the command line and the Table
                    // API's final mode do (none is late here).
                    let marks = (p_wm.clone(), b_wm.clone());
                    let late_builds = late_versions(
                        build.clone(),
                        marks.0,
                        marks.1,
                        0,
                        TimeText::default(),
                        "Late",
                    );
                    sink.observe(late_builds, |(_, r)| [REFUSED, r.seq]);
                    let build = arrange_versions(build, "Build");
                    let time = |p: &(i64, u64)| p.0;
                    let join = temporal_join_final(
                        probes,
                        time,
                        build,
                        (p_wm, b_wm),
                        JoinConfig::new(JoinKind::Inner).named("Join"),
                    );
                    sink.observe(join.late, |(_, r)| [REFUSED, r.seq]);
                    join.joined
                } else {
                    let probes = arrange_probe(probes, |p: &(i64, u64)| p.0, "Probe");
                    let build = arrange_versions(build, "Build");
                    temporal_join(
                        probes,
                        build,
                        JoinConfig::new(JoinKind::Inner).named("Join"),
                    )
                };
                sink.observe(joined, |(k, c): &(u64, Joined<(i64, u64), u64>)| {
                    let ((time, payload), rate) = c.row;
                    let rate = rate.unwrap_or(REFUSED);
                    [*k, c.seq, kind_code(c.kind), time as u64, payload, rate]
                });
            })
        }
        Op::GroupBy => {
            let generate = move |range, index, peers, out: &mut Vec<(u64, (Seq, u64))>| {
                out.extend(share(range, index, peers).map(|i| {
                    let e = workload::event(Stream::Dedup, i, keys);
                    (e.key, (i, e.payload))
                }))
            };
            drive(workers, shape, generate, |rows, sink| {
                let counts = group_aggregate(rows, CountSum, "GroupAggregate");
                sink.observe(counts.table, |&(k, cnt, total): &(u64, u64, u64)| {
                    [k, cnt, total]
                });
                sink.observe(counts.rejected, |r| [REFUSED, r.seq]);
            })
        }
        Op::TableGroupBy => relational::group_by(workers, shape),
        Op::TableTemporalJoin => relational::temporal_join(workers, shape, false),
        Op::TableAsofJoin => relational::temporal_join(workers, shape, true),
        Op::TableIntervalJoin => joins::interval_join(workers, shape),
        Op::TableAsofNearest => joins::asof_nearest(workers, shape),
        Op::TableEquiJoin => joins::equi_join(workers, shape),
        Op::TableTumbleCount => windows::tumble_count(workers, shape),
        Op::TableSession => windows::session(workers, shape),
        Op::NexmarkQ5 | Op::NexmarkQ7 | Op::NexmarkQ8 | Op::NexmarkQ11 => {
            nexmark::measure(op, workers, shape)
        }
        Op::AsofSnapshot => {
            let generate = move |range, index, peers, out: &mut Vec<(u64, Version<i64, u64>)>| {
                out.extend(share(range, index, peers).map(|i| {
                    let (key, time, row) = workload::version(i, keys);
                    let version = match row {
                        Some(row) => Version::row(time, i, row),
                        None => Version::delete(time, i),
                    };
                    (key, version)
                }))
            };
            let at = workload::as_of_time(&shape);
            drive(workers, shape, generate, move |versions, sink| {
                let snapshot = VersionedTable::new(versions, "Versions").as_of(at);
                sink.observe(snapshot, |(k, row): &(u64, u64)| [*k, *row]);
            })
        }
        Op::NexmarkQ18 => {
            type Bid = ((u64, u64), Change<(u64, u64)>);
            let generate = |range, index, peers, out: &mut Vec<Bid>| {
                let mut bids = Vec::new();
                workload::bid_share(range, index, peers, &mut bids);
                out.extend(bids.into_iter().map(|(i, b)| {
                    let row = (b.date_time, b.price);
                    ((b.bidder, b.auction), Change::new(i, RowKind::Insert, row))
                }))
            };
            drive(workers, shape, generate, |bids, sink| {
                let merged = bids.deduplicate(KEEP_LAST, |r: &(u64, u64)| r.0);
                sink.observe(merged.changelog, |((bidder, auction), c): &Bid| {
                    let (date_time, price) = c.row;
                    [
                        *bidder,
                        *auction,
                        c.seq,
                        kind_code(c.kind),
                        date_time,
                        price,
                    ]
                });
                // Writes that lose to a higher version are counted as ignored, not refused.
                let refused = (merged.rejected).filter(|(_, r)| r.kind != RejectKind::Ignored);
                sink.observe(refused, |(_, r)| [REFUSED, r.seq]);
            })
        }
    }
}

/// `COUNT(*)` and `SUM(payload)` per key, hand-typed: the fold `table_group_by` renders with
/// accumulators over packed rows.
struct CountSum;

impl GroupFold<u64> for CountSum {
    type Value = u64;
    type State = (u64, u64);
    type Output = (u64, u64, u64);

    fn init(&self) -> (u64, u64) {
        (0, 0)
    }

    fn update(&self, state: &mut (u64, u64), payload: &u64, diff: isize) -> Result<(), String> {
        let diff = diff as i64;
        state.0 = state.0.wrapping_add_signed(diff);
        state.1 = state.1.wrapping_add_signed(*payload as i64 * diff);
        Ok(())
    }

    fn output(&self, key: &u64, &(cnt, total): &(u64, u64)) -> Result<(u64, u64, u64), String> {
        Ok((*key, cnt, total))
    }

    fn order_independent(&self) -> bool {
        true
    }
}

/// The versioned merge engine with the BIGINT version column 2 (`[key, payload, version]`).
fn versioned_engine() -> MergeEngine {
    MergeEngine::Versioned(Versioned {
        version: OrderField {
            column: 2,
            name: "version".into(),
            ty: OrderType::BigInt,
        },
        deletes: Deletes::Ignore,
    })
}

/// The generator of keyed insert rows `(key, Change<(time, payload)>)` of `stream`.
fn keyed(
    stream: Stream,
    keys: u64,
) -> impl Fn(Range<u64>, usize, usize, &mut Vec<Keyed>) + Send + Sync + 'static {
    move |range, index, peers, out| {
        out.extend(share(range, index, peers).map(|i| {
            let e = workload::event(stream, i, keys);
            (e.key, Change::new(i, RowKind::Insert, (e.time, e.payload)))
        }))
    }
}

/// The temporal join's build side, this worker's share, entered at epoch 0 and closed.
fn build_side<'s>(
    scope: timely::dataflow::Scope<'s, SysTime>,
    shape: Shape,
) -> VecCollection<'s, SysTime, (u64, Version<i64, u64>)> {
    let (index, peers) = (scope.index(), scope.peers());
    let versions = share(0..workload::build_versions(&shape), index, peers).map(move |v| {
        let (key, time, rate) = workload::build_version(v, &shape);
        (key, Version::row(time, v, rate))
    });
    let (input, build) = scope.new_collection_from(versions);
    drop(input);
    build
}

/// Runs a dataflow built by `build` over rows made by `generate` (see the module docs).
pub fn drive<D, G, B>(workers: usize, shape: Shape, generate: G, build: B) -> Run
where
    D: ExchangeData,
    G: Fn(Range<u64>, usize, usize, &mut Vec<D>) + Send + Sync + 'static,
    B: for<'s> Fn(VecCollection<'s, SysTime, D>, &Sink) + Send + Sync + 'static,
{
    let barrier = Arc::new(Barrier::new(workers));
    let guards = timely::execute(timely::Config::process(workers), move |worker| {
        let (index, peers) = (worker.index(), worker.peers());
        let mut input = InputSession::<SysTime, D, isize>::new();
        let sink = Sink {
            digest: Rc::new(RefCell::new(Digest::default())),
            probe: ProbeHandle::new(),
        };
        worker.dataflow::<SysTime, _, _>(|scope| build(input.to_collection(scope), &sink));
        input.advance_to(1);
        input.flush();
        worker.step_while(|| sink.probe.less_than(&1));
        let (mut rows, mut clock) = (Vec::new(), Stopwatch::default());
        for (epoch, range) in shape.epochs().enumerate() {
            generate(range, index, peers, &mut rows);
            barrier.wait();
            clock.start();
            for row in rows.drain(..) {
                input.insert(row);
            }
            input.advance_to(epoch as SysTime + 2);
            input.flush();
            worker.step_while(|| sink.probe.less_than(input.time()));
            clock.stop();
        }
        clock.start();
        drop(input);
        while worker.step() {}
        clock.stop();
        (sink.digest.take(), clock)
    })
    .expect("timely workers start");
    let results: Vec<(Digest, Stopwatch)> = guards
        .join()
        .into_iter()
        .map(|r| r.expect("worker finished"))
        .collect();
    Run {
        digest: results
            .iter()
            .fold(Digest::default(), |a, (d, _)| a.merge(*d)),
        seconds: results
            .iter()
            .map(|(_, c)| c.wall.as_secs_f64())
            .fold(0.0, f64::max),
        cpu_seconds: results.iter().map(|(_, c)| c.cpu.as_secs_f64()).sum(),
    }
}
