//! Sequential reference models of the merge engines, for tests and benchmarks.
//!
//! Unlike the engines, which fold one write at a time into one state per key, these models keep
//! each key's whole history of accepted writes and recompute the table row from it after every
//! write, from the rules as stated (e.g. "the row of the write with the highest (version,
//! arrival)"). The changelog follows from comparing the row before and after each write. They
//! are quadratic per key and only meant for small inputs.
//!
//! Covered configurations: `versioned`, `first_row` and `deduplicate` fully; `partial-update`
//! without `remove_record_on_retract` groups, with or without aggregate functions; `aggregation` with every function, with or
//! without `ignore_retract`, under each [`AggDeletes`], over integer and text cells (a float cell is outside the model: it
//! is a non-number there, while the engine computes in floating point). A write the engine
//! refuses with an error is one after which a column's value is undefined in the model (see
//! `aggregate`).

use std::collections::BTreeMap;

use super::order::{order_key_by, OrderField, OrderKey};
use super::{AggDeletes, AggFunction, Deletes, MergeEngine, PartialDeletes, PartialUpdate, Row};
use crate::operators::{Change, RowKind};
use crate::row::{pack_cells, text_datum, TextCells};

/// A cell: `None` is NULL.
type Cell = Option<String>;

/// A row of the model: its cells, unpacked.
type Text = Vec<Cell>;

/// The order of the model's row `row` in `fields`.
fn order_key(fields: &[OrderField], row: &Text) -> Result<OrderKey, String> {
    order_key_by(fields, |c| row.get(c).map(|x| text_datum(x.as_deref())))
}

/// A write the model accepted: its arrival index in the key's history, kind, row and order.
type Event<'a> = (usize, RowKind, &'a Text, OrderKey);

/// The outcome of a model run: the table's changelog (sorted) and the refused (or applied and
/// reported) writes as `(key, seq, ignored)` (sorted), where `ignored` says the refusal is of
/// kind [`RejectKind::Ignored`](crate::operators::keyed_merge::RejectKind::Ignored).
pub type Outcome<K> = (Vec<(K, Change<Row>)>, Vec<(K, u64, bool)>);

/// Runs the model of `engine` over `writes`, in input order.
pub fn run<K: Ord + Clone>(engine: &MergeEngine, writes: &[(K, Change<Row>)]) -> Outcome<K> {
    let mut history: BTreeMap<K, Vec<(RowKind, Text, OrderKey)>> = BTreeMap::new();
    let (mut changelog, mut refused) = (Vec::new(), Vec::new());
    // The engines that keep the highest order suppress an identical upsert.
    let keeps_highest = matches!(
        engine,
        MergeEngine::Versioned(_) | MergeEngine::Deduplicate(_)
    );
    for (key, change) in writes {
        let h = history.entry(key.clone()).or_default();
        let before = table_row(engine, h);
        let row: Text = change.row.cells().map(|c| c.map(str::to_string)).collect();
        match admit(engine, h, change.kind, &row) {
            Err(ignored) => refused.push((key.clone(), change.seq, ignored)),
            Ok(order) => {
                // `aggregation` applies a retraction of a key without a row and reports it as
                // an error; the engines that keep the highest order count it as ignored.
                let aggregates = matches!(engine, MergeEngine::Aggregation(_));
                if (aggregates || keeps_highest) && !change.kind.is_accumulate() && before.is_none()
                {
                    refused.push((key.clone(), change.seq, keeps_highest));
                }
                h.push((change.kind, row, order));
                let after = table_row(engine, h);
                let mut emit = |kind, row: &Text| {
                    let row = pack_cells(row.iter().map(Option::as_deref));
                    changelog.push((key.clone(), Change::new(change.seq, kind, row)))
                };
                match (before, after) {
                    (None, Some((_, new))) => emit(RowKind::Insert, &new),
                    (Some((i, old)), Some((j, new)))
                        if i != j && (old != new || !keeps_highest) =>
                    {
                        emit(RowKind::UpdateBefore, &old);
                        emit(RowKind::UpdateAfter, &new);
                    }
                    (Some((_, old)), None) => emit(RowKind::Delete, &old),
                    _ => {}
                }
            }
        }
    }
    changelog.sort();
    refused.sort();
    (changelog, refused)
}

/// Whether the write enters the history: `Ok(order)` or `Err(ignored)` if refused.
fn admit(
    engine: &MergeEngine,
    h: &[(RowKind, Text, OrderKey)],
    kind: RowKind,
    row: &Text,
) -> Result<OrderKey, bool> {
    let retraction = !kind.is_accumulate();
    let deletes = |d: &Deletes| match d {
        Deletes::Ignore if retraction => Err(true),
        Deletes::Reject(_) if retraction => Err(false),
        _ => Ok(()),
    };
    match engine {
        MergeEngine::Versioned(v) => {
            let version = match &row[v.version.column] {
                None => Some(v.version.ty.min_value()),
                Some(text) => Some(v.version.ty.parse(text).map_err(|_| false)?),
            };
            deletes(&v.deletes)?;
            below_stored(h, smallvec::smallvec![version])
        }
        MergeEngine::FirstRow(f) => {
            deletes(&f.deletes)?;
            let has_row = events(h)
                .rev()
                .find(|e| !e.1.is_accumulate())
                .map_or(events(h).next().is_some(), |r| events(h).any(|e| e.0 > r.0));
            if !retraction && has_row {
                return Err(true);
            }
            Ok(OrderKey::new())
        }
        MergeEngine::Deduplicate(d) => {
            let order = order_key(&d.sequence, row).map_err(|_| false)?;
            deletes(&d.deletes)?;
            below_stored(h, order)
        }
        MergeEngine::PartialUpdate(p) => {
            if retraction {
                match p.deletes() {
                    PartialDeletes::Ignore => return Err(true),
                    PartialDeletes::RemoveRecordOnDelete if table_row(engine, h).is_none() => {
                        return Err(true)
                    }
                    PartialDeletes::RemoveRecordOnDelete => return Ok(OrderKey::new()),
                    _ if p.groups().is_empty() => return Err(false),
                    _ if table_row(engine, h).is_none() => return Err(true),
                    _ => {}
                }
            }
            for g in p.groups() {
                let incoming = order_key(&g.sequence, row).map_err(|_| false)?;
                // A retraction reaching a column whose function cannot retract is refused.
                let reaches = retraction && incoming.iter().any(Option::is_some);
                let refuses = g.fields.iter().filter_map(|&c| p.aggregate(c));
                if reaches
                    && refuses
                        .clone()
                        .any(|f| !f.ignore_retract && !f.function.supports_retract())
                {
                    return Err(false);
                }
            }
            let mut after = h.to_vec();
            after.push((kind, row.clone(), OrderKey::new()));
            partial_row(p, &after).map_err(|_| false)?;
            Ok(OrderKey::new())
        }
        MergeEngine::Aggregation(a) => {
            let has_row = table_row(engine, h).is_some();
            match &a.deletes {
                _ if !retraction => {}
                AggDeletes::Retract => {}
                AggDeletes::RemoveRecordOnDelete | AggDeletes::Fluss(Deletes::Apply)
                    if kind == RowKind::Delete =>
                {
                    return if has_row {
                        Ok(OrderKey::new())
                    } else {
                        Err(true)
                    };
                }
                AggDeletes::RemoveRecordOnDelete => {}
                AggDeletes::Fluss(d) => return deletes(d).and(Err(true)),
            }
            let refuses =
                |f: &&super::FieldAgg| !f.ignore_retract && !f.function.supports_retract();
            if retraction && a.fields.iter().flatten().any(|f| refuses(&f)) {
                return Err(false);
            }
            let order = order_key(&a.sequence, row).map_err(|_| false)?;
            let mut after = h.to_vec();
            after.push((kind, row.clone(), order.clone()));
            aggregated(a, &after).map_err(|_| false)?;
            Ok(order)
        }
    }
}

/// `Err(true)` (ignored) if `order` is below the stored row's (or delete's): for the engines that
/// keep the highest order, every admitted write is at least the previous one, so that is the
/// last admitted write's order.
fn below_stored(h: &[(RowKind, Text, OrderKey)], order: OrderKey) -> Result<OrderKey, bool> {
    match h.last() {
        Some((_, _, stored)) if order < *stored => Err(true),
        _ => Ok(order),
    }
}

fn events(h: &[(RowKind, Text, OrderKey)]) -> impl DoubleEndedIterator<Item = Event<'_>> {
    h.iter()
        .enumerate()
        .map(|(i, (k, r, o))| (i, *k, r, o.clone()))
}

/// The table row after the history `h`, with the identity of what produced it (a write index:
/// a change of identity is a `-U`/`+U` even if the row is equal).
fn table_row(engine: &MergeEngine, h: &[(RowKind, Text, OrderKey)]) -> Option<(usize, Text)> {
    let winner = |e: Event<'_>| e.1.is_accumulate().then(|| (e.0, e.2.clone()));
    match engine {
        MergeEngine::Versioned(_) | MergeEngine::Deduplicate(_) => {
            // The last of the writes with the largest order.
            events(h).max_by(|a, b| a.3.cmp(&b.3)).and_then(winner)
        }
        MergeEngine::FirstRow(_) => {
            let start = events(h)
                .rev()
                .find(|e| !e.1.is_accumulate())
                .map_or(0, |e| e.0 + 1);
            events(h).find(|e| e.0 >= start).and_then(winner)
        }
        MergeEngine::PartialUpdate(p) => {
            let row = partial_row(p, h).ok().flatten()?;
            Some((h.len(), row))
        }
        MergeEngine::Aggregation(a) => {
            let row = aggregated(a, h).ok().flatten()?;
            Some((h.len(), row))
        }
    }
}

/// The partial-update row after the history `h` (`Ok(None)` without one), or `Err` if an
/// aggregated column's value is undefined after it (see [`aggregated`]).
fn partial_row(p: &PartialUpdate, h: &[(RowKind, Text, OrderKey)]) -> Result<Option<Text>, ()> {
    let start = events(h)
        .rev()
        .find(|e| !e.1.is_accumulate() && p.removes_record_on_delete())
        .map_or(0, |e| e.0 + 1);
    let live: Vec<_> = events(h).filter(|e| e.0 >= start).collect();
    let Some(first) = live.iter().find(|e| e.1.is_accumulate()) else {
        return Ok(None);
    };
    let mut row = vec![None; first.2.len()];
    for (c, cell) in row.iter_mut().enumerate() {
        let group = p
            .groups()
            .iter()
            .find(|g| g.fields.contains(&c) || g.sequence.iter().any(|s| s.column == c));
        *cell = match group {
            _ if p.is_key(c) => first.2[c].clone(),
            // Outside the groups: every accumulating write, in arrival order.
            None => {
                let mut adds = live.iter().rev().filter(|e| e.1.is_accumulate());
                match p.aggregate(c) {
                    Some(f) => aggregate(f, c, &replay(adds.rev().map(|e| (OrderKey::new(), e))))?,
                    None => adds.find_map(|e| e.2[c].clone()),
                }
            }
            // In a group: the writes with a non-NULL group sequence, ordered by it.
            Some(g) => {
                let keyed = || {
                    live.iter().filter_map(|e| {
                        let k = order_key(&g.sequence, e.2).ok()?;
                        k.iter().any(Option::is_some).then_some((k, e))
                    })
                };
                match p.aggregate(c) {
                    Some(f) => aggregate(f, c, &replay(keyed()))?,
                    None => match keyed().max_by(|a, b| a.0.cmp(&b.0)).map(|(_, e)| e) {
                        Some(e) if e.1.is_accumulate() || !g.fields.contains(&c) => e.2[c].clone(),
                        _ => None,
                    },
                }
            }
        };
    }
    Ok(Some(row))
}

/// The writes an aggregated column sees, each with the order its function follows.
fn replay<'a, 'r: 'a>(
    seen: impl Iterator<Item = (OrderKey, &'a Event<'r>)>,
) -> Vec<(RowKind, Text, OrderKey)> {
    seen.map(|(k, e)| (e.1, e.2.clone(), k)).collect()
}

/// The aggregated row after the history `h` (`Ok(None)` before the first write), or `Err` if a
/// column's value is undefined after it: the write last in `h` is then refused.
fn aggregated(a: &super::Aggregation, h: &[(RowKind, Text, OrderKey)]) -> Result<Option<Text>, ()> {
    // A `-D` that removes the row starts the key afresh.
    let removes = matches!(
        a.deletes,
        AggDeletes::RemoveRecordOnDelete | AggDeletes::Fluss(Deletes::Apply)
    );
    let start = h
        .iter()
        .rposition(|e| removes && e.0 == RowKind::Delete)
        .map_or(0, |i| i + 1);
    let h = &h[start..];
    let Some(first) = events(h).next() else {
        return Ok(None);
    };
    let cells = a.fields.iter().enumerate().map(|(c, f)| match f {
        None => Ok(first.2[c].clone()),
        Some(f) => aggregate(f, c, h),
    });
    cells.collect::<Result<Text, ()>>().map(Some)
}

/// An integer cell (the model's numbers; `None` for any other text).
fn integer(text: &str) -> Option<i128> {
    text.trim().parse::<i64>().ok().map(i128::from)
}

/// A boolean cell (`true` / `false`, any case).
fn boolean(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// The order of `max` and `min`: numbers (integers exactly, else finite floats) by value before
/// any other cell, the rest by text; equal values by text.
fn compare(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let float = |t: &str| t.trim().parse::<f64>().ok().filter(|x| x.is_finite());
    let by_value = match (integer(a), integer(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => match (float(a), float(b)) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        },
    };
    by_value.then_with(|| a.cmp(b))
}

/// One aggregated column from the history, by each function's definition: `Err` if the value
/// is undefined (a non-number summed or multiplied, an integer overflow, an inexact or zero
/// division, a retraction from a NULL product, a non-boolean where a boolean is read).
///
/// Numbers are integers here: the engine's float arithmetic is not modelled (a float cell is a
/// non-number to the model; the generators make none).
fn aggregate(f: &super::FieldAgg, c: usize, h: &[(RowKind, Text, OrderKey)]) -> Result<Cell, ()> {
    use AggFunction::*;
    let adds = || events(h).filter(|e| e.1.is_accumulate());
    // Retractions that reach the column: none with `ignore_retract`.
    let counted = || events(h).filter(|e| e.1.is_accumulate() || !f.ignore_retract);
    let present = || adds().filter(|e| e.2[c].is_some());
    let text = |e: Event<'_>| e.2[c].clone();
    let number = |e: &Event<'_>| e.2[c].as_deref().map(|t| integer(t).ok_or(())).transpose();
    let fits = |v: i128| i64::try_from(v).map(i128::from).map_err(|_| ());
    let retracted_after = |w: &Event<'_>, non_null: bool| {
        counted().any(|e| e.0 > w.0 && !e.1.is_accumulate() && (!non_null || e.2[c].is_some()))
    };
    Ok(match f.function {
        // The signed sum of the non-NULL values (retractions subtract), in i64 at every step.
        Sum => {
            let mut sum: Option<i128> = None;
            for e in counted() {
                if let Some(v) = number(&e)? {
                    let v = if e.1.is_accumulate() { v } else { -v };
                    sum = Some(fits(sum.unwrap_or(0) + v)?);
                }
            }
            sum.map(|s| s.to_string())
        }
        // The product of the non-NULL values, a retraction dividing it exactly (a retraction of
        // zero or before any value is undefined), in i64 at every step.
        Product => {
            let mut product: Option<i128> = None;
            for e in counted() {
                product = match (number(&e)?, e.1.is_accumulate(), product) {
                    (None, _, p) => p,
                    (Some(v), true, p) => Some(fits(p.unwrap_or(1) * v)?),
                    (Some(v), false, Some(p)) if v != 0 && p % v == 0 => Some(p / v),
                    (Some(_), false, _) => return Err(()),
                };
            }
            product.map(|p| p.to_string())
        }
        Count => adds().next().map(|_| present().count().to_string()),
        Max => present()
            .filter_map(text)
            .reduce(|m, v| if compare(&v, &m).is_gt() { v } else { m }),
        Min => present()
            .filter_map(text)
            .reduce(|m, v| if compare(&v, &m).is_lt() { v } else { m }),
        // The non-NULL values in arrival order, joined by the field's delimiter.
        ListAgg => present()
            .filter_map(text)
            .reduce(|l, v| format!("{l}{}{v}", f.delimiter)),
        // Every non-NULL cell must be a boolean (a bad one leaves the value undefined).
        BoolAnd | BoolOr => {
            let cells = present().map(|e| boolean(e.2[c].as_deref().unwrap_or_default()));
            let values: Vec<bool> = cells.collect::<Option<_>>().ok_or(())?;
            let combine = |a: bool, b: bool| if f.function == BoolOr { a || b } else { a && b };
            values.into_iter().reduce(combine).map(|v| v.to_string())
        }
        LastValue => {
            let Some(w) = adds().max_by(|a, b| a.3.cmp(&b.3)) else {
                return Ok(None);
            };
            (!retracted_after(&w, false)).then(|| text(w)).flatten()
        }
        FirstValue => adds().min_by(|a, b| a.3.cmp(&b.3)).and_then(text),
        FirstNonNullValue => present().min_by(|a, b| a.3.cmp(&b.3)).and_then(text),
        LastNonNullValue => {
            let Some(w) = present().max_by(|a, b| a.3.cmp(&b.3)) else {
                return Ok(None);
            };
            (!retracted_after(&w, true)).then(|| text(w)).flatten()
        }
    })
}
