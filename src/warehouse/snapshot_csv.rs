//! The CSV of a snapshot's data files, format 2 ([`SNAPSHOT_FORMAT`]): a header of the
//! column names, then one record per row, each value written so that it reads back identical
//! ([`Format::Snapshot`](crate::io::Format::Snapshot) reads it):
//!
//! * NULL is the cell `\N`; an empty cell is the empty string (format 1 wrote both empty);
//! * a text value starting with `\` is written with one more `\` in front (the text `\N` is
//!   written `\\N`); every other value as [`format_datum`] writes it, quoted by the `csv` crate
//!   where needed (delimiters, quotes, newlines);
//! * each value other than text, integer and NULL is parsed back as it is written, and one
//!   that would not read back identical (a TIMESTAMP beyond year 9999, a FLOAT holding a
//!   DOUBLE's digits) is an error naming the row and column: a refresh never publishes a
//!   value a read refuses.
//!
//! Each file's size and CRC-32 are computed as it is written (the manifest records them,
//! [`DataFile`](super::DataFile)). A format 1 file carried into a format 2 snapshot is
//! rewritten in format 2 ([`convert_v1`]).

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use super::{io_at, Error};
use crate::csv::into_io;
use crate::repr::cast::{format_datum, parse_datum};
use crate::repr::{DataType, Datum, Row, Schema};

/// The snapshot file format this build writes (manifests without one are format 1: NULL and
/// the empty string both an empty cell).
pub const SNAPSHOT_FORMAT: u32 = 2;

/// The cell of NULL.
pub const NULL_CELL: &str = "\\N";

/// A writer that counts and checksums what goes through it.
struct Checksummed<W> {
    inner: W,
    hasher: crc32fast::Hasher,
    size: u64,
}

impl<W: Write> Write for Checksummed<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.size += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A data file as written: its size in bytes and CRC-32.
pub(super) struct Written {
    pub(super) size: u64,
    pub(super) crc32: u32,
}

/// Writes `rows` of `schema` to the new file `path` in format 2, synced to disk.
///
/// Errors: the file cannot be written (naming it); a value that would not read back identical
/// (naming `path`, the row's number from 1, its values and the column).
pub(super) fn write(path: &Path, schema: &Schema, rows: &[&Row]) -> Result<Written, Error> {
    let io = io_at(path);
    let mut out = writer(path)?;
    out.write_record(schema.names())
        .map_err(|e| io(into_io(e)))?;
    let types: Vec<&DataType> = schema.types().map(|t| &t.data_type).collect();
    let (mut cell, mut scratch) = (String::new(), Vec::new());
    for (i, row) in rows.iter().enumerate() {
        for ((datum, ty), field) in row.iter().zip(&types).zip(&schema.fields) {
            let written = match datum {
                Datum::Null => out.write_field(NULL_CELL),
                Datum::Str(text) if text.starts_with('\\') => {
                    cell.clear();
                    cell.push('\\');
                    cell.push_str(text);
                    out.write_field(&cell)
                }
                Datum::Str(text) => out.write_field(text),
                Datum::Int(v) => out.write_field(itoa::Buffer::new().format(v)),
                datum => {
                    cell.clear();
                    let refused = |reason: String| {
                        Error::input(
                            path.display().to_string(),
                            format!(
                                "row {} ({row:?}), column {:?}: the value would not read back: {reason}",
                                i + 1,
                                field.name
                            ),
                        )
                    };
                    format_datum(datum, ty, &mut cell).map_err(|e| refused(e.to_string()))?;
                    match parse_datum(&cell, ty, &mut scratch) {
                        Ok(back) if same(datum, back, ty) => {}
                        Ok(back) => return Err(refused(format!("{cell} reads back as {back:?}"))),
                        Err(e) => return Err(refused(e.to_string())),
                    }
                    out.write_field(&cell)
                }
            };
            written.map_err(|e| io(into_io(e)))?;
        }
        out.write_record(None::<&[u8]>)
            .map_err(|e| io(into_io(e)))?;
    }
    finish(path, out)
}

/// Whether `back`, read from what `datum` was written as, is `datum` (a FLOAT as its 32 bits,
/// NaN as NaN, -0.0 apart from 0.0).
fn same(datum: Datum<'_>, back: Datum<'_>, ty: &DataType) -> bool {
    match (datum, back) {
        (Datum::Float(a), Datum::Float(b)) if *ty == DataType::Float => {
            (a.is_nan() && b.is_nan()) || (a as f32).to_bits() == (b as f32).to_bits()
        }
        (Datum::Float(a), Datum::Float(b)) => {
            (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
        }
        (a, b) => a == b,
    }
}

/// Rewrites the format 1 file `from` as the format 2 file `to`: an empty cell was NULL, so it
/// becomes `\N`; a cell starting with `\` gets one more in front. The header is copied.
///
/// Errors: either file cannot be read or written, or `from` is not CSV (naming it).
pub(super) fn convert_v1(from: &Path, to: &Path) -> Result<Written, Error> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_path(from)
        .map_err(|e| io_at(from)(into_io(e)))?;
    let mut out = writer(to)?;
    let mut record = csv::ByteRecord::new();
    let mut header = true;
    let mut cell = Vec::new();
    while reader
        .read_byte_record(&mut record)
        .map_err(|e| io_at(from)(into_io(e)))?
    {
        for field in &record {
            cell.clear();
            if header {
                cell.extend_from_slice(field);
            } else if field.is_empty() {
                cell.extend_from_slice(NULL_CELL.as_bytes());
            } else {
                if field.starts_with(b"\\") {
                    cell.push(b'\\');
                }
                cell.extend_from_slice(field);
            }
            out.write_field(&cell).map_err(|e| io_at(to)(into_io(e)))?;
        }
        out.write_record(None::<&[u8]>)
            .map_err(|e| io_at(to)(into_io(e)))?;
        header = false;
    }
    finish(to, out)
}

fn writer(path: &Path) -> Result<csv::Writer<Checksummed<File>>, Error> {
    let file = File::create(path).map_err(io_at(path))?;
    Ok(csv::Writer::from_writer(Checksummed {
        inner: file,
        hasher: crc32fast::Hasher::new(),
        size: 0,
    }))
}

fn finish(path: &Path, out: csv::Writer<Checksummed<File>>) -> Result<Written, Error> {
    let io = io_at(path);
    let done = out.into_inner().map_err(|e| io(e.into_error()))?;
    done.inner.sync_all().map_err(&io)?;
    Ok(Written {
        size: done.size,
        crc32: done.hasher.finalize(),
    })
}

/// The size and CRC-32 of the file at `path`.
///
/// Errors: the file cannot be read (naming it).
pub(super) fn checksum(path: &Path) -> Result<Written, Error> {
    let io = io_at(path);
    let mut file = File::open(path).map_err(&io)?;
    let mut sink = Checksummed {
        inner: io::sink(),
        hasher: crc32fast::Hasher::new(),
        size: 0,
    };
    io::copy(&mut file, &mut sink).map_err(&io)?;
    Ok(Written {
        size: sink.size,
        crc32: sink.hasher.finalize(),
    })
}
