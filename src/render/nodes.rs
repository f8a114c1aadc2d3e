//! Rendering of the single-input nodes and the dispatch over every node.

use differential_dataflow::AsCollection;
use timely::dataflow::operators::ToStream;

use crate::expr::{CompiledExpr, RowArena, ScalarExpr};
use crate::plan::{stamp, Node, PlanError, RelExpr};
use crate::repr::{column_range_span, prefix_len, ColumnSpans, Datum, DatumVec, Row, RowRef, Ts};
use differential_temporal_operators::keyed_merge::Rejected;
use differential_temporal_operators::{Change, RowKind, Seq};

use super::reduce::Held;
use super::{
    as_of, asof_join, check, correlate, count_window, dedup, equi_join, join, merge, over, reduce,
    reuse, set_op, sort, split, window, Collection, RenderContext,
};

/// Renders `plan` and its inputs, each subtree once per dataflow (see [`reuse`]).
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    plan: &RelExpr,
) -> Result<Collection<'s>, PlanError> {
    reuse::render_once(ctx, plan, render_node)
}

/// Renders the node of `plan` over its inputs' renderings.
fn render_node<'s>(
    ctx: &mut RenderContext<'s>,
    plan: &RelExpr,
) -> Result<Collection<'s>, PlanError> {
    Ok(match &plan.node {
        Node::Scan { name } => {
            let changes = ctx.sources.get(name).cloned().ok_or_else(|| {
                PlanError::invalid("Scan", format!("no source named '{name}' was given"))
            })?;
            Collection::Changelog(changes)
        }
        Node::Values { rows } => {
            // Worker 0 holds the rows; every worker builds the same operator.
            let rows = if ctx.scope.index() == 0 {
                rows.clone()
            } else {
                Vec::new()
            };
            let changes = rows
                .into_iter()
                .enumerate()
                .map(|(i, row)| (Change::new(i as Seq, RowKind::Insert, row), 0, 1))
                .to_stream(ctx.scope)
                .as_collection();
            Collection::Changelog(changes)
        }
        Node::Map { input, exprs } => {
            let input = render(ctx, input)?;
            let read = columns_read(exprs);
            let exprs: Vec<CompiledExpr> = exprs.iter().map(|e| e.compile()).collect();
            let mut datums = DatumVec::new();
            let mut arena = RowArena::new();
            try_flat_map_rows(ctx, input, move |row: Row| {
                arena.clear();
                let datums = datums.borrow_prefix(&row, read);
                let mut out = Row::new();
                let mut packer = out.packer();
                packer.extend_by_row(row.as_row_ref());
                for expr in &exprs {
                    packer.push(expr.eval(&datums, &arena).map_err(|e| e.to_string())?);
                }
                Ok(Some(out))
            })
        }
        Node::ProcTime {
            input,
            column,
            clock,
        } => {
            use timely::dataflow::operators::vec::Map;
            // The row's processing time is its system time's, visible here as its timestamp.
            let (column, clock) = (*column, *clock);
            match render(ctx, input)? {
                Collection::Changelog(c) => Collection::Changelog(
                    (c.inner)
                        .map(move |(ch, t, d)| {
                            let row = stamp(&ch.row, column, clock.at(t));
                            (Change::new(ch.seq, ch.kind, row), t, d)
                        })
                        .as_collection(),
                ),
                Collection::Table(rows) => Collection::Table(
                    (rows.inner)
                        .map(move |(row, t, d)| (stamp(&row, column, clock.at(t)), t, d))
                        .as_collection(),
                ),
            }
        }
        Node::Filter { input, predicate } => {
            let input = render(ctx, input)?;
            let read = columns_read(std::slice::from_ref(predicate));
            let predicate = predicate.compile();
            let mut datums = DatumVec::new();
            let mut arena = RowArena::new();
            try_flat_map_rows(ctx, input, move |row: Row| {
                arena.clear();
                let pass = {
                    let datums = datums.borrow_prefix(&row, read);
                    let value = predicate.eval(&datums, &arena).map_err(|e| e.to_string())?;
                    matches!(value, Datum::Bool(true))
                };
                Ok(pass.then_some(row))
            })
        }
        Node::Project { input, columns } => {
            if columns.iter().copied().eq(0..input.schema.len()) {
                // Only names change.
                return render(ctx, input);
            }
            if matches!(input.node, Node::TemporalJoin(_) | Node::LookupJoin(_)) {
                return join::render(ctx, input, Some(columns));
            }
            let input = render(ctx, input)?;
            let columns = columns.clone();
            let spans = std::cell::RefCell::new(ColumnSpans::new());
            input.map_rows(move |row| project(&row, &columns, &mut spans.borrow_mut()))
        }
        Node::Reduce {
            input,
            group,
            aggregates,
        } => {
            let append_only = input.mode.is_append_only();
            let key = reduce::KeyKind::of(&input.schema, group);
            let input = render(ctx, input)?;
            let (group, aggregates) = (group.clone(), aggregates.clone());
            reduce::reduce(ctx, input, append_only, group, key, aggregates)
        }
        Node::Distinct { input } => {
            let append_only = input.mode.is_append_only();
            let input = render(ctx, input)?;
            let node = "group aggregation";
            Collection::Table(set_op::held(ctx, input, append_only, Held::Once, node))
        }
        Node::Dedup {
            input,
            key,
            keep,
            order,
            state_ttl,
        } => dedup::render(ctx, input, key, (*keep, *order), *state_ttl)?,
        Node::MergeEngine {
            input,
            key,
            engine,
            normalize,
        } => merge::render(ctx, input, key, engine, *normalize)?,
        Node::AsOf { input, at } => as_of::render(ctx, input, *at)?,
        Node::History { input } => as_of::history(ctx, input)?,
        Node::CheckChangelog(c) => check::render(ctx, c)?,
        Node::TemporalJoin(_) | Node::LookupJoin(_) => join::render(ctx, plan, None)?,
        Node::Join(join) => equi_join::render(ctx, join)?,
        Node::AsofJoin(join) => asof_join::render(ctx, join)?,
        Node::Correlate(c) => {
            let input = render(ctx, &c.input)?;
            correlate::render(ctx, c, c.width(&plan.schema), input)
        }
        Node::SetOp {
            left,
            right,
            op,
            all,
        } => {
            let modes = (left.mode.is_append_only(), right.mode.is_append_only());
            let (left, right) = (render(ctx, left)?, render(ctx, right)?);
            set_op::render(ctx, (left, modes.0), (right, modes.1), *op, *all)
        }
        Node::Sort {
            input,
            order,
            offset,
            fetch,
        } => sort::render(
            render(ctx, input)?,
            vec![],
            order.clone(),
            *offset,
            *fetch,
            false,
        ),
        Node::TopN(t) => sort::render(
            render(ctx, &t.input)?,
            t.partition.clone(),
            t.order.clone(),
            0,
            Some(t.limit),
            t.rank,
        ),
        Node::WindowAgg(w) => window::render(ctx, w)?,
        Node::WindowAssign(a) => window::render_assign(ctx, a)?,
        Node::CountWindowAgg(w) => count_window::render(ctx, w)?,
        Node::Over(o) => over::render(ctx, o)?,
        Node::Sink { input, .. } => render(ctx, input)?,
    })
}

/// Applies a fallible row function that keeps (`Some`) or drops (`None`) each row, keeping the
/// form (and a changelog's `seq` and kind); failures become refusals with the row's `seq` (0 in
/// a table, whose rows have no source position).
fn try_flat_map_rows<'s>(
    ctx: &mut RenderContext<'s>,
    input: Collection<'s>,
    mut f: impl FnMut(Row) -> Result<Option<Row>, String> + 'static,
) -> Collection<'s> {
    match input {
        Collection::Changelog(c) => {
            let (changes, refused) = split(c.flat_map(move |ch| {
                let (seq, kind) = (ch.seq, ch.kind);
                match f(ch.row) {
                    Ok(row) => row.map(|row| Ok(Change::new(seq, kind, row))),
                    Err(reason) => Some(Err(Rejected::invalid(seq, reason))),
                }
            }));
            ctx.refused.push(refused);
            Collection::Changelog(changes)
        }
        Collection::Table(t) => {
            let (rows, refused) = split(t.flat_map(move |row| match f(row) {
                Ok(row) => row.map(Ok),
                Err(reason) => Some(Err(Rejected::invalid(0, reason))),
            }));
            ctx.refused.push(refused);
            Collection::Table(rows)
        }
    }
}

/// How many leading columns of a row `exprs` read: one past the largest column they use (0
/// when they use none), so a row is decoded only as far as that.
fn columns_read(exprs: &[ScalarExpr]) -> usize {
    let mut columns = Vec::new();
    exprs.iter().for_each(|e| e.columns(&mut columns));
    prefix_len(columns)
}

/// The columns `columns` of `row`, packed: their encoded bytes copied (the row is walked only
/// up to the last of them, nothing decoded), one allocation of the result's size at most.
/// Consecutive columns in order (a key of one column, most often) are one slice of the row,
/// found without recording each column's span.
pub(super) fn project(row: &Row, columns: &[usize], spans: &mut ColumnSpans) -> Row {
    let consecutive = columns.windows(2).all(|w| w[1] == w[0] + 1);
    match (consecutive, columns.first(), columns.last()) {
        (true, Some(&first), Some(&last)) => {
            let span = column_range_span(row, first..last + 1);
            RowRef::from_packed(&row.as_bytes()[span]).to_row()
        }
        _ => spans
            .locate(row, prefix_len(columns.iter().copied()))
            .project(columns),
    }
}

/// The event time in `column` of `row`, or `None` if it is NULL.
pub(super) fn event_time(row: &Row, column: usize) -> Option<Ts> {
    match row.get(column)? {
        Datum::Timestamp(ts) => Some(ts),
        _ => None,
    }
}

/// The refusal of a row whose event time is NULL.
pub(super) fn null_time(seq: Seq) -> Rejected {
    Rejected::invalid(seq, "the event time is NULL")
}

/// The event time given to a row whose time was checked not to be NULL (never read).
pub(super) const NO_TIME: Ts = Ts {
    millis: i64::MIN,
    nanos_of_milli: 0,
};
