//! Sequential models of the temporal joins, for tests and benchmarks.
//!
//! Inputs are scripts of epochs, as for [`crate::testing::run_binary`]: `probe[s]` holds the
//! `((key, change), diff)` probe updates and `build[s]` the `((key, version), diff)` build
//! updates entered at system time `s`. The models recompute everything from scratch, so they
//! are slow and obviously right.

use std::collections::{BTreeMap, BTreeSet};

use differential_dataflow::consolidation::consolidate_updates;

use super::{join_row, JoinConfig, JoinKey, JoinKind, Joined, Residual};
use crate::testing::{Epoch, Updates};
use crate::watermark::Watermark;
use crate::{Change, Seq, SysTime, Version};

/// The version of `key` valid at `t` in `build` (greatest `(time, seq)` with `time <= t`, ties
/// by the smallest row), as `Some(row or None for a delete)`, or `None` if there is none (always
/// for a NULL key, see [`JoinKey`]).
pub fn version_at<'a, K: Ord + JoinKey, E: Ord, B: Ord>(
    build: &'a BTreeMap<(K, Version<E, B>), isize>,
    key: &K,
    t: &E,
) -> Option<&'a Option<B>> {
    build
        .iter()
        .filter(|((k, v), c)| k == key && !k.is_null() && v.time <= *t && **c != 0)
        .map(|((_, v), _)| v)
        .max_by(|a, b| {
            (&a.time, a.seq)
                .cmp(&(&b.time, b.seq))
                .then(b.row.cmp(&a.row))
        })
        .map(|v| &v.row)
}

/// The temporal join of accumulated probe rows and build versions (rules B3-B5, B8).
pub fn join_snapshot<K, E, P, B>(
    probe: &BTreeMap<(K, Change<P>), isize>,
    build: &BTreeMap<(K, Version<E, B>), isize>,
    probe_time: &impl Fn(&P) -> E,
    kind: JoinKind,
    residual: &impl Fn(&P, &B) -> bool,
) -> BTreeMap<(K, Joined<P, B>), isize>
where
    K: Ord + Clone + JoinKey,
    E: Ord,
    P: Ord + Clone,
    B: Ord + Clone,
{
    let mut out = BTreeMap::new();
    for ((k, change), count) in probe.iter().filter(|(_, c)| **c != 0) {
        let version = version_at(build, k, &probe_time(&change.row));
        if let Some(row) = join_row(kind, residual, change, version) {
            *out.entry((k.clone(), row)).or_insert(0) += count;
        }
    }
    out.retain(|_, c| *c != 0);
    out
}

fn accumulate<D: Ord + Clone>(state: &mut BTreeMap<D, isize>, epoch: Option<&Epoch<D>>) {
    for (d, r) in epoch.into_iter().flatten() {
        *state.entry(d.clone()).or_insert(0) += r;
    }
    state.retain(|_, c| *c != 0);
}

/// The incremental join's output: at every system time, the join of everything received so far
/// (as consolidated, sorted updates, comparable with [`crate::testing::run_binary`]'s output).
pub fn incremental<K, E, P, B>(
    probe: &[Epoch<(K, Change<P>)>],
    build: &[Epoch<(K, Version<E, B>)>],
    probe_time: impl Fn(&P) -> E,
    kind: JoinKind,
    residual: impl Fn(&P, &B) -> bool,
) -> Updates<(K, Joined<P, B>)>
where
    K: Ord + Clone + JoinKey,
    E: Ord + Clone,
    P: Ord + Clone,
    B: Ord + Clone,
{
    let (mut p, mut b) = (BTreeMap::new(), BTreeMap::new());
    let mut before: BTreeMap<_, isize> = BTreeMap::new();
    let mut out = Vec::new();
    for s in 0..probe.len().max(build.len()) {
        accumulate(&mut p, probe.get(s));
        accumulate(&mut b, build.get(s));
        let after = join_snapshot(&p, &b, &probe_time, kind, &residual);
        for (row, c) in &after {
            out.push((row.clone(), s as SysTime, *c));
        }
        for (row, c) in before {
            out.push((row, s as SysTime, -c));
        }
        before = after;
    }
    consolidate_updates(&mut out);
    out
}

/// The final-mode join's output: `(joined rows, late probe rows as (key, seq))`.
///
/// In the pair `(probe_wm, build_wm)`, `probe_wm[s]` / `build_wm[s]` are the watermark
/// candidates observed at epoch `s` (their maximum counts); `config` gives the kind, residual
/// and retention, as for [`temporal_join_final`](super::temporal_join_final). At each epoch `s`: the combined watermark `W(s)` (maximum candidate of the
/// epochs `< s`, min over the two inputs) fires the buffered probe rows with time `< W(s)`
/// against the build versions of epochs `< s`; then the probe rows of epoch `s` with time
/// `< W(s)` are late and the others buffered. The rest fire at the closing epoch: the number
/// of epochs of the script (where [`crate::testing::run_binary`] closes its inputs), or the
/// epoch after the last candidate if that is later.
///
/// With a retention (rule B13, see [`crate::retention`]): the probe rows buffered at `s` and
/// the build versions inserted at `s` touch their keys at their event times; at each epoch whose
/// `W(s)` is greater than the last one, after the firing, every key whose access time's expiry
/// `W(s)` has passed expires: the versions it holds then are hidden from later firings.
pub fn final_mode<K, E, P, B, R>(
    probe: &[Epoch<(K, Change<P>)>],
    build: &[Epoch<(K, Version<E, B>)>],
    (probe_wm, build_wm): (&[Vec<Watermark<E>>], &[Vec<Watermark<E>>]),
    probe_time: impl Fn(&P) -> E,
    config: &JoinConfig<R, E>,
) -> (Updates<(K, Joined<P, B>)>, Updates<(K, Seq)>)
where
    K: Ord + Clone + JoinKey,
    E: Ord + Clone,
    P: Ord + Clone,
    B: Ord + Clone,
    R: Residual<P, B>,
{
    let (kind, retention) = (config.kind(), config.retained());
    let residual = |p: &P, b: &B| config.holds(p, b);
    let last_wm = probe_wm.len().max(build_wm.len());
    let end = (0..last_wm)
        .filter(|s| {
            probe_wm.get(*s).is_some_and(|v| !v.is_empty())
                || build_wm.get(*s).is_some_and(|v| !v.is_empty())
        })
        .max()
        .map_or(0, |s| s + 1);
    let fold = |wm: &[Vec<Watermark<E>>], s: usize| {
        wm.iter()
            .take(s)
            .flatten()
            .max()
            .cloned()
            .unwrap_or(Watermark::Min)
    };
    let mut b = BTreeMap::new();
    let mut buffered: Vec<(K, Change<P>, isize)> = Vec::new();
    let (mut joined, mut late) = (Vec::new(), Vec::new());
    // Retention: the access time of each key with live state, the versions hidden by expiry.
    let mut access: BTreeMap<K, E> = BTreeMap::new();
    let mut hidden: BTreeSet<(K, Version<E, B>)> = BTreeSet::new();
    let touch = |access: &mut BTreeMap<K, E>, k: &K, t: E| {
        let a = access.entry(k.clone()).or_insert_with(|| t.clone());
        if *a < t {
            *a = t;
        }
    };
    let mut fired = Watermark::Min;
    let epochs = probe.len().max(build.len()).max(end);
    for s in 0..=epochs {
        // After the last epoch every input has ended: W = Max, at the closing epoch.
        let (w, at) = match s < epochs {
            true => (fold(probe_wm, s).min(fold(build_wm, s)), s),
            false => (Watermark::Max, epochs),
        };
        let (due, keep): (Vec<_>, Vec<_>) = buffered
            .drain(..)
            .partition(|(_, c, _)| w.is_late(&probe_time(&c.row)));
        buffered = keep;
        let mut visible = b.clone();
        visible.retain(|v, _| !hidden.contains(v));
        for (k, change, diff) in due {
            let version = version_at(&visible, &k, &probe_time(&change.row));
            if let Some(row) = join_row(kind, &residual, &change, version) {
                joined.push(((k, row), at as SysTime, diff));
            }
        }
        if let Some(retention) = retention.filter(|_| w > fired) {
            let expired: Vec<K> = (access.iter())
                .filter(|(_, a)| w.passed(&retention.expiry(a)))
                .map(|(k, _)| k.clone())
                .collect();
            for k in expired {
                access.remove(&k);
                hidden.retain(|(hk, _)| *hk != k);
                hidden.extend(b.keys().filter(|(bk, _)| *bk == k).cloned());
            }
        }
        fired = fired.max(w.clone());
        for ((k, change), diff) in probe.get(s).into_iter().flatten() {
            let t = probe_time(&change.row);
            if w.is_late(&t) {
                late.push(((k.clone(), change.seq), s as SysTime, *diff));
            } else {
                touch(&mut access, k, t);
                buffered.push((k.clone(), change.clone(), *diff));
            }
        }
        accumulate(&mut b, build.get(s));
        for ((k, v), diff) in build.get(s).into_iter().flatten() {
            if *diff > 0 {
                touch(&mut access, k, v.time.clone());
            }
        }
    }
    consolidate_updates(&mut joined);
    consolidate_updates(&mut late);
    (joined, late)
}

/// The processing-time join's output: each probe row of epoch `s` joined with its key's
/// current version (greatest `(time, seq)`) among the build versions of epochs `<= s`.
///
/// With a `retention` of `r >= 1` epochs (rule B17): a probe row or build version of epoch `t`
/// touches its key at `t`; the key's state expired at `t + r` if no touch falls strictly
/// between `t` and `t + r`. A probe row of epoch `s` sees only the versions whose updates
/// before the key's last expiry `<= s` sum to zero.
pub fn lookup<K, E, P, B>(
    probe: &[Epoch<(K, Change<P>)>],
    build: &[Epoch<(K, Version<E, B>)>],
    kind: JoinKind,
    residual: impl Fn(&P, &B) -> bool,
    retention: Option<SysTime>,
) -> Updates<(K, Joined<P, B>)>
where
    K: Ord + Clone + JoinKey,
    E: Ord + Clone,
    P: Ord + Clone,
    B: Ord + Clone,
{
    // Every touch of a key, as (key, epoch).
    let mut touches: BTreeSet<(K, SysTime)> = BTreeSet::new();
    let epochs = probe.len().max(build.len());
    for s in 0..epochs {
        let probes = probe.get(s).into_iter().flatten().map(|((k, _), _)| k);
        let builds = (build.get(s).into_iter().flatten())
            .filter(|(_, d)| *d > 0)
            .map(|((k, _), _)| k);
        touches.extend(probes.chain(builds).map(|k| (k.clone(), s as SysTime)));
    }
    // The last expiry of `key` at or before `s`.
    let since = |key: &K, s: SysTime| -> SysTime {
        let Some(r) = retention.filter(|r| *r > 0) else {
            return 0;
        };
        let of_key: Vec<SysTime> = (touches.iter())
            .filter(|(k, _)| k == key)
            .map(|(_, t)| *t)
            .collect();
        (of_key.iter())
            .map(|t| t + r)
            .filter(|e| *e <= s && !of_key.iter().any(|u| *u > *e - r && *u < *e))
            .max()
            .unwrap_or(0)
    };
    // Per version, its updates by epoch.
    let mut updates: BTreeMap<(K, Version<E, B>), Vec<(SysTime, isize)>> = BTreeMap::new();
    let mut out = Vec::new();
    for s in 0..epochs {
        for (v, d) in build.get(s).into_iter().flatten() {
            updates
                .entry(v.clone())
                .or_default()
                .push((s as SysTime, *d));
        }
        for ((k, change), diff) in probe.get(s).into_iter().flatten() {
            let from = since(k, s as SysTime);
            let count = |u: &[(SysTime, isize)], below: SysTime| -> isize {
                u.iter().filter(|(t, _)| *t < below).map(|(_, d)| d).sum()
            };
            let b: BTreeMap<(K, Version<E, B>), isize> = (updates.iter())
                .filter(|(_, u)| count(u, s as SysTime + 1) != 0 && count(u, from) == 0)
                .map(|(v, u)| (v.clone(), count(u, s as SysTime + 1)))
                .collect();
            let version = b
                .iter()
                .filter(|((key, _), _)| key == k && !k.is_null())
                .map(|((_, v), _)| v)
                .max_by(|a, c| {
                    (&a.time, a.seq)
                        .cmp(&(&c.time, c.seq))
                        .then(c.row.cmp(&a.row))
                })
                .map(|v| &v.row);
            if let Some(row) = join_row(kind, &residual, change, version) {
                out.push(((k.clone(), row), s as SysTime, *diff));
            }
        }
    }
    consolidate_updates(&mut out);
    out
}
