//! A PostgreSQL table as a source: Flink CDC's `postgres-cdc` connector (its option names,
//! [`PostgresOptions`]) over the `postgres` client crate.
//!
//! Two reads: the table's **snapshot** ([`PostgresSource::snapshot`], the whole of
//! `'scan.startup.mode' = 'snapshot'`, Flink CDC's snapshot-only mode, which SQL queries read),
//! and its **change stream** from a logical-replication slot ([`PostgresSource::open_stream`],
//! the `'initial'` mode's snapshot and changes, each committed transaction in exactly one of
//! them, or `'latest-offset'`'s changes), which a CONTINUOUS materialized table reads (a batch
//! query refuses it as unbounded).
//!
//! Columns: each declared physical column reads the Postgres column of its name, whose type must
//! be one the connector reads as the declared type ([`PostgresType`]); a `METADATA` column
//! reads Flink CDC's metadata (`database_name`, `schema_name`, `table_name`, and `op_ts`, which
//! is 0, the epoch, for a snapshot row as in Flink CDC, else the transaction's commit time).
//! Values are read in Postgres's text form (the session's time zone UTC, bytes in hex) and
//! read as the declared type ([`PostgresType::datum`]: the one text-to-datum cast), so a value
//! the declared type cannot hold (an out-of-range integer, `infinity`) is a row error
//! `SCHEMA.TABLE:ROW:COLUMN: ...` naming the row (its `seq`), never a lost row.

mod options;
pub mod pgoutput;
mod snapshot;
mod stream;
mod types;

use std::fmt::Write as _;

use postgres::{Client, Config, NoTls};

use crate::error::Error;
use crate::repr::{Datum, Row, Schema, Ts};

pub use options::{OptionError, PostgresOptions, StartupMode, METADATA_KEYS, OPTIONS};
pub use snapshot::{Snapshot, SnapshotBlocks, Visible};
pub use stream::{ChangeStream, Slot, Transaction};
pub use types::PostgresType;
use types::{SESSION, SUPPORTED};

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
            .and_then(|mut client| client.batch_execute(SESSION).map(|()| client))
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

    /// The declared physical columns, in declared order, with their Postgres types: checks
    /// each against the table's columns.
    ///
    /// Errors: the table or a column does not exist, a column's type is not read, or not as
    /// the declared type.
    fn physical_columns(&self, client: &mut Client) -> Result<Vec<(String, PostgresType)>, Error> {
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
        let mut read = Vec::new();
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
            read.push((name.clone(), ty));
        }
        Ok(read)
    }

    /// The row of the declared columns, the `k`-th physical one's text `text(k)` (`None`:
    /// NULL) of the Postgres type `columns[k].1`, the metadata of a change made at
    /// `change_millis` (epoch milliseconds); or the column and reason of the first value that
    /// does not read as declared. `by_key`: a delete by key, whose missing values are NULL
    /// whatever the column's nullability.
    fn pack<'t>(
        &self,
        text: impl Fn(usize) -> Option<&'t str>,
        (columns, by_key): (&[(String, PostgresType)], bool),
        change_millis: i64,
        scratch: &mut Vec<u8>,
    ) -> Result<Row, (usize, String)> {
        let o = &self.options;
        let mut row = Row::new();
        let mut packer = row.packer();
        let mut physical = 0;
        for (i, (field, source)) in self.schema.fields.iter().zip(&self.columns).enumerate() {
            match source {
                ColumnSource::Physical => {
                    let (value, ty) = (text(physical), columns[physical].1);
                    physical += 1;
                    match value {
                        None if field.ty.nullable || by_key => packer.push(Datum::Null),
                        None => return Err((i, "NULL in a NOT NULL column".to_string())),
                        Some(value) => {
                            let datum = ty
                                .datum(value, &field.ty.data_type, scratch)
                                .map_err(|reason| (i, reason))?;
                            packer.push(datum);
                        }
                    }
                }
                ColumnSource::Metadata(key) => packer.push(match key.as_str() {
                    "database_name" => Datum::Str(&o.database),
                    "schema_name" => Datum::Str(&o.schema),
                    "table_name" => Datum::Str(&o.table),
                    _ => Datum::Timestamp(Ts::from_millis(change_millis)),
                }),
            }
        }
        Ok(row)
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
