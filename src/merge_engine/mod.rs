//! Merge engines: primary-key tables whose writes are merged per key by a rule (Apache Fluss
//! `table.merge-engine`, Apache Paimon `merge-engine`; semantics section C).
//!
//! The engines' field rules work on rows of values, so they live here, beside the plan, and
//! the generic per-key fold they run on, [`keyed_merge`], stays in the operators crate
//! (`relational.md` section 1, issue 11).
//!
//! | engine | rule | source |
//! |---|---|---|
//! | [`Versioned`] | highest version column wins, ties update, NULL is the smallest version | Fluss `versioned`, C1–C6 |
//! | [`FirstRow`] | first row wins, insert-only changelog | Fluss `first_row`, Paimon `first-row`, C7, C12 |
//! | [`Deduplicate`] | last row (or highest `sequence.field`) wins, deletes honoured | Paimon `deduplicate`, C9, C14 |
//! | [`PartialUpdate`] | non-NULL fields overwrite, sequence groups, aggregate functions in groups | Paimon `partial-update`, C10 |
//! | [`Aggregation`] | per-field aggregate functions; retraction where supported (Paimon) or none (Fluss, [`AggDeletes`]) | Paimon / Fluss `aggregation`, C4, C8, C11 |
//!
//! Shapes: rows are packed [`Row`]s (one allocation per row, none for a row of up to 24 packed
//! bytes; a clone is a `memcpy`) whose columns have the types of the table's schema
//! ([`merge_engine_from_options`](crate::merge_options::merge_engine_from_options)): a typed
//! column holds values of its type, parsed once at ingest (a `BIGINT` version is a
//! [`Datum::Int`](crate::repr::Datum::Int), compared without parsing; a `DECIMAL(10, 2)` sum
//! keeps scale 2), and a `STRING` column (every column of a table read without a schema) holds
//! text, which an engine parses where it compares or computes (version, sequence and
//! aggregated columns; [`values`] gives both rules). Every other cell passes through
//! unchanged. The input is a changelog of writes
//! `(K, Change<Row>)` keyed by the primary key `K` (each record with diff `+1`, `seq` its
//! position in the input); [`merge_engine`] returns the table's changelog in retract form
//! (`+I`, `-U`/`+U`, `-D`; [`ChangelogMode::render`](crate::operators::ChangelogMode::render) gives upsert
//! form) and the writes it did not apply, each with its `seq`, a [`RejectKind`] and a reason:
//! [`RejectKind::Ignored`] for writes the engine ignores by definition (e.g. a later row of a
//! `first_row` table, a `-D` on a Fluss table), [`RejectKind::Invalid`] for errors (an
//! unparsable version, an integer overflow, a retraction a function cannot undo) and for a
//! write that is applied and reported (a Paimon `aggregation` retraction of a key without a
//! row).
//!
//! [`RejectKind`]: crate::operators::keyed_merge::RejectKind
//! [`RejectKind::Ignored`]: crate::operators::keyed_merge::RejectKind::Ignored
//! [`RejectKind::Invalid`]: crate::operators::keyed_merge::RejectKind::Invalid
//!
//! Every engine is a [`MergeRule`] over [`keyed_merge`]: writes are applied per key in `seq`
//! order, one [`KeyState`] per key, so results are deterministic and independent of the number
//! of workers and of the epoch batching (beyond the reference systems, whose ties across
//! writers are not deterministic). Cost: one hash probe and O(row width) work per write.
//!
//! The options users write (`'table.merge-engine' = 'versioned'`, `'sequence.field'`, ...) are
//! parsed and validated by [`merge_options`](crate::merge_options), which builds a
//! [`MergeEngine`].

mod aggregation;
mod deduplicate;
mod first_row;
mod fold;
pub mod order;
mod partial_update;
pub mod reference;
#[cfg(test)]
mod tests;
pub mod values;
mod versioned;

pub use aggregation::{AggDeletes, AggFunction, Aggregation, FieldAgg};
pub use deduplicate::Deduplicate;
pub use first_row::FirstRow;
pub use order::{OrderField, OrderKey, OrderType};
pub use partial_update::{PartialDeletes, PartialUpdate, SequenceGroup};
pub use versioned::Versioned;

use std::borrow::Cow;
use std::hash::Hash;

use differential_dataflow::{ExchangeData, VecCollection};

use crate::operators::keyed_merge::{keyed_merge, Folded, MergeRule, Merged};
use crate::operators::{Change, RowKind, SysTime};

/// A text row of the table's columns, in order ([`crate::row`]).
pub use crate::row::Row;

/// What a `-D` or `-U` write does to an engine that keeps one winning row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Deletes {
    /// A winning retraction deletes the key.
    Apply,
    /// Retractions are ignored (reported as
    /// [`RejectKind::Ignored`](crate::operators::keyed_merge::RejectKind::Ignored)).
    Ignore,
    /// Retractions are refused with this reason.
    Reject(String),
}

/// What a merge engine stores per key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyState {
    /// The key's current row; `None` for a deleted key that remembers its order.
    pub row: Option<Row>,
    /// The order (version or sequence) of the stored row or of the delete that removed it.
    pub order: OrderKey,
    /// `aggregation` and `partial-update` with aggregate functions: per column, the sequence of
    /// the write that supplied the value of an order-dependent function (`last_value`,
    /// `first_value`, ...); `None`: no value yet.
    pub ranks: Vec<Option<OrderKey>>,
}

impl KeyState {
    /// The state of a key whose stored row is `row`, without order.
    pub fn new(row: Row) -> Self {
        KeyState {
            row: Some(row),
            order: OrderKey::new(),
            ranks: Vec::new(),
        }
    }
}

/// One configured merge engine: a [`MergeRule`] over [`Row`]s.
#[derive(Clone, Debug, PartialEq)]
pub enum MergeEngine {
    /// Fluss `versioned`.
    Versioned(Versioned),
    /// Fluss `first_row` / Paimon `first-row`.
    FirstRow(FirstRow),
    /// Paimon `deduplicate` (also Fluss's default last-row engine).
    Deduplicate(Deduplicate),
    /// Paimon `partial-update`.
    PartialUpdate(PartialUpdate),
    /// Paimon `aggregation`.
    Aggregation(Aggregation),
}

impl MergeEngine {
    /// The engine's name as users write it (`versioned`, `first_row`, `deduplicate`,
    /// `partial-update`, `aggregation`).
    pub fn name(&self) -> &'static str {
        match self {
            MergeEngine::Versioned(_) => "versioned",
            MergeEngine::FirstRow(_) => "first_row",
            MergeEngine::Deduplicate(_) => "deduplicate",
            MergeEngine::PartialUpdate(_) => "partial-update",
            MergeEngine::Aggregation(_) => "aggregation",
        }
    }
}

impl MergeRule for MergeEngine {
    type Write = Row;
    type State = KeyState;
    type Row = Row;

    fn merge(
        &self,
        state: &mut Option<KeyState>,
        kind: RowKind,
        write: &Row,
        out: &mut Vec<(RowKind, Row)>,
    ) -> Folded {
        self.fold(state, kind, Cow::Borrowed(write), out)
    }

    fn merge_owned(
        &self,
        state: &mut Option<KeyState>,
        kind: RowKind,
        write: Row,
        out: &mut Vec<(RowKind, Row)>,
    ) -> Folded {
        self.fold(state, kind, Cow::Owned(write), out)
    }
}

impl MergeEngine {
    /// Folds one write, borrowed or owned: the engines that may store the write itself clone it
    /// only if they do.
    fn fold(
        &self,
        state: &mut Option<KeyState>,
        kind: RowKind,
        write: Cow<'_, Row>,
        out: &mut Vec<(RowKind, Row)>,
    ) -> Folded {
        // `versioned`, `deduplicate` and `aggregation` may apply a write and also report it.
        let applied = match self {
            MergeEngine::Versioned(e) => return e.merge(state, kind, write, out),
            MergeEngine::FirstRow(e) => e.merge(state, kind, write, out),
            MergeEngine::Deduplicate(e) => return e.merge(state, kind, write, out),
            // These build a new row from the stored one and the write: nothing to move.
            MergeEngine::PartialUpdate(e) => e.merge(state, kind, &write, out),
            MergeEngine::Aggregation(e) => return e.merge(state, kind, &write, out),
        };
        applied.map(|()| None)
    }
}

/// Merges a changelog of writes `(primary key, Change<Row>)` with `engine`; returns the table's
/// changelog (retract form, each change carrying the `seq` of the write that caused it) and
/// the writes not applied with their reasons (see the module docs).
///
/// # Examples
///
/// The Fluss `versioned` example (case C01) on a table `(a BIGINT, b STRING, ts BIGINT)`:
/// versions 1000, 999, 2000, NULL leave `v1`, `v1`, `v3`, `v3` in the table. The version
/// cells are typed, so no write parses text.
///
/// ```
/// use differential_temporal::merge_engine::{
///     merge_engine, Deletes, MergeEngine, OrderField, OrderType, Versioned,
/// };
/// use differential_temporal::operators::testing::{batch, run_unary};
/// use differential_temporal::operators::{Change, RowKind};
/// use differential_temporal::repr::{Datum, Row};
/// use differential_temporal::row::TextCells;
///
/// let engine = MergeEngine::Versioned(Versioned {
///     version: OrderField { column: 2, name: "ts".into(), ty: OrderType::BigInt },
///     deletes: Deletes::Ignore,
/// });
/// let writes: Vec<_> = [("v1", Some(1000)), ("v2", Some(999)), ("v3", Some(2000)), ("v4", None)]
///     .into_iter()
///     .enumerate()
///     .map(|(seq, (b, ts))| {
///         let row = Row::pack([Datum::Int(1), Datum::Str(b), ts.map_or(Datum::Null, Datum::Int)]);
///         (1u32, Change::new(seq as u64, RowKind::Insert, row))
///     })
///     .collect();
/// let out = run_unary(2, batch(&writes, &[2]), move |c| {
///     merge_engine(c, engine.clone()).changelog
/// });
/// let log: Vec<_> = out
///     .iter()
///     .map(|((_, c), _, _)| (c.kind, c.row.cell(1).unwrap().to_string()))
///     .collect();
/// assert_eq!(log, vec![
///     (RowKind::Insert, "v1".to_string()),
///     (RowKind::UpdateBefore, "v1".to_string()),
///     (RowKind::UpdateAfter, "v3".to_string()),
/// ]);
/// ```
pub fn merge_engine<'s, K>(
    writes: VecCollection<'s, SysTime, (K, Change<Row>)>,
    engine: MergeEngine,
) -> Merged<'s, K, Row>
where
    K: ExchangeData + Hash,
{
    let name = format!("MergeEngine: {}", engine.name());
    keyed_merge(writes, engine, None, &name)
}
