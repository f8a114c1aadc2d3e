//! `deduplicate` (Apache Paimon's default merge engine, rule C9): the write with the largest
//! merge order survives; a winning `-D`/`-U` deletes the key.
//!
//! The "highest order wins" fold here is shared with [`versioned`](super::versioned).

use std::borrow::Cow;
use std::cmp::Ordering;

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
/// ignored or rejected write. A winning write updates the stored state in place: the replaced
/// row moves into `-U old`, the order is overwritten, nothing else is allocated.
#[inline]
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
    let absent = || {
        Refusal::ignored(format!(
            "a {kind} of a key without a row on the {} merge engine",
            engine.name()
        ))
    };
    let Some(stored) = state else {
        if kind.is_accumulate() {
            let new = write.into_owned();
            out.push((RowKind::Insert, new.clone()));
            *state = Some(KeyState {
                row: Some(new),
                order: OrderKey::from_slice(key),
                ranks: Vec::new(),
            });
            return Ok(None);
        }
        // A retraction of a key without a row changes nothing (Flink's ChangelogNormalize,
        // Paimon) but the order it carries, and is counted, so that a changelog that deletes
        // what it never inserted is noticed.
        if !key.is_empty() {
            *state = Some(KeyState {
                row: None,
                order: OrderKey::from_slice(key),
                ranks: Vec::new(),
            });
        }
        return Ok(Some(absent()));
    };
    // One comparison decides: below the stored order loses, above it replaces the order.
    match key.cmp(stored.order.as_slice()) {
        Ordering::Less => return Err(Refusal::ignored(engine.below_stored())),
        Ordering::Equal => {}
        // The write wins: the stored state is updated in place.
        Ordering::Greater if stored.order.len() == key.len() => stored.order.copy_from_slice(key),
        Ordering::Greater => {
            stored.order.clear();
            stored.order.extend_from_slice(key);
        }
    }
    match (kind.is_accumulate(), &mut stored.row) {
        // An identical upsert changes nothing and emits nothing (Flink's ChangelogNormalize).
        (true, Some(old)) if *old == *write => {}
        (true, Some(old)) => {
            let new = write.into_owned();
            out.push((RowKind::UpdateBefore, std::mem::replace(old, new.clone())));
            out.push((RowKind::UpdateAfter, new));
        }
        (true, row @ None) => {
            let new = write.into_owned();
            out.push((RowKind::Insert, new.clone()));
            *row = Some(new);
        }
        (false, row) => {
            let old = row.take();
            // A deleted key keeps its order (so older writes stay ignored) unless there is none.
            if key.is_empty() {
                *state = None;
            }
            return match old {
                Some(old) => {
                    out.push((RowKind::Delete, old));
                    Ok(None)
                }
                None => Ok(Some(absent())),
            };
        }
    }
    Ok(None)
}
