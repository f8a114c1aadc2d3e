//! A sequential model of [`to_changelog`](super::to_changelog), for tests and benchmarks.

use std::collections::BTreeMap;

use super::pair_changes;
use crate::testing::Epoch;
use crate::{Change, ChangelogMode, SysTime};

/// The changelog of a collection given as epochs of `((key, value), diff)` changes, as
/// `((key, change), system time)` pairs sorted by system time, key and change.
pub fn to_changelog<K: Ord + Clone, V: Ord + Clone>(
    epochs: &[Epoch<(K, V)>],
    mode: ChangelogMode,
) -> Vec<((K, Change<V>), SysTime)> {
    let mut out = Vec::new();
    for (t, epoch) in epochs.iter().enumerate() {
        let t = t as SysTime;
        let mut per_key: BTreeMap<K, BTreeMap<V, isize>> = BTreeMap::new();
        for ((k, v), d) in epoch {
            *per_key
                .entry(k.clone())
                .or_default()
                .entry(v.clone())
                .or_default() += d;
        }
        for (k, values) in per_key {
            let changes: Vec<(V, isize)> = values.into_iter().filter(|(_, d)| *d != 0).collect();
            for c in pair_changes(t, &changes) {
                if let Some(kind) = mode.render(c.kind) {
                    out.push(((k.clone(), Change::new(c.seq, kind, c.row)), t));
                }
            }
        }
    }
    out.sort();
    out
}
