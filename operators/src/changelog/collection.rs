//! [`Changelog`]: a changelog collection with a type of its own, so that it is not read as a
//! collection by mistake.

use std::hash::Hash;

use differential_dataflow::{AsCollection, ExchangeData, VecCollection};
use timely::dataflow::operators::vec::Map;

use crate::to_changelog::to_changelog;
use crate::{Change, ChangelogMode, SysTime};

/// A changelog: `(K, Change<V>)` records whose kind (`+I -U +U -D`) carries the sign.
///
/// The typed operators emit changelogs (each record with diff `+1`: the rows themselves are the
/// events, in `seq` order). Read as a differential collection, a changelog's `-U` and `-D` rows
/// would count as rows, so `.map(..).count()` on one counts retractions as rows: this type
/// offers no collection operators, and [`into_collection`](Self::into_collection) is the one
/// way to the table the changelog describes.
///
/// **One reading for every shape.** The table a changelog describes holds each record's row
/// with multiplicity `diff × sign(kind)` ([`RowKind::sign`](crate::RowKind::sign): `+1` for
/// `+I`/`+U`, `-1` for `-U`/`-D`), summed over the records. That covers the three shapes the
/// operators produce: the changelogs of deduplication and the keyed merge (diff `+1`, the sign
/// in the kind); the incremental temporal join's output, which revises a joined row it emitted
/// earlier by retracting that record (diff `-1`, the probe row's kind kept) when a late build
/// version re-versions it; and a table turned into a changelog ([`from_collection`](Self::from_collection)).
///
/// The operators' own functions take and return the raw records
/// ([`changes`](Self::changes), [`new`](Self::new)); the methods on this type
/// ([`deduplicate`](Self::deduplicate), [`versioned`](Self::versioned),
/// [`temporal_join`](Self::temporal_join)) call them and keep the type.
///
/// # Examples
///
/// A key inserted, updated and deleted over three system times; the changelog's table, as a
/// collection with native diffs, is what differential's own operators read:
///
/// ```
/// use differential_temporal_operators::changelog::Changelog;
/// use differential_temporal_operators::testing::run_unary;
/// use differential_temporal_operators::{Change, RowKind::*};
///
/// let epochs = vec![
///     vec![(('k', Change::new(0, Insert, 10)), 1)],
///     vec![(('k', Change::new(1, UpdateBefore, 10)), 1), (('k', Change::new(1, UpdateAfter, 20)), 1)],
///     vec![(('k', Change::new(2, Delete, 20)), 1)],
/// ];
/// // Rows per key: one from system time 0 to 2 (the update is no second row).
/// let out = run_unary(2, epochs, |c| Changelog::new(c).into_collection().map(|(k, _)| k).count());
/// assert_eq!(out, vec![(('k', 1), 0, 1), (('k', 1), 2, -1)]);
/// ```
///
/// Counting a changelog's records does not compile:
///
/// ```compile_fail
/// use differential_dataflow::VecCollection;
/// use differential_temporal_operators::changelog::Changelog;
///
/// fn counts<'s>(changelog: Changelog<'s, char, i64>) -> VecCollection<'s, u64, (char, isize)> {
///     changelog.count() // no `count` on a changelog: `changelog.into_collection().count()`
/// }
/// ```
pub struct Changelog<'s, K: 'static, V: 'static> {
    changes: VecCollection<'s, SysTime, (K, Change<V>)>,
}

impl<'s, K, V> Clone for Changelog<'s, K, V>
where
    K: ExchangeData,
    V: ExchangeData,
{
    fn clone(&self) -> Self {
        Changelog {
            changes: self.changes.clone(),
        }
    }
}

impl<'s, K, V> Changelog<'s, K, V>
where
    K: ExchangeData,
    V: ExchangeData,
{
    /// The changelog of these records: each `(key, change)` with diff `+1`, or `-1` to revise
    /// a record emitted earlier (see the type's docs). Never fails; records are not checked.
    pub fn new(changes: VecCollection<'s, SysTime, (K, Change<V>)>) -> Self {
        Changelog { changes }
    }

    /// The changelog of a collection of `(key, row)` (a table keyed by `key`, native diffs):
    /// per key and system time, its changes become `+I`, `-U`/`+U` and `-D` rows, each with
    /// `seq` = the system time ([`to_changelog`] in [`ChangelogMode::Retract`]; its docs give
    /// the pairing rule and the cost). `name` names the dataflow operator.
    ///
    /// ```
    /// use differential_temporal_operators::changelog::Changelog;
    /// use differential_temporal_operators::testing::run_unary;
    /// use differential_temporal_operators::{Change, RowKind::*};
    ///
    /// let epochs = vec![vec![(('k', 1), 1)], vec![(('k', 1), -1), (('k', 2), 1)]];
    /// let out = run_unary(1, epochs, |c| Changelog::from_collection(c, "Changes").into_changes());
    /// assert_eq!(out, vec![
    ///     (('k', Change::new(0, Insert, 1)), 0, 1),
    ///     (('k', Change::new(1, UpdateBefore, 1)), 1, 1),
    ///     (('k', Change::new(1, UpdateAfter, 2)), 1, 1),
    /// ]);
    /// ```
    pub fn from_collection(collection: VecCollection<'s, SysTime, (K, V)>, name: &str) -> Self
    where
        K: Hash,
    {
        Changelog::new(to_changelog(collection, ChangelogMode::Retract, name))
    }

    /// The table this changelog describes, as a collection of `(key, row)` with native diffs:
    /// each record counts `diff × sign(kind)` (see the type's docs). One `map`, no state.
    pub fn into_collection(self) -> VecCollection<'s, SysTime, (K, V)> {
        self.changes
            .inner
            .map(|((key, change), time, diff)| ((key, change.row), time, diff * change.kind.sign()))
            .as_collection()
    }

    /// The records, for the operators' functions over raw changelogs and for `inspect`,
    /// `probe_with` and the like.
    pub fn changes(&self) -> &VecCollection<'s, SysTime, (K, Change<V>)> {
        &self.changes
    }

    /// The records (see [`changes`](Self::changes)).
    pub fn into_changes(self) -> VecCollection<'s, SysTime, (K, Change<V>)> {
        self.changes
    }

    /// Maps each record's key and row with `f`, keeping its `seq`, kind and diff: a projection
    /// or a new key, on the changelog (the table read from the result is the table of the mapped
    /// rows).
    pub fn map<J, W>(self, f: impl Fn(K, V) -> (J, W) + 'static) -> Changelog<'s, J, W>
    where
        J: ExchangeData,
        W: ExchangeData,
    {
        Changelog::new(self.changes.map(move |(key, change)| {
            let (key, row) = f(key, change.row);
            (key, Change::new(change.seq, change.kind, row))
        }))
    }

    /// Keeps the records whose key and row satisfy `p` (a filter on the table read from it).
    pub fn filter(self, p: impl Fn(&K, &V) -> bool + 'static) -> Self {
        Changelog::new(
            self.changes
                .filter(move |(key, change)| p(key, &change.row)),
        )
    }

    /// This changelog's records and `other`'s, together (the union of their tables).
    pub fn concat(self, other: Self) -> Self {
        Changelog::new(self.changes.concat(other.changes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{content_at, run_unary};
    use crate::RowKind::*;

    /// The three shapes read the same way: a retract changelog (diff `+1`), a revision (a
    /// record retracted with diff `-1`, as the incremental join revises), and both mapped and
    /// filtered, at 1 and 2 workers.
    #[test]
    fn every_shape_reads_as_its_table() {
        let epochs = vec![
            vec![
                ((1u8, Change::new(0, Insert, 10i64)), 1),
                ((2u8, Change::new(1, Insert, 20)), 1),
            ],
            vec![
                ((1, Change::new(2, UpdateBefore, 10)), 1),
                ((1, Change::new(2, UpdateAfter, 11)), 1),
                // A revision: the +I of key 2 withdrawn, replaced by another row.
                ((2, Change::new(1, Insert, 20)), -1),
                ((2, Change::new(1, Insert, 21)), 1),
            ],
            vec![((1, Change::new(3, Delete, 11)), 1)],
        ];
        for workers in [1, 2] {
            let out = run_unary(workers, epochs.clone(), |c| {
                Changelog::new(c)
                    .map(|k, v| (k % 2, v * 10))
                    .filter(|_, v| *v != 200)
                    .into_collection()
            });
            assert_eq!(content_at(&out, 0), vec![((1, 100), 1)]);
            assert_eq!(content_at(&out, 1), vec![((0, 210), 1), ((1, 110), 1)]);
            assert_eq!(content_at(&out, 2), vec![((0, 210), 1)]);
        }
    }

    #[test]
    fn a_collection_round_trips() {
        let epochs = vec![
            vec![(('a', 1), 1), (('b', 2), 1)],
            vec![(('a', 1), -1), (('a', 3), 1), (('b', 2), -1)],
        ];
        for workers in [1, 2] {
            let out = run_unary(workers, epochs.clone(), |c| {
                let changelog = Changelog::from_collection(c, "Changes");
                changelog.clone().concat(changelog).into_collection()
            });
            assert_eq!(content_at(&out, 0), vec![(('a', 1), 2), (('b', 2), 2)]);
            assert_eq!(content_at(&out, 1), vec![(('a', 3), 2)]);
        }
    }
}
