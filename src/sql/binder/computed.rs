//! Computed columns of `CREATE TABLE` (Flink's `column_name AS computed_column_expression`):
//! each is evaluated per row from the physical and metadata columns (not from other computed
//! columns, as in Flink), bound as one [`RelExpr::map`] over the table's scan and projected into
//! the declared column order. A computed column can be the rowtime (`ts AS TO_TIMESTAMP(s),
//! WATERMARK FOR ts AS ts - INTERVAL '5' SECOND`).
//!
//! `pt AS PROCTIME()` declares the processing-time attribute, TIMESTAMP_LTZ(3) NOT NULL. On an
//! append-only table its value is the processing time of the system time the row enters at, on
//! the environment's [`ProcessingClock`] (a [`RelExpr::stamp_proctime`] over the computed
//! columns); processing-time windows group by it. On an updating table it is the clock's start
//! for every row, so that a row's retraction equals its insertion. Lookup joins (`FOR
//! SYSTEM_TIME AS OF o.pt`) and `ROW_NUMBER() OVER (.. ORDER BY pt)` order by arrival, never by
//! its value. Flink reads the wall clock per row when the column is materialized.

use sqlparser::ast::{self, Spanned};

use super::catalog::Catalog;
use super::expr::Translator;
use super::scope::Scope;
use super::watermark::with_rowtime;
use crate::expr::{bind_scalar, lit};
use crate::plan::{ProcessingClock, RelExpr};
use crate::repr::{DataType, Datum};
use crate::sql::error::SqlError;
use crate::sql::parser::create_table::{ColumnDef, ColumnKind, CreateTable};

/// Whether `column` names a computed column of `t`.
pub(crate) fn is_computed(t: &CreateTable, column: &ast::Ident) -> bool {
    t.columns
        .iter()
        .any(|c| c.name.value == column.value && matches!(c.kind, ColumnKind::Computed(_)))
}

/// The table `t` declares over `scan` (its physical and metadata columns): `scan` itself when no
/// column is computed; otherwise the computed columns mapped over it, every column in declared
/// order, with the rowtime and proctime attributes of computed columns.
///
/// Errors (at the offending part): a computed expression that does not bind over the physical
/// columns, two `PROCTIME()` columns, a watermark on the proctime column.
pub(crate) fn declared_table(
    catalog: &dyn Catalog,
    t: &CreateTable,
    scan: RelExpr,
) -> Result<RelExpr, SqlError> {
    if !t
        .columns
        .iter()
        .any(|c| matches!(c.kind, ColumnKind::Computed(_)))
    {
        return Ok(scan);
    }
    let registry = catalog.functions();
    let scope = Scope::of(&scan, Some(&t.name.value));
    let translator = Translator {
        scope: &scope,
        registry: &registry,
    };
    let clock =
        (catalog.plan_options().processing_clock).unwrap_or_else(ProcessingClock::wall_clock);
    let mut exprs = Vec::new();
    let mut proctime: Option<&ColumnDef> = None;
    for column in &t.columns {
        let ColumnKind::Computed(e) = &column.kind else {
            continue;
        };
        let expr = if is_proctime_call(e) {
            if let Some(first) = proctime.replace(column) {
                return Err(SqlError::at(
                    column.name.span,
                    format!(
                        "a table has one proctime attribute, but '{}' and '{}' are both PROCTIME()",
                        first.name.value, column.name.value
                    ),
                ));
            }
            // The value until the stamp sets it (an updating table keeps it).
            lit((
                Datum::Timestamp(clock.start),
                DataType::TimestampLtz(3).not_null(),
            ))
        } else {
            translator.expr(e)?
        };
        let bound = bind_scalar(&expr, &scan.schema, &registry)
            .map_err(|err| SqlError::at(e.span(), err.to_string()))?;
        exprs.push((bound, column.name.value.clone()));
    }
    let at_name = |e: crate::plan::PlanError| SqlError::at(t.name.span, e.to_string());
    let (mut physical, mut computed) = (0, scan.schema.len());
    let order = t
        .columns
        .iter()
        .map(|c| {
            let next = match c.kind {
                ColumnKind::Computed(_) => &mut computed,
                _ => &mut physical,
            };
            *next += 1;
            *next - 1
        })
        .collect();
    let mut table = scan
        .map(exprs)
        .and_then(|m| m.project(order, None))
        .map_err(at_name)?;
    if let Some(w) = t.watermark.as_ref().filter(|w| is_computed(t, &w.column)) {
        if proctime.is_some_and(|p| p.name.value == w.column.value) {
            return Err(SqlError::at(
                w.column.span,
                format!(
                    "the proctime attribute '{}' cannot also be the rowtime attribute (WATERMARK FOR)",
                    w.column.value
                ),
            ));
        }
        table.schema = with_rowtime(table.schema, w)?;
    }
    if let Some(p) = proctime {
        table.schema = table
            .schema
            .with_proctime(&p.name.value)
            .map_err(|e| SqlError::at(p.name.span, e.to_string()))?;
        if let (true, Some(column)) = (table.mode.is_append_only(), table.schema.proctime) {
            table = table.stamp_proctime(column, clock).map_err(at_name)?;
        }
    }
    Ok(table)
}

/// `PROCTIME()`, Flink's processing-time attribute function.
fn is_proctime_call(e: &ast::Expr) -> bool {
    let ast::Expr::Function(f) = e else {
        return false;
    };
    let no_args = match &f.args {
        ast::FunctionArguments::None => true,
        ast::FunctionArguments::List(list) => list.args.is_empty(),
        ast::FunctionArguments::Subquery(_) => false,
    };
    no_args && f.name.to_string().eq_ignore_ascii_case("proctime")
}
