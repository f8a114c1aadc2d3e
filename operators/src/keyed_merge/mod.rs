//! The keyed merge: folds each key's writes, in source-sequence order, into at most one stored
//! row, and emits the resulting table's changelog.
//!
//! This is the engine under deduplication (Flink `ROW_NUMBER() .. = 1`) and under every merge
//! engine (Fluss / Paimon `table.merge-engine`): each is a [`MergeRule`] that says how one write
//! changes a key's stored state and which changelog rows (`+I`, `-U`/`+U`, `-D`) that causes.
//!
//! Shapes: input is a changelog `(K, Change<W>)` (every record with diff `+1`); output is the
//! merged table's changelog `(K, Change<Row>)`, each output row carrying the `seq` of the write
//! that caused it, plus a collection of rejected writes `(K, Rejected)` with the reason.
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

use differential_dataflow::{ExchangeData, VecCollection};
use serde::{Deserialize, Serialize};

use crate::{Change, RowKind, Seq, SysTime};

/// A merge rule: how one write changes the stored state of its key.
///
/// `merge` is called once per write, in the order described in the module docs, with the key's
/// current state (`None` if the key has no stored row) and the write's kind and row. It updates
/// the state in place and pushes the changelog rows the write causes, in emission order (e.g.
/// `-U old` then `+U new`). It returns `Ok(None)` for an applied write, `Ok(Some(note))` for a
/// write that is applied **and** reported (on the rejected output, with `note` as its reason:
/// e.g. a retraction of a key that has no row, which Paimon applies but which should not pass
/// unnoticed), and `Err(reason)` to reject the write; a rejected write must leave the state
/// unchanged and emit nothing.
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

/// What [`MergeRule::merge`] did with a write: applied (`Ok(None)`), applied and reported with a
/// note (`Ok(Some(note))`), or rejected (`Err(reason)`).
pub type Folded = Result<Option<String>, String>;

/// A write that a [`MergeRule`] (or the operator) refused, or applied and reported, with its
/// position and the reason.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Rejected {
    /// Source sequence number of the refused write.
    pub seq: Seq,
    /// Why it was refused.
    pub reason: String,
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
