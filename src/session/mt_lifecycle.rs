//! The warehouse-backed statements besides `CREATE`: opening a warehouse (its catalog's
//! statements replayed), `ALTER MATERIALIZED TABLE .. SUSPEND | RESUME | REFRESH | AS`, `DROP
//! MATERIALIZED TABLE`, `SHOW MATERIALIZED TABLES` and `DESCRIBE`.

use std::fmt::Write as _;
use std::path::Path;

use sqlparser::ast;
use sqlparser::tokenizer::Span;

use super::mt_create::identifier;
use super::mt_refresh::{refresh, Trigger};
use crate::io::{Tableau, Widths};
use crate::materialized::{
    check_drop, format_schedule_time, missing_table, resume, suspend, validate_partition_spec,
    RefreshMode,
};
use crate::operators::RowKind;
use crate::repr::{DataType, Datum, Row, Schema};
use crate::sql::parse_with_text;
use crate::sql::AlterMaterializedTable;
use crate::sql::SqlError;
use crate::table::{TableEnv, TableError};
use crate::warehouse::{current, Warehouse};

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

fn warehouse_of(env: &TableEnv, name: &ast::Ident) -> Result<Warehouse, SqlError> {
    env.warehouse()
        .ok_or_else(|| SqlError::at(name.span, missing_table(&identifier(&name.value))))
}

/// Runs `ALTER MATERIALIZED TABLE name action`; a manual refresh reports what it wrote.
pub(super) fn alter(
    env: &TableEnv,
    name: &ast::Ident,
    action: &AlterMaterializedTable,
) -> Result<Option<String>, SqlError> {
    let warehouse = warehouse_of(env, name)?;
    let id = identifier(&name.value);
    let at = |m: String| SqlError::at(name.span, m);
    match action {
        AlterMaterializedTable::Suspend | AlterMaterializedTable::Resume(_) => {
            warehouse.update(|catalog| {
                let entry = catalog
                    .materialized
                    .get_mut(&name.value)
                    .ok_or_else(|| at(missing_table(&id)))?;
                if let AlterMaterializedTable::Resume(options) = action {
                    if let Some(o) = options.first() {
                        let refresh = match entry.refresh_mode {
                            RefreshMode::Full => "a FULL refresh",
                            RefreshMode::Continuous => "a CONTINUOUS refresh job",
                        };
                        return Err(SqlError::at(o.span, format!("RESUME WITH option '{}' is not supported: {refresh} takes no dynamic options yet", o.key)));
                    }
                }
                entry.status = match action {
                    AlterMaterializedTable::Suspend => suspend(entry.status, entry.refresh_mode, &id),
                    _ => resume(entry.status, entry.refresh_mode, &id),
                }
                .map_err(at)?;
                Ok::<_, SqlError>(None)
            })
        }
        AlterMaterializedTable::Refresh(spec) => {
            let catalog = warehouse.catalog()?;
            let entry = catalog
                .materialized
                .get(&name.value)
                .ok_or_else(|| at(missing_table(&id)))?;
            let columns: Vec<(String, bool)> = entry
                .partition_keys
                .iter()
                .map(|k| {
                    let string = entry
                        .schema
                        .fields
                        .iter()
                        .any(|f| &f.name == k && f.ty.data_type.is_string());
                    (k.clone(), string)
                })
                .collect();
            let keys: Vec<(String, bool)> =
                spec.iter().map(|(k, _, s)| (k.value.clone(), *s)).collect();
            validate_partition_spec(&keys, &columns).map_err(at)?;
            let spec = spec
                .iter()
                .map(|(k, v, _)| (k.value.clone(), v.clone()))
                .collect();
            let record = refresh(env, &name.value, Trigger::Manual(spec))?
                .expect("a manual refresh always runs");
            Ok(Some(format!(
                "refreshed {id}: {} row(s), snapshot {}\n",
                record.rows, record.snapshot_id
            )))
        }
        AlterMaterializedTable::As(new) => {
            let plan = env.binder().query(&new.query)?;
            warehouse.update(|catalog| {
                let entry = catalog
                    .materialized
                    .get_mut(&name.value)
                    .ok_or_else(|| at(missing_table(&id)))?;
                check_same_schema(&name.value, &entry.schema, &plan.schema, name.span)?;
                entry.definition = new.definition.clone();
                super::mt_postgres::check_own_slots(env, &name.value, &plan, catalog, name.span)?;
                Ok(None)
            })
        }
    }
}

/// `ALTER .. AS` and `CREATE OR ALTER` keep the table's columns (schema evolution, Flink's
/// appending of nullable columns, is not supported yet).
pub(super) fn check_same_schema(
    name: &str,
    table: &Schema,
    query: &Schema,
    span: Span,
) -> Result<(), SqlError> {
    let columns = |s: &Schema| {
        s.fields
            .iter()
            .map(|f| (f.name.clone(), f.ty.clone()))
            .collect::<Vec<_>>()
    };
    if columns(table) == columns(query) {
        return Ok(());
    }
    Err(SqlError::at(span, format!(
        "the new definition of {} gives the columns {query} instead of the table's {table}: changing a materialized table's columns is not supported yet",
        identifier(name)
    )))
}

/// Runs `DROP MATERIALIZED TABLE [IF EXISTS] name`.
pub(super) fn drop(env: &TableEnv, name: &ast::Ident, if_exists: bool) -> Result<(), SqlError> {
    let id = identifier(&name.value);
    let Some(warehouse) = env.warehouse() else {
        return if if_exists {
            Ok(())
        } else {
            Err(SqlError::at(name.span, missing_table(&id)))
        };
    };
    warehouse.drop_materialized(&name.value, |entry| match entry {
        None if if_exists => Ok(()),
        None => Err(SqlError::at(name.span, missing_table(&id))),
        Some(e) => check_drop(e.status, &id).map_err(|m| SqlError::at(name.span, m)),
    })?;
    env.unregister(&name.value);
    Ok(())
}

/// `SHOW MATERIALIZED TABLES`: one name a line, sorted.
pub(super) fn show(env: &TableEnv) -> Result<String, SqlError> {
    let Some(warehouse) = env.warehouse() else {
        return Ok(String::new());
    };
    Ok(warehouse
        .catalog()?
        .materialized
        .keys()
        .map(|n| format!("{n}\n"))
        .collect())
}

/// `DESCRIBE name`: the columns (name, type, nullability, key), then for a materialized
/// table its keys, freshness, refresh mode, status, definition and published snapshot.
/// The columns of `schema` as Flink's SQL client prints `DESCRIBE t` (its
/// `TableEnvironmentImpl.buildTableColumns`, drawn as a tableau sized by content): per column its
/// `name`; its `type`, with `*ROWTIME*` / `*PROCTIME*` on the time attributes; `null` (TRUE or
/// FALSE); `key`, `PRI(k1, k2)` on each primary key column; `extras`, `AS PROCTIME()` on the
/// proctime attribute (other computed columns' expressions are not kept after `CREATE TABLE`,
/// so their extras are empty); and `watermark`, the rowtime's watermark, `` `t` - INTERVAL '5'
/// SECOND``.
fn describe_columns(schema: &Schema) -> String {
    let columns = Schema::builder()
        .column("name", DataType::STRING.not_null())
        .column("type", DataType::STRING.not_null())
        .column("null", DataType::Boolean.not_null())
        .column("key", DataType::STRING.not_null())
        .column("extras", DataType::STRING.not_null())
        .column("watermark", DataType::STRING.not_null())
        .build()
        .expect("distinct column names");
    let key = schema.primary_key.as_ref().map(|k| {
        let names: Vec<&str> = k.iter().map(|&i| schema.fields[i].name.as_str()).collect();
        format!("PRI({})", names.join(", "))
    });
    let rows: Vec<Row> = (schema.fields.iter().enumerate())
        .map(|(i, f)| {
            let rowtime = schema.rowtime.as_ref().filter(|r| r.column == i);
            let proctime = schema.proctime == Some(i);
            let ty = match (rowtime, proctime) {
                (Some(_), _) => format!("{} *ROWTIME*", f.ty.data_type),
                (None, true) => format!("{} *PROCTIME*", f.ty.data_type),
                (None, false) => f.ty.data_type.to_string(),
            };
            let in_key = schema.primary_key.as_ref().is_some_and(|k| k.contains(&i));
            let key = if in_key {
                key.as_deref().unwrap_or("")
            } else {
                ""
            };
            let extras = if proctime { "AS PROCTIME()" } else { "" };
            let watermark = rowtime.map_or(String::new(), |r| watermark_text(&f.name, r.delay_ms));
            Row::pack([
                Datum::Str(&f.name),
                Datum::Str(&ty),
                Datum::Bool(f.ty.nullable),
                Datum::Str(key),
                Datum::Str(extras),
                Datum::Str(&watermark),
            ])
        })
        .collect();
    let mut out = String::new();
    let tableau = Tableau {
        widths: Widths::ByContent,
        max_column_width: usize::MAX,
        print_row_kind: false,
    };
    let rows = rows.iter().map(|r| (RowKind::Insert, r));
    tableau
        .print(&columns, rows, &mut out)
        .expect("a String takes any text");
    out
}

/// A bounded-delay watermark as Flink prints it: `` `t` `` for no delay, else `` `t` -
/// INTERVAL 'n' UNIT`` in the largest unit (DAY, HOUR, MINUTE, SECOND) that holds the delay
/// whole (`'0.5' SECOND` for a fraction of a second).
fn watermark_text(column: &str, delay_ms: i64) -> String {
    let column = format!("`{}`", column.replace('`', "``"));
    if delay_ms == 0 {
        return column;
    }
    let units = [
        (86_400_000, "DAY"),
        (3_600_000, "HOUR"),
        (60_000, "MINUTE"),
        (1000, "SECOND"),
    ];
    let interval = match units.iter().find(|(ms, _)| delay_ms % ms == 0) {
        Some((ms, unit)) => format!("'{}' {unit}", delay_ms / ms),
        None => format!("'{}' SECOND", delay_ms as f64 / 1000.0),
    };
    format!("{column} - INTERVAL {interval}")
}

pub(super) fn describe(env: &TableEnv, name: &ast::Ident) -> Result<String, SqlError> {
    let table = env.from(&name.value);
    let schema = table
        .schema()
        .map_err(|e| SqlError::at(name.span, e.to_string()))?;
    let mut out = describe_columns(schema);
    // The changelog mode a source table's changes are read in (rule A12); none for an
    // append-only table or a view.
    if let Ok(plan) = table.plan() {
        let mode = if plan.reads_upsert_source() {
            Some("upsert (+I, +U, -D by primary key; normalized by it, as Flink's ChangelogNormalize)")
        } else if !plan.mode.is_append_only() && plan.source_order_breaker().is_none() {
            Some("retract (+I, -U, +U, -D)")
        } else {
            None
        };
        if let Some(mode) = mode {
            let _ = writeln!(out, "changelog mode: {mode}");
        }
    }
    let Some(warehouse) = env.warehouse() else {
        return Ok(out);
    };
    let catalog = warehouse.catalog()?;
    let Some(entry) = catalog.materialized.get(&name.value) else {
        return Ok(out);
    };
    if let Some(k) = &schema.primary_key {
        let names: Vec<&str> = k.iter().map(|&i| schema.fields[i].name.as_str()).collect();
        let _ = writeln!(
            out,
            "primary key: PK_{} ({})",
            names.join("_"),
            names.join(", ")
        );
    }
    if !entry.partition_keys.is_empty() {
        let _ = writeln!(out, "partitioned by: {}", entry.partition_keys.join(", "));
    }
    let _ = writeln!(out, "freshness: {}", entry.freshness);
    let _ = writeln!(
        out,
        "refresh mode: {} (declared {})",
        entry.refresh_mode, entry.logical_refresh_mode
    );
    let _ = writeln!(out, "refresh status: {}", entry.status);
    if let Ok(cron) = entry.freshness.to_cron() {
        let _ = writeln!(out, "schedule: {cron}");
    }
    let _ = writeln!(out, "definition: {}", entry.definition);
    let manifest = current(&warehouse.table_dir(&name.value, entry)?)?;
    let _ = writeln!(
        out,
        "snapshot: {} ({} rows, published {})",
        manifest.snapshot_id,
        manifest.rows(),
        format_schedule_time(manifest.refresh_time_ms)
    );
    Ok(out)
}
