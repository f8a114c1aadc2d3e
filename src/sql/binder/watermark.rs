//! `WATERMARK FOR c AS c [- INTERVAL 'n' unit]` of `CREATE TABLE`: the rowtime attribute it
//! declares, with its delay (Flink's bounded out-of-orderness strategy).

use sqlparser::ast::{self, Spanned};

use super::expr::interval_millis;
use crate::repr::Schema;
use crate::sql::error::SqlError;
use crate::sql::parser::create_table::Watermark;

/// `schema` with the rowtime attribute `WATERMARK FOR c AS expr` declares.
pub(crate) fn with_rowtime(schema: Schema, w: &Watermark) -> Result<Schema, SqlError> {
    let delay = watermark_delay(&w.column, &w.expr)?;
    schema
        .with_rowtime(&w.column.value, delay)
        .map_err(|e| SqlError::at(w.column.span, e.to_string()))
}

/// The delay of `WATERMARK FOR c AS c [- INTERVAL 'n' unit]` in milliseconds (Flink's bounded
/// out-of-orderness strategy).
fn watermark_delay(column: &ast::Ident, expr: &ast::Expr) -> Result<i64, SqlError> {
    let is_column =
        |e: &ast::Expr| matches!(e, ast::Expr::Identifier(i) if i.value == column.value);
    match expr {
        e if is_column(e) => Ok(0),
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::Minus, right } if is_column(left) => match right.as_ref() {
            ast::Expr::Interval(interval) => interval_millis(interval).map_err(|m| SqlError::at(right.span(), m)),
            other => Err(SqlError::at(other.span(), format!("expected an INTERVAL, found {other}"))),
        },
        other => Err(SqlError::at(
            other.span(),
            format!("the watermark must be '{0}' or '{0} - INTERVAL ...' (bounded out-of-orderness), not {other}", column.value),
        )),
    }
}
