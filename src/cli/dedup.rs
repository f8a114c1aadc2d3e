//! `dtemporal dedup`: keep one row per key (Flink `ROW_NUMBER() OVER (PARTITION BY key ORDER BY
//! time) = 1`, semantics rules A7, A8, A11).

use clap::{Args, ValueEnum};
use differential_dataflow::VecCollection;

use super::{columns, Cli, CommonArgs};
use crate::csv::{InputSpec, OutputLine, Record, Schema, OP_COLUMN};
use crate::error::Error;
use crate::operators::dedup::{DedupConfig, DedupOrder, Deduplicate, Keep};
use crate::operators::{Change, ChangelogMode, SysTime};
use crate::row::TimedRow;
use crate::run::{self as driver, Built, Outcome};

/// The example shown by `dtemporal dedup --help`.
pub(super) const EXAMPLE: &str = "\
Example (keep the latest rate per currency; the output is a changelog):
  dtemporal -w 2 dedup --input rates.csv --key currency --time update_time --emit upsert

Exit codes: 0 ok, 1 more rows rejected than --max-errors, 2 usage or I/O error.";

/// Which row of a key to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KeepArg {
    /// The last row (ORDER BY .. DESC).
    Last,
    /// The first row (ORDER BY .. ASC).
    First,
}

/// The order that ranks a key's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OrderArg {
    /// By the --time column; equal times by position in the file.
    EventTime,
    /// By position in the file (Flink's processing-time deduplication).
    Arrival,
}

/// What to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EmitArg {
    /// The changelog with update-before rows: +I, -U, +U, -D.
    Retract,
    /// The changelog without update-before rows: +I, +U, -D.
    Upsert,
    /// The deduplicated table after all input: one row per key, no op column.
    Final,
}

/// Arguments of `dtemporal dedup`.
#[derive(Args, Debug, Clone)]
pub struct DedupArgs {
    /// Input CSV file (append-only; `.gz` is decompressed).
    #[arg(long, value_name = "FILE")]
    pub input: String,
    /// Key columns, comma-separated.
    #[arg(long, value_name = "COLS")]
    pub key: String,
    /// Event-time column (required unless --order arrival).
    #[arg(long, value_name = "COL", required_if_eq("order", "event-time"))]
    pub time: Option<String>,
    /// Which row of each key to keep.
    #[arg(long, value_enum, default_value_t = KeepArg::Last)]
    pub keep: KeepArg,
    /// How rows of a key are ranked.
    #[arg(long, value_enum, default_value_t = OrderArg::EventTime)]
    pub order: OrderArg,
    /// Output form.
    #[arg(long, value_enum, default_value_t = EmitArg::Retract)]
    pub emit: EmitArg,
    /// Options every command takes.
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Runs `dtemporal dedup`.
pub(super) fn run(cli: &Cli, args: &DedupArgs) -> Result<Outcome, Error> {
    let order = match args.order {
        OrderArg::EventTime => DedupOrder::EventTime,
        OrderArg::Arrival => DedupOrder::Arrival,
    };
    let keep = match args.keep {
        KeepArg::Last => Keep::Last,
        KeepArg::First => Keep::First,
    };
    let spec = InputSpec {
        path: args.input.clone(),
        key: columns(&args.key),
        time: args.time.clone().filter(|_| order == DedupOrder::EventTime),
    };
    let schema = Schema::open(&spec, 0)?;
    let emit = args.emit;
    let mut header = Vec::new();
    if emit != EmitArg::Final {
        header.push(OP_COLUMN.to_string());
    }
    header.extend(schema.columns.iter().cloned());
    let config = DedupConfig::new(keep, order);
    let input_schema = schema.clone();
    driver::run(
        &args.common.run_options(cli)?,
        [schema],
        header,
        move |[input]| {
            let rows = input.map(Record::into_change);
            let merged = match order {
                DedupOrder::EventTime => rows.deduplicate(config, |r: &TimedRow| r.time),
                DedupOrder::Arrival => rows.deduplicate(config, |_: &TimedRow| ()),
            };
            let output = match emit {
                EmitArg::Final => final_table(merged.changelog),
                EmitArg::Retract | EmitArg::Upsert => {
                    let mode = if emit == EmitArg::Retract {
                        ChangelogMode::Retract
                    } else {
                        ChangelogMode::Upsert
                    };
                    merged.changelog.flat_map(move |(_, c)| {
                        OutputLine::change(&Change::new(c.seq, c.kind, c.row.row), mode)
                    })
                }
            };
            let schema = input_schema.clone();
            let rejected = merged
                .rejected
                .map(move |(_, r)| schema.error(r.seq, None, r.reason));
            Built {
                output,
                rejected: vec![rejected],
            }
        },
    )
}

/// The table a changelog leaves behind: `+I`/`+U` rows count `+1`, `-U`/`-D` rows `-1`; each
/// row is placed by the position of its source row.
fn final_table<'s>(
    changelog: VecCollection<'s, SysTime, (Vec<String>, Change<TimedRow>)>,
) -> VecCollection<'s, SysTime, OutputLine> {
    let line = |c: Change<TimedRow>| OutputLine::row(c.row.seq, c.row.row);
    let added = changelog
        .clone()
        .filter(|(_, c)| c.kind.is_accumulate())
        .map(move |(_, c)| line(c));
    let removed = changelog
        .filter(|(_, c)| !c.kind.is_accumulate())
        .map(move |(_, c)| line(c));
    added.concat(removed.negate())
}
