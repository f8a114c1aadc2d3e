//! The typed CSV sink: packed [`Row`]s written as CSV by a [`Schema`].
//!
//! A header row of the schema's column names (led by `op` for a changelog), then one line per
//! row: each datum written by [`crate::repr::cast::format_datum`] (decimals with their scale,
//! timestamps per precision, NULL as an empty cell) and handed to the `csv` crate's writer,
//! which quotes it as the text layer's outputs are quoted (only when needed). No text row is
//! built: a string goes to the writer as it lies in the row, an integer from a stack buffer,
//! any other datum through one reused cell buffer.

use std::io::{self, Write};

use crate::csv::{into_io, open_output};
use crate::error::Error;
use crate::operators::RowKind;
use crate::repr::cast::format_datum;
use crate::repr::{DataType, Datum, Row, Schema};
use crate::tail::Tail;

/// Writes typed rows as CSV. See the [module documentation](crate::io).
///
/// ```
/// use differential_temporal::io::CsvSink;
/// use differential_temporal::operators::RowKind;
/// use differential_temporal::repr::{DataType, Datum, Row, Schema};
///
/// let schema = Schema::builder()
///     .column("name", DataType::STRING.nullable())
///     .column("n", DataType::BigInt.nullable())
///     .build()
///     .unwrap();
/// let mut sink = CsvSink::new(Vec::new(), &schema, true).unwrap();
/// sink.write_change(RowKind::Insert, &Row::pack([Datum::Str("a,b"), Datum::Int(1)])).unwrap();
/// sink.write_change(RowKind::Delete, &Row::pack([Datum::Null, Datum::Int(2)])).unwrap();
/// let bytes = sink.finish().unwrap();
/// assert_eq!(String::from_utf8(bytes).unwrap(), "op,name,n\n+I,\"a,b\",1\n-D,,2\n");
/// ```
pub struct CsvSink<W: Write> {
    writer: csv::Writer<W>,
    types: Vec<DataType>,
    changelog: bool,
    cell: String,
}

impl CsvSink<Box<dyn Write>> {
    /// A sink writing to the file at `path` (created or truncated), or to standard output for
    /// `None`, buffered; the header is written. Finish with
    /// [`output_result`](crate::csv::output_result)`(path, sink.finish().map(drop))` to treat
    /// a closed standard output as a quiet end, as the command line does.
    pub fn create(
        path: Option<&str>,
        schema: &Schema,
        changelog: bool,
    ) -> Result<CsvSink<Box<dyn Write>>, Error> {
        let writer = open_output(path)?;
        CsvSink::from_writer(writer, schema, changelog)
            .map_err(|e| Error::io(path.unwrap_or("<stdout>"), e))
    }
}

impl<W: Write> CsvSink<W> {
    /// A sink writing to `out`; the header (schema column names, led by `op` when `changelog`)
    /// is written first.
    pub fn new(out: W, schema: &Schema, changelog: bool) -> io::Result<CsvSink<W>> {
        CsvSink::from_writer(csv::Writer::from_writer(out), schema, changelog)
    }

    fn from_writer(
        mut writer: csv::Writer<W>,
        schema: &Schema,
        changelog: bool,
    ) -> io::Result<CsvSink<W>> {
        let op = changelog.then_some(crate::csv::OP_COLUMN);
        writer
            .write_record(op.into_iter().chain(schema.names()))
            .map_err(into_io)?;
        Ok(CsvSink {
            writer,
            types: schema.types().map(|t| t.data_type.clone()).collect(),
            changelog,
            cell: String::new(),
        })
    }

    /// Writes one changelog row: its kind in the `op` column (when the sink is a changelog;
    /// a table sink writes the row alone), then its datums in schema order.
    pub fn write_change(&mut self, kind: RowKind, row: &Row) -> io::Result<()> {
        let (types, changelog) = (&self.types, self.changelog);
        encode(
            types,
            changelog,
            kind,
            row,
            &mut self.writer,
            &mut self.cell,
        )
    }

    /// Writes the change `change(item)` of each of `items` in order, encoded on the threads of
    /// `tail`: the bytes [`write_change`](CsvSink::write_change) would write, one change after
    /// the other.
    ///
    /// Errors: an error of the underlying writer, or a datum that cannot be formatted.
    pub fn write_encoded<T: Sync>(
        self,
        tail: &Tail,
        items: &[T],
        change: impl Fn(&T) -> (RowKind, &Row) + Sync,
    ) -> io::Result<Self> {
        let CsvSink {
            writer,
            types,
            changelog,
            cell,
        } = self;
        let mut out = writer
            .into_inner()
            .map_err(|e| io::Error::new(e.error().kind(), e.error().to_string()))?;
        tail.write_encoded(items, &mut out, |item, csv, cell| {
            let (kind, row) = change(item);
            encode(&types, changelog, kind, row, csv, cell)
        })?;
        Ok(CsvSink {
            writer: csv::Writer::from_writer(out),
            types,
            changelog,
            cell,
        })
    }

    /// Writes one table row (an insertion: `+I` in a changelog sink).
    pub fn write_row(&mut self, row: &Row) -> io::Result<()> {
        self.write_change(RowKind::Insert, row)
    }

    /// Writes what is buffered through to the output (a live query's round).
    pub fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }

    /// Flushes everything written and returns the underlying writer.
    pub fn finish(self) -> io::Result<W> {
        self.writer
            .into_inner()
            .map_err(|e| io::Error::new(e.error().kind(), e.error().to_string()))
    }
}

/// Writes `row` (led by `kind` in a changelog) as one CSV record of `types` to `out`, each datum
/// formatted into `cell` first.
fn encode<W: Write>(
    types: &[DataType],
    changelog: bool,
    kind: RowKind,
    row: &Row,
    out: &mut csv::Writer<W>,
    cell: &mut String,
) -> io::Result<()> {
    if changelog {
        out.write_field(kind.as_str()).map_err(into_io)?;
    }
    for (datum, ty) in row.iter().zip(types) {
        // Text, NULL and integers, most cells of most outputs, are written without the cell
        // buffer: a string as it lies in the row, an integer from a stack buffer.
        match datum {
            Datum::Str(text) => out.write_field(text),
            Datum::Null => out.write_field([]),
            Datum::Int(v) => out.write_field(itoa::Buffer::new().format(v)),
            datum => {
                cell.clear();
                format_datum(datum, ty, cell).map_err(io::Error::other)?;
                out.write_field(&*cell)
            }
        }
        .map_err(into_io)?;
    }
    out.write_record(None::<&[u8]>).map_err(into_io)
}
