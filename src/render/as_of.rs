//! Rendering of `AsOf` and `History`: the input's changes keyed by the primary key (packed),
//! made versions by their rowtime (`+I`/`+U` a row, `-D` a delete, `-U` none: rule A5; a NULL
//! rowtime is refused with its `seq`), and read as of the node's event time by
//! [`VersionedTable::as_of`] or as the history of the versions by [`VersionedTable::history`],
//! whose output is the node's table.

use differential_dataflow::VecCollection;
use differential_temporal_operators::versioned::{version_of_change, VersionedTable};
use differential_temporal_operators::{Change, SysTime, Version};

use crate::plan::{PlanError, RelExpr};
use crate::repr::{ColumnSpans, Datum, Row, Ts};

use super::nodes::{event_time, null_time, project, render as render_node};
use super::{split_map, Collection, RenderContext};

/// Renders `input`, a versioned table, read as of `at` (see the [module docs](self)).
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    input: &RelExpr,
    at: Ts,
) -> Result<Collection<'s>, PlanError> {
    let versions = versions(ctx, input)?;
    let table = VersionedTable::new(versions, "AsOf").as_of_named(at, "AsOf");
    Ok(Collection::Table(table.map(|(_, row)| row)))
}

/// Renders the history of `input`, a versioned table: each row version, its `valid_to`
/// appended (NULL while current).
pub(super) fn history<'s>(
    ctx: &mut RenderContext<'s>,
    input: &RelExpr,
) -> Result<Collection<'s>, PlanError> {
    let versions = versions(ctx, input)?;
    let history = VersionedTable::new(versions, "History").history_named("History");
    Ok(Collection::Table(history.map(|(_, h)| {
        let valid_to = h.valid_to.map_or(Datum::Null, Datum::Timestamp);
        let mut row = Row::with_capacity(h.row.byte_len() + 16);
        let mut packer = row.packer();
        packer.extend_by_row(h.row.as_row_ref());
        packer.push(valid_to);
        row
    })))
}

/// The versions of `input`'s changes, keyed by its primary key.
fn versions<'s>(
    ctx: &mut RenderContext<'s>,
    input: &RelExpr,
) -> Result<VecCollection<'s, SysTime, (Row, Version<Ts, Row>)>, PlanError> {
    let (Some(key), Some(rowtime)) = (&input.schema.primary_key, &input.schema.rowtime) else {
        unreachable!("the plan checked the primary key and the rowtime")
    };
    let (key, column) = (key.clone(), rowtime.column);
    let changes = render_node(ctx, input)?.into_changelog();
    let mut spans = ColumnSpans::new();
    let (versions, refused) = split_map(changes, move |ch: Change<Row>| {
        let Some(time) = event_time(&ch.row, column) else {
            return Err(Some(null_time(ch.seq)));
        };
        let key = project(&ch.row, &key, &mut spans);
        // A `-U` makes no version.
        version_of_change(ch, time)
            .map(|v| (key, v))
            .map_err(|_| None)
    });
    ctx.refused.push(refused.flat_map(|r| r));
    Ok(versions)
}
