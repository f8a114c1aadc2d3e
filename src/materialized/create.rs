//! `CREATE MATERIALIZED TABLE` run against a [`TableEnv`]: freshness and refresh mode
//! resolved ([`MaterializedTableConfig::resolve`]), the schema inferred from the bound query
//! and checked against the primary key, the partition columns and the date-formatter options
//! (Flink's `SqlCreateMaterializedTableConverter`, semantics D9 and D10, with its messages),
//! then the catalog entry and an empty first snapshot written to the warehouse under its lock.

use sqlparser::ast;

use crate::materialized::{
    formatter_column, IntervalFreshness, RefreshMode, RefreshStatus, ResolvedRefresh, TimeUnit,
};
use crate::repr::Schema;
use crate::sql::{Binder, CreateMaterializedTable, SqlError};
use crate::table::TableEnv;
use crate::warehouse::{MaterializedTableEntry, SnapshotWriter};

/// The identifier Flink's messages name a table by.
pub(super) fn identifier(name: &str) -> String {
    format!("`default_catalog`.`default_database`.`{name}`")
}

/// The freshness and refresh mode `t` declares, resolved with `env`'s options.
pub(super) fn resolve_refresh(
    env: &TableEnv,
    t: &CreateMaterializedTable,
) -> Result<ResolvedRefresh, SqlError> {
    let freshness = match &t.freshness {
        Some(clause) => {
            let unit = TimeUnit::parse(&clause.unit).map_err(|m| SqlError::at(clause.span, m))?;
            Some(
                IntervalFreshness::of(&clause.interval, unit)
                    .map_err(|m| SqlError::at(clause.span, m))?,
            )
        }
        None => None,
    };
    let declared = match &t.refresh_mode {
        None => None,
        Some(mode) => Some(match mode.value.to_ascii_uppercase().as_str() {
            "FULL" => RefreshMode::Full,
            "CONTINUOUS" => RefreshMode::Continuous,
            other => {
                return Err(SqlError::at(
                    mode.span,
                    format!("REFRESH_MODE must be FULL or CONTINUOUS, not {other}"),
                ))
            }
        }),
    };
    let at = t.freshness.as_ref().map_or(t.name.span, |f| f.span);
    env.materialized_config()
        .resolve(freshness, declared)
        .map_err(|m| SqlError::at(at, m))
}

/// The table's schema: the query's columns (names, types, nullability) with the primary key,
/// after Flink's checks of the primary key, the partition columns and the
/// `partition.fields.<f>.date-formatter` options.
pub(super) fn infer_schema(
    query: &Schema,
    t: &CreateMaterializedTable,
) -> Result<Schema, SqlError> {
    let available = || {
        let names: Vec<String> = query.names().map(|n| format!("'{n}'")).collect();
        format!("[{}]", names.join(", "))
    };
    let column = |name: &ast::Ident| query.fields.iter().find(|f| f.name == name.value);
    for p in &t.partitioned_by {
        if column(p).is_none() {
            return Err(SqlError::at(
                p.span,
                format!(
                    "Partition column '{}' not defined in the query schema. Available columns: {}.",
                    p.value,
                    available()
                ),
            ));
        }
    }
    for option in &t.options {
        let Some(name) = formatter_column(&option.key) else {
            if option.key == "format" {
                // Flink's format of the table's storage; a warehouse stores CSV snapshots.
                continue;
            }
            return Err(SqlError::at(
                option.span,
                format!("Unsupported materialized table option '{}': supported are 'partition.fields.<column>.date-formatter' and 'format' (a warehouse keeps its snapshots as CSV whatever 'format' says)", option.key),
            ));
        };
        let Some(p) = t.partitioned_by.iter().find(|p| p.value == name) else {
            let partitions: Vec<String> = t
                .partitioned_by
                .iter()
                .map(|p| format!("'{}'", p.value))
                .collect();
            return Err(SqlError::at(
                option.span,
                format!("Column '{name}' referenced by materialized table option '{}' isn't a partition column. Available partition columns: [{}].", option.key, partitions.join(", ")),
            ));
        };
        let ty = &column(p).expect("partition columns were checked").ty;
        if !ty.data_type.is_string() {
            return Err(SqlError::at(
                option.span,
                format!("Materialized table option '{}' only supports referring to char, varchar and string type partition column. Column {name} type is {ty}.", option.key),
            ));
        }
    }
    let mut schema =
        Schema::new(query.fields.clone()).map_err(|e| SqlError::at(t.name.span, e.to_string()))?;
    if let Some(key) = &t.primary_key {
        for k in key {
            match column(k) {
                None => {
                    return Err(SqlError::at(
                        k.span,
                        format!("Primary key column '{}' not defined in the query schema. Available columns: {}.", k.value, available()),
                    ))
                }
                Some(f) if f.ty.nullable => {
                    return Err(SqlError::at(
                        k.span,
                        format!("Could not create a PRIMARY KEY with nullable column '{}'.\nA PRIMARY KEY column must be declared on non-nullable physical columns.", k.value),
                    ))
                }
                Some(_) => {}
            }
        }
        schema = schema
            .with_primary_key(key.iter().map(|k| k.value.as_str()))
            .map_err(|e| SqlError::at(t.name.span, e.to_string()))?;
    }
    Ok(schema)
}

/// Runs `CREATE [OR ALTER] MATERIALIZED TABLE` (`text`: the statement as written).
pub(crate) fn create(
    env: &TableEnv,
    t: &CreateMaterializedTable,
    text: Option<&str>,
) -> Result<(), SqlError> {
    let name = &t.name.value;
    let refresh = resolve_refresh(env, t)?;
    let plan = Binder::new(env).query(&t.query)?;
    let schema = infer_schema(&plan.schema, t)?;
    for source in plan
        .scans()
        .into_iter()
        .filter_map(|scan| env.source(scan).ok())
    {
        let at = |m: String| SqlError::at(t.name.span, m);
        match (refresh.mode, source.generated, source.postgres) {
            // A FULL refresh is a batch query: it cannot read an unbounded table.
            (RefreshMode::Full, Some(generated), _) => generated
                .check_bounded()
                .map_err(|m| at(format!("a FULL refresh is a batch query: {m}")))?,
            (RefreshMode::Full, _, Some(postgres)) => postgres
                .check_bounded()
                .map_err(|m| at(format!("a FULL refresh is a batch query: {m}")))?,
            _ => {}
        }
    }
    let (warehouse, text) = match (env.warehouse(), refresh.mode, text) {
        (None, RefreshMode::Full, _) => return Err(SqlError::at(
            t.name.span,
            "The workflow scheduler must be configured when creating materialized table in full refresh mode. (Open a warehouse, which holds the scheduler's state: TableEnv::with_warehouse(dir) or dtemporal sql --warehouse DIR.)",
        )),
        (None, RefreshMode::Continuous, _) => return Err(SqlError::at(
            t.name.span,
            "A materialized table in continuous refresh mode needs a warehouse, which holds its snapshots and the input positions its refresh resumes from: TableEnv::with_warehouse(dir) or dtemporal sql --warehouse DIR.",
        )),
        (Some(_), _, None) => return Err(SqlError::at(
            t.name.span,
            "a warehouse records the statement's SQL text: run CREATE MATERIALIZED TABLE with execute_sql",
        )),
        (Some(w), _, Some(text)) => (w, text),
    };
    let now = env.clock().now_ms();
    warehouse.update(|catalog| {
        super::postgres::check_own_slots(env, name, &plan, catalog, t.name.span)?;
        if let Some(existing) = catalog.materialized.get_mut(name) {
            if !t.or_alter {
                return Err(SqlError::at(
                    t.name.span,
                    format!(
                        "Table (or view) {} already exists in Catalog default_catalog.",
                        identifier(name)
                    ),
                ));
            }
            super::statements::check_same_schema(name, &existing.schema, &schema, t.name.span)?;
            let declared = (
                t.partitioned_by.iter().map(|p| p.value.clone()).collect::<Vec<_>>(),
                t.options.iter().map(|o| (o.key.clone(), o.value.clone())).collect::<Vec<_>>(),
                refresh.freshness,
                refresh.logical,
                &t.comment,
                &schema.primary_key,
            );
            let kept = (
                existing.partition_keys.clone(),
                existing.options.clone(),
                existing.freshness,
                existing.logical_refresh_mode,
                &existing.comment,
                &existing.schema.primary_key,
            );
            if declared != kept {
                return Err(SqlError::at(t.name.span, format!("CREATE OR ALTER of {} changes more than its query (its keys, options, freshness, refresh mode or comment), which is not supported yet", identifier(name))));
            }
            existing.statement = text.to_string();
            existing.definition = t.definition.clone();
            return Ok(());
        }
        if catalog.defines(name) || env.is_registered(name) {
            return Err(SqlError::at(
                t.name.span,
                format!(
                    "Table (or view) {} already exists in Catalog default_catalog.",
                    identifier(name)
                ),
            ));
        }
        let (layout, staged) = warehouse.stage_new_table(catalog, name);
        let mut first = SnapshotWriter::begin(&staged, None)?;
        first.write_file(&schema, Vec::new(), &[])?;
        first.publish(now, None, Vec::new())?;
        catalog.materialized.insert(
            name.clone(),
            MaterializedTableEntry {
                statement: text.to_string(),
                definition: t.definition.clone(),
                schema: schema.clone(),
                partition_keys: t.partitioned_by.iter().map(|p| p.value.clone()).collect(),
                options: t
                    .options
                    .iter()
                    .map(|o| (o.key.clone(), o.value.clone()))
                    .collect(),
                comment: t.comment.clone(),
                freshness: refresh.freshness,
                logical_refresh_mode: refresh.logical,
                refresh_mode: refresh.mode,
                status: RefreshStatus::Activated,
                created_at_ms: now,
                last_schedule_ms: None,
                history: Vec::new(),
                layout,
            },
        );
        env.register_materialized(name, schema.clone())
            .map_err(|e| SqlError::at(t.name.span, e.to_string()))
    })
}
