//! The plans of the commands that read stamped rows (`dedup`, `versioned --as-of`): each file
//! row led by its parsed event time and its line ([`Schema::with_stamps`]), the time the plan's
//! rowtime, the line where the row's output line is placed. One scan, one rendering, one way
//! back to the row's cells.

use std::collections::BTreeMap;

use differential_dataflow::VecCollection;

use crate::csv::{Record, RowError, Schema};
use crate::error::Error;
use crate::operators::{Change, Seq, SysTime};
use crate::plan::RelExpr;
use crate::render::{Collection, ExecutionMode, RenderContext};
use crate::repr::{Datum, Row, Ts};

/// The name the plans give their input.
const ROWS: &str = "rows";

/// How many columns lead a stamped row before its cells.
const STAMPS: usize = 2;

/// The positions, in a stamped row, of the cell columns `columns`.
pub(super) fn columns(columns: &[usize]) -> Vec<usize> {
    columns.iter().map(|c| c + STAMPS).collect()
}

/// The scan of `schema`'s stamped rows, a changelog or (`changelog` false) a table's inserts:
/// the stamps, then the cells, the stamped time its rowtime with the watermark `delay_ms`
/// behind the largest, the cell columns `primary_key` its primary key if given.
pub(super) fn scan(
    schema: &Schema,
    changelog: bool,
    delay_ms: i64,
    primary_key: Option<&[usize]>,
) -> Result<RelExpr, Error> {
    let [time, line] = schema.stamp_fields();
    let rowtime = time.name.clone();
    let fields = [time, line].into_iter().chain(schema.fields()).collect();
    let mut table = crate::repr::Schema::new(fields)
        .and_then(|table| table.with_rowtime(&rowtime, delay_ms))
        .map_err(|e| Error::input(&schema.path, e.to_string()))?;
    table.primary_key = primary_key.map(columns);
    Ok(RelExpr::scan(ROWS, table, changelog))
}

/// Renders `plan` (over [`scan`]) in `mode` on the stamped records `input` of `schema`'s file:
/// the plan's output, and the rows it refused as row errors of the file. Late rows' reasons
/// write event times as epoch milliseconds, the form the commands' time columns may hold.
pub(super) fn render<'s>(
    input: VecCollection<'s, SysTime, Record>,
    plan: &RelExpr,
    mode: ExecutionMode,
    schema: Schema,
) -> Result<(Collection<'s>, VecCollection<'s, SysTime, RowError>), Error> {
    let scope = input.scope();
    let rows = input.map(|r: Record| Change::new(r.seq, r.kind, r.row));
    let sources = BTreeMap::from([(ROWS.to_string(), rows)]);
    let mut ctx = RenderContext::new(scope, sources, mode);
    ctx.late_time_text = Some(|t: &Ts| t.millis.to_string());
    let output = ctx.render(plan)?;
    let refused = differential_dataflow::collection::concatenate(scope, ctx.refused)
        .map(move |r| schema.error(r.seq, None, r.reason));
    Ok((output, refused))
}

/// The line of the stamped `row`, whose stamps are removed (in place): the row's cells stay.
pub(super) fn unstamp(row: &mut Row) -> Seq {
    let Some(Datum::Int(line)) = row.get(1) else {
        unreachable!("a stamped row's second column is its line")
    };
    row.remove_leading(STAMPS);
    line as Seq
}
