//! The command-line tool `dtemporal`: parser, dispatch and exit codes.
//!
//! Each command lives in its own file with its `clap` arguments and a `run` function that
//! resolves its inputs and calls the shared driver [`crate::run::run`]. Adding a command is one
//! more file here and one more [`Command`] variant.

mod dedup;
mod join_condition;
mod live;
mod merge;
mod prompt;
mod serve;
mod sql;
mod stamped;
mod temporal_join;
mod validate;
mod versioned;
mod warehouse;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use differential_dataflow::{ExchangeData, VecCollection};

use crate::csv::OutputLine;
use crate::error::Error;
use crate::operators::{Change, ChangelogMode, Seq, SysTime};
use crate::row::Row;
use crate::run::{Outcome, RunOptions};

pub use dedup::DedupArgs;
pub use merge::MergeArgs;
pub use serve::ServeArgs;
pub use sql::{SqlArgs, SqlFormat};
pub use temporal_join::{LookupJoinArgs, TemporalJoinArgs};
pub use validate::ValidateArgs;
pub use versioned::VersionedArgs;

/// Exit codes, shown at the end of every `--help`.
const EXIT_CODES: &str = "\
Exit codes:
  0  success (rejected rows, if any, were within --max-errors; validate: no finding)
  1  more rows were rejected than --max-errors allows (the output holds the good rows);
     validate: the changelog has findings
  2  usage, configuration or I/O error (nothing or a partial output was written)
A closed standard output (`dtemporal ... | head`) ends the output quietly and is not an error.";

/// Flink-style versioned tables and deduplication over CSV files, on timely dataflow.
///
/// Inputs are CSV files with a header row (`.gz` is decompressed). A file with an `op` column
/// (`+I`, `-U`, `+U`, `-D`) is a changelog; any other file is append-only. Empty cells are NULL.
/// Malformed rows are reported (file:line:column: reason) and skipped; the others are processed.
#[derive(Parser, Debug)]
#[command(
    name = "dtemporal",
    version,
    disable_help_flag = true,
    after_help = EXIT_CODES
)]
pub struct Cli {
    /// Print help.
    #[arg(long, action = ArgAction::Help, global = true)]
    help: Option<bool>,
    /// Worker threads per process.
    #[arg(short = 'w', long = "workers", global = true, help_heading = "Cluster options", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub workers: u64,
    /// Number of processes of a cluster run (timely `-n`).
    #[arg(short = 'n', long = "processes", global = true, help_heading = "Cluster options", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub processes: u64,
    /// Index of this process in a cluster run (timely `-p`).
    #[arg(
        short = 'p',
        long = "process",
        global = true,
        help_heading = "Cluster options",
        default_value_t = 0
    )]
    pub process: u64,
    /// File of `host:port` lines, one per process (timely `-h`).
    #[arg(
        short = 'h',
        long = "hostfile",
        global = true,
        help_heading = "Cluster options",
        value_name = "HOSTFILE"
    )]
    pub hostfile: Option<String>,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Deduplicate rows per key (keep the last or first by event time or arrival).
    #[command(after_help = dedup::EXAMPLE)]
    Dedup(DedupArgs),
    /// Read a versioned table: a snapshot as of an event time, or every version's validity.
    #[command(after_help = versioned::EXAMPLE)]
    Versioned(VersionedArgs),
    /// Merge a primary-key table's writes with a merge engine (Fluss / Paimon table options).
    #[command(after_help = merge::EXAMPLE)]
    Merge(MergeArgs),
    /// Join each probe row with the build version valid at its event time (FOR SYSTEM_TIME AS OF).
    #[command(after_help = temporal_join::EXAMPLE)]
    TemporalJoin(TemporalJoinArgs),
    /// Join each probe row with the build version current when it arrives (processing time).
    #[command(after_help = temporal_join::LOOKUP_EXAMPLE)]
    LookupJoin(LookupJoinArgs),
    /// Check a changelog per key: retractions without a live row, -U without +U, +I of a live key.
    #[command(after_help = validate::EXAMPLE)]
    Validate(ValidateArgs),
    /// Run Flink SQL statements (CREATE TABLE over CSV files, views, queries, INSERT INTO).
    #[command(after_help = sql::EXAMPLE)]
    Sql(SqlArgs),
    /// Refresh a warehouse's FULL materialized tables at their freshness until stopped.
    #[command(after_help = serve::EXAMPLE)]
    Serve(ServeArgs),
    /// Maintain a warehouse: remove a data directory its catalog does not name.
    #[command(after_help = warehouse::EXAMPLE)]
    Warehouse(warehouse::WarehouseArgs),
}

/// Options every command takes.
#[derive(Args, Debug, Clone)]
pub struct CommonArgs {
    /// Output CSV file [default: standard output].
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<String>,
    /// Number of rejected rows tolerated before the exit code becomes 1.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_errors: usize,
    /// Error report file, one `FILE:LINE:COLUMN: reason` line per rejected row
    /// [default: standard error].
    #[arg(long, value_name = "FILE")]
    pub errors: Option<String>,
    /// Size of an input block in bytes: a block is one epoch and is parsed by one worker.
    /// The output does not depend on it, except under watermarks (`temporal-join` and `dedup`
    /// in `--mode final --lateness`): which rows are late, and when `--state-ttl` expires a key,
    /// depends on this grouping and on input order, never on the worker count; and in
    /// `lookup-join`, where a probe row sees the build rows of the blocks up to its own and
    /// `--state-ttl` counts blocks (processing time), and in `sql` under `SET
    /// 'table.exec.state.ttl'`, which counts blocks too.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 16, value_parser = clap::value_parser!(u64).range(1..))]
    pub epoch_bytes: u64,
    /// No progress line on standard error (one is drawn only when it is a terminal and the
    /// inputs are 32 MiB or more: bytes read, rows, rows per second).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

impl CommonArgs {
    /// The driver options for these arguments and the cluster flags of `cli`.
    ///
    /// A cluster run (`-n` > 1) needs `--output`: timely prints its connection progress on
    /// standard output.
    fn run_options(&self, cli: &Cli) -> Result<RunOptions, Error> {
        if cli.processes > 1 && self.output.is_none() {
            return Err(Error::Usage(
                "a cluster run (-n > 1) needs --output FILE: timely prints connection progress on standard output".into(),
            ));
        }
        Ok(RunOptions {
            timely_args: timely_args(cli),
            block_bytes: usize::try_from(self.epoch_bytes).unwrap_or(usize::MAX),
            output: self.output.clone(),
            errors: self.errors.clone(),
            progress: !self.quiet,
        })
    }
}

/// Timely's arguments for the cluster flags of `cli`.
fn timely_args(cli: &Cli) -> Vec<String> {
    let mut args = vec![
        "-w".to_string(),
        cli.workers.to_string(),
        "-n".to_string(),
        cli.processes.to_string(),
        "-p".to_string(),
        cli.process.to_string(),
    ];
    if let Some(hosts) = &cli.hostfile {
        args.extend(["-h".to_string(), hosts.clone()]);
    }
    args
}

/// When results are written (`temporal-join`, `dedup`, `sql`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Exact at every moment: a row arriving late in event time revises earlier results.
    Incremental,
    /// Each result once, when the watermark passes it (Flink's output); late rows rejected.
    Final,
}

/// The watermark options of `temporal-join` and `dedup`: the output mode, the lateness of the
/// watermarks and the idle-state retention measured on them.
#[derive(Args, Debug, Clone)]
pub struct WatermarkArgs {
    /// Output mode. `final`: each result once, when the watermark has passed its event time
    /// (Flink's output); a row behind the watermark is late: reported, not used (a late build
    /// version of `temporal-join` is kept for later probe rows and reported). `dedup --mode
    /// final` needs --keep first --order event-time (Flink >= 2.1's insert-only keep-first).
    #[arg(long, value_enum, default_value_t = ModeArg::Incremental)]
    pub mode: ModeArg,
    /// Final mode: watermarks trail each input's largest event time by MS milliseconds
    /// [default: no watermark before the end of input]. Whether a row is late depends on how
    /// rows are grouped into epochs (--epoch-bytes) and on input order, never on the worker
    /// count.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(i64).range(0..))]
    pub lateness: Option<i64>,
    /// Final mode: idle-state retention (Flink's `table.exec.state.ttl`). A key's state expires
    /// once the watermark passes its access time plus MS milliseconds: `temporal-join` forgets
    /// its build versions (access: the latest event time of its rows; a later probe row finds
    /// only versions that arrived after the expiry, --left pads it); `dedup` forgets that it
    /// emitted a row (access: the emitted row's time; the key's next row is a first row again,
    /// emitted with no retraction). Measured on the watermark, not the wall clock as in Flink,
    /// so it never depends on the worker count; like lateness it depends on --epoch-bytes and
    /// input order, and results depend on timing as in Flink. [default: 0, state is kept
    /// forever]
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(i64).range(0..))]
    pub state_ttl: Option<i64>,
}

impl WatermarkArgs {
    /// Checks the options: `--lateness` and `--state-ttl` mean something only under `--mode
    /// final` (incremental mode has no watermark). Returns the idle-state retention of
    /// `--state-ttl MS` in milliseconds, `None` when absent or `0` (off, as in Flink).
    fn retention(&self) -> Result<Option<i64>, Error> {
        let state_ttl = self.state_ttl.filter(|ms| *ms > 0);
        if self.mode == ModeArg::Incremental {
            if state_ttl.is_some() {
                let reason = "--state-ttl needs --mode final: state expires on the watermark";
                return Err(Error::Usage(reason.to_string()));
            }
            if self.lateness.is_some() {
                let reason = "--lateness needs --mode final: incremental mode has no watermark";
                return Err(Error::Usage(reason.to_string()));
            }
        }
        Ok(state_ttl)
    }
}

/// What a command writes from the changelog it computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EmitArg {
    /// The changelog with update-before rows: +I, -U, +U, -D.
    Retract,
    /// The changelog without update-before rows: +I, +U, -D.
    Upsert,
    /// The table after all input: one line per row, no op column.
    Final,
}

impl EmitArg {
    /// The output header for a table of `columns`: with a leading `op` column unless final.
    fn header(self, columns: &[String]) -> Vec<String> {
        let op = (self != EmitArg::Final).then(|| crate::csv::OP_COLUMN.to_string());
        op.into_iter().chain(columns.iter().cloned()).collect()
    }
}

/// The output lines of a changelog in form `emit`; `change(d)` gives a record's change (its
/// `seq`, kind and cells) and its table position (the `seq` its final-table line is sorted by),
/// taking `d` by value so that its cells move into the line.
///
/// The final table is the changelog consolidated: `+I`/`+U` rows count `+1`, `-U`/`-D` rows
/// `-1`, so a row's retraction must give the same position and cells as its insertion.
fn emit_lines<'s, D, F>(
    changelog: VecCollection<'s, SysTime, D>,
    emit: EmitArg,
    mut change: F,
) -> VecCollection<'s, SysTime, OutputLine>
where
    D: ExchangeData,
    F: FnMut(D) -> (Change<Row>, Seq) + 'static,
{
    let mode = match emit {
        EmitArg::Retract => ChangelogMode::Retract,
        EmitArg::Upsert => ChangelogMode::Upsert,
        EmitArg::Final => {
            let lines = changelog.map(move |d| {
                let (c, seq) = change(d);
                (c.kind.is_accumulate(), OutputLine::row(seq, c.row))
            });
            let added = lines.clone().filter(|(a, _)| *a).map(|(_, l)| l);
            let removed = lines.filter(|(a, _)| !*a).map(|(_, l)| l);
            return added.concat(removed.negate());
        }
    };
    changelog.flat_map(move |d| OutputLine::change(change(d).0, mode))
}

/// Writes `text` to standard output. A closed standard output (`dtemporal ... | head`) ends
/// the output quietly, as the CSV writer's does ([`crate::csv::output_result`]); another write
/// error is an error on `<stdout>`.
fn print_out(text: &str) -> Result<(), Error> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let written = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    crate::csv::output_result(None, written)
}

/// Splits a comma-separated column list (`a,b`), ignoring spaces around names.
fn columns(list: &str) -> Vec<String> {
    list.split(',').map(|c| c.trim().to_string()).collect()
}

/// Runs the tool on `args` (the program name first) and returns the process exit code.
pub fn main_with_args<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    let (common, result) = match &cli.command {
        Command::Dedup(a) => (&a.common, dedup::run(&cli, a)),
        Command::Versioned(a) => (&a.common, versioned::run(&cli, a)),
        Command::Merge(a) => (&a.common, merge::run(&cli, a)),
        Command::TemporalJoin(a) => (&a.common, temporal_join::run(&cli, a)),
        Command::LookupJoin(a) => (&a.common, temporal_join::run_lookup(&cli, a)),
        Command::Sql(a) => (&a.common, sql::run(&cli, a)),
        Command::Serve(a) => return serve::run(&cli, a),
        Command::Warehouse(a) => return warehouse::run(a),
        Command::Validate(a) => {
            return validate::run(&cli, a).unwrap_or_else(|e| {
                eprintln!("dtemporal: error: {e}");
                2
            })
        }
    };
    exit_code(common, result)
}

/// Reports the outcome on standard error and maps it to an exit code (see [`EXIT_CODES`]).
fn exit_code(common: &CommonArgs, result: Result<Outcome, Error>) -> i32 {
    if let Ok(outcome) = &result {
        for (reason, n) in &outcome.ignored {
            eprintln!("dtemporal: {n} row(s) ignored: {reason}");
        }
    }
    match result {
        Err(e) => {
            eprintln!("dtemporal: error: {e}");
            2
        }
        Ok(outcome) if outcome.rejected > 0 => {
            let report = common.errors.as_deref().unwrap_or("standard error");
            let over = outcome.rejected > common.max_errors;
            eprintln!(
                "dtemporal: {} row(s) rejected (reported to {report}); --max-errors {}{}",
                outcome.rejected,
                common.max_errors,
                if over { ": failing" } else { ": tolerated" }
            );
            i32::from(over)
        }
        Ok(_) => 0,
    }
}
