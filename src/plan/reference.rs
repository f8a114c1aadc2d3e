//! The reference interpreter: a plan evaluated sequentially over plain vectors, no timely.
//!
//! Every rendered plan is checked against it (proptest, random inputs, batching and worker
//! counts), the way each operator is checked against its `reference.rs`. It recomputes from
//! scratch and is slow and obviously right: each node's output is the multiset of rows it holds
//! at every system time, computed from its inputs' multisets (or, for the nodes whose meaning
//! depends on the order of changes, from its inputs' change streams).
//!
//! Inputs are, per scanned table, its changes: `(system time, Change { seq, kind, row })`,
//! sorted by `(system time, seq)`. The output is a [`Stream`] of the same shape whose
//! accumulation ([`snapshot`]) at any system time is the node's table then. Rows the plan
//! refuses (an expression error, a NULL event time) are returned beside it, with their `seq`.
//!
//! Semantics (incremental mode, exact at every system time):
//! * `Map`/`Filter`/`Project`: per change; a row whose expression fails is refused.
//! * `ProcTime`: each change with its proctime column set to the processing time of its system
//!   time.
//! * `Reduce`: per group of the accumulated input, the aggregates over the group's rows in
//!   arrival (`seq`) order; groups with no rows have no output row.
//! * `Distinct`: each row of positive multiplicity once.
//! * `Dedup`: per key, among the accumulated `+I` rows, the first or last by `(rowtime, seq)`
//!   (event time) or by `seq` (arrival). Other kinds are refused (rule A14). Under
//!   [`evaluate_final`], keep-first by rowtime is the operator's model of rule A9 (each key's
//!   first row once the watermark passes it, rows behind the watermark refused; with a state
//!   TTL, rule A13).
//! * `AsOf`: per primary key, among the input's changes so far, the version with the greatest
//!   `(rowtime, seq)` at or before the event time read (`+I`/`+U` rows, `-D` deletes, `-U`
//!   none); its row, none for a delete (the versioned table's sequential model).
//! * `History`: every row version among the input's changes so far, its `valid_to` (the key's
//!   next version's rowtime, NULL while current) appended (the same model's history).
//! * `CheckChangelog`: at every system time, the changes so far read one by one in
//!   `(system time, seq)` order by the sequential per-key checker (see the module `check`);
//!   a `-U` still waiting for its `+U` at the end is a finding.
//! * `MergeEngine`: the input's changes as writes, applied one by one in `(system time, seq)`
//!   order to their key's state by the engine's rule (see the module `merge`); NULL is a key
//!   value.
//! * `TemporalJoin`: each accumulated probe change joined with the build version of its key
//!   valid at its rowtime (greatest `(rowtime, seq)` at or before it among the build changes
//!   so far; `+I`/`+U` are row versions, `-D` a delete version, `-U` ignored), residual checked
//!   on that version only; INNER drops a probe row without match, LEFT pads it with NULLs. A
//!   NULL key never matches.
//!   Under [`evaluate_final`] with a state TTL, the join's own model over the watermarks.
//! * `LookupJoin`: each probe change joined, at its system time, with the latest (by rowtime,
//!   then `seq`) build change of its key at that system time, within the state TTL if any;
//!   never revised.
//! * `Join`: the join of the two accumulated tables, pair by pair (equal keys free of NULLs, the
//!   residual TRUE), a kept side's rows without a match padded with NULLs. With a state TTL,
//!   Flink's streaming join over state whose rows expire after the TTL in system times,
//!   simulated row by row (the module `join_ttl`). An interval join
//!   under [`evaluate_final`]: each pair in the window when its second row arrives, each
//!   unmatched row of a kept side once the watermark has passed its window, rows behind the
//!   watermark refused (the interval join's model).
//! * `AsofJoin`: each accumulated probe change joined with the closest build row of its key in
//!   the condition's direction among the accumulated build table (ties: greatest `seq` on an
//!   append-only build side, then the smallest row), within the tolerance; NULL keys and NULL
//!   ordering values never match; INNER drops a probe row without a match, LEFT pads it.
//! * `Sort`: with a fetch, the accumulated rows in the order of the sort keys (ties by value),
//!   the `fetch` after the first `offset`; without, its input.
//! * `TopN`: per partition of the accumulated rows, the first `limit` in the order of the sort
//!   keys (ties by value), with the row number appended if asked.
//! * `Correlate`: per change, the rows of its expansion (a table function's, UNNEST's) with
//!   its kind and `seq`, an INNER join's condition checked on each, a LEFT join's empty
//!   expansion padded with NULLs; a row whose function or condition fails is refused.
//! * `SetOp`: per row, its multiplicity in the output from its multiplicities in the two
//!   accumulated tables (`m + n`, `min(m, n)`, `max(m - n, 0)`, or 0/1 without `ALL`).
//! * `WindowAgg`: the `Reduce` of its input's rows repeated once per window, the window's
//!   columns appended; under [`evaluate_final`], Flink's window operator over the watermark.
//! * `WindowAssign`: each change once per window of its row, the window's columns appended;
//!   under [`evaluate_final`], the rows of the final window aggregation counting each row of
//!   a window, repeated by their count (each window's rows when the watermark passes it).
//! * `CountWindowAgg`: per group key, the accumulated rows sorted by `(system time, seq,
//!   row)` numbered from 0, and each complete window's aggregates over its rows in that order
//!   (the same in both modes).
//! * `Over`: per accepted row, the aggregates over its frame among its partition's rows sorted
//!   by `(rowtime, seq)`, recomputed at every system time; under [`evaluate_final`], each row
//!   emitted once when the watermark passes it, rows behind the watermark refused.

mod as_of;
mod asof;
mod binary;
mod check;
mod correlate;
mod count_window;
mod dedup;
mod interval;
mod join_ttl;
mod merge;
mod over;
mod rows;
mod temporal;
mod window;

use std::collections::BTreeMap;

use crate::expr::{EvalError, RowArena};
use crate::repr::{Datum, DatumVec, Row};
use differential_temporal_operators::{Change, RowKind, Seq, SysTime};

use super::{top_n, DedupOrder, ExecutionMode, Keep, Node, PlanError, RelExpr};
use rows::{
    as_table_stream, consolidate, diff_counts_into, event_time, has_null, project, refuse, times,
};

/// Changes with their system times, sorted by `(system time, seq)`.
pub type Stream = Vec<(SysTime, Change<Row>)>;

/// The changes of each scanned table, by name.
pub type Inputs = BTreeMap<String, Stream>;

/// A row the plan refused: its system time, `seq` and the reason.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Refused {
    /// When it entered.
    pub time: SysTime,
    /// Its source sequence number.
    pub seq: Seq,
    /// Why.
    pub reason: String,
}

/// What a plan evaluates to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Evaluated {
    /// The output changes.
    pub stream: Stream,
    /// The refused rows.
    pub refused: Vec<Refused>,
}

/// Evaluates `plan` over `inputs`. A scanned table missing from `inputs` is an error.
pub fn evaluate(plan: &RelExpr, inputs: &Inputs) -> Result<Evaluated, PlanError> {
    evaluate_in(plan, inputs, false)
}

/// Evaluates `plan` over `inputs` as the final mode renders it: the same as [`evaluate`] but
/// for keep-first deduplications by rowtime, which emit a key's row when the watermark passes
/// it and refuse rows behind it (see [`RelExpr::with_event_time_ttl`]), window aggregations, which emit a window when the watermark passes it and refuse rows
/// beyond the allowed lateness (see [`WindowAgg`](crate::plan::WindowAgg)), window
/// assignments, which give a window's rows when the watermark passes it and refuse rows for
/// windows it has passed (see [`WindowAssign`](crate::plan::WindowAssign)), OVER
/// aggregations, which emit a row when the watermark passes it and refuse rows behind it (see
/// [`Over`](crate::plan::Over)), and interval joins, which emit a match when its second row
/// arrives and a padded row when the watermark has passed its window, and refuse rows behind
/// the watermark (see [`IntervalBounds`](crate::plan::IntervalBounds)).
pub fn evaluate_final(plan: &RelExpr, inputs: &Inputs) -> Result<Evaluated, PlanError> {
    evaluate_in(plan, inputs, true)
}

fn evaluate_in(plan: &RelExpr, inputs: &Inputs, final_mode: bool) -> Result<Evaluated, PlanError> {
    let mode = match final_mode {
        true => ExecutionMode::Final,
        false => ExecutionMode::Incremental,
    };
    let mut refused = Vec::new();
    let mut stream = eval(&plan.in_execution(mode)?, inputs, &mut refused, final_mode)?;
    stream.sort_by_key(|a| (a.0, a.1.seq));
    refused.sort();
    Ok(Evaluated { stream, refused })
}

/// The multiset a stream holds at system time `at`: `(row, multiplicity)`, sorted, zero
/// multiplicities removed.
pub fn snapshot(stream: &[(SysTime, Change<Row>)], at: SysTime) -> Vec<(Row, isize)> {
    let mut table = BTreeMap::new();
    for (time, change) in stream.iter().filter(|(t, _)| *t <= at) {
        let _ = time;
        *table.entry(change.row.clone()).or_insert(0) += change.kind.sign();
    }
    table.into_iter().filter(|(_, d)| *d != 0).collect()
}

/// `plan`'s output stream; `final_mode` selects the window aggregations' final-mode model.
fn eval(
    plan: &RelExpr,
    inputs: &Inputs,
    refused: &mut Vec<Refused>,
    final_mode: bool,
) -> Result<Stream, PlanError> {
    let mut datums = DatumVec::new();
    let mut arena = RowArena::new();
    Ok(match &plan.node {
        Node::Scan { name } => inputs
            .get(name)
            .cloned()
            .ok_or_else(|| PlanError::invalid("Scan", format!("no input named '{name}'")))?,
        Node::Values { rows } => rows
            .iter()
            .enumerate()
            .map(|(i, r)| (0, Change::new(i as Seq, RowKind::Insert, r.clone())))
            .collect(),
        Node::Map { input, exprs } => {
            let mut out = Vec::new();
            for (time, change) in eval(input, inputs, refused, final_mode)? {
                arena.clear();
                let row = &change.row;
                let datums = datums.borrow_with(row);
                let computed: Result<Vec<Datum>, EvalError> =
                    exprs.iter().map(|e| e.eval(&datums, &arena)).collect();
                match computed {
                    Ok(values) => {
                        let row = Row::pack(datums.iter().copied().chain(values));
                        out.push((time, Change::new(change.seq, change.kind, row)));
                    }
                    Err(e) => refused.push(refuse(time, change.seq, e.to_string())),
                }
            }
            out
        }
        Node::ProcTime {
            input,
            column,
            clock,
        } => eval(input, inputs, refused, final_mode)?
            .into_iter()
            .map(|(time, ch)| {
                let row = super::stamp(&ch.row, *column, clock.at(time));
                (time, Change::new(ch.seq, ch.kind, row))
            })
            .collect(),
        Node::Filter { input, predicate } => {
            let mut out = Vec::new();
            for (time, change) in eval(input, inputs, refused, final_mode)? {
                arena.clear();
                let keep = {
                    let datums = datums.borrow_with(&change.row);
                    predicate
                        .eval(&datums, &arena)
                        .map(|d| matches!(d, Datum::Bool(true)))
                };
                match keep {
                    Ok(true) => out.push((time, change)),
                    Ok(false) => {}
                    Err(e) => refused.push(refuse(time, change.seq, e.to_string())),
                }
            }
            out
        }
        Node::Project { input, columns } => eval(input, inputs, refused, final_mode)?
            .into_iter()
            .map(|(time, change)| {
                let row = project(&change.row, columns, &mut datums);
                (time, Change::new(change.seq, change.kind, row))
            })
            .collect(),
        Node::Reduce {
            input,
            group,
            aggregates,
        } => {
            let changes = eval(input, inputs, refused, final_mode)?;
            let error = std::cell::RefCell::new(None);
            let out = as_table_stream(&changes, input.mode.is_append_only(), |rows| {
                // Groups, rows in arrival order (seq), with multiplicities.
                let mut groups: BTreeMap<Row, Vec<(Seq, Row, isize)>> = BTreeMap::new();
                for (seq, row, count) in rows {
                    let key = project(&row, group, &mut DatumVec::new());
                    groups.entry(key).or_default().push((seq, row, count));
                }
                let mut table = Vec::new();
                for (key, mut rows) in groups {
                    rows.sort();
                    let mut out = Row::new();
                    let mut packer = out.packer();
                    packer.extend(key.iter());
                    for agg in aggregates {
                        let unpacked: Vec<Vec<Datum>> =
                            rows.iter().map(|(_, r, _)| r.iter().collect()).collect();
                        let group_rows = unpacked
                            .iter()
                            .zip(&rows)
                            .map(|(d, (_, _, c))| (d.as_slice(), *c as usize));
                        if let Err(e) = agg.eval_group(group_rows, &mut packer) {
                            error.borrow_mut().get_or_insert(e.to_string());
                            packer.push(Datum::Null);
                        }
                    }
                    table.push(out);
                }
                table
            });
            if let Some(reason) = error.into_inner() {
                return Err(PlanError::invalid("Reduce", reason));
            }
            out
        }
        Node::Distinct { input } => {
            let changes = eval(input, inputs, refused, final_mode)?;
            as_table_stream(&changes, false, |rows| {
                let mut rows: Vec<Row> = rows.into_iter().map(|(_, r, _)| r).collect();
                rows.sort();
                rows.dedup();
                rows
            })
        }
        Node::AsOf { input, at } => {
            let changes = eval(input, inputs, refused, final_mode)?;
            as_of::as_of(&changes, input, *at, refused)
        }
        Node::History { input } => {
            let changes = eval(input, inputs, refused, final_mode)?;
            as_of::history(&changes, input, refused)
        }
        Node::CheckChangelog(c) => {
            let mut changes = eval(&c.input, inputs, refused, final_mode)?;
            changes.sort_by_key(|(time, change)| (*time, change.seq));
            check::check(&changes, c)
        }
        Node::MergeEngine {
            input, key, engine, ..
        } => {
            let writes = eval(input, inputs, refused, final_mode)?;
            merge::merge(writes, key, engine, refused)
        }
        Node::Dedup {
            input,
            key,
            keep,
            order,
            state_ttl,
        } => {
            let changes = eval(input, inputs, refused, final_mode)?;
            let on_watermark =
                final_mode && (*keep, *order) == (Keep::First, DedupOrder::EventTime);
            match on_watermark {
                true => dedup::first_on_watermark(changes, input, key, *state_ttl, refused),
                false => dedup::dedup(changes, input, key, (*keep, *order), refused),
            }
        }
        Node::TemporalJoin(join) => {
            let probe = eval(&join.probe, inputs, refused, final_mode)?;
            let build = eval(&join.build, inputs, refused, final_mode)?;
            match (join.state_ttl, final_mode) {
                (Some(ttl), true) => {
                    temporal::temporal_join_final(join, ttl, &probe, &build, refused)
                }
                _ => temporal::temporal_join(join, &probe, &build, refused),
            }
        }
        Node::LookupJoin(join) => {
            let probe = eval(&join.probe, inputs, refused, final_mode)?;
            let build = eval(&join.build, inputs, refused, final_mode)?;
            temporal::lookup_join(join, &probe, &build, refused)
        }
        Node::Join(join) => {
            let left = eval(&join.left, inputs, refused, final_mode)?;
            let right = eval(&join.right, inputs, refused, final_mode)?;
            if let (Some(bounds), true) = (&join.interval, final_mode) {
                return Ok(interval::evaluate(join, bounds, &left, &right, refused));
            }
            if let Some(ttl) = join.state_ttl {
                return Ok(join_ttl::evaluate(join, ttl, &left, &right));
            }
            binary::table_stream(&left, &right, |l, r| binary::equi_join(join, l, r))
        }
        Node::AsofJoin(join) => {
            let probe = eval(&join.probe, inputs, refused, final_mode)?;
            let build = eval(&join.build, inputs, refused, final_mode)?;
            asof::asof_join(join, &probe, &build)
        }
        Node::Correlate(c) => {
            let changes = eval(&c.input, inputs, refused, final_mode)?;
            correlate::correlate(c, c.width(&plan.schema), changes, refused)
        }
        Node::SetOp {
            left,
            right,
            op,
            all,
        } => {
            let left = eval(left, inputs, refused, final_mode)?;
            let right = eval(right, inputs, refused, final_mode)?;
            binary::table_stream(&left, &right, |l, r| binary::set_op(*op, *all, l, r))
        }
        Node::Sort {
            input,
            order,
            offset,
            fetch,
        } => {
            let changes = eval(input, inputs, refused, final_mode)?;
            match fetch {
                None => changes,
                Some(fetch) => as_table_stream(&changes, false, |rows| {
                    let rows: Vec<(&Row, isize)> = rows.iter().map(|(_, r, c)| (r, *c)).collect();
                    top_n(order, *offset, *fetch, false, &rows)
                        .into_iter()
                        .flat_map(|(row, count)| std::iter::repeat_n(row, count as usize))
                        .collect()
                }),
            }
        }
        Node::WindowAgg(w) => window::evaluate(
            w,
            eval(&w.input, inputs, refused, final_mode)?,
            refused,
            final_mode,
        )?,
        Node::WindowAssign(a) => window::assign(
            a,
            eval(&a.input, inputs, refused, final_mode)?,
            refused,
            final_mode,
        )?,
        Node::CountWindowAgg(w) => {
            count_window::evaluate(w, &eval(&w.input, inputs, refused, final_mode)?)?
        }
        Node::TopN(t) => {
            let changes = eval(&t.input, inputs, refused, final_mode)?;
            as_table_stream(&changes, false, |rows| {
                let mut partitions: BTreeMap<Row, Vec<(Row, isize)>> = BTreeMap::new();
                for (_, row, count) in rows {
                    let key = project(&row, &t.partition, &mut DatumVec::new());
                    partitions.entry(key).or_default().push((row, count));
                }
                partitions
                    .into_values()
                    .flat_map(|rows| {
                        let rows: Vec<(&Row, isize)> = rows.iter().map(|(r, c)| (r, *c)).collect();
                        top_n(&t.order, 0, t.limit, t.rank, &rows)
                    })
                    .flat_map(|(row, count)| std::iter::repeat_n(row, count as usize))
                    .collect()
            })
        }
        Node::Over(o) => over::evaluate(
            o,
            eval(&o.input, inputs, refused, final_mode)?,
            refused,
            final_mode,
        )?,
        Node::Sink { input, .. } => eval(input, inputs, refused, final_mode)?,
    })
}
