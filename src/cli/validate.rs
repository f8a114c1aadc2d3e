//! `dtemporal validate`: check that a changelog CSV is consistent per key, in file order.
//!
//! A sequential checker (no dataflow): it reads the file through the crate's CSV layer (so a
//! malformed row is reported exactly as the other commands report it) and keeps one state per
//! key: absent, live (with the row and the line that made it live), or retracted by a `-U` that
//! still waits for its `+U`. Keys are forgotten when they become absent, so memory holds the live
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
//! missing its `+U` is reported on the `-U`'s line), then a summary line. Exit 0 when there is
//! no finding, 1 otherwise, 2 on a usage or I/O error.

use std::collections::HashMap;
use std::io::Write;

use clap::Args;

use super::columns;
use crate::csv::{InputSpec, Record, RowError, Schema};
use crate::error::Error;
use crate::operators::RowKind;
use crate::row::{Row, TextCells};

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
}

/// What the checker knows of one key that is not absent.
enum KeyState {
    /// The key has `row`, made live on `line`.
    Live { line: u64, row: Row },
    /// A `-U` on `line` retracted the key's row; its `+U` must come next.
    Retracted { line: u64 },
}

/// One inconsistency: its line and text (without the file name).
type Finding = (u64, String);

/// The result of checking a file.
#[derive(Debug, Default, PartialEq, Eq)]
struct Report {
    /// Every finding, as written (`FILE:LINE: ...`), in file order.
    findings: Vec<String>,
    /// Rows read (malformed ones included).
    rows: u64,
}

/// The per-key checker (see the module docs).
struct Checker {
    upsert: bool,
    /// Position of the event-time column in the row, excluded from row comparison.
    time: Option<usize>,
    /// Column names of the row (without `op`), for messages.
    columns: Vec<String>,
    state: HashMap<Row, KeyState>,
    findings: Vec<Finding>,
}

impl Checker {
    /// Checks one well-formed record against its key's state and updates the state.
    fn record(&mut self, r: Record) {
        let (at, kind) = (r.seq, r.kind);
        let key = render_key(&r.key);
        let mut problems: Vec<Finding> = Vec::new();
        let previous = self.state.remove(&r.key);
        // A `-U` whose key changes again with anything but `+U` is missing its `+U`.
        let awaited = match &previous {
            Some(KeyState::Retracted { line }) => {
                if kind != RowKind::UpdateAfter {
                    problems.push((
                        *line,
                        format!(
                            "-U not followed by +U (the key's next change is {kind} on line {at})"
                        ),
                    ));
                }
                true
            }
            _ => false,
        };
        let live = match previous {
            Some(KeyState::Live { line, row }) => Some((line, row)),
            _ => None,
        };
        let mut problem = |text: String| problems.push((at, text));
        let next = match kind {
            RowKind::Insert | RowKind::UpdateAfter if self.upsert => Some(r.row),
            RowKind::UpdateBefore if self.upsert => {
                problem("-U in an upsert changelog (--upsert)".into());
                None
            }
            RowKind::Insert => {
                if let Some((line, _)) = &live {
                    problem(format!(
                        "+I of a key that is live (its row was inserted on line {line})"
                    ));
                }
                Some(r.row)
            }
            RowKind::UpdateAfter => {
                match &live {
                    Some((line, _)) => problem(format!(
                        "+U without a preceding -U (the key is live since line {line})"
                    )),
                    None if !awaited => {
                        problem("+U without a preceding -U (the key is absent)".into())
                    }
                    None => {}
                }
                Some(r.row)
            }
            RowKind::UpdateBefore | RowKind::Delete => {
                match &live {
                    None => problem(format!("{kind} of a key with no live row")),
                    Some((line, row)) if !self.upsert => {
                        if let Some(diff) = self.difference(row, &r.row) {
                            problem(format!(
                                "{kind} retracts a row other than the live one of line {line}: {diff}"
                            ));
                        }
                    }
                    Some(_) => {}
                }
                None
            }
        };
        let state = match (next, kind) {
            (Some(row), _) => Some(KeyState::Live { line: at, row }),
            // An upsert changelog's `-U` changes nothing.
            (None, RowKind::UpdateBefore) if self.upsert => {
                live.map(|(line, row)| KeyState::Live { line, row })
            }
            (None, RowKind::UpdateBefore) => Some(KeyState::Retracted { line: at }),
            (None, _) => None,
        };
        if let Some(state) = state {
            self.state.insert(r.key, state);
        }
        self.findings.extend(
            problems
                .into_iter()
                .map(|(line, p)| (line, format!("key={key}: {p}"))),
        );
    }

    /// The first column (other than the event time) where `retracted` differs from `live`.
    fn difference(&self, live: &Row, retracted: &Row) -> Option<String> {
        let cell = |c: Option<&str>| c.map_or("NULL".to_string(), |s| format!("{s:?}"));
        live.cells()
            .zip(retracted.cells())
            .enumerate()
            .filter(|&(i, _)| Some(i) != self.time)
            .find(|(_, (l, r))| l != r)
            .map(|(i, (l, r))| {
                format!(
                    "column {:?} is {}, the live row has {}",
                    self.columns[i],
                    cell(r),
                    cell(l)
                )
            })
    }

    /// Reports every `-U` still waiting for its `+U` at the end of the input.
    fn finish(&mut self) {
        for (key, state) in &self.state {
            if let KeyState::Retracted { line } = state {
                self.findings.push((
                    *line,
                    format!(
                        "key={}: -U not followed by +U (the input ends first)",
                        render_key(key)
                    ),
                ));
            }
        }
    }
}

/// A key as shown in a finding: its cell quoted, or its cells in parentheses.
fn render_key(key: &Row) -> String {
    let cells: Vec<String> = key
        .cells()
        .map(|k| format!("{:?}", k.unwrap_or_default()))
        .collect();
    match cells.as_slice() {
        [one] => one.clone(),
        many => format!("({})", many.join(", ")),
    }
}

/// Checks the changelog `args.input` (see the module docs); reads it in blocks of
/// `block_bytes`, which does not change the result.
///
/// Errors: the file cannot be read, has no header, or lacks a named column.
fn check(args: &ValidateArgs, block_bytes: usize) -> Result<Report, Error> {
    let spec = InputSpec {
        path: args.input.clone(),
        nullable_key: false,
        key: columns(&args.key),
        time: args.time.clone(),
    };
    let schema = Schema::open(&spec, 0)?;
    let mut checker = Checker {
        upsert: args.upsert,
        time: schema.time,
        columns: schema.columns.clone(),
        state: HashMap::new(),
        findings: Vec::new(),
    };
    let mut malformed: Vec<RowError> = Vec::new();
    let mut rows = 0;
    let mut blocks = schema.blocks(block_bytes)?;
    while let Some(block) = blocks
        .next_owned(|_| true)
        .map_err(|e| Error::io(&schema.path, e))?
    {
        schema.parse_block(&block, |row| {
            rows += 1;
            match row {
                Ok(record) => checker.record(record),
                Err(error) => malformed.push(error),
            }
        });
    }
    checker.finish();
    let mut lines: Vec<(u64, String)> = checker
        .findings
        .into_iter()
        .map(|(line, text)| (line, format!("{}:{line}: {text}", schema.path)))
        .chain(malformed.into_iter().map(|e| (e.line, e.to_string())))
        .collect();
    // Stable: the findings of one line keep the order they were found in.
    lines.sort_by_key(|(line, _)| *line);
    Ok(Report {
        findings: lines.into_iter().map(|(_, text)| text).collect(),
        rows,
    })
}

/// Runs `dtemporal validate`: writes the findings and the summary to standard output and
/// returns the exit code (0 clean, 1 findings); a closed standard output ends the report
/// quietly.
pub(super) fn run(args: &ValidateArgs) -> Result<i32, Error> {
    let report = check(args, 1 << 16)?;
    let mut text: String = report.findings.iter().map(|f| format!("{f}\n")).collect();
    text.push_str(&format!(
        "{} finding(s) in {} row(s)\n",
        report.findings.len(),
        report.rows
    ));
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            return Err(Error::io("<stdout>", e))
        }
        _ => {}
    }
    Ok(i32::from(!report.findings.is_empty()))
}
