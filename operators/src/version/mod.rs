//! Versions of a key and the arrangement layout every versioned operator shares.
//!
//! A *version* of key `k` is a row (or a delete) stamped with its event time and its source
//! sequence number. A collection of `(K, Version<E, V>)` records is the raw material of a
//! versioned table (Flink versioned tables, semantics rules A1-A5): the version of `k` valid at
//! event time `t` is the one with the greatest `(time, seq)` such that `time <= t`; if it is a
//! delete (`row == None`), `k` has no row at `t`.
//!
//! Arrangement layout: versions are arranged by key, and within a key by
//! [`VersionVal`] = `(Reverse(time), Reverse(seq), row)`, i.e. newest first. "The version valid
//! at `t`" is then one forward `seek_val` to `(Reverse(t), Reverse(Seq::MAX), None)` followed by
//! stepping over values whose accumulated count is zero: O(log n) per lookup, not a scan of the
//! key's history. The arrangement is exchanged by the key's hash, so all versions of a key live
//! on one worker.

pub(crate) mod cursor;

use std::cmp::Reverse;

use differential_dataflow::operators::arrange::{Arranged, TraceAgent};
use differential_dataflow::trace::implementations::ValSpine;
use differential_dataflow::{ExchangeData, Hashable, VecCollection};
use serde::{Deserialize, Serialize};

use crate::{Seq, SysTime};

/// One version of a key: event time, source sequence number, and the row (`None` = delete).
///
/// Ordered by `(time, seq, row)`: the order in which versions supersede each other.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Version<E, V> {
    /// Event time from which this version is valid.
    pub time: E,
    /// Source sequence number: among versions with equal `time`, the greatest `seq` wins (A4).
    pub seq: Seq,
    /// The row, or `None` for a delete (the key has no row from `time` on).
    pub row: Option<V>,
}

impl<E, V> Version<E, V> {
    /// A version holding `row`.
    pub fn row(time: E, seq: Seq, row: V) -> Self {
        Version {
            time,
            seq,
            row: Some(row),
        }
    }

    /// A delete version: the key has no row from `time` on.
    pub fn delete(time: E, seq: Seq) -> Self {
        Version {
            time,
            seq,
            row: None,
        }
    }
}

/// The arranged value of a version: `(Reverse(time), Reverse(seq), row)`, newest first.
pub type VersionVal<E, V> = (Reverse<E>, Reverse<Seq>, Option<V>);

/// The spine (trace type) of a versions arrangement: key `K`, value [`VersionVal`].
pub type VersionSpine<K, E, V> = ValSpine<K, VersionVal<E, V>, SysTime, isize>;

/// A shared handle to a versions trace.
pub type VersionTrace<K, E, V> = TraceAgent<VersionSpine<K, E, V>>;

impl<E, V> From<Version<E, V>> for VersionVal<E, V> {
    fn from(v: Version<E, V>) -> Self {
        (Reverse(v.time), Reverse(v.seq), v.row)
    }
}

/// Converts an arranged value back into a [`Version`].
pub fn version_of<E: Clone, V: Clone>(val: &VersionVal<E, V>) -> Version<E, V> {
    Version {
        time: val.0 .0.clone(),
        seq: val.1 .0,
        row: val.2.clone(),
    }
}

/// The smallest arranged value at or after which the versions with `time <= t` start: the seek
/// target for "the version valid at `t`".
pub fn seek_target<E, V>(t: E) -> VersionVal<E, V> {
    (Reverse(t), Reverse(Seq::MAX), None)
}

/// Arranges a collection of versions by key, newest version first (see the module docs).
///
/// Input: `(key, version)` records, event times `E` in whatever unit the caller uses (the
/// command line uses milliseconds), diffs as usual (a retraction `-1` removes a version again).
/// Output: the shared arrangement that versioned tables, as-of snapshots and temporal joins
/// read, exchanged by the hash of the key, values [`VersionVal`] (Flink's versioned tables,
/// rules A1-A5: no version is dropped here, the readers choose). Never fails.
///
/// Cost: one arrangement of the versions, shareable by every reader.
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::testing::run_unary;
/// use differential_temporal_operators::version::version_of;
/// use differential_temporal_operators::{arrange_versions, Version};
///
/// // Key 1: a row at time 5 and a delete at time 9 (epoch 0); the delete is retracted at
/// // epoch 1, so from then on the row of time 5 is valid for ever.
/// let delete = (1u8, Version::<i64, char>::delete(9, 1));
/// let epochs = vec![
///     vec![((1u8, Version::row(5i64, 0, 'a')), 1), (delete.clone(), 1)],
///     vec![(delete, -1)],
/// ];
/// let out = run_unary(2, epochs, |v| {
///     arrange_versions(v, "Versions").as_collection(|k, v| (*k, version_of(v)))
/// });
/// assert_eq!(out, vec![
///     ((1, Version::row(5, 0, 'a')), 0, 1),
///     ((1, Version::delete(9, 1)), 0, 1),
///     ((1, Version::delete(9, 1)), 1, -1),
/// ]);
/// ```
pub fn arrange_versions<'s, K, E, V>(
    versions: VecCollection<'s, SysTime, (K, Version<E, V>)>,
    name: &str,
) -> Arranged<'s, VersionTrace<K, E, V>>
where
    K: ExchangeData + Hashable,
    E: ExchangeData,
    V: ExchangeData,
{
    versions
        .map(|(k, v)| (k, VersionVal::from(v)))
        .arrange_by_key_named(name)
}
