//! Rendering of the temporal join (event time, both modes) and the lookup join (processing time)
//! onto the generic operators, with `K` = the packed key columns, `P` and `B` = the packed rows.
//!
//! NULL keys never match (SQL's rule; Flink's temporal join differs, see the README): a probe
//! row with a NULL key column bypasses the operator (LEFT pads it, INNER drops it) and a build
//! row with one is never stored. A row whose event time is NULL is refused with its `seq`.

use std::cell::RefCell;

use differential_dataflow::VecCollection;

use crate::expr::{CompiledExpr, RowArena};
use crate::plan::{JoinKind, Node, PlanError, RelExpr};
use crate::repr::{Datum, DatumVec, Row, Ts};
use differential_temporal_operators::temporal_join::{
    arrange_probe, lookup_join, temporal_join, temporal_join_final, FinalJoin,
};
use differential_temporal_operators::versioned::versions_from_changelog;
use differential_temporal_operators::watermark::watermarks;
use differential_temporal_operators::{arrange_versions, Change, SysTime};

use super::nodes::{event_time, null_time, project, render as render_node, NO_TIME};
use super::{split, Collection, ExecutionMode, RenderContext};

type Keyed<'s> = VecCollection<'s, SysTime, (Row, Change<Row>)>;

/// Renders a `TemporalJoin` or `LookupJoin` node.
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    plan: &RelExpr,
) -> Result<Collection<'s>, PlanError> {
    let (probe, build, probe_key, build_key, kind, residual, temporal) = match &plan.node {
        Node::TemporalJoin {
            probe,
            build,
            probe_key,
            build_key,
            kind,
            residual,
        } => (probe, build, probe_key, build_key, *kind, residual, true),
        Node::LookupJoin {
            probe,
            build,
            probe_key,
            build_key,
            kind,
            residual,
        } => (probe, build, probe_key, build_key, *kind, residual, false),
        _ => unreachable!("join::render is called on joins only"),
    };
    let build_width = build.schema.len();
    let probe_rowtime = probe.schema.rowtime.clone();
    let build_rowtime = build.schema.rowtime.clone();
    let probe_changes = render_node(ctx, probe)?.into_changelog();
    let build_changes = render_node(ctx, build)?.into_changelog();

    let (probe_keyed, null_keyed) = key_rows(probe_changes, probe_key.clone());
    let padded = match kind {
        JoinKind::Left => Some(
            null_keyed
                .map(move |ch| Change::new(ch.seq, ch.kind, joined(&ch.row, None, build_width))),
        ),
        JoinKind::Inner => None,
    };
    let (build_keyed, _never_matched) = key_rows(build_changes, build_key.clone());
    let residual = residual_fn(residual.as_ref().map(|r| r.compile()));

    let joined_changes = if temporal {
        let (pt, bt) = match (probe_rowtime, build_rowtime) {
            (Some(p), Some(b)) => (p, b),
            _ => unreachable!("the plan checked both rowtimes"),
        };
        let probe_keyed = refuse_null_times(ctx, probe_keyed, pt.column);
        let build_keyed = refuse_null_times(ctx, build_keyed, bt.column);
        let (p_col, b_col) = (pt.column, bt.column);
        let versions = versions_from_changelog(build_keyed, move |row: &Row| time_of(row, b_col));
        match ctx.mode {
            ExecutionMode::Incremental => {
                let probe = arrange_probe(
                    probe_keyed,
                    move |row: &Row| time_of(row, p_col),
                    "TemporalJoin: probe",
                );
                let build = arrange_versions(versions, "TemporalJoin: versions");
                temporal_join(probe, build, kind, residual, "TemporalJoin")
            }
            ExecutionMode::Final => {
                let (p_delay, b_delay) = (pt.delay_ms, bt.delay_ms);
                let probe_marks = watermarks(
                    probe_keyed.clone(),
                    move |(_, ch): &(Row, Change<Row>)| time_of(&ch.row, p_col),
                    move |max: &Ts| minus_millis(*max, p_delay),
                    "TemporalJoin: probe watermark",
                );
                let build_marks = watermarks(
                    versions.clone(),
                    |(_, v): &(Row, differential_temporal_operators::Version<Ts, Row>)| v.time,
                    move |max: &Ts| minus_millis(*max, b_delay),
                    "TemporalJoin: build watermark",
                );
                let build = arrange_versions(versions, "TemporalJoin: versions");
                let FinalJoin { joined, late } = temporal_join_final(
                    probe_keyed,
                    move |row: &Row| time_of(row, p_col),
                    build,
                    probe_marks,
                    build_marks,
                    kind,
                    residual,
                    "TemporalJoin",
                );
                ctx.refused.push(late.map(|(_, r)| r));
                joined
            }
        }
    } else {
        let versions = versions_from_changelog(build_keyed, |_: &Row| ());
        let build = arrange_versions(versions, "LookupJoin: versions");
        lookup_join(probe_keyed, build, kind, residual, "LookupJoin")
    };
    let mut out = joined_changes.map(move |(_, ch)| {
        let (probe_row, build_row) = ch.row;
        Change::new(
            ch.seq,
            ch.kind,
            joined(&probe_row, build_row.as_ref(), build_width),
        )
    });
    if let Some(padded) = padded {
        out = out.concat(padded);
    }
    Ok(Collection::Changelog(out))
}

/// Keys each change by its key columns; changes with a NULL key column go to the second
/// collection (they never match).
fn key_rows<'s>(
    changes: VecCollection<'s, SysTime, Change<Row>>,
    key: Vec<usize>,
) -> (Keyed<'s>, VecCollection<'s, SysTime, Change<Row>>) {
    let mut datums = DatumVec::new();
    split(changes.map(move |ch| {
        let k = project(&ch.row, &key, &mut datums);
        if k.iter().any(|d| d.is_null()) {
            Err(ch)
        } else {
            Ok((k, ch))
        }
    }))
}

/// Refuses, with their `seq`, the keyed changes whose event time (in `column`) is NULL.
fn refuse_null_times<'s>(
    ctx: &mut RenderContext<'s>,
    keyed: Keyed<'s>,
    column: usize,
) -> Keyed<'s> {
    let (timed, refused) = split(keyed.map(move |(k, ch)| match event_time(&ch.row, column) {
        Some(_) => Ok((k, ch)),
        None => Err(null_time(ch.seq)),
    }));
    ctx.refused.push(refused);
    timed
}

/// The event time of a row whose time was checked not to be NULL.
fn time_of(row: &Row, column: usize) -> Ts {
    event_time(row, column).unwrap_or(NO_TIME)
}

/// `ts - millis`, saturating at the smallest timestamp.
fn minus_millis(ts: Ts, millis: i64) -> Ts {
    Ts {
        millis: ts.millis.saturating_sub(millis),
        nanos_of_milli: ts.nanos_of_milli,
    }
}

/// The output row: the probe row, then the build row or `width` NULLs.
fn joined(probe: &Row, build: Option<&Row>, width: usize) -> Row {
    let mut row = Row::new();
    let mut packer = row.packer();
    packer.extend_by_row(probe.as_row_ref());
    match build {
        Some(b) => packer.extend_by_row(b.as_row_ref()),
        None => packer.extend(std::iter::repeat_n(Datum::Null, width)),
    }
    row
}

/// The residual condition as the operators take it: TRUE passes; FALSE, NULL and an evaluation
/// error do not (an error in a join condition counts as no match, as a failed comparison would).
fn residual_fn(residual: Option<CompiledExpr>) -> impl Fn(&Row, &Row) -> bool + 'static {
    let buffers = RefCell::new((DatumVec::new(), RowArena::new()));
    move |probe: &Row, build: &Row| {
        let Some(residual) = &residual else {
            return true;
        };
        let mut buffers = buffers.borrow_mut();
        let (datums, arena) = &mut *buffers;
        arena.clear();
        let datums = datums.borrow_with_all([probe.as_row_ref(), build.as_row_ref()]);
        matches!(residual.eval(&datums, arena), Ok(Datum::Bool(true)))
    }
}
