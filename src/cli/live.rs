//! `dtemporal sql`'s live queries: a query over a table that never ends writes its changelog
//! round by round, flushed after each round, until interrupted (Ctrl-C, SIGINT or SIGTERM),
//! as Flink's SQL client shows a streaming query's changes until it is cancelled
//! ([`TableEnv::run_live_query`]).

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::sql::SqlFormat;
use super::EmitArg;
use crate::error::Error;
use crate::io::{CsvSink, Tableau};
use crate::operators::{Change, RowKind, SysTime};
use crate::repr::Schema;
use crate::run::Outcome;
use crate::sql::SqlError;
use crate::table::{TableEnv, TableError};

/// The signals that stop a live query.
const SIGNALS: [i32; 2] = [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM];

/// Where a live query writes: CSV (header first) or Flink's streaming tableau, to `output` or
/// standard output.
enum Out {
    Csv(Box<CsvSink<Box<dyn Write>>>),
    Table(Box<dyn Write>, u64),
}

/// Runs the query `sql` live (see the [module docs](self)), writing its changes as `emit` and
/// `format` say; each round's malformed and refused rows go to standard error and count as
/// rejected. A closed standard output ends the query quietly.
///
/// Errors: `--emit final` (the final table never comes), the query's, writing the output.
pub(super) fn run(
    env: &TableEnv,
    sql: &str,
    (emit, format): (EmitArg, SqlFormat),
    output: Option<&str>,
    outcome: &mut Outcome,
) -> Result<(), Error> {
    if emit == EmitArg::Final {
        return Err(Error::Usage(
            "the query reads a table that never ends, so its final table never comes: it writes its changes as they happen (--emit retract or upsert) until interrupted".into(),
        ));
    }
    // The first signal stops the query at the end of its round; a second one, while it
    // stops, ends the process.
    let stop = Arc::new(AtomicBool::new(false));
    let mut handlers = Vec::new();
    for signal in SIGNALS {
        let failed = |e: io::Error| Error::Usage(format!("cannot handle signal {signal}: {e}"));
        let second = signal_hook::flag::register_conditional_shutdown(signal, 130, stop.clone());
        handlers.push(second.map_err(failed)?);
        let first = signal_hook::flag::register(signal, Arc::clone(&stop));
        handlers.push(first.map_err(failed)?);
    }
    let mut out: Option<(Out, Schema)> = None;
    let written = env.run_live_query(sql, &stop, |schema, round| {
        for problem in &round.problems {
            eprintln!("{problem}");
        }
        outcome.rejected += round.problems.len();
        let changes: Vec<&(SysTime, Change<_>)> = (round.changes.iter())
            .filter(|(_, c)| emit != EmitArg::Upsert || c.kind != RowKind::UpdateBefore)
            .collect();
        outcome.lines += changes.len();
        let written = (|| -> io::Result<()> {
            if out.is_none() {
                out = Some((open(format, output, schema)?, schema.clone()));
            }
            let (out, _) = out.as_mut().expect("opened above");
            let rows = changes.iter().map(|(_, c)| (c.kind, &c.row));
            match out {
                Out::Csv(sink) => {
                    for (kind, row) in rows {
                        sink.write_change(kind, row)?;
                    }
                    sink.flush()
                }
                Out::Table(writer, total) => {
                    *total += changes.len() as u64;
                    let mut text = String::new();
                    (Tableau::table_result(true).print_rows(schema, rows, &mut text))
                        .map_err(io::Error::other)?;
                    writer.write_all(text.as_bytes())?;
                    writer.flush()
                }
            }
        })();
        quiet_on_broken_pipe(written, output, &stop)
    });
    // The signals' default action again (ending the process), for the statements after.
    for id in handlers {
        signal_hook::low_level::unregister(id);
    }
    for signal in SIGNALS {
        let always = Arc::new(AtomicBool::new(true));
        (signal_hook::flag::register_conditional_default(signal, always))
            .map_err(|e| Error::Usage(format!("cannot handle signal {signal}: {e}")))?;
    }
    let ended = match out {
        Some((Out::Table(mut writer, total), schema)) => {
            let mut text = String::new();
            (Tableau::table_result(true).print_tail(&schema, total, &mut text))
                .map_err(io::Error::other)
                .and_then(|()| writer.write_all(text.as_bytes()))
                .and_then(|()| writer.flush())
        }
        Some((Out::Csv(sink), _)) => sink.finish().map(drop),
        None => Ok(()),
    };
    written.map_err(|e| Error::Usage(e.to_string()))?;
    crate::csv::output_result(output, ended)
}

/// Opens the output and writes its head (the CSV header, the tableau's names).
fn open(format: SqlFormat, output: Option<&str>, schema: &Schema) -> io::Result<Out> {
    let failed = |e: Error| match e {
        Error::Io { source, .. } => source,
        other => io::Error::other(other.to_string()),
    };
    match format {
        SqlFormat::Csv => {
            let sink = CsvSink::create(output, schema, true).map_err(failed)?;
            Ok(Out::Csv(Box::new(sink)))
        }
        SqlFormat::Table => {
            let mut writer: Box<dyn Write> = match output {
                Some(path) => Box::new(io::BufWriter::new(std::fs::File::create(path)?)),
                None => Box::new(io::BufWriter::new(io::stdout().lock())),
            };
            let mut text = String::new();
            (Tableau::table_result(true).print_head(schema, &mut text))
                .map_err(io::Error::other)?;
            writer.write_all(text.as_bytes())?;
            writer.flush()?;
            Ok(Out::Table(writer, 0))
        }
    }
}

/// A write's outcome in a round: a closed standard output stops the query quietly (as a
/// reader such as `head` that has seen enough); another error fails it.
fn quiet_on_broken_pipe(
    written: io::Result<()>,
    output: Option<&str>,
    stop: &AtomicBool,
) -> Result<(), SqlError> {
    match written {
        Ok(()) => Ok(()),
        Err(e) if output.is_none() && e.kind() == io::ErrorKind::BrokenPipe => {
            stop.store(true, Ordering::SeqCst);
            Ok(())
        }
        Err(e) => Err(TableError::from(Error::io(output.unwrap_or("<stdout>"), e)).into()),
    }
}
