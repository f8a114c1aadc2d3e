//! `DESCRIBE name`: a table's columns as Flink's SQL client prints them, and the changelog
//! mode its changes are read in (the lines about a materialized table follow, from
//! [`crate::materialized`]).

use std::fmt::Write as _;

use sqlparser::ast;

use crate::io::{Tableau, Widths};
use crate::operators::RowKind;
use crate::repr::{DataType, Datum, Row, Schema};
use crate::sql::SqlError;
use crate::table::TableEnv;

/// `DESCRIBE name`: the columns (name, type, nullability, key), then the changelog mode of a
/// table that is not append-only.
///
/// Errors, at `name`: no table or view of that name.
pub(crate) fn describe(env: &TableEnv, name: &ast::Ident) -> Result<String, SqlError> {
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
    Ok(out)
}

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
