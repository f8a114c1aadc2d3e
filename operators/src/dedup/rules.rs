//! The deduplication [`MergeRule`]: which row of a key is kept, and what changelog rows a new
//! row causes.

use std::borrow::Cow;
use std::marker::PhantomData;

use differential_dataflow::ExchangeData;

use super::{DedupOrder, Keep};
use crate::keyed_merge::{Folded, MergeRule, Refusal};
use crate::RowKind;

/// The reason given for a refused non-insert row (semantics rule A14).
pub(crate) fn not_insert_only(kind: RowKind) -> String {
    format!("{kind} row refused: dedup input must be insert-only (rule A14)")
}

/// Deduplication as a [`MergeRule`] over rows `V` with event time `E = time_of(row)`.
///
/// State per key: the kept row and its event time (`None` under arrival order).
pub struct DedupRule<V, E, F> {
    keep: Keep,
    order: DedupOrder,
    time_of: F,
    types: PhantomData<fn(&V) -> E>,
}

impl<V, E, F> DedupRule<V, E, F> {
    /// The rule keeping the `keep` row of each key by `order`; `time_of` gives a row's event
    /// time (called only under [`DedupOrder::EventTime`]).
    pub fn new(keep: Keep, order: DedupOrder, time_of: F) -> Self {
        DedupRule {
            keep,
            order,
            time_of,
            types: PhantomData,
        }
    }
}

/// Whether a new row replaces the stored one, under `keep` and `order`, given their event times
/// (`None` under arrival order). Arrival order puts every new row after the stored one.
fn replaces<E: Ord>(keep: Keep, new: Option<&E>, stored: Option<&E>) -> bool {
    match keep {
        // A7: time >= stored time (an equal time arrived later, so it wins); arrival: always.
        Keep::Last => new >= stored,
        // A8: strictly earlier time; arrival: never (A11).
        Keep::First => new < stored,
    }
}

impl<V: Clone + PartialEq, E: Ord, F: Fn(&V) -> E> DedupRule<V, E, F> {
    /// Folds one row, borrowed or owned: the row is cloned only if it is kept, and then once
    /// (the stored copy and the emitted copy).
    fn fold(
        &self,
        state: &mut Option<(Option<E>, V)>,
        kind: RowKind,
        row: Cow<'_, V>,
        out: &mut Vec<(RowKind, V)>,
    ) -> Result<(), String> {
        if kind != RowKind::Insert {
            return Err(not_insert_only(kind));
        }
        let time = match self.order {
            DedupOrder::EventTime => Some((self.time_of)(&row)),
            DedupOrder::Arrival => None,
        };
        match state {
            None => {
                let row = row.into_owned();
                out.push((RowKind::Insert, row.clone()));
                *state = Some((time, row));
            }
            Some((stored_time, stored)) => {
                if !replaces(self.keep, time.as_ref(), stored_time.as_ref()) {
                    return Ok(());
                }
                // A11: on arrival order an identical row changes nothing and emits nothing.
                // A7: on event time there is no such suppression.
                if self.order == DedupOrder::Arrival && *stored == *row {
                    return Ok(());
                }
                let row = row.into_owned();
                let old = std::mem::replace(stored, row.clone());
                *stored_time = time;
                out.push((RowKind::UpdateBefore, old));
                out.push((RowKind::UpdateAfter, row));
            }
        }
        Ok(())
    }
}

impl<V, E, F> MergeRule for DedupRule<V, E, F>
where
    V: ExchangeData,
    E: Ord + 'static,
    F: Fn(&V) -> E + Send + 'static,
{
    type Write = V;
    type State = (Option<E>, V);
    type Row = V;

    fn merge(
        &self,
        state: &mut Option<(Option<E>, V)>,
        kind: RowKind,
        row: &V,
        out: &mut Vec<(RowKind, V)>,
    ) -> Folded {
        (self.fold(state, kind, Cow::Borrowed(row), out))
            .map(|()| None)
            .map_err(Refusal::invalid)
    }

    fn merge_owned(
        &self,
        state: &mut Option<(Option<E>, V)>,
        kind: RowKind,
        row: V,
        out: &mut Vec<(RowKind, V)>,
    ) -> Folded {
        (self.fold(state, kind, Cow::Owned(row), out))
            .map(|()| None)
            .map_err(Refusal::invalid)
    }
}
