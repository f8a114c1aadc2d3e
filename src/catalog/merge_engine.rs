//! A `CREATE TABLE` with a merge engine: Fluss's `'table.merge-engine'` and Paimon's
//! `'merge-engine'` table options (and the options that configure the engine, e.g.
//! `'table.merge-engine.versioned.ver-column'`, `'sequence.field'`,
//! `'fields.<column>.aggregate-function'`: [`crate::merge_options`]) make the table its file's
//! rows merged per primary key, as [`RelExpr::merge_engine`] describes: a query reads the
//! merged table, `INSERT INTO` appends writes to the file.
//!
//! ```sql
//! CREATE TABLE prices (id BIGINT, price DECIMAL(10, 2), ts BIGINT,
//!   PRIMARY KEY (id) NOT ENFORCED
//! ) WITH ('connector' = 'filesystem', 'path' = 'prices.csv', 'format' = 'csv',
//!   'table.merge-engine' = 'versioned', 'table.merge-engine.versioned.ver-column' = 'ts')
//! ```

use super::connector::is_connector_option;
use crate::merge_options::MergeOptionsError;
use crate::plan::{PlanError, RelExpr};
use crate::sql::SqlError;
use crate::sql::{CreateTable, TableOption};

/// The options that choose a merge engine.
const ENGINE_KEYS: &[&str] = &["table.merge-engine", "merge-engine"];

/// `t` without its merge engine's options, and those options (every option that is not the
/// connector's, when one of them chooses an engine; `None` when none does).
pub(crate) fn split_options(t: &CreateTable) -> (CreateTable, Option<Vec<TableOption>>) {
    if !t
        .options
        .iter()
        .any(|o| ENGINE_KEYS.contains(&o.key.as_str()))
    {
        return (t.clone(), None);
    }
    let (connector, engine) = t
        .options
        .iter()
        .cloned()
        .partition(|o| is_connector_option(&o.key));
    let table = CreateTable {
        options: connector,
        ..t.clone()
    };
    (table, Some(engine))
}

/// `table` (the rows `t` declares) merged per `t`'s primary key by the engine `engine` (from
/// [`split_options`]) configures; `table` itself without an engine.
///
/// Errors (at the option choosing the engine): `t` has no primary key, or the engine refuses
/// the options (an unknown engine or option, a version column that is not a column or cannot
/// order, an aggregate function of the wrong type...).
pub(crate) fn merged(
    t: &CreateTable,
    table: RelExpr,
    engine: &Option<Vec<TableOption>>,
) -> Result<RelExpr, SqlError> {
    let Some(options) = engine else {
        return Ok(table);
    };
    let chosen = options
        .iter()
        .find(|o| ENGINE_KEYS.contains(&o.key.as_str()));
    let span = chosen.map_or(t.name.span, |o| o.span);
    let Some(key) = &t.primary_key else {
        let engine = chosen.map_or("", |o| o.value.as_str());
        return Err(SqlError::at(
            span,
            format!(
                "the merge engine '{engine}' of table '{}' merges the writes of each primary key: declare PRIMARY KEY (..) NOT ENFORCED",
                t.name.value
            ),
        ));
    };
    // A declared character string cannot order versions (Fluss refuses the table) unless our
    // `'fields.<f>.type'` declares the type its text is read as.
    let version = options
        .iter()
        .find(|o| o.key == "table.merge-engine.versioned.ver-column");
    if let (Some(option), Some("versioned")) = (version, chosen.map(|o| o.value.as_str())) {
        let column = option.value.trim();
        let read_as = format!("fields.{column}.type");
        let field = table.schema.fields.iter().find(|f| f.name == column);
        if let Some(field) = field.filter(|_| !options.iter().any(|o| o.key == read_as)) {
            if field.ty.data_type.is_string() {
                let e = MergeOptionsError::WrongVersionType {
                    column: column.to_string(),
                    ty: field.ty.data_type.to_string(),
                };
                return Err(SqlError::at(option.span, e.to_string()));
            }
        }
    }
    let key: Vec<String> = key.iter().map(|k| k.value.clone()).collect();
    let options: Vec<(String, String)> = options
        .iter()
        .map(|o| (o.key.clone(), o.value.clone()))
        .collect();
    table.merge_engine(&key, &options).map_err(|e| {
        let reason = match e {
            PlanError::Invalid { reason, .. } => reason,
            other => other.to_string(),
        };
        SqlError::at(span, reason)
    })
}
