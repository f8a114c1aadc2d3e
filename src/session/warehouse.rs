//! Opening a warehouse: the statements its catalog recorded are run again through the
//! session, then its materialized tables are registered from their snapshots.

use std::path::Path;

use crate::sql::{parse_with_text, SqlError};
use crate::table::{TableEnv, TableError};
use crate::warehouse::Warehouse;

impl TableEnv {
    /// This environment with its catalog kept in the warehouse directory `dir` (created if
    /// missing): the tables, views, temporal table functions and materialized tables defined
    /// there before (by this process or another) are registered, and what is defined from now
    /// on is recorded there. Materialized tables are read from their latest published
    /// snapshot; FULL ones are refreshed by [`run_scheduled_refreshes`](TableEnv::run_scheduled_refreshes)
    /// and `ALTER MATERIALIZED TABLE .. REFRESH`. See [`crate::warehouse`] for the layout, the
    /// lock (a second process waits) and crash safety.
    ///
    /// Errors: the directory cannot be created; its catalog, a pointer or a manifest is
    /// corrupted or missing (the error names the file); a recorded statement no longer runs
    /// (a source file was removed...).
    ///
    /// ```
    /// # use differential_temporal::table::tempfile_dir::Dir;
    /// use differential_temporal::table::TableEnv;
    ///
    /// let dir = Dir::new();
    /// let path = dir.write("t.csv", "a\n1\n2\n");
    /// let first = TableEnv::new().with_warehouse(dir.path("wh")).unwrap();
    /// first.execute_sql(&format!("CREATE TABLE t (a INT) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')")).unwrap();
    /// let second = TableEnv::new().with_warehouse(dir.path("wh")).unwrap();
    /// assert_eq!(second.from("t").execute().unwrap().rows_as_text(), ["1", "2"]);
    /// ```
    pub fn with_warehouse(self, dir: impl AsRef<Path>) -> Result<TableEnv, SqlError> {
        let warehouse = Warehouse::open(dir)?;
        let catalog = warehouse.catalog()?;
        for recorded in &catalog.statements {
            let replay = || -> Result<(), SqlError> {
                for (statement, _) in parse_with_text(&recorded.sql)? {
                    self.execute_statement(&statement)?;
                }
                Ok(())
            };
            replay().map_err(|e| {
                TableError::Invalid(format!(
                    "{}: the recorded definition of '{}' no longer runs: {e}",
                    warehouse.catalog_path().display(),
                    recorded.name
                ))
            })?;
        }
        for (name, entry) in &catalog.materialized {
            self.register_materialized(name, entry.schema.clone())?;
        }
        self.set_warehouse(warehouse);
        Ok(self)
    }
}
