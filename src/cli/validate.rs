//! `dtemporal validate`: check that a changelog CSV is consistent per key, in file order.
//!
//! A front end of the plan [`RelExpr::check_changelog`] (its rules, and the findings' texts,
//! are [`Problem`](crate::plan::Problem)'s): the file's rows, read as every command reads them
//! (so a malformed row is reported exactly as the other commands report it), are a changelog
//! scanned in source order and checked per key on the run's workers; memory holds the live
//! keys only.
//!
//! Rules of a retract changelog (Flink `ChangelogMode.all()`, the default):
//!
//! * `+I` needs an absent key;
//! * `-U` and `-D` need a live key, and retract the live row: every cell except the `--time`
//!   column (CDC tools stamp a retraction with the change's time) must equal the live row's;
//! * a `-U` must be followed by a `+U` of the same key, as that key's next change;
//! * a `+U` needs a preceding `-U` of its key.
//!
//! With `--upsert` (Flink `ChangelogMode.upsert()`: no `-U` rows, deletes by key) `+I` and `+U`
//! are upserts accepted for any key; a `-U` row is a finding, and so is a `-D` of an absent key.
//!
//! Findings are written one per line, `FILE:LINE: key=KEY: problem`, sorted by line (a `-U`
//! missing its `+U` is reported on the `-U`'s line, after the `-U`'s own finding), malformed
//! rows among them by their line, then a summary line. Exit 0 when there is no finding, 1
//! otherwise, 2 on a usage or I/O error.

use std::cell::RefCell;
use std::rc::Rc;

use clap::Args;

use super::{columns, timely_args, Cli};
use crate::csv::{InputSpec, Record, RowError, Schema};
use crate::error::Error;
use crate::operators::{Change, SysTime};
use crate::plan::RelExpr;
use crate::progress::Progress;
use crate::render::{ExecutionMode, RenderContext};
use crate::repr::{format_datum, DataType, Datum, Row};
use crate::run::{self, at_time_zero, expand, gather, Finished, Take};
use crate::tail::Tail;

/// The example shown by `dtemporal validate --help`.
pub(super) const EXAMPLE: &str = "\
Example (check a products changelog; each finding names its line):
  dtemporal validate --input products.csv --key product_id --time update_time

Output: one `FILE:LINE: key=KEY: problem` line per finding (a malformed row as
`FILE:LINE:COLUMN: reason`), in file order, then `N finding(s) in R row(s)`.

Exit codes: 0 no finding, 1 findings, 2 usage or I/O error.";

/// Arguments of `dtemporal validate`.
#[derive(Args, Debug, Clone)]
pub struct ValidateArgs {
    /// Changelog CSV file with an `op` column (`.gz` is decompressed); without one every row is
    /// `+I`.
    #[arg(long, value_name = "FILE")]
    pub input: String,
    /// Primary-key columns, comma-separated.
    #[arg(long, value_name = "COLS")]
    pub key: String,
    /// Event-time column: must parse, and is not compared between a retraction and its row.
    #[arg(long, value_name = "COL")]
    pub time: Option<String>,
    /// Read an upsert changelog (+I, +U, -D; no -U): +I and +U replace any row of their key.
    #[arg(long)]
    pub upsert: bool,
    /// No progress line on standard error (one is drawn only when it is a terminal and the
    /// input is 32 MiB or more).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// The name of the plan's scan of the file.
const CHANGES: &str = "changes";

/// The result of checking a file.
#[derive(Debug, Default, PartialEq, Eq)]
struct Report {
    /// Every finding, as written (`FILE:LINE: ...`), in file order.
    findings: Vec<String>,
    /// Rows read (malformed ones included).
    rows: u64,
}

/// What worker 0 gathers: the findings, the malformed rows, and one `()` per row read.
type Gathered = (
    Vec<(Row, SysTime, isize)>,
    Vec<(RowError, SysTime, isize)>,
    Vec<((), SysTime, isize)>,
);

/// Checks the changelog `args.input` (see the module docs) on the workers `timely_args` asks
/// for, reading it in blocks of `block_bytes`; neither changes the result. `None` in a process
/// that does not host worker 0.
///
/// Errors: the file cannot be read, has no header, or lacks a named column; bad timely
/// arguments; a worker failure.
fn check(
    args: &ValidateArgs,
    timely_args: &[String],
    block_bytes: usize,
) -> Result<Option<Report>, Error> {
    let key = columns(&args.key);
    let spec = InputSpec {
        path: args.input.clone(),
        nullable_key: false,
        key: key.clone(),
        time: args.time.clone(),
    };
    let schema = Schema::open(&spec, 0)?;
    let table = crate::repr::Schema::new(schema.fields())
        .map_err(|e| Error::input(&schema.path, e.to_string()))?;
    let uncompared = Vec::from_iter(args.time.clone());
    let plan =
        RelExpr::scan(CHANGES, table, true).check_changelog(&key, &uncompared, args.upsert)?;
    let key_types: Vec<DataType> = (plan.schema.fields[..key.len()].iter())
        .map(|f| f.ty.data_type.clone())
        .collect();
    let path = schema.path.clone();
    let progress = Progress::for_files([path.as_str()], !args.quiet);
    let finished = run::execute(
        timely_args,
        vec![schema],
        (block_bytes, run::Epochs::PerBlock),
        &progress,
        move |scope, inputs, malformed, probe| {
            let Ok([input]) = <[_; 1]>::try_from(inputs) else {
                unreachable!("the driver makes one collection an input");
            };
            let read = input
                .clone()
                .map(|_| ())
                .concat(malformed.clone().map(|_| ()));
            let changes = input.map(|r: Record| Change::new(r.seq, r.kind, r.row));
            let sources = [(CHANGES.to_string(), changes)].into();
            let mut ctx = RenderContext::new(scope, sources, ExecutionMode::Incremental);
            let findings = ctx.render(&plan)?.into_table();
            let found = Rc::new(RefCell::new(Vec::new()));
            let bad = Rc::new(RefCell::new(Vec::new()));
            let rows = Rc::new(RefCell::new(Vec::new()));
            gather(at_time_zero(findings), &found, true, probe);
            gather(at_time_zero(malformed), &bad, false, probe);
            gather(at_time_zero(read), &rows, true, probe);
            let take: Take<Gathered> = Box::new(move || (found.take(), bad.take(), rows.take()));
            Ok::<_, Error>(take)
        },
    )?;
    let Some(Finished {
        taken: (found, bad, read),
        threads,
    }) = finished
    else {
        return Ok(None);
    };
    let tail = Tail::new(threads);
    let mut lines: Vec<(u64, bool, String)> = expand(&tail, bad, "malformed row")?
        .into_iter()
        .map(|e| (e.line, false, e.to_string()))
        .collect();
    for finding in expand(&tail, found, "finding")? {
        let datums: Vec<Datum> = finding.iter().collect();
        let (key, rest) = datums.split_at(key_types.len());
        let [Datum::Int(line), Datum::Bool(follow_up), Datum::Str(problem)] = rest else {
            unreachable!("a finding is its key, seq, follow_up and problem")
        };
        let key = key_text(key, &key_types);
        let text = format!("{path}:{line}: key={key}: {problem}");
        lines.push((*line as u64, *follow_up, text));
    }
    lines.sort_by_key(|(line, follow_up, _)| (*line, *follow_up));
    let rows = read.iter().map(|(_, _, n)| *n as u64).sum();
    Ok(Some(Report {
        findings: lines.into_iter().map(|(_, _, text)| text).collect(),
        rows,
    }))
}

/// A key as shown in a finding: its value quoted, or its values in parentheses.
fn key_text(key: &[Datum], types: &[DataType]) -> String {
    let values: Vec<String> = key
        .iter()
        .zip(types)
        .map(|(&d, ty)| {
            let mut text = String::new();
            if !d.is_null() {
                format_datum(d, ty, &mut text).expect("a String takes any text");
            }
            format!("{text:?}")
        })
        .collect();
    match values.as_slice() {
        [one] => one.clone(),
        many => format!("({})", many.join(", ")),
    }
}

/// Runs `dtemporal validate`: writes the findings and the summary to standard output and
/// returns the exit code (0 clean, 1 findings); a closed standard output ends the report
/// quietly.
///
/// Errors: as [`check`]'s, and a cluster run (`-n` > 1), whose processes would share standard
/// output with timely's connection messages.
pub(super) fn run(cli: &Cli, args: &ValidateArgs) -> Result<i32, Error> {
    if cli.processes > 1 {
        return Err(Error::Usage(
            "validate writes its findings to standard output: run it in one process (-w N for more workers)".into(),
        ));
    }
    let Some(report) = check(args, &timely_args(cli), 1 << 16)? else {
        return Ok(0);
    };
    let mut text: String = report.findings.iter().map(|f| format!("{f}\n")).collect();
    text.push_str(&format!(
        "{} finding(s) in {} row(s)\n",
        report.findings.len(),
        report.rows
    ));
    super::print_out(&text)?;
    Ok(i32::from(!report.findings.is_empty()))
}
