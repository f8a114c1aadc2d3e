//! Changelog rows: a [`RowKind`] (`+I`, `-U`, `+U`, `-D`), a source sequence number and a row.
//!
//! A *changelog* is a differential collection of `(K, Change<V>)` records, each with diff `+1`:
//! the rows themselves are the events, in the order of their `seq`. A changelog with a primary
//! key `K` is an upsert stream. Sorting a changelog's records by `(seq, kind)` gives Flink's
//! emission order (an update-before sorts before the update-after it pairs with).
//!
//! [`Changelog`] gives a changelog collection a type of its own: the typed operators' methods
//! on it keep it a changelog, and [`Changelog::into_collection`] is the one way to the table it
//! describes (diff × sign of the kind), so that its `-U`/`-D` rows are never counted as rows.

mod collection;

pub use collection::Changelog;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::Seq;

/// The kind of a changelog row (Flink's `RowKind`).
///
/// Ordered `Insert < UpdateBefore < UpdateAfter < Delete`, so a `-U` sorts before the `+U` it
/// pairs with when both carry the same sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RowKind {
    /// `+I`: a new row.
    Insert,
    /// `-U`: the previous content of an updated row.
    UpdateBefore,
    /// `+U`: the new content of an updated row.
    UpdateAfter,
    /// `-D`: a deleted row.
    Delete,
}

impl RowKind {
    /// All kinds, in their order.
    pub const ALL: [RowKind; 4] = [
        RowKind::Insert,
        RowKind::UpdateBefore,
        RowKind::UpdateAfter,
        RowKind::Delete,
    ];

    /// The short string form: `+I`, `-U`, `+U` or `-D`.
    pub fn as_str(self) -> &'static str {
        match self {
            RowKind::Insert => "+I",
            RowKind::UpdateBefore => "-U",
            RowKind::UpdateAfter => "+U",
            RowKind::Delete => "-D",
        }
    }

    /// `true` for the accumulating kinds `+I` and `+U`, `false` for the retracting `-U` and `-D`.
    pub fn is_accumulate(self) -> bool {
        matches!(self, RowKind::Insert | RowKind::UpdateAfter)
    }

    /// The multiplicity a row of this kind contributes to the table its changelog describes:
    /// `1` for `+I` and `+U`, `-1` for `-U` and `-D` (Flink's retract-stream reading of a
    /// changelog).
    ///
    /// ```
    /// use differential_temporal_operators::RowKind;
    /// assert_eq!(RowKind::UpdateAfter.sign() * 3, 3);
    /// assert_eq!(RowKind::Delete.sign() * 3, -3);
    /// ```
    pub fn sign(self) -> isize {
        if self.is_accumulate() {
            1
        } else {
            -1
        }
    }
}

impl fmt::Display for RowKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing a [`RowKind`]: the text was none of `+I`, `-U`, `+U`, `-D`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownRowKind(pub String);

impl fmt::Display for UnknownRowKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown row kind {:?}: expected one of +I, -U, +U, -D",
            self.0
        )
    }
}

impl std::error::Error for UnknownRowKind {}

impl FromStr for RowKind {
    type Err = UnknownRowKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RowKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownRowKind(s.to_string()))
    }
}

/// One changelog row: its source sequence number, its kind and the row.
///
/// Ordered by `(seq, kind, row)`: the order in which a changelog is emitted.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Change<V> {
    /// Position of the row (or of the input row that caused it) in its source.
    pub seq: Seq,
    /// `+I`, `-U`, `+U` or `-D`.
    pub kind: RowKind,
    /// The row's content (for `-U`/`-D`, the row being retracted).
    pub row: V,
}

impl<V> Change<V> {
    /// A change of the given kind.
    pub fn new(seq: Seq, kind: RowKind, row: V) -> Self {
        Change { seq, kind, row }
    }
}

/// How a changelog is rendered for a consumer (Flink's changelog modes).
///
/// * `Retract`: every kind as produced (`+I`, `-U`, `+U`, `-D`), for consumers that need the
///   update-before rows (a retract sink).
/// * `Upsert`: `-U` rows are dropped (Flink's ONLY_UPDATE_AFTER form); a consumer keyed by the
///   primary key replaces the row on `+U`.
/// * `UpsertNoInsert`: as `Upsert`, and `+I` is shown as `+U` (Flink with
///   `table.exec.deduplicate.insert-update-after-sensitive-enabled` = false).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ChangelogMode {
    /// All four kinds.
    Retract,
    /// No `-U` rows.
    Upsert,
    /// No `-U` rows, and `+I` shown as `+U`.
    UpsertNoInsert,
}

impl ChangelogMode {
    /// The kind under which a row of kind `kind` is shown in this mode, or `None` if the mode
    /// drops it.
    pub fn render(self, kind: RowKind) -> Option<RowKind> {
        match (self, kind) {
            (ChangelogMode::Retract, k) => Some(k),
            (_, RowKind::UpdateBefore) => None,
            (ChangelogMode::UpsertNoInsert, RowKind::Insert) => Some(RowKind::UpdateAfter),
            (_, k) => Some(k),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_kind_round_trips_and_rejects_unknown() {
        for k in RowKind::ALL {
            assert_eq!(k.as_str().parse::<RowKind>(), Ok(k));
        }
        let err = "+X".parse::<RowKind>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown row kind \"+X\": expected one of +I, -U, +U, -D"
        );
    }

    #[test]
    fn modes_render_kinds() {
        use ChangelogMode::*;
        let shown = |m: ChangelogMode| RowKind::ALL.map(|k| m.render(k));
        assert_eq!(shown(Retract), RowKind::ALL.map(Some));
        assert_eq!(
            shown(Upsert),
            [
                Some(RowKind::Insert),
                None,
                Some(RowKind::UpdateAfter),
                Some(RowKind::Delete)
            ]
        );
        assert_eq!(
            shown(UpsertNoInsert),
            [
                Some(RowKind::UpdateAfter),
                None,
                Some(RowKind::UpdateAfter),
                Some(RowKind::Delete)
            ]
        );
    }

    #[test]
    fn update_before_sorts_before_update_after() {
        let a = Change::new(3, RowKind::UpdateAfter, "new");
        let b = Change::new(3, RowKind::UpdateBefore, "old");
        assert!(b < a);
    }
}
