//! `deduplicate` (Apache Paimon's default merge engine, rule C9): the write with the largest
//! merge order survives; a winning `-D`/`-U` deletes the key.
//!
//! The "highest order wins" fold here is shared with [`versioned`](super::versioned).

use std::borrow::Cow;

use super::order::{order_key, order_value, OrderField, OrderKey, OrderValue};
use super::{Deletes, KeyState, Row};
use crate::operators::keyed_merge::{Folded, Refusal};
use crate::operators::RowKind;

/// Paimon `deduplicate`: last write wins, or, with `sequence.field`, the write with the highest
/// sequence (several columns compared left to right, NULL lowest, ties by arrival: the later
/// write wins).
///
/// Deletes: with [`Deletes::Apply`] (Paimon's default) a `-D`/`-U` that carries the highest
/// sequence so far deletes the key (`-D` of the stored row) and one with a lower sequence loses;
/// the deleted key remembers that sequence, so a later write with a lower sequence does not
/// bring it back (case C07). [`Deletes::Ignore`] is Paimon's `'ignore-delete' = 'true'`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deduplicate {
    /// The `sequence.field` columns; empty: arrival order only.
    pub sequence: Vec<OrderField>,
    /// What a `-D`/`-U` write does.
    pub deletes: Deletes,
}

impl Deduplicate {
    /// Folds one write, borrowed or owned (cloned only if it wins).
    pub(crate) fn merge(
        &self,
        state: &mut Option<KeyState>,
        kind: RowKind,
        write: Cow<'_, Row>,
        out: &mut Vec<(RowKind, Row)>,
    ) -> Folded {
        // One sequence column (the usual case) is read without allocating.
        let (one, many);
        let key: &[Option<OrderValue>] = match self.sequence.as_slice() {
            [field] => {
                one = [order_value(field, &write)?];
                &one
            }
            fields => {
                many = order_key(fields, &write)?;
                &many
            }
        };
        keep_highest(
            state,
            kind,
            write,
            key,
            &self.deletes,
            Highest::Deduplicate,
            out,
        )
    }
}

/// The engines that keep the write with the highest order, for their refusal reasons.
#[derive(Clone, Copy)]
pub(crate) enum Highest {
    Versioned,
    Deduplicate,
}

impl Highest {
    fn name(self) -> &'static str {
        match self {
            Highest::Versioned => "versioned",
            Highest::Deduplicate => "deduplicate",
        }
    }

    /// The reason of a write ordered below the stored row: the common refusal of these
    /// engines, a constant so that it costs no allocation.
    fn below_stored(self) -> &'static str {
        match self {
            Highest::Versioned => {
                "a write ordered below the stored row on the versioned merge engine"
            }
            Highest::Deduplicate => {
                "a write ordered below the stored row on the deduplicate merge engine"
            }
        }
    }
}

/// The "highest order wins" fold: `write` (with order `key`) replaces the stored row iff `key`
/// is greater than or equal to the stored order (ties: the later write wins).
///
/// Emits `+I new` for a key without a row, `-U old, +U new` on replacement (nothing if `new`
/// equals `old`: an identical upsert is suppressed) and `-D old` when a
/// winning retraction deletes the key; a losing write (ordered below the stored row or delete)
/// emits nothing, is not cloned and is reported as ignored, so that it is counted (a winning
/// one is cloned once, for the emitted copy); a retraction of a key without a row is applied
/// (it keeps its order) and reported as ignored too. `engine` names the engine in the reason of an
/// ignored or rejected write.
pub(crate) fn keep_highest(
    state: &mut Option<KeyState>,
    kind: RowKind,
    write: Cow<'_, Row>,
    key: &[Option<OrderValue>],
    deletes: &Deletes,
    engine: Highest,
    out: &mut Vec<(RowKind, Row)>,
) -> Folded {
    if !kind.is_accumulate() {
        match deletes {
            Deletes::Apply => {}
            Deletes::Ignore => {
                return Err(Refusal::ignored(format!(
                    "{kind} write on the {} merge engine",
                    engine.name()
                )))
            }
            Deletes::Reject(reason) => return Err(Refusal::invalid(reason.clone())),
        }
    }
    let wins = state.as_ref().is_none_or(|s| key >= s.order.as_slice());
    if !wins {
        return Err(Refusal::ignored(engine.below_stored()));
    }
    let had_row = state.as_ref().is_some_and(|s| s.row.is_some());
    let (old, mut order) = match state.take() {
        Some(s) => (s.row, s.order),
        None => (None, OrderKey::new()),
    };
    let new = kind.is_accumulate().then(|| write.into_owned());
    match (old, &new) {
        (None, Some(new)) => out.push((RowKind::Insert, new.clone())),
        // An identical upsert changes nothing and emits nothing (Flink's ChangelogNormalize).
        (Some(old), Some(new)) if old == *new => {}
        (Some(old), Some(new)) => {
            out.push((RowKind::UpdateBefore, old));
            out.push((RowKind::UpdateAfter, new.clone()));
        }
        (Some(old), None) => out.push((RowKind::Delete, old)),
        (None, None) => {}
    }
    // A retraction of a key without a row changes nothing (Flink's ChangelogNormalize, Paimon)
    // and is counted, so that a changelog that deletes what it never inserted is noticed.
    let absent = new.is_none() && !had_row;
    // A deleted key keeps its order (so older writes stay ignored) unless there is none.
    if new.is_some() || !key.is_empty() {
        order.clear();
        order.extend_from_slice(key);
        *state = Some(KeyState {
            row: new,
            order,
            ranks: Vec::new(),
        });
    }
    Ok(absent.then(|| {
        Refusal::ignored(format!(
            "a {kind} of a key without a row on the {} merge engine",
            engine.name()
        ))
    }))
}
