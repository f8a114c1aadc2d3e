//! A sequential model of a versioned table: per key, a map from event time to the winning
//! version. Used by the tests, the property tests and the benchmarks as the oracle.

use std::collections::BTreeMap;

use differential_dataflow::consolidation::consolidate;

use super::HistoryRow;
use crate::version::{version_of, VersionVal};
use crate::{Seq, Version};

/// The state of a versioned table: per key, event time -> `(seq, row)` of the effective version
/// (rules A2-A4; `row == None` for a delete).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reference<K, E, V> {
    keys: BTreeMap<K, BTreeMap<E, (Seq, Option<V>)>>,
}

impl<K: Ord + Clone, E: Ord + Clone, V: Ord + Clone> Reference<K, E, V> {
    /// The table holding the versions whose accumulated count is positive, from
    /// `((key, version), diff)` updates in any order.
    ///
    /// Per `(key, time)` the version with the greatest `seq` wins (A4); among versions with
    /// equal `(time, seq)` the first in [`VersionVal`] order (a delete, then the smaller row),
    /// as in the arrangement.
    pub fn new(updates: impl IntoIterator<Item = ((K, Version<E, V>), isize)>) -> Self {
        let mut counts: Vec<((K, VersionVal<E, V>), isize)> = updates
            .into_iter()
            .map(|((k, v), d)| ((k, VersionVal::from(v)), d))
            .collect();
        consolidate(&mut counts);
        let mut keys: BTreeMap<K, BTreeMap<E, (Seq, Option<V>)>> = BTreeMap::new();
        // Sorted by key, then newest first: the first version seen per time wins.
        for ((k, val), count) in counts {
            if count > 0 {
                let v = version_of(&val);
                let times = keys.entry(k).or_default();
                times.entry(v.time).or_insert((v.seq, v.row));
            }
        }
        Reference { keys }
    }

    /// The snapshot as of event time `t` (A3): `(key, row)` sorted.
    pub fn as_of(&self, t: &E) -> Vec<(K, V)> {
        let mut out = Vec::new();
        for (k, times) in &self.keys {
            if let Some((_, (_, Some(row)))) = times.range(..=t).next_back() {
                out.push((k.clone(), row.clone()));
            }
        }
        out
    }

    /// The history (A2): `(key, HistoryRow)` for every non-delete version, sorted.
    pub fn history(&self) -> Vec<(K, HistoryRow<E, V>)> {
        let mut out = Vec::new();
        for (k, times) in &self.keys {
            let mut next = times.keys().skip(1).cloned();
            for (time, (seq, row)) in times {
                let valid_to = next.next();
                if let Some(row) = row {
                    let valid_from = time.clone();
                    let (seq, row) = (*seq, row.clone());
                    out.push((
                        k.clone(),
                        HistoryRow {
                            valid_from,
                            valid_to,
                            seq,
                            row,
                        },
                    ));
                }
            }
        }
        out.sort();
        out
    }
}
