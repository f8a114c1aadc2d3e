//! The catalog file `<warehouse>/catalog.json`: the statements that define tables, views and
//! temporal table functions (replayed when a warehouse is opened), and every materialized
//! table's entry (definition, schema, keys, options, freshness, refresh mode, status, refresh
//! history). JSON through serde; written with [`write_atomic`](super::atomic::write_atomic).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::atomic::write_atomic;
use super::layout::DataLayout;
use super::{io_at, Error};
use crate::materialized::rules::{
    IntervalFreshness, LogicalRefreshMode, RefreshMode, RefreshStatus,
};
use crate::repr::Schema;

/// The catalog format version this build writes. It reads version 1 too (whose tables lie at
/// `data/<name>`, [`DataLayout::ByName`]); version 2 records where each table lies, and
/// builds that read only version 1 refuse it (they would take its directories for orphans).
pub const CATALOG_VERSION: u32 = 2;

/// Everything a warehouse's catalog holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// [`CATALOG_VERSION`].
    pub version: u32,
    /// `CREATE TABLE`, `CREATE VIEW` and `CREATE TEMPORAL TABLE FUNCTION` statements, in the
    /// order they ran, each under the name it defines.
    pub statements: Vec<CatalogStatement>,
    /// The materialized tables, by name.
    pub materialized: BTreeMap<String, MaterializedTableEntry>,
}

/// One defining statement of the catalog.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CatalogStatement {
    /// The name it defines.
    pub name: String,
    /// Its SQL text, as written.
    pub sql: String,
}

/// A materialized table in the catalog.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MaterializedTableEntry {
    /// The `CREATE MATERIALIZED TABLE` statement as written.
    pub statement: String,
    /// The definition query's text (`AS SELECT ...`).
    pub definition: String,
    /// The schema inferred from the query, with the primary key.
    pub schema: Schema,
    /// `PARTITIONED BY (..)`, in order.
    pub partition_keys: Vec<String>,
    /// `WITH (..)`, in order.
    pub options: Vec<(String, String)>,
    /// `COMMENT '..'`.
    pub comment: Option<String>,
    /// The freshness, given or defaulted.
    pub freshness: IntervalFreshness,
    /// The refresh mode as declared.
    pub logical_refresh_mode: LogicalRefreshMode,
    /// The refresh mode as resolved.
    pub refresh_mode: RefreshMode,
    /// The refresh status.
    pub status: RefreshStatus,
    /// When the table was created (ms since the epoch, UTC).
    pub created_at_ms: i64,
    /// The last schedule time a periodic refresh ran for (ms since the epoch, UTC); periodic
    /// refreshes run for the schedule times after it.
    pub last_schedule_ms: Option<i64>,
    /// Every refresh, oldest first.
    pub history: Vec<RefreshRecord>,
    /// Where its data directory is (absent in catalogs of version 1: at its name).
    #[serde(default)]
    pub layout: DataLayout,
}

/// One refresh of a materialized table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefreshRecord {
    /// `PERIODIC` (the scheduler) or `MANUAL` (`ALTER .. REFRESH`).
    pub trigger: RefreshTrigger,
    /// The schedule time of a periodic refresh (`yyyy-MM-dd HH:mm:ss`, UTC).
    pub schedule_time: Option<String>,
    /// When it ran (ms since the epoch, by the environment's clock).
    pub refresh_time_ms: i64,
    /// The partition it overwrote (empty: the whole table).
    pub partition: Vec<(String, String)>,
    /// The snapshot it published.
    pub snapshot_id: u64,
    /// The rows it wrote.
    pub rows: u64,
}

/// What started a refresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RefreshTrigger {
    /// The scheduler, at a schedule time.
    Periodic,
    /// `ALTER MATERIALIZED TABLE .. REFRESH`.
    Manual,
    /// A snapshot of a CONTINUOUS refresh.
    Continuous,
}

impl Catalog {
    /// Reads the catalog at `path`; a missing file is an empty catalog only when `missing_ok`
    /// (a new warehouse).
    ///
    /// Errors: the file cannot be read, is not a catalog, or has another version; each names
    /// the file.
    pub fn load(path: &Path, missing_ok: bool) -> Result<Catalog, Error> {
        let bytes = match std::fs::read(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && missing_ok => {
                return Ok(Catalog {
                    version: CATALOG_VERSION,
                    ..Catalog::default()
                })
            }
            other => other.map_err(io_at(path))?,
        };
        let mut catalog: Catalog =
            serde_json::from_slice(&bytes).map_err(|e| super::corrupt(path, e.to_string()))?;
        if catalog.version == 1 {
            // Its entries say no layout: each reads as `ByName`; the next save writes it as
            // version 2.
            catalog.version = CATALOG_VERSION;
        }
        if catalog.version != CATALOG_VERSION {
            return Err(super::corrupt(
                path,
                format!(
                    "catalog version {} (this build reads versions 1 and {CATALOG_VERSION})",
                    catalog.version
                ),
            ));
        }
        Ok(catalog)
    }

    /// Writes the catalog to `path` atomically.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        let bytes = serde_json::to_vec_pretty(self).expect("a catalog serializes");
        write_atomic(path, &bytes)
    }

    /// Whether `name` is defined (by a statement or as a materialized table).
    pub fn defines(&self, name: &str) -> bool {
        self.materialized.contains_key(name) || self.statements.iter().any(|s| s.name == name)
    }
}
