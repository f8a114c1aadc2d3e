//! The `WITH (..)` options of a `'connector' = 'postgres-cdc'` table (Flink CDC's names),
//! validated into a [`PostgresSource`] ([`crate::io::postgres`] reads it).
//!
//! Errors are at the option, the column or the table's name: an unknown option (with the
//! closest valid name), a missing required option, a value the connector refuses, a
//! `METADATA` column whose key is not one of [`METADATA_KEYS`] or whose type does not hold it,
//! an upsert changelog (`'changelog-mode' = 'upsert'`) without a primary key.
//!
//! An upsert changelog is normalized by its primary key ([`normalized`]: Flink's
//! `ChangelogNormalize`, rule A12), so that the table is a retract changelog like any other.
//! The server is not contacted here: a query reading the table connects and checks the table.

use crate::io::postgres::{ColumnSource, PostgresOptions, PostgresSource, METADATA_KEYS, OPTIONS};
use crate::merge_engine::{Deduplicate, Deletes, MergeEngine};
use crate::plan::RelExpr;
use crate::repr::Schema;
use crate::sql::SqlError;
use crate::sql::{ColumnKind, CreateTable};

/// The postgres-cdc table `t` declares, with `physical` its physical and metadata columns.
pub(crate) fn postgres_cdc(t: &CreateTable, physical: &Schema) -> Result<PostgresSource, SqlError> {
    super::connector::check_options(t, "postgres-cdc", OPTIONS)?;
    let pairs: Vec<(String, String)> = t
        .options
        .iter()
        .map(|o| (o.key.clone(), o.value.clone()))
        .collect();
    let options = PostgresOptions::from_options(&pairs).map_err(|e| {
        let span = (e.key.as_ref())
            .and_then(|k| t.options.iter().find(|o| &o.key == k))
            .map_or(t.name.span, |o| o.span);
        let message = match e.key {
            Some(_) => e.message,
            None => format!("table '{}': {}", t.name.value, e.message),
        };
        SqlError::at(span, message)
    })?;
    let mut columns = Vec::new();
    for column in &t.columns {
        match &column.kind {
            ColumnKind::Physical { .. } => columns.push(ColumnSource::Physical),
            ColumnKind::Metadata { key, .. } => {
                let key = key.as_deref().unwrap_or(&column.name.value);
                let field = &physical.fields[columns.len()];
                let ty = &field.ty.data_type;
                let fits = match key {
                    "op_ts" => ty.is_timestamp(),
                    _ => ty.is_string(),
                };
                if !METADATA_KEYS.contains(&key) || !fits {
                    return Err(SqlError::at(
                        column.name.span,
                        format!(
                            "Invalid metadata key '{key}' of type {ty} in column '{}' of a postgres-cdc table; the available keys are 'op_ts' (TIMESTAMP_LTZ(3)), 'database_name', 'schema_name', 'table_name' (STRING)",
                            column.name.value
                        ),
                    ));
                }
                columns.push(ColumnSource::Metadata(key.to_string()));
            }
            ColumnKind::Computed(_) => {}
        }
    }
    if options.upsert && physical.primary_key.is_none() {
        return Err(SqlError::at(
            t.name.span,
            format!(
                "table '{}' is read as an upsert changelog ('changelog-mode' = 'upsert'), whose updates and deletes are by key: it needs a PRIMARY KEY",
                t.name.value
            ),
        ));
    }
    Ok(PostgresSource {
        name: t.name.value.clone(),
        options,
        schema: physical.clone(),
        columns,
    })
}

/// The scan of `source` as the table it declares: an upsert changelog normalized by its
/// primary key (each `+I`/`+U` an upsert, each `-D` a delete by key, retracting the stored
/// row: rule A12), anything else as it is.
pub(crate) fn normalized(source: &PostgresSource, scan: RelExpr) -> Result<RelExpr, SqlError> {
    let Some(key) = source
        .schema
        .primary_key
        .clone()
        .filter(|_| source.options.upsert)
    else {
        return Ok(scan);
    };
    let engine = MergeEngine::Deduplicate(Deduplicate {
        sequence: Vec::new(),
        deletes: Deletes::Apply,
    });
    // A scan in source order, keyed by its declared primary key: nothing to refuse.
    scan.merged_by(key, engine)
        .map_err(|e| SqlError::from(crate::error::TableError::Invalid(e.to_string())))
}
