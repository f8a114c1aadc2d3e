//! The typed CSV source: a CSV file (with a header) read into packed [`Row`]s by a [`Schema`].
//!
//! Built on the text layer's reading ([`crate::csv`]): the same header rules, the same blocks
//! (so a worker parses only the blocks it owns while line numbers stay exact), the same record
//! loop and the same [`RowError`]s. Only the conversion of a record differs: each cell of a
//! schema column is read by [`crate::repr::cast::parse_datum`] straight into the row's packer,
//! with one scratch row and one scratch byte buffer per block, so a row costs at most one
//! allocation (its copy out of the scratch row, and none when it fits inline).

use csv::ByteRecord;

use super::debezium::{DebeziumJson, DebeziumOptions};
use crate::csv::{
    check_header, for_each_record, open_blocks, open_version, read_header, Block, FileIdentity,
    RowError, Splitter, OP_COLUMN,
};
use crate::error::Error;
use crate::operators::{Change, RowKind};
use crate::repr::cast::parse_datum;
use crate::repr::{ColumnType, DataType, Datum, Field, Row, Schema};

/// The format of a table's files (Flink's `'format'` option).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// `csv`: a header row, then one record per row; an `op` column makes a changelog.
    #[default]
    Csv,
    /// `debezium-json`: one Debezium change event per line ([`DebeziumOptions`]).
    DebeziumJson(DebeziumOptions),
    /// The CSV of a warehouse's snapshot files (format 2, [`crate::warehouse::SNAPSHOT_FORMAT`]):
    /// NULL is the cell `\N`, an empty cell the empty string, a leading `\` is doubled.
    Snapshot,
}

/// A CSV file (or a `debezium-json` file, [`open_format`](Self::open_format)) read as typed
/// rows. See the [module documentation](crate::io).
#[derive(Clone, Debug)]
pub struct TypedSource {
    path: String,
    input: usize,
    /// Every column of the header, `op` included.
    header: Vec<String>,
    /// Position of the `op` column in the header, if the file is a changelog.
    op: Option<usize>,
    /// For each schema column: its position in the header and its type.
    columns: Vec<(usize, ColumnType)>,
    /// The `debezium-json` decoder, for a file of that format (no header, every line an event).
    debezium: Option<DebeziumJson>,
    /// Whether the file is a snapshot's ([`Format::Snapshot`]): NULL is `\N`, not empty.
    snapshot: bool,
    /// `(position, files)`: this file's place among the `files` of its table's directory (a
    /// CSV record on line `l` gets `seq = l * files + position`, the change `i` of a
    /// `debezium-json` line `(2 * l + i) * files + position`); `(0, 1)` for a table of one file.
    file: (u64, u64),
    /// The file's version when the source was opened: every worker reads that version or
    /// fails ([`FileIdentity`]).
    identity: FileIdentity,
}

impl TypedSource {
    /// Reads the header of the CSV file at `path` (`.gz` is decompressed) and resolves the
    /// schema's columns in it by name; returns the source and the resolved schema.
    ///
    /// With `schema = None` the schema is every header column but `op`, as nullable STRING: the
    /// cells pass through as text, as the command line treats files today. A header column
    /// named `op` makes the file a changelog (`+I -U +U -D` per row); it is never a data
    /// column. Extra file columns are ignored.
    ///
    /// Errors: the file cannot be read or is empty, its header is not UTF-8 CSV or repeats a
    /// name, the schema declares `op`, or a schema column is not in the header (the message
    /// names the file and lists its columns).
    ///
    /// ```
    /// use differential_temporal::io::TypedSource;
    /// use differential_temporal::repr::{DataType, Datum, Schema};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("rates.csv");
    /// std::fs::write(&path, "currency,rate,note\nEUR,114,x\nJPY,,y\n").unwrap();
    /// let schema = Schema::builder()
    ///     .column("currency", DataType::STRING.not_null())
    ///     .column("rate", DataType::BigInt.nullable())
    ///     .build()
    ///     .unwrap();
    /// let (source, _) = TypedSource::open(path.to_str().unwrap(), Some(schema)).unwrap();
    /// let mut blocks = source.blocks(1 << 20).unwrap();
    /// let mut rows = Vec::new();
    /// while let Some(block) = blocks.next_owned(|_| true).unwrap() {
    ///     source.parse_block(&block, |change| rows.push(change.unwrap()));
    /// }
    /// assert_eq!(rows[0].seq, 2);
    /// assert_eq!(rows[0].row.get(1), Some(Datum::Int(114)));
    /// assert_eq!(rows[1].row.get(1), Some(Datum::Null));
    /// ```
    pub fn open(path: &str, schema: Option<Schema>) -> Result<(TypedSource, Schema), Error> {
        let identity = FileIdentity::of(path)?;
        let header = read_header(path)?;
        check_header(path, &header)?;
        let op = header.iter().position(|h| h == OP_COLUMN);
        let data: Vec<&String> = header.iter().filter(|h| *h != OP_COLUMN).collect();
        let schema = match schema {
            Some(schema) => schema,
            None => {
                let fields = data
                    .iter()
                    .map(|h| Field::new(*h, DataType::STRING.nullable()));
                Schema::new(fields.collect()).map_err(|e| Error::input(path, e.to_string()))?
            }
        };
        let columns = schema
            .fields
            .iter()
            .map(|field| {
                if field.name == OP_COLUMN {
                    return Err(Error::input(
                        path,
                        "the schema declares a column \"op\": that name is the changelog's row kind",
                    ));
                }
                let at = header.iter().position(|h| *h == field.name).ok_or_else(|| {
                    let names: Vec<&str> = data.iter().map(|h| h.as_str()).collect();
                    Error::input(
                        path,
                        format!(
                            "no column {:?}; the columns are: {}",
                            field.name,
                            names.join(", ")
                        ),
                    )
                })?;
                Ok((at, field.ty.clone()))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let source = TypedSource {
            path: path.to_string(),
            input: 0,
            header,
            op,
            columns,
            debezium: None,
            snapshot: false,
            file: (0, 1),
            identity,
        };
        Ok((source, schema))
    }

    /// The file at `path` in `format`: [`open`](Self::open) for CSV; for `debezium-json` the
    /// file is a changelog of `schema`'s columns, one event per line ([`DebeziumOptions`]).
    ///
    /// Errors: those of [`open`](Self::open); `debezium-json` without a schema; a file that
    /// cannot be read.
    pub fn open_format(
        path: &str,
        schema: Option<Schema>,
        format: &Format,
    ) -> Result<(TypedSource, Schema), Error> {
        let options = match format {
            Format::Csv => return TypedSource::open(path, schema),
            Format::Snapshot => {
                let (source, schema) = TypedSource::open(path, schema)?;
                return Ok((
                    TypedSource {
                        snapshot: true,
                        ..source
                    },
                    schema,
                ));
            }
            Format::DebeziumJson(options) => options,
        };
        let schema = schema.ok_or_else(|| {
            Error::input(path, "the debezium-json format needs the table's columns")
        })?;
        let identity = FileIdentity::of(path)?;
        let source = TypedSource {
            path: path.to_string(),
            input: 0,
            header: Vec::new(),
            op: None,
            columns: Vec::new(),
            debezium: Some(DebeziumJson::new(&schema, options.clone())),
            snapshot: false,
            file: (0, 1),
            identity,
        };
        Ok((source, schema))
    }

    /// Opens the table at `path`, a file or a directory of them, in `format`, as
    /// [`open_format`](Self::open_format) opens one file. A directory gives one source per
    /// file: every file under the directory, nested directories included, sorted by path (so
    /// runs are deterministic; names starting with `.` or `_` are skipped, as Flink's
    /// filesystem connector skips hidden files), each
    /// resolved against the same schema (without one, the first file's columns). The files are
    /// read side by side, block `i` of each at system time `i`, as the tables of one query are;
    /// a record's `seq` (its arrival order within a system time) is its line times the number
    /// of files plus its file's position (for `debezium-json`, the change's position in the
    /// file's changes), so equal lines of two files arrive in path order. Row errors name each
    /// file and its own line.
    ///
    /// Errors: those of [`open_format`](Self::open_format) for any file; a directory that is
    /// empty or holds a directory; files of which some have an `op` column and some do not.
    pub fn open_table(
        path: &str,
        schema: Option<Schema>,
        format: &Format,
    ) -> Result<(Vec<TypedSource>, Schema), Error> {
        let files = super::directory::table_files(path)?;
        Self::open_files(path, &files, schema, format)
    }

    /// Opens `files` (at least one), the files of the table at `path`, as
    /// [`open_table`](Self::open_table) opens a directory's: each resolved against the same
    /// schema, a record's `seq` numbered by its line and its file's position among `files`.
    /// A live run reads the files a directory gained in a round so.
    pub(crate) fn open_files(
        path: &str,
        files: &[String],
        schema: Option<Schema>,
        format: &Format,
    ) -> Result<(Vec<TypedSource>, Schema), Error> {
        let count = files.len() as u64;
        let mut sources = Vec::with_capacity(files.len());
        let mut schema = schema;
        for (position, file) in files.iter().enumerate() {
            let (mut source, resolved) = TypedSource::open_format(file, schema, format)?;
            if let Some(first) = sources
                .first()
                .filter(|f: &&TypedSource| f.is_changelog() != source.is_changelog())
            {
                let (with, without) = if source.is_changelog() {
                    (file.as_str(), first.path())
                } else {
                    (first.path(), file.as_str())
                };
                return Err(Error::input(
                    path,
                    format!("{with} has an \"op\" column and {without} has not: the files of a table are all changelogs or all append-only"),
                ));
            }
            source.file = (position as u64, count);
            schema = Some(resolved);
            sources.push(source);
        }
        let schema = schema.ok_or_else(|| Error::input(path, "the table has no file to read"))?;
        Ok((sources, schema))
    }

    /// This source as input number `input` of a command (named in its [`RowError`]s; 0 unless
    /// set).
    pub fn with_input(mut self, input: usize) -> TypedSource {
        self.input = input;
        self
    }

    /// The file's path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Whether the file is a changelog (it has an `op` column, or is `debezium-json`).
    pub fn is_changelog(&self) -> bool {
        self.op.is_some() || self.debezium.is_some()
    }

    /// Whether this changelog file is an upsert changelog, as Flink calls a source whose
    /// updates come without their before image: some `+U` row does not follow a `-U` row of
    /// its `key` (schema column positions) on the line before. A retract changelog (each `+U`
    /// right after its `-U`, Flink's TestValues and Debezium form) and a file without `+U`
    /// rows are not; a `debezium-json` file (every update carries its before image) and a
    /// file without an `op` column never are. The whole file is read; rows that do not parse
    /// are skipped here (the run reports them).
    ///
    /// Errors: the file cannot be read, or is no longer the version that was opened.
    pub fn is_upsert_changelog(&self, key: &[usize]) -> Result<bool, Error> {
        if self.op.is_none() {
            return Ok(false);
        }
        let mut blocks = self.blocks(1 << 20)?;
        // The key of the `-U` row just read, if the row just read was one.
        let mut before: Option<Row> = None;
        let mut upsert = false;
        while !upsert {
            let Some(block) =
                (blocks.next_owned(|_| true)).map_err(|e| Error::io(&self.path, e))?
            else {
                break;
            };
            self.parse_block(&block, |change| {
                let Ok(change) = change else {
                    before = None;
                    return;
                };
                let datums: Vec<Datum> = change.row.iter().collect();
                let row_key = Row::pack(key.iter().map(|&c| datums[c]));
                match change.kind {
                    RowKind::UpdateBefore => before = Some(row_key),
                    RowKind::UpdateAfter => upsert |= before.take() != Some(row_key),
                    RowKind::Insert | RowKind::Delete => before = None,
                }
            });
        }
        Ok(upsert)
    }

    /// A splitter over the file's blocks of at least `block_bytes` bytes, after the header:
    /// block `i` is the same for every worker, so a worker keeps the blocks it owns.
    ///
    /// Errors: the file cannot be read, or is no longer the version that was opened (replaced
    /// or rewritten since: the error names the file), so that no two workers read different
    /// versions.
    pub fn blocks(
        &self,
        block_bytes: usize,
    ) -> Result<Splitter<Box<dyn std::io::Read + Send>>, Error> {
        let identity = Some(&self.identity);
        match self.debezium {
            Some(_) => Ok(Splitter::lines(
                open_version(&self.path, identity)?,
                block_bytes,
            )),
            None => open_blocks(&self.path, block_bytes, identity),
        }
    }

    /// Parses every record of `block` into a `Change { seq: line, kind, row }` (kind `+I`
    /// unless the file has an `op` column; the row's datums in schema column order), or a
    /// [`RowError`] `FILE:LINE:COLUMN: column "x": reason`, passing each to `out` in file order.
    ///
    /// Row errors: a wrong number of fields, a cell that is not UTF-8, an unknown `op`, an
    /// empty cell (NULL) in a NOT NULL column, a cell that does not parse as its column's type
    /// (the reason is the [`CastError`](crate::repr::cast::CastError)'s), unreadable CSV.
    pub fn parse_block(&self, block: &Block, mut out: impl FnMut(Result<Change<Row>, RowError>)) {
        let (position, files) = self.file;
        if let Some(decoder) = &self.debezium {
            let seq = |line: u64, i: u64| (line * 2 + i) * files + position;
            return decoder.parse_block(
                block,
                seq,
                |line, reason| self.error(line, None, reason),
                &mut out,
            );
        }
        let mut scratch = Row::new();
        let mut bytes = Vec::new();
        for_each_record(
            block,
            |record, line| self.parse(record, line, &mut scratch, &mut bytes),
            |line, reason| self.error(line, None, reason),
            out,
        )
    }

    /// Parses one record that starts on `line`, packing it in `scratch` and copying it out.
    fn parse(
        &self,
        record: &ByteRecord,
        line: u64,
        scratch: &mut Row,
        bytes: &mut Vec<u8>,
    ) -> Result<Change<Row>, RowError> {
        if record.len() != self.header.len() {
            return Err(self.error(
                line,
                Some(record.len().min(self.header.len())),
                format!(
                    "wrong number of fields: expected {}, found {}",
                    self.header.len(),
                    record.len()
                ),
            ));
        }
        let kind = match self.op {
            None => RowKind::Insert,
            Some(op) => self
                .text(record, op, line)?
                .parse::<RowKind>()
                .map_err(|e| self.error(line, Some(op), e.to_string()))?,
        };
        let mut packer = scratch.packer();
        for (at, ty) in &self.columns {
            let text = self.text(record, *at, line)?;
            let Some(text) = self
                .cell(text)
                .map_err(|e| self.error(line, Some(*at), e))?
            else {
                if !ty.nullable {
                    return Err(self.error(
                        line,
                        Some(*at),
                        format!("NULL in a NOT NULL column of type {}", ty.data_type),
                    ));
                }
                packer.push(Datum::Null);
                continue;
            };
            let datum = parse_datum(text, &ty.data_type, bytes)
                .map_err(|e| self.error(line, Some(*at), e.to_string()))?;
            packer.push(datum);
        }
        let (position, files) = self.file;
        Ok(Change::new(line * files + position, kind, scratch.clone()))
    }

    /// The value a cell's `text` holds (`None`: NULL): an empty cell is NULL in a CSV file; in
    /// a snapshot's ([`Format::Snapshot`]) NULL is `\N` and a leading `\\` stands for `\`.
    ///
    /// Errors: a snapshot's cell starting with `\` followed by neither `N` alone nor `\`.
    fn cell<'t>(&self, text: &'t str) -> Result<Option<&'t str>, &'static str> {
        if !self.snapshot {
            return Ok((!text.is_empty()).then_some(text));
        }
        match text.strip_prefix('\\') {
            None => Ok(Some(text)),
            Some("N") => Ok(None),
            Some(rest) if rest.starts_with('\\') => Ok(Some(rest)),
            Some(_) => Err("not a snapshot cell: a \\ that is neither \\N (NULL) nor \\\\"),
        }
    }

    /// The text of header column `at` of `record`.
    fn text<'r>(&self, record: &'r ByteRecord, at: usize, line: u64) -> Result<&'r str, RowError> {
        let field = record.get(at).unwrap_or_default();
        std::str::from_utf8(field)
            .map_err(|e| self.error(line, Some(at), format!("invalid UTF-8: {e}")))
    }

    /// A [`RowError`] of this file at `line`, naming header column `column` if given.
    fn error(&self, line: u64, column: Option<usize>, reason: impl Into<String>) -> RowError {
        RowError::at(self.input, &self.path, &self.header, line, column, reason)
    }
}
