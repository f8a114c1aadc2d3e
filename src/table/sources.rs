//! Registering the tables whose rows are not read from files: generated tables (the `datagen`
//! and `nexmark` connectors) and PostgreSQL tables (the `postgres-cdc` connector).

use std::sync::Arc;

use crate::io::postgres::{PostgresSource, StartupMode};
use crate::io::{Format, Generated};
use crate::plan::RelExpr;

use super::env::{Registered, TableSource};
use super::{TableEnv, TableError};

impl TableEnv {
    /// Registers the generated table `source` (Flink's `datagen` connector, or Nexmark's events)
    /// as `name`, whose rows are `table(scan)` as in [`register_file`](TableEnv::register_file):
    /// `scan` gives the source's columns, append-only. Executing a plan over it generates the
    /// rows ([`DatagenSource`](crate::io::DatagenSource),
    /// [`NexmarkSource`](crate::io::NexmarkSource): row `i` by worker `i % workers`, block `b`
    /// of rows at system time `b`; a datagen table throttled to its `rows-per-second`), in
    /// blocks of one row per 64 bytes of [`with_block_bytes`](TableEnv::with_block_bytes) (1024
    /// rows by default).
    ///
    /// Errors: the name is taken, or `table`'s.
    ///
    /// ```
    /// use differential_temporal::io::{DatagenSource, FieldGenerator, Generator};
    /// use differential_temporal::repr::{DataType, Schema};
    /// use differential_temporal::table::{TableEnv, TableError};
    ///
    /// let schema = Schema::builder().column("id", DataType::Int.not_null()).build().unwrap();
    /// let ids = FieldGenerator::new(Generator::Sequence { start: 1, end: 3 });
    /// let source = DatagenSource::new("ids", schema, vec![ids], None).unwrap();
    /// let env = TableEnv::new();
    /// env.register_generated("ids", source, Ok::<_, TableError>).unwrap();
    /// assert_eq!(env.from("ids").execute().unwrap().rows_as_text(), vec!["1", "2", "3"]);
    /// ```
    pub fn register_generated<E: From<TableError>>(
        &self,
        name: &str,
        source: impl Into<Generated>,
        table: impl FnOnce(RelExpr) -> Result<RelExpr, E>,
    ) -> Result<(), E> {
        let generated = source.into();
        let source = TableSource {
            path: name.to_string(),
            schema: generated.schema().clone(),
            changelog: false,
            format: Format::Csv,
            generated: Some(generated),
            postgres: None,
        };
        let plan = table(RelExpr::scan(name, source.schema.clone(), false))?;
        Ok(self.register(name, Registered::Source(source, plan))?)
    }

    /// Registers `name` as a table read from a PostgreSQL server (the `postgres-cdc`
    /// connector, [`crate::io::postgres`]); `table` turns its scan into the declared table
    /// (computed columns), as for [`register_generated`](Self::register_generated). The server
    /// is contacted when a query reads it.
    ///
    /// Errors: the name is taken, or `table`'s.
    pub fn register_postgres<E: From<TableError>>(
        &self,
        source: PostgresSource,
        table: impl FnOnce(RelExpr) -> Result<RelExpr, E>,
    ) -> Result<(), E> {
        let name = source.name.clone();
        let changelog = source.options.startup != StartupMode::Snapshot;
        let scan = RelExpr::scan(&name, source.schema.clone(), changelog);
        let source = TableSource {
            path: name.clone(),
            schema: source.schema.clone(),
            changelog,
            format: Format::Csv,
            generated: None,
            postgres: Some(Arc::new(source)),
        };
        let plan = table(scan)?;
        Ok(self.register(&name, Registered::Source(source, plan))?)
    }
}
