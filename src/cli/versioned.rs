//! `dtemporal versioned`: read a versioned table (Flink versioned tables, semantics rules A1-A5)
//! as of an event time, or as the history of its versions. `--as-of` runs the plan
//! `AsOf(Scan(rows))`; `--history` builds its dataflow from the versioned table's operator.

use clap::{ArgGroup, Args};

use super::{columns, stamped, Cli, CommonArgs};
use crate::csv::{InputSpec, OutputLine, Record, Schema};
use crate::error::Error;
use crate::operators::versioned::{versions_from_changelog, HistoryRow, VersionedTable};
use crate::render::ExecutionMode;
use crate::repr::time::{parse_event_time, parse_with_format, EventTime, TimeFormat};
use crate::repr::Ts;
use crate::row::{text_datum, Row, TextCells, TimedRow};
use crate::run::{self as driver, Built, Outcome};

/// The example shown by `dtemporal versioned --help`.
pub(super) const EXAMPLE: &str = "\
Example (the products changelog as of 10:00):
  dtemporal -w 2 versioned --input products.csv --key product_id --time update_time --as-of 10:00

Exit codes: 0 ok, 1 more rows rejected than --max-errors, 2 usage or I/O error.";

/// Arguments of `dtemporal versioned`.
#[derive(Args, Debug, Clone)]
#[command(group(ArgGroup::new("read").required(true).args(["as_of", "history"])))]
pub struct VersionedArgs {
    /// Input CSV file: a changelog (with an `op` column) or append-only (every row a version).
    #[arg(long, value_name = "FILE")]
    pub input: String,
    /// Primary-key columns, comma-separated.
    #[arg(long, value_name = "COLS")]
    pub key: String,
    /// Event-time column: a version is valid from its row's time.
    #[arg(long, value_name = "COL")]
    pub time: String,
    /// Write the table's rows valid at this event time (same forms as the time column).
    #[arg(long, value_name = "T")]
    pub as_of: Option<String>,
    /// Write every version with `valid_from` and `valid_to` columns (`valid_to` empty while
    /// current).
    #[arg(long)]
    pub history: bool,
    /// Options every command takes.
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Runs `dtemporal versioned`.
pub(super) fn run(cli: &Cli, args: &VersionedArgs) -> Result<Outcome, Error> {
    let as_of = args
        .as_of
        .as_deref()
        .map(parse_event_time)
        .transpose()
        .map_err(|e| Error::Usage(format!("--as-of: {e}")))?;
    let spec = InputSpec {
        path: args.input.clone(),
        nullable_key: false,
        key: columns(&args.key),
        time: Some(args.time.clone()),
    };
    let schema = Schema::open(&spec, 0)?;
    if let Some(t) = as_of {
        return run_as_of(cli, args, schema, Ts::from_millis(t));
    }
    let mut header = schema.columns.clone();
    header.extend(["valid_from".to_string(), "valid_to".to_string()]);
    let time_column = schema.time.unwrap_or_default();
    driver::run(
        &args.common.run_options(cli)?,
        [schema],
        header,
        move |[input]| {
            let changelog = input.map(Record::into_change);
            let versions = versions_from_changelog(changelog, |r: &TimedRow| r.time);
            let output = VersionedTable::new(versions, "Versions")
                .history()
                .map(move |(_, h)| history_line(h, time_column));
            Ok(Built {
                output,
                rejected: Vec::new(),
                ignored: Vec::new(),
            })
        },
    )
}

/// `dtemporal versioned --as-of T`: the plan `AsOf(Scan(rows))` over the file's rows stamped
/// with their event time and line ([`Schema::with_stamps`]), the stamped time its rowtime and
/// the key its primary key, rendered as `dtemporal sql` and the Table API render theirs. Each
/// row valid at `at` is written at its own line's place.
fn run_as_of(cli: &Cli, args: &VersionedArgs, schema: Schema, at: Ts) -> Result<Outcome, Error> {
    // The reader refuses a NULL key cell (a primary key), so the key is never NULL here.
    let changelog = schema.op.is_some();
    let plan = stamped::scan(stamped::ROWS, &schema, changelog, 0, Some(&schema.key))?.as_of(at)?;
    let (input_schema, header) = (schema.clone(), schema.columns.clone());
    driver::run(
        &args.common.run_options(cli)?,
        [schema.with_stamps()],
        header,
        move |[input]| {
            let mode = ExecutionMode::Incremental;
            let (table, rejected) = stamped::render_file(input, input_schema.clone(), &plan, mode)?;
            let output = table.into_table().map(|mut row: Row| {
                let line = stamped::unstamp(&mut row);
                OutputLine::row(line, row)
            });
            Ok(Built {
                output,
                rejected: vec![rejected],
                ignored: Vec::new(),
            })
        },
    )
}

/// A history line: the version's cells, then `valid_from` (the time cell as written) and
/// `valid_to` (in the time cell's format; empty while current).
fn history_line(h: HistoryRow<EventTime, TimedRow>, time_column: usize) -> OutputLine {
    let row = &h.row.row;
    let from = row.cell(time_column);
    let format = from
        .and_then(|t| parse_with_format(t).ok())
        .map_or(TimeFormat::Millis, |(_, f)| f);
    let to = h.valid_to.map(|t| format.render(t));
    // The cells, then two text cells (a tag and a length each; NULL takes less).
    let texts = [from, to.as_deref()].map(|t| 2 + t.map_or(0, str::len));
    let mut cells = Row::with_capacity(row.byte_len() + texts.iter().sum::<usize>());
    let mut packer = cells.packer();
    packer.extend_by_row(row.as_row_ref());
    packer.push(text_datum(from));
    packer.push(text_datum(to.as_deref()));
    OutputLine::row(h.seq, cells)
}
