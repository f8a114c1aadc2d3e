//! Reading CSV inputs: the header ([`Schema`]) and the rows of a block ([`Schema::parse_block`]).
//!
//! An input is *append-only* (every row is an insertion, `+I`) or a *changelog* (it has an `op`
//! column holding `+I`, `-U`, `+U` or `-D`). A header row is required; an empty cell is NULL;
//! cells pass through unchanged as text, except in the columns a command declares typed
//! ([`Schema::with_types`]), which are parsed once, here, into values of their type. The key
//! columns must not be NULL when they are a primary key (a join key or a deduplication key may
//! be NULL: see [`InputSpec::nullable_key`]) and the
//! event-time column must parse (see [`crate::repr::time`]). A row breaking a rule becomes a
//! [`RowError`] naming its line and column; the other rows are unaffected.
//!
//! Every row carries its source sequence number `seq`: the line on which it starts. Line
//! numbers grow with the position in the file and are the same for every worker count, so they
//! are the tie-breaker the operators need (design section 2), and an operator's refusal of a row
//! (reported by `seq`) names its line too.

use csv::ByteRecord;
use serde::{Deserialize, Serialize};

use super::reject::RowError;
use super::split::{open_blocks, open_input, Block, FileIdentity, Splitter};
use crate::error::Error;
use crate::operators::{Change, RowKind, Seq};
use crate::repr::cast::parse_datum;
use crate::repr::time::{parse_event_time, EventTime};
use crate::repr::types::MAX_LENGTH;
use crate::repr::{ColumnType, DataType, Datum, Field, Ts};
use crate::row::{Row, TimedRow};

/// The name of the column that makes an input a changelog.
pub const OP_COLUMN: &str = "op";

/// What a command wants from an input file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputSpec {
    /// The file (`.gz` is decompressed).
    pub path: String,
    /// Names of the key columns (may be empty).
    pub key: Vec<String>,
    /// `false`: the key is a primary key, a NULL key cell is a row error; `true`: a NULL key
    /// cell is a key value (a join key, which then matches nothing, or a deduplication key).
    pub nullable_key: bool,
    /// Name of the event-time column, if the command uses one.
    pub time: Option<String>,
}

/// An input file's layout: its header and where the op, key and time columns are.
///
/// Indices in `key` and `time` are positions in the [`Row`] (the row without its `op` cell).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    /// The file.
    pub path: String,
    /// Position of the input among the command's inputs.
    pub input: usize,
    /// Every column of the header, `op` included.
    pub header: Vec<String>,
    /// Position of the `op` column in the header, if the input is a changelog.
    pub op: Option<usize>,
    /// The row's columns: the header without `op`.
    pub columns: Vec<String>,
    /// Positions of the key columns in the row.
    pub key: Vec<usize>,
    /// Whether a NULL key cell is a value (else a row error), as [`InputSpec::nullable_key`].
    pub nullable_key: bool,
    /// Position of the event-time column in the row.
    pub time: Option<usize>,
    /// The row's column types: nullable STRING (text passed through) unless declared by
    /// [`with_types`](Self::with_types).
    pub types: Vec<ColumnType>,
    /// Whether each row is led by two more columns before its cells: its parsed event time as
    /// a `TIMESTAMP(3)` (the epoch without a time column) and its line as a `BIGINT`, for a
    /// plan that ranks rows by event time and places its output lines by the rows' lines (see
    /// [`with_stamps`](Self::with_stamps)).
    pub stamped: bool,
    /// The file's version when [`open`](Self::open) read its header: every worker's
    /// [`blocks`](Self::blocks) reads that version or fails ([`FileIdentity`]).
    pub identity: Option<FileIdentity>,
}

/// One parsed input row.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Record {
    /// Source sequence number: the line on which the row starts.
    pub seq: Seq,
    /// The `op` cell, or `+I` for an append-only input.
    pub kind: RowKind,
    /// The key cells, in the order the key columns were named (`None` only if the key is
    /// nullable).
    pub key: Row,
    /// The parsed event time, if the command named a time column.
    pub time: Option<EventTime>,
    /// The row's cells (without `op`), unchanged.
    pub row: Row,
}

impl Record {
    /// The record as a keyed changelog row `(key, Change { seq, kind, TimedRow })`, the input
    /// shape of the typed operators (event time 0 when the input has no time column).
    pub fn into_change(self) -> (Row, Change<TimedRow>) {
        let row = TimedRow {
            time: self.time.unwrap_or_default(),
            seq: self.seq,
            row: self.row,
        };
        (self.key, Change::new(self.seq, self.kind, row))
    }
}

impl Schema {
    /// Reads `spec.path`'s header and resolves the named columns.
    ///
    /// Errors: the file cannot be read, is empty, its header is not UTF-8 or repeats a name, or
    /// a named column is missing (the message lists the file's columns).
    pub fn open(spec: &InputSpec, input: usize) -> Result<Schema, Error> {
        let identity = FileIdentity::of(&spec.path)?;
        Ok(Schema {
            identity: Some(identity),
            ..Schema::new(spec, input, read_header(&spec.path)?)?
        })
    }

    /// Resolves `spec`'s columns against a header.
    pub fn new(spec: &InputSpec, input: usize, header: Vec<String>) -> Result<Schema, Error> {
        let path = spec.path.as_str();
        check_header(path, &header)?;
        let op = header.iter().position(|h| h == OP_COLUMN);
        let columns: Vec<String> = header.iter().filter(|h| *h != OP_COLUMN).cloned().collect();
        let find = |name: &String| {
            columns.iter().position(|c| c == name).ok_or_else(|| {
                Error::input(
                    path,
                    format!(
                        "no column {name:?}; the columns are: {}",
                        columns.join(", ")
                    ),
                )
            })
        };
        let key = spec.key.iter().map(find).collect::<Result<Vec<_>, _>>()?;
        let time = spec.time.as_ref().map(find).transpose()?;
        let types = vec![DataType::STRING.nullable(); columns.len()];
        Ok(Schema {
            path: spec.path.clone(),
            input,
            header,
            op,
            columns,
            key,
            nullable_key: spec.nullable_key,
            time,
            types,
            stamped: false,
            identity: None,
        })
    }

    /// The same input, each row stamped with its event time and line (see
    /// [`stamped`](Self::stamped)): the stamps are packed with the row, in its one allocation.
    pub fn with_stamps(self) -> Schema {
        Schema {
            stamped: true,
            ..self
        }
    }

    /// The columns of the stamps, leading a stamped row, named `$rowtime` and `$line` (with
    /// more `$` while a name is taken by a column of the file): `TIMESTAMP(3) NOT NULL` and
    /// `BIGINT NOT NULL`.
    pub fn stamp_fields(&self) -> [Field; 2] {
        let unused = |name: &str| {
            let mut name = name.to_string();
            while self.columns.contains(&name) {
                name.insert(0, '$');
            }
            name
        };
        [
            Field::new(unused("$rowtime"), DataType::Timestamp(3).not_null()),
            Field::new(unused("$line"), DataType::BigInt.not_null()),
        ]
    }

    /// The input with the column types `declared` (e.g. a command's `--schema`): a declared
    /// column's cells are parsed into values of its type as they are read, a cell that does
    /// not parse (or is empty in a `NOT NULL` column) is a row error naming the column, and the
    /// columns not declared stay nullable STRING.
    ///
    /// Errors: `declared` names a column that is not in the file (the message lists them).
    pub fn with_types(mut self, declared: &[Field]) -> Result<Schema, Error> {
        for field in declared {
            let at = self.columns.iter().position(|c| *c == field.name);
            let at = at.ok_or_else(|| {
                Error::input(
                    &self.path,
                    format!(
                        "the schema declares {:?}, which is not a column; the columns are: {}",
                        field.name,
                        self.columns.join(", ")
                    ),
                )
            })?;
            self.types[at] = field.ty.clone();
        }
        Ok(self)
    }

    /// The row's columns with their types.
    pub fn fields(&self) -> Vec<Field> {
        let named = self.columns.iter().zip(&self.types);
        named
            .map(|(c, t)| Field::new(c.clone(), t.clone()))
            .collect()
    }

    /// Whether a column is declared with a type other than nullable STRING.
    pub fn is_typed(&self) -> bool {
        self.types.iter().any(|t| *t != DataType::STRING.nullable())
    }

    /// The datum of the cell `text` (`None`: empty) of row column `i`, header column `at`, on
    /// `line`: text as it is in a STRING column, else parsed as the column's type (`bytes`
    /// holds a binary value's decoded bytes).
    fn datum<'t>(
        &self,
        line: u64,
        at: usize,
        i: usize,
        text: Option<&'t str>,
        bytes: &'t mut Vec<u8>,
    ) -> Result<Datum<'t>, RowError> {
        let ty = &self.types[i];
        match text {
            None if !ty.nullable => Err(self.error(
                line,
                Some(at),
                format!("NULL in a NOT NULL column of type {}", ty.data_type),
            )),
            None => Ok(Datum::Null),
            // A match, not `==`: the derived comparison of two types is a call per cell.
            Some(text) if matches!(ty.data_type, DataType::Varchar(MAX_LENGTH)) => {
                Ok(Datum::Str(text))
            }
            Some(text) => parse_datum(text, &ty.data_type, bytes)
                .map_err(|e| self.error(line, Some(at), e.to_string())),
        }
    }

    /// Opens a splitter over the file's blocks, positioned after the header.
    ///
    /// Errors: the file cannot be read, or is no longer the version [`open`](Self::open) read.
    pub fn blocks(
        &self,
        block_bytes: usize,
    ) -> Result<Splitter<Box<dyn std::io::Read + Send>>, Error> {
        open_blocks(&self.path, block_bytes, self.identity.as_ref())
    }

    /// A [`RowError`] of this input.
    pub fn error(&self, line: u64, column: Option<usize>, reason: impl Into<String>) -> RowError {
        RowError::at(self.input, &self.path, &self.header, line, column, reason)
    }

    /// Position in the header of the row's column `i`.
    fn header_index(&self, i: usize) -> usize {
        match self.op {
            Some(op) if i >= op => i + 1,
            _ => i,
        }
    }

    /// Parses every record of `block`, passing each row or its error to `out` in file order.
    pub fn parse_block(&self, block: &Block, out: impl FnMut(Result<Record, RowError>)) {
        let mut scratch = Row::new();
        for_each_record(
            block,
            |record, line| self.parse(record, line, &mut scratch),
            |line, reason| self.error(line, None, reason),
            out,
        )
    }

    /// Parses one record that starts on `line`, packing its cells in `scratch` and copying
    /// them out (one allocation, none for a short row; the key row likewise).
    pub fn parse(
        &self,
        record: &ByteRecord,
        line: u64,
        scratch: &mut Row,
    ) -> Result<Record, RowError> {
        if record.len() != self.header.len() {
            let first_bad = record.len().min(self.header.len());
            return Err(self.error(
                line,
                Some(first_bad),
                format!(
                    "wrong number of fields: expected {}, found {}",
                    self.header.len(),
                    record.len()
                ),
            ));
        }
        let cell = |at: usize| -> Result<Option<&str>, RowError> {
            let field = record.get(at).unwrap_or_default();
            let text = std::str::from_utf8(field)
                .map_err(|e| self.error(line, Some(at), format!("invalid UTF-8: {e}")))?;
            Ok((!text.is_empty()).then_some(text))
        };
        let mut op = None;
        let mut packer = scratch.packer();
        let mut column = 0;
        for at in 0..record.len() {
            let text = cell(at)?;
            if Some(at) == self.op {
                op = Some((at, text.unwrap_or_default()));
            } else {
                packer.push(self.datum(line, at, column, text, &mut Vec::new())?);
                column += 1;
            }
        }
        let kind = match op {
            None => RowKind::Insert,
            Some((at, text)) => text
                .parse::<RowKind>()
                .map_err(|e| self.error(line, Some(at), e.to_string()))?,
        };
        let mut key = Row::new();
        let mut key_packer = key.packer();
        for &k in &self.key {
            let at = self.header_index(k);
            let text = cell(at)?;
            if text.is_none() && !self.nullable_key {
                return Err(self.error(line, Some(at), "NULL in a primary-key column"));
            }
            key_packer.push(self.datum(line, at, k, text, &mut Vec::new())?);
        }
        let time = match self.time {
            None => None,
            Some(t) => {
                let at = self.header_index(t);
                let text =
                    cell(at)?.ok_or_else(|| self.error(line, Some(at), "NULL event time"))?;
                Some(
                    parse_event_time(text)
                        .map_err(|e| self.error(line, Some(at), e.to_string()))?,
                )
            }
        };
        Ok(Record {
            seq: line,
            kind,
            key,
            time,
            row: match self.stamped {
                false => scratch.clone(),
                true => stamped(scratch, time.unwrap_or_default(), line),
            },
        })
    }
}

/// `cells` led by the stamps of a row with event time `time` on `line` (see
/// [`Schema::stamped`]), in one allocation.
fn stamped(cells: &Row, time: EventTime, line: u64) -> Row {
    // The stamps' tags and payloads: an 8-byte time, an integer of up to 8 bytes.
    let mut row = Row::with_capacity(cells.byte_len() + 18);
    let mut packer = row.packer();
    packer.push(Datum::Timestamp(Ts::from_millis(time)));
    packer.push(Datum::Int(line as i64));
    packer.extend_by_row(cells.as_row_ref());
    row
}

/// Reads the header row of the CSV file at `path` (a leading UTF-8 byte-order mark is skipped).
///
/// Errors: the file cannot be read, is empty, or its header is not CSV or not UTF-8.
pub fn read_header(path: &str) -> Result<Vec<String>, Error> {
    let mut splitter = Splitter::new(open_input(path)?, 1);
    let header = splitter
        .header()
        .map_err(|e| Error::io(path, e))?
        .ok_or_else(|| Error::input(path, "the file is empty: a header row is required"))?;
    let mut bytes = header.bytes.as_slice();
    bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(bytes);
    let mut record = ByteRecord::new();
    reader
        .read_byte_record(&mut record)
        .map_err(|e| Error::input(path, format!("unreadable header: {e}")))?;
    record
        .iter()
        .map(|f| String::from_utf8(f.to_vec()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| Error::input(path, "the header is not valid UTF-8"))
}

/// Refuses a header that names a column twice.
pub fn check_header(path: &str, header: &[String]) -> Result<(), Error> {
    for (i, name) in header.iter().enumerate() {
        if header[..i].contains(name) {
            return Err(Error::input(
                path,
                format!("column {name:?} appears twice in the header"),
            ));
        }
    }
    Ok(())
}

/// Reads every record of `block` with `parse(record, line)` (line: where the record starts),
/// passing each result to `out` in file order. A block that is not CSV ends with one error
/// made by `error(line, reason)`, as does a quoted field still open at the end of the input.
/// Shared by the text rows of [`Schema`] and the typed rows of [`crate::io`].
pub fn for_each_record<T>(
    block: &Block,
    mut parse: impl FnMut(&ByteRecord, u64) -> Result<T, RowError>,
    error: impl Fn(u64, String) -> RowError,
    mut out: impl FnMut(Result<T, RowError>),
) {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(block.bytes.as_slice());
    let mut record = ByteRecord::new();
    // The last record read, with the line it starts on and its byte offset in the block.
    let mut held: Option<(Result<T, RowError>, u64)> = None;
    let mut held_at = 0;
    loop {
        let line = block.first_line + reader.position().line() - 1;
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                let line = record.position().map_or(line, |p| start_line(block, p));
                held_at = record
                    .position()
                    .map_or(0, |p| usize::try_from(p.byte()).unwrap_or(usize::MAX));
                if let Some((prev, _)) = held.replace((parse(&record, line), line)) {
                    out(prev);
                }
            }
            Err(e) => {
                if let Some((prev, _)) = held.take() {
                    out(prev);
                }
                out(Err(error(line, format!("unreadable CSV: {e}"))));
                return;
            }
        }
    }
    if let Some((last, start)) = held {
        // The splitter counts quotes, so a stray quote (`5'6"`) can leave it "in quotes"
        // at the end: whether the last record really is unterminated is decided here, by
        // RFC 4180's rule (a quote opens a field only at the field's start).
        let rest = block.bytes.get(held_at..).unwrap_or_default();
        match open_quote(rest) {
            Some(at) => {
                let line = block.first_line
                    + memchr::memchr_iter(b'\n', &block.bytes[..held_at + at]).count() as u64;
                out(Err(error(
                    start,
                    format!("unterminated quoted field (the quote opened on line {line})"),
                )))
            }
            None => out(last),
        }
    }
}

/// The line on which the record at `position` of `block` starts: the csv reader places a record
/// after blank lines at the first blank line, so the blank lines are skipped here.
fn start_line(block: &Block, position: &csv::Position) -> u64 {
    let from = usize::try_from(position.byte()).unwrap_or(usize::MAX);
    let blank = block
        .bytes
        .get(from..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&b| b == b'\n' || b == b'\r')
        .filter(|&&b| b == b'\n')
        .count() as u64;
    block.first_line + position.line() - 1 + blank
}

/// The offset of the quote that opens a quoted field still open at the end of `record` (the
/// text of one record to the end of its block), by RFC 4180's rules as the `csv` crate reads
/// them: a quote opens a field only at the field's start, `""` inside is a quote, and a quote
/// elsewhere is a plain character.
fn open_quote(record: &[u8]) -> Option<usize> {
    let mut field_start = true;
    let mut opened: Option<usize> = None;
    let mut i = 0;
    while i < record.len() {
        let b = record[i];
        if opened.is_some() {
            if b == b'"' {
                if record.get(i + 1) == Some(&b'"') {
                    i += 1;
                } else {
                    opened = None;
                }
            }
        } else if b == b'"' && field_start {
            opened = Some(i);
            field_start = false;
        } else {
            field_start = matches!(b, b',' | b'\n' | b'\r');
        }
        i += 1;
    }
    opened
}
