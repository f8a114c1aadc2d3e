//! `dtemporal dedup`: keep one row per key (Flink `ROW_NUMBER() OVER (PARTITION BY key ORDER BY
//! time) = 1`, semantics rules A7, A8, A11). Keep-last by arrival over a changelog input (an
//! `op` column) normalizes it instead (rule A12, Flink's `ChangelogNormalize` over an upsert
//! source): `+I`/`+U` an upsert (an identical one suppressed), `-D`/`-U` a delete by key. The
//! other orders need an insert-only input and refuse `-U`/`+U`/`-D` rows (rule A14).
//! `--mode final` is keep-first by event time emitted on the watermark (rule A9, Flink >= 2.1),
//! with `--state-ttl` on the "already emitted" flag (rule A13, measured on the watermark).
//!
//! Every form runs a plan rendered as `dtemporal sql` and the Table API render theirs:
//! `Dedup(Scan(rows))` over the file's rows stamped with their parsed event time and line, or
//! for the changelog form `MergeEngine(Scan(writes))`; the command reads the file and writes
//! the lines and the report.

use super::{
    columns, emit_lines, merge, stamped, Cli, CommonArgs, EmitArg, ModeArg, WatermarkArgs,
};
use crate::csv::{InputSpec, Schema};
use crate::error::Error;
use crate::merge_engine::{self, Deletes, MergeEngine};
use crate::operators::dedup::{DedupOrder, Keep};
use crate::operators::Change;
use crate::plan::RelExpr;
use crate::render::ExecutionMode;
use crate::repr::Row;
use crate::run::Outcome;
use clap::{Args, ValueEnum};

/// The example shown by `dtemporal dedup --help`.
pub(super) const EXAMPLE: &str = "\
Example (keep the latest rate per currency; the output is a changelog):
  dtemporal -w 2 dedup --input rates.csv --key currency --time update_time --emit upsert

Keep-first in final mode (each currency's first rate once, when the watermark, 5 s behind the
latest update_time, passes it; a currency's emitted flag is forgotten 1 hour of event time
after its row, so a later rate of it is a first row again):
  dtemporal dedup --input rates.csv --key currency --time update_time --keep first \\
    --mode final --lateness 5000 --state-ttl 3600000

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

/// Arguments of `dtemporal dedup`.
#[derive(Args, Debug, Clone)]
pub struct DedupArgs {
    /// Input CSV file (`.gz` is decompressed). With an `op` column it is a changelog: with
    /// `--keep last --order arrival` it is normalized (rule A12, Flink's ChangelogNormalize):
    /// `+I`/`+U` an upsert (an identical one emits nothing), `-D`/`-U` a delete by key (its
    /// other cells may be empty; the stored row is retracted; a delete of a key without a row
    /// changes nothing and is counted as ignored); the other orders refuse its `-U`/`+U`/`-D`
    /// rows (rule A14).
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
    /// Watermark options: final mode, lateness, state TTL.
    #[command(flatten)]
    pub watermarks: WatermarkArgs,
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
        nullable_key: true,
        key: columns(&args.key),
        time: args.time.clone().filter(|_| order == DedupOrder::EventTime),
    };
    let retention = args.watermarks.retention()?;
    if args.watermarks.mode == ModeArg::Final
        && (keep, order) != (Keep::First, DedupOrder::EventTime)
    {
        return Err(Error::Usage(
            "--mode final needs --keep first --order event-time: only keep-first by event time \
             waits for the watermark (Flink's insert-only keep-first row)"
                .to_string(),
        ));
    }
    let mut schema = Schema::open(&spec, 0)?;
    if schema.op.is_some() && order == DedupOrder::Arrival && keep == Keep::Last {
        return normalize(cli, args, schema);
    }
    // The plan keys the rows: the reader need not pack their keys too.
    let key = std::mem::take(&mut schema.key);
    let (lateness, mode) = (args.watermarks.lateness, args.watermarks.mode);
    let plan = plan(&schema, &key, (keep, order), lateness, retention)?;
    let mode = match mode {
        ModeArg::Incremental => ExecutionMode::Incremental,
        ModeArg::Final => ExecutionMode::Final,
    };
    let emit = args.emit;
    let header = emit.header(&schema.columns);
    let options = args.common.run_options(cli)?;
    stamped::run_file(&options, schema, header, (plan, mode), move |kept| {
        // A line is the row's cells, placed (under `--emit final`) by the row's own line: a
        // `-U` carries the line of the row that replaced it.
        emit_lines(kept.into_changelog(), emit, |mut c: Change<Row>| {
            let line = stamped::unstamp(&mut c.row);
            (c, line)
        })
    })
}

/// The plan of a deduplication of `schema`'s stamped rows by the cell columns `key`: which
/// row by which order, ranked by the stamped event time (the rowtime, its watermark
/// `--lateness` behind the largest; without it, none before the end of input), and in final
/// mode the emitted flags' `--state-ttl`.
fn plan(
    schema: &Schema,
    key: &[usize],
    (keep, order): (Keep, DedupOrder),
    lateness: Option<i64>,
    state_ttl: Option<i64>,
) -> Result<RelExpr, Error> {
    // No `--lateness`: a delay no difference of event times reaches. The rows are a table's
    // inserts; the `-U`/`+U`/`-D` rows of a changelog reach the deduplication, which refuses
    // them (rule A14).
    let scan = stamped::scan(
        stamped::ROWS,
        schema,
        false,
        lateness.unwrap_or(i64::MAX),
        None,
    )?;
    let dedup = scan.dedup(stamped::columns(key), keep, order)?;
    Ok(match state_ttl {
        Some(ttl) => dedup.with_event_time_ttl(ttl)?,
        None => dedup,
    })
}

/// `dtemporal dedup --keep last --order arrival` over a changelog: Flink's `ChangelogNormalize`
/// (rule A12), which is Paimon's `deduplicate` merge engine without a sequence field.
fn normalize(cli: &Cli, args: &DedupArgs, schema: Schema) -> Result<Outcome, Error> {
    let engine = MergeEngine::Deduplicate(merge_engine::Deduplicate {
        sequence: Vec::new(),
        deletes: Deletes::Apply,
    });
    merge::run_engine(cli, &args.common, schema, engine, args.emit)
}
