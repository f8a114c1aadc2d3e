//! Writing CSV outputs: deterministic order, a header row, NULL as an empty cell.
//!
//! An output is a multiset of [`OutputLine`]s. A changelog's lines lead with an `op` cell and are
//! ordered by `(seq, kind)`, Flink's emission order; a table's lines are ordered by the source
//! position (`seq`) of the row each shows, then by their cells.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{self, BufWriter, Write};

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::operators::{Change, ChangelogMode, RowKind, Seq};
use crate::row::{Row, TextCells};
use crate::tail::Tail;

/// One line of an output file with its sort key: lines are written in `(seq, rank, cells)` order,
/// the cells compared as text ([`TextCells::cmp_cells`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OutputLine {
    /// Primary sort key: the source sequence number of a changelog row or of a table row's
    /// source row.
    pub seq: Seq,
    /// Secondary sort key: the row kind's position in `+I, -U, +U, -D` (0 for table rows).
    pub rank: u8,
    /// A changelog line's `op` cell, written before its cells (`None`: a table line).
    pub op: Option<RowKind>,
    /// The text cells written (after the `op` cell).
    pub cells: Row,
}

/// Within one output every line has an `op` or none, and a changelog line's `op` follows from
/// its rank: the cells decide the rest.
impl Ord for OutputLine {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.seq, self.rank, self.op)
            .cmp(&(other.seq, other.rank, other.op))
            .then_with(|| self.cells.cmp_cells(&other.cells))
    }
}

impl PartialOrd for OutputLine {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl OutputLine {
    /// A changelog line for `change` as shown in `mode`: its `op`, then its row's cells (the row
    /// moved, not copied); `None` if the mode drops it (a `-U` in upsert mode).
    pub fn change(change: Change<Row>, mode: ChangelogMode) -> Option<Self> {
        let op = mode.render(change.kind)?;
        Some(OutputLine {
            seq: change.seq,
            rank: change.kind as u8,
            op: Some(op),
            cells: change.row,
        })
    }

    /// A table line: the cells of a row whose source sequence number is `seq`; table lines are
    /// ordered by the position of their source row.
    pub fn row(seq: Seq, cells: Row) -> Self {
        OutputLine {
            seq,
            rank: 0,
            op: None,
            cells,
        }
    }

    /// The line's leading `op` cell, if any, and its cells: what [`write_csv`] writes of it.
    pub fn record(&self) -> (Option<&'static str>, &Row) {
        (self.op.map(RowKind::as_str), &self.cells)
    }
}

/// Writes `header` and then the cells of `rows` (each row's leading cell, if any, and its
/// [`Row`] by `record`) as CSV to `path` (`None`: standard output), encoded on the threads of
/// `tail` in the rows' order.
///
/// A closed standard output (the reader went away, as `dtemporal ... | head` does) ends the
/// writing quietly: the reader asked for no more, so it is not an error.
pub fn write_csv<T: Sync>(
    path: Option<&str>,
    header: &[String],
    tail: &Tail,
    rows: &[T],
    record: impl Fn(&T) -> (Option<&'static str>, &Row) + Sync,
) -> Result<(), Error> {
    let mut writer = open_output(path)?;
    let written = (|| -> Result<(), io::Error> {
        writer.write_record(header).map_err(into_io)?;
        let mut out = writer
            .into_inner()
            .map_err(|e| io::Error::new(e.error().kind(), e.error().to_string()))?;
        tail.write_encoded(rows, &mut out, |row, csv, _| {
            let (first, cells) = record(row);
            let cells = cells.cells().map(Option::unwrap_or_default);
            csv.write_record(first.into_iter().chain(cells))
                .map_err(into_io)
        })?;
        out.flush()
    })();
    output_result(path, written)
}

/// A CSV writer over the file at `path` (created or truncated), or standard output for `None`,
/// buffered.
pub fn open_output(path: Option<&str>) -> Result<csv::Writer<Box<dyn Write>>, Error> {
    let sink: Box<dyn Write> = match path {
        Some(p) => Box::new(BufWriter::new(
            File::create(p).map_err(|e| Error::io(p, e))?,
        )),
        None => Box::new(BufWriter::new(io::stdout().lock())),
    };
    Ok(csv::WriterBuilder::new()
        .buffer_capacity(64 * 1024)
        .from_writer(sink))
}

/// The outcome of writing to `path` (`None`: standard output) as a run's result: a closed
/// standard output is a quiet end, not an error (the reader asked for no more).
pub fn output_result(path: Option<&str>, written: io::Result<()>) -> Result<(), Error> {
    match written {
        Err(e) if path.is_none() && e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(|e| Error::io(path.unwrap_or("<stdout>"), e)),
    }
}

/// The I/O error inside a CSV writer's error (a writer's only errors are I/O errors).
pub fn into_io(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}
