//! `CREATE TABLE` onto a registered CSV table: the file's schema from the physical and metadata
//! columns, primary key and watermark; the computed columns over it (bound by [`declared_table`]); the file
//! from the filesystem connector's options. A `'connector' = 'datagen'` or `'nexmark'` table is
//! registered as generated rows of its physical columns instead ([`datagen`], [`nexmark`]), and
//! is not a sink.
//!
//! The connector's options are [`connector`]'s; a table that declares a merge engine
//! (`'merge-engine'`, `'table.merge-engine'`) is its writes merged per primary key
//! ([`merge_engine`]). A `METADATA` column of a CSV table reads the
//! CSV column of the same name (the metadata key, `FROM '...'`, names where Kafka or Debezium
//! would take it from; a CSV file has it as a column); of a `debezium-json` table, the event's
//! metadata of that key.

use std::path::Path;

use super::connector::{self, Connector};
use super::{datagen, merge_engine, nexmark, postgres_cdc};
use crate::io::directory::files_now;
use crate::io::Generated;
use crate::plan::RelExpr;
use crate::repr::{Field, Schema};
use crate::sql::{data_type, declared_table, is_computed, with_rowtime};
use crate::sql::{ColumnKind, CreateTable, SqlError};
use crate::table::TableEnv;

/// Registers the table `t` declares in `env`: as a source when its file exists (a monitored
/// directory, `'source.monitor-interval'`, also while it is empty), and as a sink;
/// a `datagen` or `nexmark` table as a source only.
///
/// Errors (at the offending part): an unsupported type, option, connector or format, a missing
/// `path`, a primary key or watermark column that is not a column, a primary key on a computed
/// column, a watermark that is not `c` or `c - INTERVAL 'n' unit`, a computed column that does
/// not bind over the physical columns, a file whose header lacks a physical column.
pub(crate) fn create_table(env: &TableEnv, t: &CreateTable) -> Result<(), SqlError> {
    let name = &t.name.value;
    let at = |e: crate::table::TableError| SqlError::at(t.name.span, e.to_string());
    let generator = t
        .options
        .iter()
        .find(|o| o.key == "connector")
        .map(|o| o.value.as_str());
    if let Some(connector @ ("datagen" | "nexmark")) = generator {
        let physical = physical_schema(t)?;
        let source: Generated = if connector == "datagen" {
            datagen::datagen(t, &physical)?.into()
        } else {
            nexmark::nexmark(t, &physical)?.into()
        };
        return env
            .register_generated(name, source, |scan| declared_table(env, t, scan))
            .map_err(|e| match e {
                SqlError::Table(e) => at(e),
                other => other,
            });
    }
    if generator == Some("postgres-cdc") {
        let physical = physical_schema(t)?;
        let source = postgres_cdc::postgres_cdc(t, &physical)?;
        let normalized = |scan| postgres_cdc::normalized(&source, scan);
        let declared = |scan| declared_table(env, t, normalized(scan)?);
        return env
            .register_postgres(source.clone(), declared)
            .map_err(|e| match e {
                SqlError::Table(e) => at(e),
                other => other,
            });
    }
    let (t, engine) = &merge_engine::split_options(t);
    let Connector {
        path,
        format,
        monitor_interval,
    } = connector::filesystem(t)?;
    let physical = physical_schema(t)?;
    check_path(t, &path, monitor_interval.is_some())?;
    if Path::new(&path).exists() {
        // A monitored directory may wait for its first file: its columns are declared.
        let waiting =
            monitor_interval.is_some() && files_now(&path).map_err(|e| at(e.into()))?.is_empty();
        let declared = |scan| {
            let table = declared_table(env, t, scan)?;
            merge_engine::merged(t, table, engine)
        };
        let registered = if waiting {
            env.register_empty_directory(name, &path, &format, physical.clone(), declared)
        } else {
            env.register_file(name, &path, &format, Some(physical.clone()), declared)
        };
        registered.map_err(|e| match e {
            SqlError::Table(e) => at(e),
            other => other,
        })?;
        env.set_monitor_interval(name, monitor_interval);
    } else if engine.is_some() {
        // A sink until its file exists: its merge engine's options are checked all the same.
        let scan = RelExpr::scan(name, physical.clone(), false);
        merge_engine::merged(t, scan, engine)?;
    }
    env.register_file_sink(name, &path, &format, physical)
        .map_err(at)
}

/// Checks that a filesystem table's `path` can be read or written: a monitored directory must
/// exist (it may be empty); another path that does not exist makes the table a sink only, whose
/// file `INSERT INTO` creates, so its directory must exist.
///
/// Errors, at the `path` option: a monitored directory that does not exist; a path that does
/// not exist in a directory that does not either.
fn check_path(t: &CreateTable, path: &str, monitored: bool) -> Result<(), SqlError> {
    let at = t
        .options
        .iter()
        .find(|o| o.key == "path")
        .map_or(t.name.span, |o| o.span);
    let file = Path::new(path);
    if file.exists() {
        return Ok(());
    }
    if monitored {
        return Err(SqlError::at(
            at,
            format!("the monitored directory '{path}' of table '{}' does not exist ('source.monitor-interval' watches a directory, which may be empty but must exist): create it first", t.name.value),
        ));
    }
    let parent = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(SqlError::at(
            at,
            format!(
                "the path '{path}' of table '{}' does not exist, nor does its directory '{}': the table can be neither read nor written",
                t.name.value,
                parent.display()
            ),
        ));
    }
    Ok(())
}

/// The schema of the columns `t` reads from its file (physical and metadata, in declared order),
/// with the primary key and, when its column is one of them, the rowtime.
fn physical_schema(t: &CreateTable) -> Result<Schema, SqlError> {
    let mut fields = Vec::new();
    for column in &t.columns {
        let (ty, not_null) = match &column.kind {
            ColumnKind::Physical { ty, not_null } => (ty, *not_null),
            ColumnKind::Metadata { ty, .. } => (ty, false),
            ColumnKind::Computed(_) => continue,
        };
        let ty = data_type(ty).map_err(|m| SqlError::at(column.name.span, m))?;
        fields.push(Field::new(
            column.name.value.clone(),
            if not_null {
                ty.not_null()
            } else {
                ty.nullable()
            },
        ));
    }
    let mut schema = Schema::new(fields).map_err(|e| SqlError::at(t.name.span, e.to_string()))?;
    if let Some(key) = &t.primary_key {
        if let Some(c) = key.iter().find(|k| is_computed(t, k)) {
            return Err(SqlError::at(
                c.span,
                format!(
                    "Could not create a PRIMARY KEY with column '{}': it is a computed column, and a primary key is declared on physical columns",
                    c.value
                ),
            ));
        }
        let span = key
            .iter()
            .map(|k| k.span)
            .reduce(|a, b| a.union(&b))
            .unwrap_or(t.name.span);
        schema = schema
            .with_primary_key(key.iter().map(|k| k.value.as_str()))
            .map_err(|e| SqlError::at(span, e.to_string()))?;
    }
    if let Some(w) = t.watermark.as_ref().filter(|w| !is_computed(t, &w.column)) {
        schema = with_rowtime(schema, w)?;
    }
    Ok(schema)
}
