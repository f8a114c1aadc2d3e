//! The keyed merge: folds each key's writes, in source-sequence order, into at most one stored
//! row, and emits the resulting table's changelog.
//!
//! This is the engine under deduplication (Flink `ROW_NUMBER() .. = 1`) and under every merge
//! engine (Fluss / Paimon `table.merge-engine`): each is a [`MergeRule`] that says how one write
//! changes a key's stored state and which changelog rows (`+I`, `-U`/`+U`, `-D`) that causes.
//!
//! Shapes: input is a changelog `(K, Change<W>)` (every record with diff `+1`); output is the
//! merged table's changelog `(K, Change<Row>)`, each output row carrying the `seq` of the write
//! that caused it, plus a collection of rejected writes `(K, Rejected)` with their kind and reason.
//!
//! Semantics: per key, the writes of one system time are applied in `seq` order, after all the
//! writes of earlier system times. When source sequence numbers grow with system time (as the
//! CSV sources and [`crate::testing::batch`] guarantee) this is exactly "apply in input order",
//! so the output does not depend on the number of workers or on how input was cut into epochs.
//!
//! Cost: one hash-map probe per write (a fast seeded hasher), the sort of each system time's
//! writes by `seq` (linear when they arrive in runs of increasing `seq`, as from each
//! worker's source); state is one `R::State` per key (plus the writes of system times not yet
//! complete). The changelog and the rejections are the operator's two outputs. A write with a negative diff (a retraction of a write) cannot
//! be applied to a fold: it is rejected and reported, never silently dropped.

mod operator;
#[cfg(test)]
mod tests;

pub use operator::keyed_merge;

use std::borrow::Cow;
use std::fmt;

use differential_dataflow::{ExchangeData, VecCollection};
use serde::{Deserialize, Serialize};

use crate::{Change, RowKind, Seq, SysTime};

/// A merge rule: how one write changes the stored state of its key.
///
/// `merge` is called once per write, in the order described in the module docs, with the key's
/// current state (`None` if the key has no stored row) and the write's kind and row. It updates
/// the state in place and pushes the changelog rows the write causes, in emission order (e.g.
/// `-U old` then `+U new`). It returns `Ok(None)` for an applied write, `Ok(Some(refusal))` for
/// a write that is applied **and** reported (on the rejected output: e.g. a retraction of a key
/// that has no row, which Paimon applies but which should not pass unnoticed), and
/// `Err(refusal)` to refuse the write (ignored by definition or invalid, see [`RejectKind`]); a
/// refused write must leave the state unchanged and emit nothing.
pub trait MergeRule: Send + 'static {
    /// The rows written into the table.
    type Write: ExchangeData;
    /// What is stored per key.
    type State: 'static;
    /// The rows of the table's changelog.
    type Row: ExchangeData;

    /// Folds one write into the key's state, pushing the changelog rows it causes into `out`.
    fn merge(
        &self,
        state: &mut Option<Self::State>,
        kind: RowKind,
        write: &Self::Write,
        out: &mut Vec<(RowKind, Self::Row)>,
    ) -> Folded;

    /// As [`merge`](MergeRule::merge), with the write passed by value: [`keyed_merge`] calls
    /// this (once per copy of a write), so a rule that stores or emits the write can move it
    /// instead of cloning it. The default borrows and calls `merge`.
    fn merge_owned(
        &self,
        state: &mut Option<Self::State>,
        kind: RowKind,
        write: Self::Write,
        out: &mut Vec<(RowKind, Self::Row)>,
    ) -> Folded {
        self.merge(state, kind, &write, out)
    }
}

/// What [`MergeRule::merge`] did with a write: applied (`Ok(None)`), applied and reported
/// (`Ok(Some(refusal))`, e.g. a retraction of a key without a row, of kind
/// [`RejectKind::Ignored`]), or refused (`Err(refusal)`).
pub type Folded = Result<Option<Refusal>, Refusal>;

/// Why a row was not (or not silently) applied: the three kinds every operator reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RejectKind {
    /// Skipped by definition, not an error: e.g. a merge engine's write ordered below the
    /// stored row (Fluss `versioned`, Paimon `sequence.field`), a later row of a `first_row`
    /// table, a `-D` on a Fluss table (rules C2, C4, C7, C9). Counted per reason.
    Ignored,
    /// Behind the watermark in a final-mode operator (windows, OVER, interval and temporal
    /// joins, final dedup): the state it needed may be gone.
    Late,
    /// An error in the row: an unparsable or NULL cell where a value is needed, an overflow,
    /// a retraction an operator cannot apply.
    Invalid,
}

/// A refusal before it is tied to a write's position: its kind and reason (what a
/// [`MergeRule`] returns; the operator adds the `seq`). A `String` converts to
/// [`RejectKind::Invalid`], so `?` works on a rule's parse errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// What kind of refusal.
    pub kind: RejectKind,
    /// Why, in words (without a kind prefix); a constant reason is not allocated.
    pub reason: Cow<'static, str>,
}

impl Refusal {
    /// A write skipped by definition ([`RejectKind::Ignored`]).
    pub fn ignored(reason: impl Into<Cow<'static, str>>) -> Self {
        let reason = reason.into();
        Refusal {
            kind: RejectKind::Ignored,
            reason,
        }
    }

    /// An invalid write ([`RejectKind::Invalid`]).
    pub fn invalid(reason: impl Into<Cow<'static, str>>) -> Self {
        let reason = reason.into();
        Refusal {
            kind: RejectKind::Invalid,
            reason,
        }
    }

    /// The refusal of the write at `seq`.
    pub fn at(self, seq: Seq) -> Rejected {
        Rejected {
            seq,
            kind: self.kind,
            reason: self.reason,
        }
    }
}

impl From<String> for Refusal {
    fn from(reason: String) -> Self {
        Refusal::invalid(reason)
    }
}

/// A row that an operator refused, or applied and reported, with its position, its kind and
/// the reason.
///
/// `Display` shows the reason, prefixed with `ignored: ` for [`RejectKind::Ignored`] (late
/// rows' reasons already start with `late row`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Rejected {
    /// Source sequence number of the refused row (0 where a row has none, e.g. a window's
    /// output).
    pub seq: Seq,
    /// Ignored by definition, late, or invalid.
    pub kind: RejectKind,
    /// Why it was refused (without a kind prefix); a constant reason is not allocated, so
    /// that ignoring a write (the common refusal of a merge engine) costs no allocation.
    pub reason: Cow<'static, str>,
}

impl Rejected {
    /// An invalid row ([`RejectKind::Invalid`]) at `seq`.
    pub fn invalid(seq: Seq, reason: impl Into<Cow<'static, str>>) -> Self {
        Refusal::invalid(reason).at(seq)
    }

    /// A row behind the watermark ([`RejectKind::Late`]) at `seq`.
    pub fn late(seq: Seq, reason: impl Into<Cow<'static, str>>) -> Self {
        Rejected {
            seq,
            kind: RejectKind::Late,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            RejectKind::Ignored => write!(f, "ignored: {}", self.reason),
            RejectKind::Late | RejectKind::Invalid => f.write_str(&self.reason),
        }
    }
}

/// The outputs of [`keyed_merge`].
pub struct Merged<'s, K: 'static, V: 'static> {
    /// The merged table's changelog: `(key, change)`, each with diff `+1`.
    pub changelog: VecCollection<'s, SysTime, (K, Change<V>)>,
    /// Writes that were refused, with the reason: `(key, rejected)`, each with diff `+1`.
    pub rejected: VecCollection<'s, SysTime, (K, Rejected)>,
}

impl<'s, K: ExchangeData, V: ExchangeData> Merged<'s, K, V> {
    /// Splits an operator's output of `(key, Ok(change) | Err(rejected))` records into the
    /// changelog and the rejected writes (for operators that emit both on one stream;
    /// [`keyed_merge`] has two outputs and needs no split).
    pub(crate) fn from_outcomes(
        outcomes: VecCollection<'s, SysTime, (K, Result<Change<V>, Rejected>)>,
    ) -> Self {
        let changelog = outcomes
            .clone()
            .flat_map(|(k, o): (K, Result<Change<V>, Rejected>)| o.ok().map(|c| (k, c)));
        let rejected =
            outcomes.flat_map(|(k, o): (K, Result<Change<V>, Rejected>)| o.err().map(|r| (k, r)));
        Merged {
            changelog,
            rejected,
        }
    }
}
