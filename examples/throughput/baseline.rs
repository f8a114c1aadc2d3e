//! The baselines: plain sequential Rust on one thread, over the same rows in the same order
//! (generated epoch by epoch with the clock stopped, exactly as the workers generate them),
//! producing the same output records into a [`Digest`].

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::Hash;
use std::ops::Range;

use differential_temporal::merge_engine::Row;
use differential_temporal::operators::RowKind;
use differential_temporal::repr::Datum;

use crate::clock::Stopwatch;
use crate::joins::WINDOW_MS;
use crate::report::{kind_code, Digest};
use crate::workload::{self, Shape, Stream};
use crate::{nexmark, windows, Op};

/// A baseline's result.
pub struct Base {
    /// Digest of its output records.
    pub digest: Digest,
    /// Wall-clock and CPU time of the timed part (the fold; generation excluded).
    pub clock: Stopwatch,
    /// Distinct keys it kept state for (for the live-state estimate).
    pub keys: u64,
}

/// Keep-last per key by an order (event time or version), ties to the later row: the rule of
/// dedup keep-last by event time (A7) and of the Fluss `versioned` merge engine (C1).
struct KeepLast<K> {
    kept: HashMap<K, (u64, u64)>,
}

impl<K: Hash + Eq + Copy> KeepLast<K> {
    fn new() -> Self {
        KeepLast {
            kept: HashMap::new(),
        }
    }

    /// Applies row `seq` = `(order, payload)` of `key`; reports each changelog record as
    /// `(key, seq, kind, order, payload)`.
    fn apply(
        &mut self,
        key: K,
        seq: u64,
        row: (u64, u64),
        out: &mut impl FnMut(K, u64, RowKind, (u64, u64)),
    ) {
        match self.kept.entry(key) {
            Entry::Vacant(slot) => {
                slot.insert(row);
                out(key, seq, RowKind::Insert, row);
            }
            Entry::Occupied(mut slot) if row.0 >= slot.get().0 => {
                out(key, seq, RowKind::UpdateBefore, *slot.get());
                out(key, seq, RowKind::UpdateAfter, row);
                slot.insert(row);
            }
            Entry::Occupied(_) => {}
        }
    }
}

/// Feeds the rows of each epoch, made by `generate` untimed, to `fold`, timed.
pub fn timed<D>(
    shape: &Shape,
    generate: impl Fn(Range<u64>, &mut Vec<D>),
    mut fold: impl FnMut(&[D]),
) -> Stopwatch {
    let (mut rows, mut clock) = (Vec::new(), Stopwatch::default());
    for range in shape.epochs() {
        rows.clear();
        generate(range, &mut rows);
        clock.start();
        fold(&rows);
        clock.stop();
    }
    clock
}

/// The version nearest `time` among `versions` (sorted by time), the earlier at equal distance.
fn nearest(versions: &[(i64, u64)], time: i64) -> Option<(i64, u64)> {
    let after = versions.partition_point(|(t, _)| *t < time);
    let before = after.checked_sub(1).map(|b| versions[b]);
    match (before, versions.get(after).copied()) {
        (Some(b), Some(a)) if a.0 - time < time - b.0 => Some(a),
        (Some(b), _) => Some(b),
        (None, a) => a,
    }
}

/// Runs the baseline of `op` over `shape`'s rows.
pub fn run(op: Op, shape: Shape) -> Base {
    let mut digest = Digest::default();
    let keys = shape.keys();
    let keyed = |stream: Stream, keys: u64| {
        move |range: Range<u64>, out: &mut Vec<(u64, workload::KeyedRow)>| {
            out.extend(range.map(|i| (i, workload::event(stream, i, keys))))
        }
    };
    match op {
        Op::DedupKeepLast => {
            let mut state = KeepLast::new();
            let mut out = |k: u64, seq, kind, (order, payload)| {
                digest.add([k, seq, kind_code(kind), order, payload], 1)
            };
            let clock = timed(&shape, keyed(Stream::Dedup, keys), |rows| {
                for (i, e) in rows {
                    state.apply(e.key, *i, (e.time as u64, e.payload), &mut out);
                }
            });
            let keys = state.kept.len() as u64;
            Base {
                digest,
                clock,
                keys,
            }
        }
        Op::VersionedMerge => {
            // The engine's input as it is: typed rows `[key, payload, version]`. Per write: read
            // the version, keep a copy of the row if its version is >= the kept one.
            let mut kept: HashMap<u64, (i64, Row)> = HashMap::new();
            let mut emit = |k: u64, seq, kind, row: &Row| {
                let [_, payload, version] = int_cells(row).map(|v| v.map(|v| v as u64));
                digest.add(
                    [
                        k,
                        seq,
                        kind_code(kind),
                        version.unwrap_or(0),
                        payload.unwrap_or(0),
                    ],
                    1,
                )
            };
            let generate = |range: Range<u64>, out: &mut Vec<(u64, (u64, Row))>| {
                out.extend(range.map(|i| (i, workload::merge_write(i, keys))))
            };
            let clock = timed(&shape, generate, |rows| {
                for (seq, (key, row)) in rows {
                    let [_, _, Some(version)] = int_cells(row) else {
                        continue;
                    };
                    match kept.entry(*key) {
                        Entry::Vacant(slot) => {
                            emit(*key, *seq, RowKind::Insert, row);
                            slot.insert((version, row.clone()));
                        }
                        Entry::Occupied(mut slot) if version >= slot.get().0 => {
                            emit(*key, *seq, RowKind::UpdateBefore, &slot.get().1);
                            emit(*key, *seq, RowKind::UpdateAfter, row);
                            slot.insert((version, row.clone()));
                        }
                        Entry::Occupied(_) => {}
                    }
                }
            });
            Base {
                digest,
                clock,
                keys: kept.len() as u64,
            }
        }
        Op::NexmarkQ18 => {
            let mut state = KeepLast::new();
            let mut out = |(bidder, auction), seq, kind, (date_time, price)| {
                digest.add([bidder, auction, seq, kind_code(kind), date_time, price], 1)
            };
            let generate = |range, out: &mut Vec<_>| workload::bid_share(range, 0, 1, out);
            let clock = timed(&shape, generate, |rows| {
                for (i, b) in rows {
                    let row = (b.date_time, b.price);
                    state.apply((b.bidder, b.auction), *i, row, &mut out);
                }
            });
            let keys = state.kept.len() as u64;
            Base {
                digest,
                clock,
                keys,
            }
        }
        Op::GroupBy | Op::TableGroupBy => {
            // Per key (count, sum); at the end of each epoch, each changed key's previous row
            // retracted and its new row inserted.
            let mut groups: HashMap<u64, (u64, u64)> = HashMap::new();
            let mut changed: HashMap<u64, Option<(u64, u64)>> = HashMap::new();
            let clock = timed(&shape, keyed(Stream::Dedup, keys), |rows| {
                for (_, e) in rows {
                    let group = groups.entry(e.key).or_insert((0, 0));
                    changed
                        .entry(e.key)
                        .or_insert_with(|| (group.0 > 0).then_some(*group));
                    group.0 += 1;
                    group.1 += e.payload;
                }
                for (key, before) in changed.drain() {
                    if let Some((cnt, total)) = before {
                        digest.add([key, cnt, total], -1);
                    }
                    let (cnt, total) = groups[&key];
                    digest.add([key, cnt, total], 1);
                }
            });
            Base {
                digest,
                clock,
                keys: groups.len() as u64,
            }
        }
        Op::TemporalJoinFinal
        | Op::TemporalJoinIncremental
        | Op::TableTemporalJoin
        | Op::TableAsofJoin => {
            let per_key = workload::VERSIONS_PER_KEY as usize;
            let build = build_by_key(&shape);
            let clock = timed(&shape, keyed(Stream::Probe, shape.build_keys()), |rows| {
                for (i, e) in rows {
                    let start = e.key as usize * per_key;
                    let versions = &build[start..start + per_key];
                    let valid = versions.partition_point(|(time, _)| *time <= e.time);
                    if let Some((_, rate)) = valid.checked_sub(1).map(|v| versions[v]) {
                        let kind = kind_code(RowKind::Insert);
                        digest.add([e.key, *i, kind, e.time as u64, e.payload, rate], 1);
                    }
                }
            });
            Base {
                digest,
                clock,
                keys: shape.build_keys(),
            }
        }
        Op::TableIntervalJoin | Op::TableAsofNearest => {
            let per_key = workload::VERSIONS_PER_KEY as usize;
            let build = build_by_key(&shape);
            let interval = op == Op::TableIntervalJoin;
            let clock = timed(&shape, keyed(Stream::Probe, shape.build_keys()), |rows| {
                for (_, e) in rows {
                    let start = e.key as usize * per_key;
                    let versions = &build[start..start + per_key];
                    let mut emit = |(time, rate): (i64, u64)| {
                        digest.add([e.key, e.time as u64, e.payload, time as u64, rate], 1)
                    };
                    if interval {
                        let from = versions.partition_point(|(t, _)| *t < e.time - WINDOW_MS);
                        (versions[from..].iter())
                            .take_while(|(t, _)| *t <= e.time + WINDOW_MS)
                            .for_each(|v| emit(*v));
                    } else if let Some(v) = nearest(versions, e.time) {
                        emit(v);
                    }
                }
            });
            Base {
                digest,
                clock,
                keys: shape.build_keys(),
            }
        }
        Op::TableEquiJoin => {
            // A symmetric hash join: the live orders per key, the rates in an array (loaded
            // untimed, as the dataflow's epoch 0); each change emits the joined rows it changes.
            let mut rates: Vec<u64> = (0..keys).map(|k| workload::dim_rate(k, 0, keys)).collect();
            let mut orders: HashMap<u64, Vec<(i64, u64)>> = HashMap::new();
            let generate = |range: Range<u64>, out: &mut Vec<_>| {
                out.extend(range.map(|i| workload::equi_step(i, keys)))
            };
            let clock = timed(&shape, generate, |steps| {
                for step in steps {
                    let mut emit = |k: u64, (time, payload): (i64, u64), rate, diff| {
                        digest.add([k, time as u64, payload, rate], diff)
                    };
                    let e = step.insert;
                    orders.entry(e.key).or_default().push((e.time, e.payload));
                    emit(e.key, (e.time, e.payload), rates[e.key as usize], 1);
                    if let Some(e) = step.delete {
                        let live = orders
                            .get_mut(&e.key)
                            .expect("deleted orders were inserted");
                        let at = live.iter().position(|o| *o == (e.time, e.payload));
                        live.swap_remove(at.expect("deleted orders are live"));
                        emit(e.key, (e.time, e.payload), rates[e.key as usize], -1);
                    }
                    let (key, old, new) = step.dim;
                    for order in orders.get(&key).into_iter().flatten() {
                        emit(key, *order, old, -1);
                        emit(key, *order, new, 1);
                    }
                    rates[key as usize] = new;
                }
            });
            Base {
                digest,
                clock,
                keys,
            }
        }
        Op::TableTumbleCount => windows::tumble_baseline(shape),
        Op::TableSession => windows::session_baseline(shape),
        Op::NexmarkQ5 | Op::NexmarkQ7 | Op::NexmarkQ8 | Op::NexmarkQ11 => {
            nexmark::baseline(op, shape)
        }
        Op::AsofSnapshot => {
            let at = workload::as_of_time(&shape);
            // Per key, the (time, seq, row) of the version valid at `at` so far.
            let mut valid: HashMap<u64, (i64, u64, Option<u64>)> = HashMap::new();
            let generate = |range: Range<u64>, out: &mut Vec<_>| {
                out.extend(range.map(|i| (i, workload::version(i, keys))))
            };
            let clock = timed(&shape, generate, |rows| {
                for (seq, (key, time, row)) in rows {
                    if *time <= at {
                        let v = valid.entry(*key).or_insert((*time, *seq, *row));
                        if (*time, *seq) >= (v.0, v.1) {
                            *v = (*time, *seq, *row);
                        }
                    }
                }
            });
            let mut clock = clock;
            clock.start();
            for (key, (_, _, row)) in &valid {
                if let Some(row) = row {
                    digest.add([*key, *row], 1);
                }
            }
            clock.stop();
            Base {
                digest,
                clock,
                keys: valid.len() as u64,
            }
        }
    }
}

/// The temporal joins' build side as one array sorted by (key, time): key k's versions are
/// `VERSIONS_PER_KEY` consecutive `(time, rate)` entries (generated in that order), loaded
/// untimed.
fn build_by_key(shape: &Shape) -> Vec<(i64, u64)> {
    (0..workload::build_versions(shape))
        .map(|v| {
            let (_, time, rate) = workload::build_version(v, shape);
            (time, rate)
        })
        .collect()
}

/// The integers in the first `N` cells of a typed row, decoded in one pass over the row (a
/// cell that is not an integer, or is past the row's end, is `None`).
pub fn int_cells<const N: usize>(row: &Row) -> [Option<i64>; N] {
    let mut ints = [None; N];
    for (int, cell) in ints.iter_mut().zip(row.iter()) {
        if let Datum::Int(v) = cell {
            *int = Some(v);
        }
    }
    ints
}
