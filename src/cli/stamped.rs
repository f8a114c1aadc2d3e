//! The plans of the commands that read stamped rows (`dedup`, `versioned --as-of`,
//! `temporal-join`, `lookup-join`): each file row led by its parsed event time and its line
//! ([`Schema::with_stamps`]), the time the plan's rowtime, the line where the row's output line
//! is placed. One scan per file, one rendering, one way back to the row's cells.
//!
//! The plan's `seq` of a row of file `i` among `n` is `line * n + i`: unique over the files,
//! ordered by line within each, and the file of a row the plan refuses is known from it.

use std::collections::BTreeMap;

use differential_dataflow::VecCollection;

use crate::csv::{OutputLine, Record, RowError, Schema};
use crate::error::Error;
use crate::operators::{Change, Seq, SysTime};
use crate::plan::RelExpr;
use crate::render::{Collection, ExecutionMode, RenderContext};
use crate::repr::{Datum, Row, Ts};
use crate::run::{self as driver, Built, LineOrder, Outcome, RunOptions};

/// The name of a one-file plan's scan.
pub(super) const ROWS: &str = "rows";

/// How many columns lead a stamped row before its cells.
const STAMPS: usize = 2;

/// The position, in a stamped row, of the cell column `column`.
pub(super) fn column(column: usize) -> usize {
    column + STAMPS
}

/// The positions, in a stamped row, of the cell columns `columns`.
pub(super) fn columns(columns: &[usize]) -> Vec<usize> {
    columns.iter().copied().map(column).collect()
}

/// The scan `name` of `schema`'s stamped rows, a changelog or (`changelog` false) a table's
/// inserts: the stamps, then the cells, the stamped time its rowtime with the watermark
/// `delay_ms` behind the largest, the cell columns `primary_key` its primary key if given.
pub(super) fn scan(
    name: &str,
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
    Ok(RelExpr::scan(name, table, changelog))
}

/// Renders `plan` (over the [`scan`]s `names`) in `mode` on the stamped records `inputs` of
/// the files `schemas`: the plan's output, and the rows it refused as row errors of their
/// files. Late rows' reasons write event times as epoch milliseconds, the form the commands'
/// time columns may hold, and a late build version's reason names its key.
pub(super) fn render<'s, const N: usize>(
    inputs: [VecCollection<'s, SysTime, Record>; N],
    names: [&str; N],
    schemas: [Schema; N],
    plan: &RelExpr,
    mode: ExecutionMode,
) -> Result<(Collection<'s>, VecCollection<'s, SysTime, RowError>), Error> {
    let scope = inputs[0].scope();
    let files = N as Seq;
    let sources = (inputs.into_iter().zip(names).enumerate())
        .map(|(i, (input, name))| {
            let rows =
                input.map(move |r: Record| Change::new(r.seq * files + i as Seq, r.kind, r.row));
            (name.to_string(), rows)
        })
        .collect::<BTreeMap<_, _>>();
    let mut ctx = RenderContext::new(scope, sources, mode);
    ctx.late_time_text = Some(|t: &Ts| t.millis.to_string());
    ctx.late_build_key = true;
    let output = ctx.render(plan)?;
    let refused =
        differential_dataflow::collection::concatenate(scope, ctx.refused).map(move |r| {
            let schema = &schemas[(r.seq % files) as usize];
            schema.error(r.seq / files, None, r.reason)
        });
    Ok((output, refused))
}

/// Runs the one-file `plan` (its scan named [`ROWS`]) in `mode` over `schema`'s stamped rows,
/// writing under `header` the lines `lines` makes of its output; the rows it refused are row
/// errors of the file.
pub(super) fn run_file<L>(
    options: &RunOptions,
    schema: Schema,
    header: Vec<String>,
    (plan, mode): (RelExpr, ExecutionMode),
    lines: L,
) -> Result<Outcome, Error>
where
    L: for<'s> Fn(Collection<'s>) -> VecCollection<'s, SysTime, OutputLine> + Send + Sync + 'static,
{
    let input_schema = schema.clone();
    driver::run(options, [schema.with_stamps()], header, move |[input]| {
        let (output, rejected) = render([input], [ROWS], [input_schema.clone()], &plan, mode)?;
        Ok(Built {
            output: lines(output),
            rejected: vec![rejected],
            ignored: Vec::new(),
            order: line_order(mode),
        })
    })
}

/// The order of the lines of a plan run in `mode`: in emission order in final mode, where each
/// line is emitted once, when the watermark passes it; by line in incremental mode, where later
/// input revises the lines (see [`LineOrder`]).
pub(super) fn line_order(mode: ExecutionMode) -> LineOrder {
    match mode {
        ExecutionMode::Final => LineOrder::Emission,
        ExecutionMode::Incremental => LineOrder::Line,
    }
}

/// The line of the stamped `row`, whose stamps are removed (in place): the row's cells stay.
pub(super) fn unstamp(row: &mut Row) -> Seq {
    let Some(Datum::Int(line)) = row.get(1) else {
        unreachable!("a stamped row's second column is its line")
    };
    row.remove_leading(STAMPS);
    line as Seq
}
