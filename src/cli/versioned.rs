//! `dtemporal versioned`: read a versioned table (Flink versioned tables, semantics rules A1-A5)
//! as of an event time, or as the history of its versions: the plans `AsOf(Scan(rows))` and
//! `History(Scan(rows))`.

use clap::{ArgGroup, Args};

use super::{columns, stamped, Cli, CommonArgs};
use crate::csv::{InputSpec, OutputLine, Schema};
use crate::error::Error;
use crate::operators::Seq;
use crate::render::ExecutionMode;
use crate::repr::time::{parse_event_time, parse_with_format, TimeFormat};
use crate::repr::{Datum, DatumVec, Ts};
use crate::row::{text_datum, Row};
use crate::run::Outcome;

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
    run_history(cli, args, schema)
}

/// `dtemporal versioned --history`: the plan `History(Scan(rows))` over the file's stamped rows
/// (as [`run_as_of`]'s), each row version with its `valid_to` written at its own line's place
/// (see [`history_line`]).
fn run_history(cli: &Cli, args: &VersionedArgs, schema: Schema) -> Result<Outcome, Error> {
    let changelog = schema.op.is_some();
    let scan = stamped::scan(stamped::ROWS, &schema, changelog, 0, Some(&schema.key))?;
    let plan = scan.history()?;
    let mut header = schema.columns.clone();
    header.extend(["valid_from".to_string(), "valid_to".to_string()]);
    let time_column = schema.time.expect("versioned names its time column");
    let plan = (plan, ExecutionMode::Incremental);
    stamped::run_file(
        &args.common.run_options(cli)?,
        schema,
        header,
        plan,
        move |table| {
            let mut datums = DatumVec::new();
            table.into_table().map(move |mut row: Row| {
                let line = stamped::unstamp(&mut row);
                history_line(line, &row, time_column, &mut datums)
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
    let header = schema.columns.clone();
    let plan = (plan, ExecutionMode::Incremental);
    stamped::run_file(
        &args.common.run_options(cli)?,
        schema,
        header,
        plan,
        |table| {
            table.into_table().map(|mut row: Row| {
                let line = stamped::unstamp(&mut row);
                OutputLine::row(line, row)
            })
        },
    )
}

/// A history line of the row of `line`: the version's cells, then `valid_from` (the time
/// cell as written) and `valid_to` (in the time cell's format; empty while current). `row` is
/// the history row: the version's cells, then its `valid_to` timestamp (NULL while current).
fn history_line(line: Seq, row: &Row, time_column: usize, datums: &mut DatumVec) -> OutputLine {
    let datums = datums.borrow_with(row);
    let (valid_to, cells) = datums
        .split_last()
        .expect("a history row ends with valid_to");
    let from = match cells[time_column] {
        Datum::Str(text) => Some(text),
        _ => None,
    };
    let format = from
        .and_then(|t| parse_with_format(t).ok())
        .map_or(TimeFormat::Millis, |(_, f)| f);
    let to = match valid_to {
        Datum::Timestamp(t) => Some(format.render(t.millis)),
        _ => None,
    };
    // The cells, then two text cells (a tag and a length each; NULL takes less).
    let texts = [from, to.as_deref()].map(|t| 2 + t.map_or(0, str::len));
    let mut out = Row::with_capacity(row.byte_len() + texts.iter().sum::<usize>());
    let mut packer = out.packer();
    packer.extend(cells.iter().copied());
    packer.push(text_datum(from));
    packer.push(text_datum(to.as_deref()));
    OutputLine::row(line, out)
}
