//! `dtemporal merge`: a primary-key table whose writes are merged per key by a merge engine
//! configured with Fluss / Paimon table options (semantics section C).

use std::collections::BTreeMap;

use clap::Args;

use super::{columns, emit_lines, Cli, CommonArgs, EmitArg};
use crate::csv::{InputSpec, Record, Schema};
use crate::error::Error;
use crate::merge_engine::MergeEngine;
use crate::merge_options::{merge_engine_from_options, parse_option};
use crate::operators::keyed_merge::RejectKind;
use crate::operators::Change;
use crate::plan::RelExpr;
use crate::render::{ExecutionMode, RenderContext};
use crate::repr::{format_datum, ColumnType, Datum, Row};
use crate::run::{self as driver, Built, LineOrder, Outcome};
use crate::sql::parse_columns;

/// The example shown by `dtemporal merge --help`.
pub(super) const EXAMPLE: &str = "\
Example (Fluss versioned table: the row with the highest ts wins):
  dtemporal merge --input writes.csv --key a \\
    --option \"'table.merge-engine' = 'versioned'\" \\
    --option table.merge-engine.versioned.ver-column=ts

With --schema \"a BIGINT, ts TIMESTAMP(3), v DECIMAL(10, 2)\" the named columns are typed: their
cells are parsed once as they are read (a cell that does not parse is a rejected row), versions
and sequences compare and aggregate functions compute as the type, and the output is written as
Flink writes the type. Columns not named stay STRING (text passed through).

Writes an engine ignores by definition (a smaller version or sequence than the stored row's,
a -D on a Fluss table, a later row of a first_row table) are counted per reason on standard
error, not rejected.

Exit codes: 0 ok, 1 more rows rejected than --max-errors, 2 usage, configuration or I/O error.";

/// Arguments of `dtemporal merge`.
#[derive(Args, Debug, Clone)]
pub struct MergeArgs {
    /// Input CSV file of writes: a changelog (with an `op` column) or append-only (inserts).
    #[arg(long, value_name = "FILE")]
    pub input: String,
    /// Primary-key columns, comma-separated.
    #[arg(long, value_name = "COLS")]
    pub key: String,
    /// A table option, `KEY=VALUE` or `'KEY' = 'VALUE'` (repeat for several), e.g.
    /// `'table.merge-engine'='versioned'`, `merge-engine=partial-update`, `sequence.field=ts`.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Column types, as a Flink `CREATE TABLE` declares them: `"a BIGINT NOT NULL, ts
    /// TIMESTAMP(3), v DECIMAL(10, 2)"`. Columns not named stay STRING.
    #[arg(long, value_name = "COLUMNS")]
    pub schema: Option<String>,
    /// Output form.
    #[arg(long, value_enum, default_value_t = EmitArg::Retract)]
    pub emit: EmitArg,
    /// Options every command takes.
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Runs `dtemporal merge`: validates the options against the input's header, then merges.
pub(super) fn run(cli: &Cli, args: &MergeArgs) -> Result<Outcome, Error> {
    let options = args
        .options
        .iter()
        .map(|o| parse_option(o))
        .collect::<Result<Vec<_>, _>>()?;
    let key = columns(&args.key);
    let spec = InputSpec {
        path: args.input.clone(),
        nullable_key: false,
        key: key.clone(),
        time: None,
    };
    let mut schema = Schema::open(&spec, 0)?;
    if let Some(columns) = &args.schema {
        let declared =
            parse_columns(columns).map_err(|e| Error::Usage(format!("--schema: {e}")))?;
        schema = schema.with_types(&declared.fields)?;
    }
    let table = crate::repr::Schema::new(schema.fields())
        .map_err(|e| Error::input(&schema.path, e.to_string()))?;
    let engine = merge_engine_from_options(&options, &table, &key)?;
    run_engine(cli, &args.common, schema, engine, args.emit)
}

/// Merges the writes of `schema`'s file with `engine` and writes the table's changelog (or
/// final table) in `emit` form; writes the engine ignores by definition are counted per reason,
/// the others it refuses are row errors. Shared by `merge` and `dedup` over a changelog.
///
/// The run is a plan, `MergeEngine(Scan(writes))`, rendered as `dtemporal sql` and the Table API
/// render theirs; the command reads the file and writes the lines and the report.
pub(super) fn run_engine(
    cli: &Cli,
    common: &CommonArgs,
    schema: Schema,
    engine: MergeEngine,
    emit: EmitArg,
) -> Result<Outcome, Error> {
    let header = emit.header(&schema.columns);
    let table = crate::repr::Schema::new(schema.fields())
        .map_err(|e| Error::input(&schema.path, e.to_string()))?;
    let plan =
        RelExpr::scan(WRITES, table, schema.op.is_some()).merged_by(schema.key.clone(), engine)?;
    let input_schema = schema.clone();
    // Typed rows are written as Flink writes their types; text rows as they are.
    let types = schema.is_typed().then(|| schema.types.clone());
    driver::run(
        &common.run_options(cli)?,
        [schema],
        header,
        move |[input]| {
            let scope = input.scope();
            let writes = input.map(|r: Record| Change::new(r.seq, r.kind, r.row));
            let sources = BTreeMap::from([(WRITES.to_string(), writes)]);
            let mut ctx = RenderContext::new(scope, sources, ExecutionMode::Incremental);
            let merged = ctx.render(&plan)?.into_changelog();
            // Final-table lines are placed by their cells: a merged row has no single source row.
            let mut text = types.clone().map(TextRows::new);
            let output = emit_lines(merged, emit, move |c: Change<Row>| {
                let cells = match &mut text {
                    None => c.row,
                    Some(text) => text.row(&c.row),
                };
                (Change::new(c.seq, c.kind, cells), 0)
            });
            let schema = input_schema.clone();
            let refused =
                differential_dataflow::collection::concatenate(scope, ctx.refused).map(move |r| {
                    let ignored = r.kind == RejectKind::Ignored;
                    (ignored, schema.error(r.seq, None, r.reason))
                });
            let ignored = refused.clone().flat_map(|(i, e)| i.then_some(e));
            let rejected = refused.flat_map(|(i, e)| (!i).then_some(e));
            Ok(Built {
                output,
                rejected: vec![rejected],
                ignored: vec![ignored],
                order: LineOrder::Line,
            })
        },
    )
}

/// The name the plan of a merge gives its input.
const WRITES: &str = "writes";

/// Typed rows as text rows: each datum written as Flink's CSV format writes its type (an empty
/// cell for NULL), through buffers kept from row to row, so a row costs one allocation, its
/// own (none for a row of up to 24 packed bytes).
struct TextRows {
    types: Vec<ColumnType>,
    /// The cells' text, one after the other.
    text: String,
    /// Where each cell's text ends in `text`, and whether the cell is NULL.
    ends: Vec<(usize, bool)>,
}

impl TextRows {
    fn new(types: Vec<ColumnType>) -> TextRows {
        TextRows {
            ends: Vec::with_capacity(types.len()),
            types,
            text: String::new(),
        }
    }

    /// `row`, a row of columns of the types, as text cells.
    fn row(&mut self, row: &Row) -> Row {
        self.text.clear();
        self.ends.clear();
        for (datum, ty) in row.iter().zip(&self.types) {
            // Writing to a String cannot fail.
            let _ = format_datum(datum, &ty.data_type, &mut self.text);
            self.ends.push((self.text.len(), datum.is_null()));
        }
        // A tag and a length a cell, and its text.
        let mut cells = Row::with_capacity(2 * self.ends.len() + self.text.len());
        let mut packer = cells.packer();
        let mut start = 0;
        for &(end, null) in &self.ends {
            packer.push(match null {
                true => Datum::Null,
                false => Datum::Str(&self.text[start..end]),
            });
            start = end;
        }
        cells
    }
}
