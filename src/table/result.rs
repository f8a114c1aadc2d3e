//! The result of running a table: its changelog (as Flink's `TableResult` prints it, with the
//! `op` column), its final rows, and the rows refused on the way.

use std::collections::HashMap;

use crate::csv::RowError;
use crate::io::{CsvSink, Tableau};
use crate::plan::Mode;
use crate::repr::cast::format_datum;
use crate::repr::{Datum, Row, Schema};
use crate::run::Finished;
use crate::tail::Tail;
use differential_dataflow::consolidation::consolidate_updates;
use differential_temporal_operators::keyed_merge::Rejected;
use differential_temporal_operators::to_changelog::pair_changes;
use differential_temporal_operators::{Change, ChangelogMode, RowKind, SysTime};

/// What worker 0 gathered: output changes with their system times and diffs.
pub(super) struct Gathered {
    pub(super) output: Vec<(Change<Row>, SysTime, isize)>,
    /// Whether the output is a table (rows with retractions) rather than a changelog.
    pub(super) table_form: bool,
    /// Whether only the final table is wanted ([`ResultForm::FinalTable`](super::ResultForm))
    /// of a result with an upsert key: `output` is its changelog, folded here by key.
    pub(super) keyed_final: bool,
    pub(super) refused: Vec<(Rejected, SysTime, isize)>,
    pub(super) malformed: Vec<(RowError, SysTime, isize)>,
}

/// The result of [`Table::execute`](super::Table::execute).
#[derive(Clone, Debug)]
pub struct TableResult {
    schema: Schema,
    complete: bool,
    changelog: Vec<(SysTime, Change<Row>)>,
    refused: Vec<(SysTime, Rejected)>,
    malformed: Vec<RowError>,
    /// For a result with an upsert key: the positions in `changelog` of the final table's
    /// rows, the changelog folded by that key ([`fold_by_key`]); `None`: folded by whole row.
    by_key: Option<Vec<usize>>,
    /// The threads its tail (ordering, encoding) may use.
    threads: usize,
}

impl TableResult {
    /// The result of a run: what worker 0 gathered and the threads its process may use, `None`
    /// in a process that does not host worker 0 (the result is then not complete).
    pub(super) fn new(
        schema: Schema,
        mode: Mode,
        gathered: Option<Finished<Gathered>>,
    ) -> TableResult {
        let Some(Finished { taken: g, threads }) = gathered else {
            return TableResult {
                schema,
                complete: false,
                changelog: Vec::new(),
                refused: Vec::new(),
                malformed: Vec::new(),
                by_key: None,
                threads: 1,
            };
        };
        let mut output = g.output;
        // Sorted on the tail's threads into emission order (time, seq, kind, row), which
        // brings equal updates together: consolidation only merges neighbours.
        Tail::new(threads).sort_unstable_by(&mut output, |a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        output.dedup_by(|next, kept| {
            let same = (next.1, &next.0) == (kept.1, &kept.0);
            if same {
                kept.2 += next.2;
            }
            same
        });
        output.retain(|(_, _, d)| *d != 0);
        let mut refused: Vec<(SysTime, Rejected)> = expand(g.refused);
        if mode.upsert_key().is_none() {
            refused.extend(overdrawn_rows(&output, &schema, &Tail::new(threads)));
        }
        let mut changelog = if !g.table_form && output.iter().all(|(_, _, d)| *d > 0) {
            // A changelog whose every change stands: emit it as it is, in emission order.
            let mut changes = Vec::with_capacity(output.len());
            for (change, time, d) in output {
                changes.extend(std::iter::repeat_n((time, change), d as usize));
            }
            changes
        } else {
            table_changelog(output, mode.upsert_key(), schema.len())
        };
        let mut by_key = mode.upsert_key().map(|key| {
            let (rows, unmatched) = fold_by_key(&changelog, key, &schema);
            refused.extend(unmatched);
            rows
        });
        if g.keyed_final {
            // Only the final table is kept, as `+I` rows in value order.
            let rows = by_key.take().unwrap_or_default();
            let rows = rows.iter().map(|&at| &changelog[at].1.row);
            let rows = sort_by_value(&Tail::new(threads), rows);
            let rows = rows
                .into_iter()
                .map(|row| (0, Change::new(0, RowKind::Insert, row.clone())));
            changelog = rows.collect();
        }
        refused.sort();
        let malformed = expand(g.malformed).into_iter().map(|(_, e)| e).collect();
        TableResult {
            schema,
            complete: true,
            changelog,
            refused,
            malformed,
            by_key,
            threads,
        }
    }

    /// The result's columns.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// `false` in a process of a cluster that does not host worker 0: its result is empty.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// The changes in emission order, each with the system time it was emitted at.
    pub fn changelog(&self) -> &[(SysTime, Change<Row>)] {
        &self.changelog
    }

    /// The final table: the changelog accumulated, one entry per row (a row held twice is
    /// listed twice), sorted by column values. A result with an upsert key is accumulated by
    /// that key in emission order, as Flink's sink materializer keeps it (`fold_by_key`); one
    /// without by whole row, a row retracted more often than inserted held zero times (each
    /// retraction of a row not held is one of [`refused`](TableResult::refused)).
    pub fn collect(&self) -> Vec<Row> {
        self.final_rows().into_iter().cloned().collect()
    }

    /// [`collect`](TableResult::collect) borrowed from the changelog: no row is copied.
    pub fn final_rows(&self) -> Vec<&Row> {
        if let Some(rows) = &self.by_key {
            let rows = rows.iter().map(|&at| &self.changelog[at].1.row);
            return sort_by_value(&Tail::new(self.threads), rows);
        }
        if self
            .changelog
            .iter()
            .all(|(_, c)| c.kind == RowKind::Insert)
        {
            // An append-only changelog is its own final table.
            let rows = self.changelog.iter().map(|(_, c)| &c.row);
            return sort_by_value(&Tail::new(self.threads), rows);
        }
        let mut deltas: Vec<(&Row, isize)> = self
            .changelog
            .iter()
            .map(|(_, change)| (&change.row, change.kind.sign()))
            .collect();
        // Equal rows are equal bytes: sorting by bytes brings a row's changes together.
        let tail = Tail::new(self.threads);
        tail.sort_unstable_by(&mut deltas, |a, b| a.0.cmp(b.0));
        // A row retracted more often than inserted is held zero times; each retraction of it
        // that its earlier changes did not hold is one of `refused` (`overdrawn_rows`).
        let held = deltas.chunk_by(|a, b| a.0 == b.0).flat_map(|run| {
            let held: isize = run.iter().map(|(_, d)| d).sum();
            std::iter::repeat_n(run[0].0, held.max(0) as usize)
        });
        sort_by_value(&tail, held)
    }

    /// [`collect`](TableResult::collect) as CSV lines (cells as the CSV sink writes them, NULL empty,
    /// no quoting): handy in tests and examples.
    pub fn rows_as_text(&self) -> Vec<String> {
        self.collect().iter().map(|r| self.csv_line(r)).collect()
    }

    fn csv_line(&self, row: &Row) -> String {
        let mut line = String::new();
        for (i, (datum, field)) in row.iter().zip(&self.schema.fields).enumerate() {
            if i > 0 {
                line.push(',');
            }
            format_datum(datum, &field.ty.data_type, &mut line).expect("a String");
        }
        line
    }

    /// Rows refused while running (an expression that failed, a NULL event time, a late row in
    /// final mode): system time, `seq` (the row's line in its input; in a table of `n` files, `line * n` + the file's
    /// position in path order) and reason.
    pub fn refused(&self) -> &[(SysTime, Rejected)] {
        &self.refused
    }

    /// Input rows that could not be read (`FILE:LINE:COLUMN: column "x": reason`).
    pub fn malformed(&self) -> &[RowError] {
        &self.malformed
    }

    /// The changelog as Flink's `TableResult.print()` shows it in streaming mode: a table with
    /// the `op` column, widths by type, `N rows in set` (see [`crate::io::Tableau`]).
    pub fn to_tableau(&self) -> String {
        let mut out = String::new();
        Tableau::table_result(true)
            .print(
                &self.schema,
                self.changelog.iter().map(|(_, c)| (c.kind, &c.row)),
                &mut out,
            )
            .expect("a String");
        out
    }

    /// Writes the result as CSV to `path` (`None`: standard output): the changelog with its
    /// `op` column when `changelog`, else the final table (Flink's `executeInsert` into a
    /// filesystem sink). A closed standard output ends the output quietly.
    ///
    /// Errors: the file cannot be created or written.
    pub fn write_csv(
        &self,
        path: Option<&str>,
        changelog: bool,
    ) -> Result<(), crate::error::Error> {
        self.write_csv_as(path, changelog.then_some(ChangelogMode::Retract))
    }

    /// [`write_csv`](Self::write_csv) with the changelog in `form` (`Upsert`: without its `-U`
    /// rows, `dtemporal sql --emit upsert`), or the final table for `None`: the one CSV writer,
    /// whose cells are quoted as CSV needs.
    pub(crate) fn write_csv_as(
        &self,
        path: Option<&str>,
        form: Option<ChangelogMode>,
    ) -> Result<(), crate::error::Error> {
        let sink = CsvSink::create(path, &self.schema, form.is_some())?;
        let tail = Tail::new(self.threads);
        let written = (|| -> std::io::Result<()> {
            let sink = match form {
                Some(mode) => {
                    let shown: Vec<(RowKind, &Row)> = (self.changelog.iter())
                        .filter_map(|(_, c)| Some((mode.render(c.kind)?, &c.row)))
                        .collect();
                    sink.write_encoded(&tail, &shown, |&(kind, row)| (kind, row))?
                }
                None => {
                    sink.write_encoded(&tail, &self.final_rows(), |row| (RowKind::Insert, row))?
                }
            };
            sink.finish().map(drop)
        })();
        crate::csv::output_result(path, written)
    }

    /// Writes the changelog to the file `path` as Debezium events, one per line
    /// ([`write_debezium_json`](crate::io::write_debezium_json)).
    ///
    /// Errors: the file cannot be written.
    pub fn write_debezium_json(&self, path: &str) -> Result<(), crate::error::Error> {
        let file = std::fs::File::create(path).map_err(|e| crate::error::Error::io(path, e))?;
        let changes = self.changelog.iter().map(|(_, c)| (c.kind, &c.row));
        crate::io::write_debezium_json(std::io::BufWriter::new(file), &self.schema, changes)
            .map_err(|e| crate::error::Error::io(path, e))
    }

    /// Prints [`to_tableau`](TableResult::to_tableau) on standard output.
    pub fn print(&self) {
        print!("{}", self.to_tableau());
    }
}

/// `rows` in value order (column by column, [`Datum`]'s order): each row's first datum's
/// [`order_prefix`](Datum::order_prefix) is compared first, whole rows decoded only on a tie.
fn sort_by_value<'a>(tail: &Tail, rows: impl Iterator<Item = &'a Row>) -> Vec<&'a Row> {
    let prefix = |row: &Row| row.iter().next().map_or(0, |d| d.order_prefix());
    let mut keyed: Vec<(u128, &Row)> = rows.map(|row| (prefix(row), row)).collect();
    tail.sort_by(&mut keyed, |a, b| {
        (a.0.cmp(&b.0)).then_with(|| a.1.iter().cmp(b.1.iter()))
    });
    keyed.into_iter().map(|(_, row)| row).collect()
}

/// The final table of a changelog with the upsert key `key`, as Flink's
/// `SinkUpsertMaterializer` keeps it for a sink whose primary key is the upsert key: in
/// emission order, a `+I`/`+U` is the row of its key (replacing the one held), a `-U`/`-D`
/// removes the row its key holds whatever its other cells (Flink's planner tests retract
/// with the new row's event time). Returns the positions in `changelog` of the rows held,
/// and a refusal for each `-U`/`-D` whose key holds no row (Flink logs and drops it): it is
/// not applied, and reported with its `seq` (its line in its file).
///
/// Within a system time the changes of different inputs are ordered by `seq`, not by cause
/// (a join's row inserted by a right row at seq 5 and deleted by a left row at seq 3): an
/// insertion and a retraction of the same whole row in one system time cancel first, as
/// whole-row consolidation would, and the rest is folded in emission order.
fn fold_by_key(
    changelog: &[(SysTime, Change<Row>)],
    key: &[usize],
    schema: &Schema,
) -> (Vec<usize>, Vec<(SysTime, Rejected)>) {
    let mut held: HashMap<Row, usize, foldhash::fast::RandomState> = HashMap::default();
    let mut unmatched = Vec::new();
    let mut at = 0;
    for round in changelog.chunk_by(|a, b| a.0 == b.0) {
        if round.iter().all(|(_, change)| change.kind.is_accumulate()) {
            // Nothing to cancel (a batch run's one system time): each change is its key's row.
            for (time, change) in round {
                at += 1;
                fold_change(
                    &mut held,
                    &mut unmatched,
                    (at - 1, *time, change),
                    key,
                    schema,
                );
            }
            continue;
        }
        // Per whole row: how many insertions and retractions of this time cancel.
        let mut cancel: HashMap<&Row, (usize, usize), foldhash::fast::RandomState> =
            HashMap::default();
        for (_, change) in round {
            let (ins, ret) = cancel.entry(&change.row).or_default();
            *if change.kind.is_accumulate() {
                ins
            } else {
                ret
            } += 1;
        }
        for pending in cancel.values_mut() {
            let pairs = pending.0.min(pending.1);
            *pending = (pairs, pairs);
        }
        for (time, change) in round {
            at += 1;
            let (ins, ret) = cancel.get_mut(&change.row).expect("counted above");
            let pending = if change.kind.is_accumulate() {
                ins
            } else {
                ret
            };
            if *pending > 0 {
                *pending -= 1;
                continue;
            }
            fold_change(
                &mut held,
                &mut unmatched,
                (at - 1, *time, change),
                key,
                schema,
            );
        }
    }
    // The rows held in key order.
    let mut held: Vec<(Row, usize)> = held.into_iter().collect();
    held.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    (held.into_iter().map(|(_, at)| at).collect(), unmatched)
}

/// [`fold_by_key`]'s step: the change at position `at` of the changelog applied to `held`.
fn fold_change(
    held: &mut HashMap<Row, usize, foldhash::fast::RandomState>,
    unmatched: &mut Vec<(SysTime, Rejected)>,
    (at, time, change): (usize, SysTime, &Change<Row>),
    key: &[usize],
    schema: &Schema,
) {
    let datums: Vec<Datum> = change.row.iter().collect();
    let k = Row::pack(key.iter().map(|&c| datums[c]));
    if change.kind.is_accumulate() {
        held.insert(k, at);
        return;
    }
    if held.remove(&k).is_none() {
        let cells = cells(&datums, key, schema);
        let reason = format!(
            "a {} of key ({cells}) that holds no row: not applied (an upsert table is \
             kept by its key)",
            change.kind
        );
        unmatched.push((time, Rejected::invalid(change.seq, reason)));
    }
}

/// The retractions among `output` (changes with their system times and counts) of a result
/// without an upsert key that remove a row not held: per row (whole row), its changes in
/// `seq` order (its lines; of one `seq`, by system time, an insertion first), each change
/// refused at its `seq`, once, when the row's count falls below zero with it (a changelog
/// file's `-D` without an earlier `+I` of its row), whatever the block size. The count is
/// the one the final table sums ([`TableResult::final_rows`]), which holds such a row zero
/// times; the group aggregation reports its input's such retractions alike
/// (`render::reduce::multiset`). A table's rows have no line: theirs is `0`.
///
/// # Examples
///
/// `+I (a, x)` at line 2, `-D (a, y)` at line 3, `+I (a, z)` at line 4, `-D (a, y)` at line
/// 5, `+I (a, y)` at line 6: the `-D` of lines 3 and 5 are refused, as `a retraction of row
/// (k=a, s=y) that the table does not hold (no earlier change inserted it)`; the table holds
/// `(a, x)` and `(a, z)`.
fn overdrawn_rows(
    output: &[(Change<Row>, SysTime, isize)],
    schema: &Schema,
    tail: &Tail,
) -> Vec<(SysTime, Rejected)> {
    let retracts = |(c, _, d): &&(Change<Row>, SysTime, isize)| c.kind.sign() * d < 0;
    if !output.iter().any(|u| retracts(&u)) {
        return Vec::new();
    }
    let mut changes: Vec<&(Change<Row>, SysTime, isize)> = output.iter().collect();
    tail.sort_unstable_by(&mut changes, |a, b| {
        let (x, y) = (&a.0, &b.0);
        (&x.row, x.seq, a.1, retracts(a)).cmp(&(&y.row, y.seq, b.1, retracts(b)))
    });
    let all: Vec<usize> = (0..schema.len()).collect();
    let mut refused = Vec::new();
    for run in changes.chunk_by(|a, b| a.0.row == b.0.row) {
        let mut held = 0;
        for (change, time, d) in run {
            let n = change.kind.sign() * d;
            held += n;
            if n < 0 && held < 0 {
                let datums: Vec<Datum> = change.row.iter().collect();
                let reason = unheld_retraction(&datums, &all, schema);
                refused.push((*time, Rejected::invalid(change.seq, reason)));
            }
        }
    }
    refused
}

/// The reason a retraction of the row `datums` (the `columns` named) that the table does not
/// hold is refused for.
pub(super) fn unheld_retraction(datums: &[Datum], columns: &[usize], schema: &Schema) -> String {
    format!(
        "a retraction of row ({}) that the table does not hold (no earlier change inserted it)",
        cells(datums, columns, schema)
    )
}

/// `name=value` of the `columns` of a row's `datums`, comma-separated, for a message.
fn cells(datums: &[Datum], columns: &[usize], schema: &Schema) -> String {
    let mut cells = String::new();
    for (i, &c) in columns.iter().enumerate() {
        if i > 0 {
            cells.push_str(", ");
        }
        let name = &schema.fields[c].name;
        cells.push_str(&format!("{name}="));
        format_datum(datums[c], &schema.fields[c].ty.data_type, &mut cells).expect("a String");
    }
    cells
}

/// Updates with positive counts, expanded to one entry per unit, with their times.
fn expand<D: Ord + Clone>(mut updates: Vec<(D, SysTime, isize)>) -> Vec<(SysTime, D)> {
    consolidate_updates(&mut updates);
    updates
        .into_iter()
        .flat_map(|(d, t, n)| std::iter::repeat_n((t, d), n.max(0) as usize))
        .collect()
}

/// A table's changes as a changelog: per system time and upsert key (the whole row if there
/// is none), retractions and insertions paired into `-U`/`+U`, the rest `+I` / `-D` (as a sink
/// of an updating table prints it), the `-D` of a system time first.
pub(crate) fn table_changelog(
    output: Vec<(Change<Row>, SysTime, isize)>,
    key: Option<&[usize]>,
    width: usize,
) -> Vec<(SysTime, Change<Row>)> {
    let all: Vec<usize> = (0..width).collect();
    let key = key.unwrap_or(&all);
    // Each change with its (time, key), sorted by them: a key's changes at a time together.
    let mut changes: Vec<((SysTime, Row), Row, isize)> = (output.into_iter())
        .map(|(change, time, diff)| {
            let diff = diff * change.kind.sign();
            let datums: Vec<Datum> = change.row.iter().collect();
            let k = Row::pack(key.iter().map(|&c| datums[c]));
            ((time, k), change.row, diff)
        })
        .collect();
    changes.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut out = Vec::new();
    let mut changes = changes.into_iter().peekable();
    while let Some(((time, k), row, diff)) = changes.next() {
        let mut rows = vec![(row, diff)];
        while let Some((_, row, diff)) = changes.next_if(|next| next.0 .0 == time && next.0 .1 == k)
        {
            rows.push((row, diff));
        }
        rows.sort();
        let mut consolidated: Vec<(Row, isize)> = Vec::new();
        for (row, d) in rows {
            match consolidated.last_mut() {
                Some((last, n)) if *last == row => *n += d,
                _ => consolidated.push((row, d)),
            }
        }
        consolidated.retain(|(_, d)| *d != 0);
        out.extend(
            pair_changes(time, &consolidated)
                .into_iter()
                .map(|c| (time, c)),
        );
    }
    // Within a system time, the deletions come first (stable otherwise): an outer join's padded
    // row is retracted before its first match is inserted, and a match is deleted before the
    // padded row comes back (Flink's order, case E04).
    out.sort_by_key(|(time, change)| (*time, change.kind != RowKind::Delete));
    out
}
