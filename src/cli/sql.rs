//! `dtemporal sql`: runs Flink SQL statements (a file, or the command line) in order and
//! writes each query's result.

use clap::{Args, ValueEnum};

use super::{print_out, prompt, Cli, CommonArgs, EmitArg, ModeArg};
use crate::error::Error;
use crate::io::Tableau;
use crate::operators::keyed_merge::RejectKind;
use crate::operators::{ChangelogMode, RowKind};
use crate::render::ExecutionMode;
use crate::run::Outcome;
use crate::session::StatementResult;
use crate::sql::{parse_with_text, Statement};
use crate::table::{ResultForm, TableEnv, TableResult};

pub(super) const EXAMPLE: &str = "\
Example (the seed's temporal table function, 1238):
  CREATE TABLE orders (order_time TIMESTAMP(3), amount DECIMAL(10, 2), currency STRING,
    WATERMARK FOR order_time AS order_time)
    WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv');
  CREATE TABLE currency_rates (update_time TIMESTAMP(3), currency STRING, rate DECIMAL(10, 4),
    WATERMARK FOR update_time AS update_time)
    WITH ('connector' = 'filesystem', 'path' = 'rates.csv', 'format' = 'csv');
  -- dtemporal's extension of Flink's grammar (Flink registers these in the Table API only):
  CREATE TEMPORAL TABLE FUNCTION rates FOR currency_rates TIME update_time KEY currency;
  SELECT SUM(amount * rate) AS amount FROM orders, LATERAL TABLE (rates(order_time))
  WHERE rates.currency = orders.currency;

  dtemporal sql -f convert.sql --emit final

Statements run in order; each query writes its result (the last query's, with --output FILE).
Without -f or -e: an interactive prompt on a terminal (QUIT; leaves), or the statements piped
to standard input; a failing statement prints [ERROR] and the next one runs.
Tables are CSV files ('connector' = 'filesystem', 'path', 'format' = 'csv'); a file with an
`op` column is a changelog. A query over a table that never ends (postgres-cdc, datagen
without 'number-of-rows') writes its changes round by round until interrupted (Ctrl-C).
Syntax and validation errors name the line and column (exit 2).";

/// `dtemporal sql` arguments.
#[derive(Args, Debug)]
pub struct SqlArgs {
    /// A file of `;`-separated Flink SQL statements. Without -f or -e, statements are read
    /// from standard input: an interactive prompt on a terminal, else what is piped in.
    #[arg(
        short = 'f',
        long = "file",
        value_name = "FILE.sql",
        conflicts_with = "execute"
    )]
    pub file: Option<String>,
    /// Statements given on the command line (they may start with a `--` comment).
    #[arg(
        short = 'e',
        long = "execute",
        value_name = "SQL",
        allow_hyphen_values = true
    )]
    pub execute: Option<String>,
    /// How a query's result is written: CSV, or a table as Flink's SQL client prints it
    /// (default: csv with -f or -e, table when statements come from standard input).
    #[arg(long, value_enum)]
    pub format: Option<SqlFormat>,
    /// What a query writes: the changelog with its `op` column (retract), without -U rows
    /// (upsert), or the final table.
    #[arg(long, value_enum, default_value_t = EmitArg::Retract)]
    pub emit: EmitArg,
    /// How event-time temporal joins run: exact at every moment (late build versions revise
    /// earlier results), or Flink's watermark-driven output (each probe row once, when the
    /// combined watermark passes it; late probe rows and late build versions are reported).
    /// The watermarks are the tables' WATERMARK declarations.
    #[arg(long, value_enum, default_value_t = ModeArg::Incremental)]
    pub mode: ModeArg,
    /// A warehouse directory (created if missing) holding the catalog and the materialized
    /// tables: what earlier runs defined there is registered, what this run defines is
    /// recorded. A second process on the same warehouse waits for each statement of the
    /// first that changes it.
    #[arg(long, value_name = "DIR")]
    pub warehouse: Option<String>,
    /// Options every command takes.
    #[command(flatten)]
    pub common: CommonArgs,
}

/// The output format of `dtemporal sql`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SqlFormat {
    /// CSV with a header.
    Csv,
    /// A boxed table (Flink's tableau).
    Table,
}

/// Runs the statements; malformed and refused rows count as rejected.
pub(super) fn run(cli: &Cli, args: &SqlArgs) -> Result<Outcome, Error> {
    let options = args.common.run_options(cli)?;
    let mode = match args.mode {
        ModeArg::Incremental => ExecutionMode::Incremental,
        ModeArg::Final => ExecutionMode::Final,
    };
    let env = TableEnv::new()
        .with_timely_args(options.timely_args.clone())
        .with_block_bytes(options.block_bytes)
        .with_mode(mode)
        .with_progress(options.progress);
    let env = match &args.warehouse {
        Some(dir) => env
            .with_warehouse(dir)
            .map_err(|e| Error::Usage(e.to_string()))?,
        None => env,
    };
    let output = options.output.as_deref();
    let sql = match (&args.file, &args.execute) {
        (Some(file), _) => {
            std::fs::read_to_string(file).map_err(|e| Error::Usage(format!("{file}: {e}")))?
        }
        (None, Some(sql)) => sql.clone(),
        (None, None) => {
            let format = args.format.unwrap_or(SqlFormat::Table);
            return prompt::run(&env, |env, sql, outcome| {
                run_script(env, sql, args, format, output, outcome)
            });
        }
    };
    let mut outcome = Outcome {
        lines: 0,
        rejected: 0,
        ignored: Vec::new(),
        wrote: true,
    };
    let format = args.format.unwrap_or(SqlFormat::Csv);
    run_script(&env, &sql, args, format, output, &mut outcome)?;
    Ok(outcome)
}

/// Runs the statements of `sql` in order and writes each one's result.
fn run_script(
    env: &TableEnv,
    sql: &str,
    args: &SqlArgs,
    format: SqlFormat,
    output: Option<&str>,
    outcome: &mut Outcome,
) -> Result<(), Error> {
    // Syntax errors stop the script before anything runs; then each statement's result is
    // written before the next statement runs, so a later failure keeps the earlier results.
    let statements = parse_with_text(sql).map_err(|e| Error::Usage(e.to_string()))?;
    for (statement, text) in &statements {
        // A query over a table that never ends runs live (a query that does not bind fails
        // below, its error placed in the script).
        if matches!(statement, Statement::Query(_)) && env.reads_unbounded(text).unwrap_or(false) {
            super::live::run(env, text, (args.emit, format), output, outcome)?;
            continue;
        }
        // `--emit final` needs only a query's final table; INSERT INTO writes the changelog.
        let final_table = args.emit == EmitArg::Final && matches!(statement, Statement::Query(_));
        env.set_result_form(if final_table {
            ResultForm::FinalTable
        } else {
            ResultForm::Changelog
        });
        let result = env
            .execute_statement_sql(statement, text)
            .map_err(|e| Error::Usage(e.to_string()))?;
        match &result {
            StatementResult::Ok => {}
            StatementResult::Explain(plan) => print_out(&format!("{plan}\n"))?,
            // A manual refresh's status line goes with the other status lines, to standard
            // error, so that standard output holds only results (a query's CSV).
            StatementResult::Text(text)
                if matches!(statement, Statement::AlterMaterializedTable { .. }) =>
            {
                eprint!("dtemporal: {text}")
            }
            StatementResult::Text(text) => print_out(text)?,
            StatementResult::Rows(rows) => {
                report(rows, outcome);
                write(rows, args.emit, format, output)?;
            }
            StatementResult::Inserted(rows, path) => {
                report(rows, outcome);
                eprintln!(
                    "dtemporal: {} change(s) written to {path}",
                    rows.changelog().len()
                );
            }
        }
    }
    Ok(())
}

/// Counts and reports a result's malformed and refused rows on standard error; rows skipped by
/// definition (a merge engine's ignored writes) are counted per reason, as the commands count
/// them, not reported as errors.
fn report(result: &TableResult, outcome: &mut Outcome) {
    for error in result.malformed() {
        eprintln!("{error}");
    }
    let mut ignored: Vec<&str> = Vec::new();
    for (_, refused) in result.refused() {
        match refused.kind {
            RejectKind::Ignored => ignored.push(&refused.reason),
            _ => {
                eprintln!("row {}: {}", refused.seq, refused.reason);
                outcome.rejected += 1;
            }
        }
    }
    ignored.sort_unstable();
    for reason in ignored {
        match outcome.ignored.iter_mut().find(|(r, _)| r == reason) {
            Some((_, n)) => *n += 1,
            None => outcome.ignored.push((reason.to_string(), 1)),
        }
    }
    outcome.rejected += result.malformed().len();
    outcome.lines += result.changelog().len();
}

fn write(
    result: &TableResult,
    emit: EmitArg,
    format: SqlFormat,
    output: Option<&str>,
) -> Result<(), Error> {
    if format == SqlFormat::Csv {
        let form = match emit {
            EmitArg::Retract => Some(ChangelogMode::Retract),
            EmitArg::Upsert => Some(ChangelogMode::Upsert),
            EmitArg::Final => None,
        };
        return result.write_csv_as(output, form);
    }
    let mut text = String::new();
    let rows: Vec<(RowKind, &crate::repr::Row)> = if emit == EmitArg::Final {
        let rows = result.final_rows().into_iter();
        rows.map(|r| (RowKind::Insert, r)).collect()
    } else {
        changes(result, emit)
    };
    Tableau::table_result(emit != EmitArg::Final)
        .print(result.schema(), rows, &mut text)
        .map_err(|e| Error::Usage(e.to_string()))?;
    match output {
        Some(path) => std::fs::write(path, text).map_err(|e| Error::Usage(format!("{path}: {e}"))),
        None => print_out(&text),
    }
}

/// The changes to show: all of them, or without update-before rows for `upsert`.
fn changes(result: &TableResult, emit: EmitArg) -> Vec<(RowKind, &crate::repr::Row)> {
    result
        .changelog()
        .iter()
        .filter(|(_, c)| emit != EmitArg::Upsert || c.kind != RowKind::UpdateBefore)
        .map(|(_, c)| (c.kind, &c.row))
        .collect()
}
