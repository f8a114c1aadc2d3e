//! The warehouse-backed statements besides `CREATE`: `ALTER MATERIALIZED TABLE .. SUSPEND |
//! RESUME | REFRESH | AS`, `DROP MATERIALIZED TABLE`, `SHOW MATERIALIZED TABLES` and
//! `DESCRIBE`'s lines about a materialized table.

use std::fmt::Write as _;

use sqlparser::ast;
use sqlparser::tokenizer::Span;

use super::create::identifier;
use super::refresh::{refresh, Trigger};
use crate::materialized::{
    check_drop, format_schedule_time, missing_table, resume, suspend, validate_partition_spec,
    RefreshMode,
};
use crate::repr::Schema;
use crate::sql::{AlterMaterializedTable, Binder, SqlError};
use crate::table::TableEnv;
use crate::warehouse::{current, Warehouse};

fn warehouse_of(env: &TableEnv, name: &ast::Ident) -> Result<Warehouse, SqlError> {
    env.warehouse()
        .ok_or_else(|| SqlError::at(name.span, missing_table(&identifier(&name.value))))
}

/// Runs `ALTER MATERIALIZED TABLE name action`; a manual refresh reports what it wrote.
pub(crate) fn alter(
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
            let plan = Binder::new(env).query(&new.query)?;
            warehouse.update(|catalog| {
                let entry = catalog
                    .materialized
                    .get_mut(&name.value)
                    .ok_or_else(|| at(missing_table(&id)))?;
                check_same_schema(&name.value, &entry.schema, &plan.schema, name.span)?;
                entry.definition = new.definition.clone();
                super::postgres::check_own_slots(env, &name.value, &plan, catalog, name.span)?;
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
pub(crate) fn drop(env: &TableEnv, name: &ast::Ident, if_exists: bool) -> Result<(), SqlError> {
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
pub(crate) fn show(env: &TableEnv) -> Result<String, SqlError> {
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

/// The lines `DESCRIBE name` adds about a materialized table after its columns: its keys,
/// partition columns, freshness, refresh mode, status, schedule, definition and published
/// snapshot; nothing for another table, or without a warehouse.
///
/// Errors: `name` is not a table (as `DESCRIBE`'s columns say first); the warehouse's catalog
/// or the table's manifest cannot be read.
pub(crate) fn describe(env: &TableEnv, name: &ast::Ident) -> Result<String, SqlError> {
    let mut out = String::new();
    let table = env.from(&name.value);
    let schema = table
        .schema()
        .map_err(|e| SqlError::at(name.span, e.to_string()))?;
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
