//! A PostgreSQL table as a source: Flink CDC's `postgres-cdc` connector (its option names,
//! [`PostgresOptions`]) over the `postgres` client crate.
//!
//! What is read today is the table's **snapshot** (`'scan.startup.mode' = 'snapshot'`, Flink CDC's
//! snapshot-only mode): every row of the table in one `REPEATABLE READ, READ ONLY` transaction,
//! read through a cursor in batches in primary-key order (a row's `seq` is its position), each
//! a `+I` row of the declared schema. The streaming modes
//! (`'initial'`: the snapshot, then the logical-replication changes; `'latest-offset'`) are
//! validated but not read yet (issue 16).
//!
//! Columns: each declared physical column reads the Postgres column of its name, whose type must
//! be one the connector reads as the declared type ([`PostgresType`]); a `METADATA` column
//! reads Flink CDC's metadata (`database_name`, `schema_name`, `table_name`, and `op_ts`, which
//! is 0, the epoch, for a snapshot row as in Flink CDC). Values are read in their text form
//! (Postgres renders them; timestamps with time zone in UTC, bytes in base64) and parsed by the
//! one text-to-datum cast, so a value the declared type cannot hold (an out-of-range integer,
//! `infinity`) is a row error `SCHEMA.TABLE:ROW:COLUMN: ...` naming the snapshot row, never a
//! lost row.

use std::fmt::Write as _;
use std::sync::Arc;

use postgres::{Client, Config, NoTls, SimpleQueryMessage};

use crate::csv::{Block, RowError};
use crate::error::Error;
use crate::operators::{Change, RowKind, Seq};
use crate::repr::{parse_datum, DataType, Datum, Row, Schema, Ts};

/// The options of a `'connector' = 'postgres-cdc'` table (Flink CDC's names), `connector`
/// included.
pub const OPTIONS: &[&str] = &[
    "connector",
    "hostname",
    "port",
    "username",
    "password",
    "database-name",
    "schema-name",
    "table-name",
    "slot.name",
    "decoding.plugin.name",
    "scan.startup.mode",
];

/// The metadata keys a `METADATA FROM '...'` column of a postgres-cdc table reads.
pub const METADATA_KEYS: &[&str] = &["database_name", "schema_name", "table_name", "op_ts"];

/// `'scan.startup.mode'`: where a postgres-cdc table starts reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartupMode {
    /// The snapshot, then the changes (Flink CDC's default).
    Initial,
    /// The changes from now on, no snapshot.
    LatestOffset,
    /// The snapshot only: a bounded table.
    Snapshot,
}

/// A postgres-cdc table's validated options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostgresOptions {
    /// `hostname`.
    pub hostname: String,
    /// `port` (default 5432).
    pub port: u16,
    /// `username`.
    pub username: String,
    /// `password`.
    pub password: String,
    /// `database-name`.
    pub database: String,
    /// `schema-name` (default `public`).
    pub schema: String,
    /// `table-name`.
    pub table: String,
    /// `slot.name`: the replication slot of the streaming modes.
    pub slot: Option<String>,
    /// `scan.startup.mode`.
    pub startup: StartupMode,
}

/// An option that is wrong: its key (`None` for a missing one: the table is at fault) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionError {
    /// The offending option's key, if the problem is one option's.
    pub key: Option<String>,
    /// The message.
    pub message: String,
}

impl PostgresOptions {
    /// Validates a table's `WITH` options (`(key, value)`, `connector` among them).
    ///
    /// Errors: an option the connector does not have (the message lists the valid ones), a
    /// missing `hostname`, `username`, `password`, `database-name` or `table-name`, a missing
    /// `slot.name` for a streaming mode, a `port` that is not a port number, a
    /// `decoding.plugin.name` other than `pgoutput`, an unknown `scan.startup.mode`.
    pub fn from_options(options: &[(String, String)]) -> Result<PostgresOptions, OptionError> {
        let at = |key: &str, message: String| OptionError {
            key: Some(key.to_string()),
            message,
        };
        if let Some((key, _)) = options.iter().find(|(k, _)| !OPTIONS.contains(&k.as_str())) {
            return Err(at(
                key,
                format!(
                    "Unsupported option '{key}' for connector 'postgres-cdc'; supported options: {}",
                    OPTIONS.join(", ")
                ),
            ));
        }
        let get = |key: &str| {
            options
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        };
        let required = |key: &str| {
            get(key).ok_or_else(|| OptionError {
                key: None,
                message: format!("a 'postgres-cdc' table needs the option '{key}'"),
            })
        };
        let port = match get("port") {
            None => 5432,
            Some(p) => p.parse().map_err(|_| {
                at(
                    "port",
                    format!("'port' must be a port number (1-65535), not '{p}'"),
                )
            })?,
        };
        if let Some(plugin) = get("decoding.plugin.name").filter(|p| p != "pgoutput") {
            return Err(at(
                "decoding.plugin.name",
                format!("Unsupported 'decoding.plugin.name' '{plugin}': the connector decodes 'pgoutput', the plugin built into PostgreSQL 10 and later"),
            ));
        }
        let startup = match get("scan.startup.mode").as_deref() {
            None | Some("initial") => StartupMode::Initial,
            Some("latest-offset") => StartupMode::LatestOffset,
            Some("snapshot") => StartupMode::Snapshot,
            Some(other) => {
                return Err(at(
                    "scan.startup.mode",
                    format!("Unsupported 'scan.startup.mode' '{other}'; the supported modes are 'initial', 'latest-offset', 'snapshot'"),
                ))
            }
        };
        let slot = get("slot.name");
        if slot.is_none() && startup != StartupMode::Snapshot {
            return Err(required("slot.name").unwrap_err());
        }
        Ok(PostgresOptions {
            hostname: required("hostname")?,
            port,
            username: required("username")?,
            password: required("password")?,
            database: required("database-name")?,
            schema: get("schema-name").unwrap_or_else(|| "public".to_string()),
            table: required("table-name")?,
            slot,
            startup,
        })
    }

    /// The table as row errors name it: `SCHEMA.TABLE`.
    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.schema, self.table)
    }
}

/// Where a declared column of a postgres-cdc table comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ColumnSource {
    /// The table's column of the declared column's name.
    Physical,
    /// A metadata key of [`METADATA_KEYS`].
    Metadata(String),
}

/// A postgres-cdc table: its options, and its declared columns (physical and metadata, in
/// declared order) with where each comes from.
#[derive(Clone, Debug)]
pub struct PostgresSource {
    /// The table's name in the catalog.
    pub name: String,
    /// The options.
    pub options: PostgresOptions,
    /// The declared columns the source produces.
    pub schema: Schema,
    /// Per column of `schema`, where it comes from.
    pub columns: Vec<ColumnSource>,
}

/// The Postgres types the connector reads, by `pg_type.typname`, and the declared types each
/// reads as (a STRING column reads any of them, as Postgres writes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PostgresType {
    /// `boolean`.
    Bool,
    /// `smallint`, `integer`, `bigint`.
    Integer,
    /// `real`, `double precision`.
    Float,
    /// `numeric`.
    Numeric,
    /// `text`, `varchar`, `char`, `name`.
    Text,
    /// `date`.
    Date,
    /// `time`.
    Time,
    /// `timestamp`.
    Timestamp,
    /// `timestamptz`.
    TimestampTz,
    /// `bytea`.
    Bytes,
}

impl PostgresType {
    /// The type of `pg_type.typname`, if the connector reads it.
    pub fn of(typname: &str) -> Option<PostgresType> {
        Some(match typname {
            "bool" => PostgresType::Bool,
            "int2" | "int4" | "int8" => PostgresType::Integer,
            "float4" | "float8" => PostgresType::Float,
            "numeric" => PostgresType::Numeric,
            "text" | "varchar" | "bpchar" | "name" => PostgresType::Text,
            "date" => PostgresType::Date,
            "time" => PostgresType::Time,
            "timestamp" => PostgresType::Timestamp,
            "timestamptz" => PostgresType::TimestampTz,
            "bytea" => PostgresType::Bytes,
            _ => return None,
        })
    }

    /// Whether a value of this type reads as `declared`.
    pub fn reads_as(self, declared: &DataType) -> bool {
        use DataType as D;
        match declared {
            D::Char(_) | D::Varchar(_) => true,
            D::TinyInt | D::SmallInt | D::Int | D::BigInt => self == PostgresType::Integer,
            D::Decimal { .. } => matches!(self, PostgresType::Integer | PostgresType::Numeric),
            D::Float | D::Double => matches!(
                self,
                PostgresType::Integer | PostgresType::Float | PostgresType::Numeric
            ),
            D::Boolean => self == PostgresType::Bool,
            D::Date => self == PostgresType::Date,
            D::Time(_) => self == PostgresType::Time,
            D::Timestamp(_) => self == PostgresType::Timestamp,
            D::TimestampLtz(_) => self == PostgresType::TimestampTz,
            D::Binary(_) | D::Varbinary(_) => self == PostgresType::Bytes,
            _ => false,
        }
    }

    /// The select-list expression reading column `quoted` in a text form the cast parses:
    /// Postgres's own output but for a timestamp with time zone (written in UTC) and bytes
    /// (base64); a `char(n)` keeps its padding, as Flink CDC's CHAR does.
    fn select(self, quoted: &str) -> String {
        match self {
            PostgresType::TimestampTz => {
                format!("to_char({quoted} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')")
            }
            PostgresType::Bytes => format!("translate(encode({quoted}, 'base64'), E'\\n', '')"),
            _ => quoted.to_string(),
        }
    }
}

/// The names Postgres types go by in errors: what `format_type` prints for the supported ones.
const SUPPORTED: &str = "boolean, smallint, integer, bigint, real, double precision, numeric, text, character varying, character, name, date, time, timestamp, timestamp with time zone, bytea";

impl PostgresSource {
    /// Errors: the table is read in a streaming mode, which never ends (the message names the
    /// table and the option), so a batch query cannot read it.
    pub fn check_bounded(&self) -> Result<(), String> {
        match self.options.startup {
            StartupMode::Snapshot => Ok(()),
            _ => Err(format!(
                "table '{}' is unbounded ('scan.startup.mode' = 'initial' or 'latest-offset' follows the table's changes forever), so a batch query over it never ends: declare it with 'scan.startup.mode' = 'snapshot' to read its snapshot",
                self.name
            )),
        }
    }

    /// Connects with the options' credentials.
    fn connect(&self) -> Result<Client, Error> {
        let o = &self.options;
        Config::new()
            .host(&o.hostname)
            .port(o.port)
            .user(&o.username)
            .password(&o.password)
            .dbname(&o.database)
            .application_name("dtemporal")
            .connect(NoTls)
            .map_err(|e| {
                self.error(format!(
                    "cannot connect to {}:{} as '{}': {}",
                    o.hostname,
                    o.port,
                    o.username,
                    source_text(&e)
                ))
            })
    }

    /// An error of this table.
    fn error(&self, message: String) -> Error {
        Error::input(format!("table '{}' (postgres-cdc)", self.name), message)
    }

    /// The table's primary-key columns, quoted, in key order (none without a primary key).
    fn primary_key(&self, client: &mut Client) -> Result<Vec<String>, Error> {
        let o = &self.options;
        let key = client
            .query(
                "SELECT a.attname FROM pg_index i JOIN pg_class c ON i.indrelid = c.oid \
                 JOIN pg_namespace n ON c.relnamespace = n.oid \
                 JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position) ON true \
                 JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum \
                 WHERE n.nspname = $1 AND c.relname = $2 AND i.indisprimary ORDER BY k.position",
                &[&o.schema, &o.table],
            )
            .map_err(|e| self.error(source_text(&e)))?;
        Ok(key.iter().map(|r| quote_ident(r.get(0))).collect())
    }

    /// The select list reading the declared physical columns: checks each against the
    /// table's columns.
    fn select_list(&self, client: &mut Client) -> Result<Vec<String>, Error> {
        let o = &self.options;
        let catalog = client
            .query(
                "SELECT a.attname, t.typname, format_type(a.atttypid, a.atttypmod) \
                 FROM pg_attribute a JOIN pg_class c ON a.attrelid = c.oid \
                 JOIN pg_namespace n ON c.relnamespace = n.oid JOIN pg_type t ON a.atttypid = t.oid \
                 WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p') \
                 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
                &[&o.schema, &o.table],
            )
            .map_err(|e| self.error(source_text(&e)))?;
        if catalog.is_empty() {
            return Err(self.error(format!(
                "database '{}' has no table {} ('schema-name', 'table-name')",
                o.database,
                o.qualified_name()
            )));
        }
        let columns: Vec<(String, String, String)> = catalog
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
        let mut select = Vec::new();
        for (field, source) in self.schema.fields.iter().zip(&self.columns) {
            if source != &ColumnSource::Physical {
                continue;
            }
            let Some((name, typname, shown)) = columns.iter().find(|c| c.0 == field.name) else {
                let names: Vec<&str> = columns.iter().map(|c| c.0.as_str()).collect();
                return Err(self.error(format!(
                    "column '{}' is not a column of {}; its columns are: {}",
                    field.name,
                    o.qualified_name(),
                    names.join(", ")
                )));
            };
            let declared = &field.ty.data_type;
            let Some(ty) = PostgresType::of(typname) else {
                return Err(self.error(format!(
                    "column '{name}' is of type {shown}, which the postgres-cdc connector does not read; it reads {SUPPORTED}"
                )));
            };
            if !ty.reads_as(declared) {
                return Err(self.error(format!(
                    "column '{name}' is of type {shown}, which does not read as the declared {declared}"
                )));
            }
            select.push(ty.select(&quote_ident(name)));
        }
        Ok(select)
    }

    /// Reads the table's snapshot (see the [module docs](self)): each row a `+I` change
    /// whose `seq` is its position in the snapshot (from 1), or the row error of its first
    /// value the declared type cannot hold.
    ///
    /// Errors: the server cannot be reached or refuses the credentials, the table or a
    /// declared column does not exist, a column's type is not read (or not as declared), the
    /// read fails.
    pub fn snapshot(&self) -> Result<Snapshot, Error> {
        let mut client = self.connect()?;
        let select = self.select_list(&mut client)?;
        let o = &self.options;
        let list = match select.is_empty() {
            true => "NULL".to_string(),
            false => select.join(", "),
        };
        // In primary-key order, so that a row's position (its `seq`, the row its errors name)
        // does not depend on where the server keeps it.
        let order = match self.primary_key(&mut client)? {
            key if key.is_empty() => String::new(),
            key => format!(" ORDER BY {}", key.join(", ")),
        };
        let query = format!(
            "DECLARE dtemporal_snapshot NO SCROLL CURSOR FOR SELECT {list} FROM {}.{}{order}",
            quote_ident(&o.schema),
            quote_ident(&o.table)
        );
        let fail = |e: postgres::Error| self.error(source_text(&e));
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(fail)?;
        tx.batch_execute(&query).map_err(fail)?;
        let header: Vec<String> = self.schema.names().map(str::to_string).collect();
        let path = o.qualified_name();
        let mut rows = Vec::new();
        let mut scratch = Vec::new();
        loop {
            let batch = tx
                .simple_query("FETCH 10000 FROM dtemporal_snapshot")
                .map_err(fail)?;
            let before = rows.len();
            for message in batch {
                let SimpleQueryMessage::Row(values) = message else {
                    continue;
                };
                let seq = rows.len() as Seq + 1;
                let row = self
                    .pack(&values, &mut scratch)
                    .map_err(|(column, reason)| {
                        RowError::at(0, &path, &header, seq, Some(column), reason)
                    });
                rows.push(row.map(|row| Change::new(seq, RowKind::Insert, row)));
            }
            if rows.len() == before {
                break;
            }
        }
        tx.commit().map_err(fail)?;
        Ok(Snapshot {
            path,
            rows: Arc::new(rows),
            block_rows: SNAPSHOT_BLOCK_ROWS,
        })
    }

    /// The row of the declared columns from a snapshot row's text `values` (the physical
    /// columns in declared order), or the column and reason of the first value that does not
    /// parse.
    fn pack(
        &self,
        values: &postgres::SimpleQueryRow,
        scratch: &mut Vec<u8>,
    ) -> Result<Row, (usize, String)> {
        let o = &self.options;
        let mut row = Row::new();
        let mut packer = row.packer();
        let mut physical = 0;
        for (i, (field, source)) in self.schema.fields.iter().zip(&self.columns).enumerate() {
            let ty = &field.ty.data_type;
            match source {
                ColumnSource::Physical => {
                    let text = values.get(physical);
                    physical += 1;
                    match text {
                        None if field.ty.nullable => packer.push(Datum::Null),
                        None => return Err((i, "NULL in a NOT NULL column".to_string())),
                        Some(text) => {
                            let datum =
                                parse_datum(text, ty, scratch).map_err(|e| (i, e.to_string()))?;
                            packer.push(datum);
                        }
                    }
                }
                ColumnSource::Metadata(key) => packer.push(match key.as_str() {
                    "database_name" => Datum::Str(&o.database),
                    "schema_name" => Datum::Str(&o.schema),
                    "table_name" => Datum::Str(&o.table),
                    // A snapshot row's change time: 0, as Flink CDC gives it.
                    _ => Datum::Timestamp(Ts::from_millis(0)),
                }),
            }
        }
        Ok(row)
    }
}

/// Rows of a snapshot a block: the blocks the workers share, as a generated table's.
const SNAPSHOT_BLOCK_ROWS: u64 = 1024;

/// A table's snapshot, read once by the driver and shared by the workers: block `b` holds the
/// rows `b * block_rows ..`, of which worker `index` of `peers` enters those `i` with
/// `i % peers == index`.
#[derive(Clone, Debug)]
pub struct Snapshot {
    path: String,
    rows: Arc<Vec<Result<Change<Row>, RowError>>>,
    block_rows: u64,
}

impl Snapshot {
    /// `SCHEMA.TABLE`, as row errors name it.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// How many rows (row errors included).
    pub fn len(&self) -> u64 {
        self.rows.len() as u64
    }

    /// Whether the table was empty.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The blocks' reader: every block by index (its rows are shared, not owned).
    pub fn blocks(&self) -> SnapshotBlocks {
        SnapshotBlocks {
            blocks: self.len().div_ceil(self.block_rows),
            next: 0,
        }
    }

    /// Hands worker `(index, peers)`'s share of `block`'s rows to `out`.
    pub fn block_rows(
        &self,
        block: &Block,
        (index, peers): (u64, u64),
        out: &mut dyn FnMut(Result<Change<Row>, RowError>),
    ) {
        let first = block.index * self.block_rows;
        let last = (first + self.block_rows).min(self.len());
        for i in super::datagen::worker_share(first, last, index, peers) {
            out(self.rows[i as usize].clone());
        }
    }
}

/// The blocks of a [`Snapshot`], walked by each worker.
#[derive(Debug)]
pub struct SnapshotBlocks {
    blocks: u64,
    next: u64,
}

impl SnapshotBlocks {
    /// The next block; `None` after the last.
    pub fn next_block(&mut self) -> Option<Block> {
        (self.next < self.blocks).then(|| {
            self.next += 1;
            Block {
                index: self.next - 1,
                first_line: 0,
                bytes: Vec::new(),
                open_quote: None,
            }
        })
    }

    /// Blocks passed so far.
    pub fn blocks_seen(&self) -> u64 {
        self.next
    }
}

/// `name` as a quoted SQL identifier.
fn quote_ident(name: &str) -> String {
    let mut quoted = String::from("\"");
    for c in name.chars() {
        if c == '"' {
            quoted.push('"');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

/// A client error as the server words it (its message, and its detail if any), or the
/// client's error with its causes (a connection refused, a lost connection).
fn source_text(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_string(),
        };
    }
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        let message = c.to_string();
        if !text.contains(&message) {
            let _ = write!(text, ": {message}");
        }
        cause = c.source();
    }
    text
}
