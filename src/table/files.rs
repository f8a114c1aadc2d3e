//! Registering the tables and sinks that are files: a CSV or Debezium JSON file, or a
//! directory of them, read as a table ([`TableEnv::register_file`]) and written by
//! `INSERT INTO` ([`TableEnv::register_file_sink`]). Tables whose rows are not files are in
//! `sources.rs`.

use crate::io::{Format, TypedSource};
use crate::plan::RelExpr;
use crate::repr::Schema;

use super::env::{Registered, TableSource};
use super::{TableEnv, TableError};

impl TableEnv {
    /// Registers the CSV file `path` as table `name` (or every file under the directory `path`,
    /// in path order: [`TypedSource::open_table`]). With a `schema`, each of its columns is
    /// read from the header column of the same name and parsed as its type (a cell that does
    /// not parse is a row error `FILE:LINE:COLUMN: column "x": reason`); without one, every
    /// column is a nullable STRING. A file with an `op` column (`+I -U +U -D`) is a changelog.
    ///
    /// Errors: the name is taken, the file cannot be read, a schema column is not in the file.
    pub fn register_csv(
        &self,
        name: &str,
        path: &str,
        schema: Option<Schema>,
    ) -> Result<(), TableError> {
        self.register_file(name, path, &Format::Csv, schema, Ok)
    }

    /// Registers the file (or directory) `path` in `format` as table `name` whose rows are
    /// `table(scan)`: `scan` reads the file's columns of `physical` as
    /// [`register_csv`](TableEnv::register_csv) does (for `debezium-json`:
    /// [`TypedSource::open_format`]), and
    /// `table` builds on it, typically a [`RelExpr::map`] of computed columns and a
    /// [`RelExpr::project`] into the declared order (Flink's computed columns, `c AS expr` in
    /// `CREATE TABLE`, evaluated per row from the physical columns). Queries over `name` start
    /// from `table(scan)`; executing one reads the file with `physical`.
    ///
    /// Errors: those of [`register_csv`](TableEnv::register_csv) (`debezium-json` needs
    /// `physical`), or `table`'s.
    ///
    /// ```
    /// # use differential_temporal::table::tempfile_dir::Dir;
    /// use differential_temporal::expr::{bind_scalar, col};
    /// use differential_temporal::io::Format;
    /// use differential_temporal::repr::{DataType, Schema};
    /// use differential_temporal::table::{TableEnv, TableError};
    ///
    /// let dir = Dir::new();
    /// let path = dir.write("o.csv", "price,qty\n3,2\n5,4\n");
    /// let physical = Schema::builder()
    ///     .column("price", DataType::Int.nullable())
    ///     .column("qty", DataType::Int.nullable())
    ///     .build()
    ///     .unwrap();
    /// let env = TableEnv::new();
    /// env.register_file("o", &path, &Format::Csv, Some(physical), |scan| {
    ///     let cost = bind_scalar(&col("price").mul(col("qty")), &scan.schema, &Default::default())
    ///         .map_err(|e| TableError::Invalid(e.to_string()))?;
    ///     scan.map(vec![(cost, "cost".into())]).map_err(|e| TableError::Invalid(e.to_string()))
    /// })
    /// .unwrap();
    /// assert_eq!(env.from("o").execute().unwrap().rows_as_text(), vec!["3,2,6", "5,4,20"]);
    /// ```
    pub fn register_file<E: From<TableError>>(
        &self,
        name: &str,
        path: &str,
        format: &Format,
        physical: Option<Schema>,
        table: impl FnOnce(RelExpr) -> Result<RelExpr, E>,
    ) -> Result<(), E> {
        let (files, schema) =
            TypedSource::open_table(path, physical, format).map_err(TableError::from)?;
        let source = TableSource {
            path: path.to_string(),
            schema,
            changelog: files[0].is_changelog(),
            format: format.clone(),
            generated: None,
            postgres: None,
        };
        let mut scan = RelExpr::scan(name, source.schema.clone(), source.changelog);
        if let Some(key) = &source.schema.primary_key {
            // An upsert changelog is normalized by its key wherever it is read (rule A12).
            let upsert = files.iter().map(|f| f.is_upsert_changelog(key));
            if upsert
                .collect::<Result<Vec<_>, _>>()
                .map_err(TableError::from)?
                .contains(&true)
            {
                scan = scan.normalized_by_key().map_err(|e| TableError::Plan {
                    operation: "register",
                    source: e,
                })?;
            }
        }
        let plan = table(scan)?;
        Ok(self.register(name, Registered::Source(source, plan))?)
    }

    /// Registers the directory `path` in `format` as table `name` of the declared columns
    /// `physical`, as [`register_file`](TableEnv::register_file) does, before it holds a file:
    /// a monitored directory (`'source.monitor-interval'`) that a CONTINUOUS materialized
    /// table reads as files arrive. Its rows are append-only in `csv` (a file with an `op`
    /// column is refused when it arrives) and a changelog in `debezium-json`.
    ///
    /// Errors: the name is taken, or `table`'s.
    pub(crate) fn register_empty_directory<E: From<TableError>>(
        &self,
        name: &str,
        path: &str,
        format: &Format,
        physical: Schema,
        table: impl FnOnce(RelExpr) -> Result<RelExpr, E>,
    ) -> Result<(), E> {
        let source = TableSource {
            path: path.to_string(),
            schema: physical,
            changelog: matches!(format, Format::DebeziumJson(_)),
            format: format.clone(),
            generated: None,
            postgres: None,
        };
        let plan = table(RelExpr::scan(name, source.schema.clone(), source.changelog))?;
        Ok(self.register(name, Registered::Source(source, plan))?)
    }

    /// Declares the CSV file `path` (written when something is inserted into it) with `schema`
    /// as the sink `name` (SQL's `CREATE TABLE name (..) WITH ('path' = ..)`: a table is a
    /// source if its file exists, and a sink in any case).
    ///
    /// Errors: a sink of that name is already declared.
    pub fn register_csv_sink(
        &self,
        name: &str,
        path: &str,
        schema: Schema,
    ) -> Result<(), TableError> {
        self.register_file_sink(name, path, &Format::Csv, schema)
    }

    /// [`register_csv_sink`](TableEnv::register_csv_sink) in `format`: `debezium-json` writes
    /// Debezium events ([`write_debezium_json`](crate::io::write_debezium_json)).
    ///
    /// Errors: a sink of that name is already declared.
    pub fn register_file_sink(
        &self,
        name: &str,
        path: &str,
        format: &Format,
        schema: Schema,
    ) -> Result<(), TableError> {
        let sink = TableSource {
            path: path.to_string(),
            schema,
            changelog: false,
            format: format.clone(),
            generated: None,
            postgres: None,
        };
        self.declare_sink(name, sink)
    }
}
