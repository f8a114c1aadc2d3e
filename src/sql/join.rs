//! Binding of regular joins: `a [INNER] JOIN b ON ..`, `LEFT | RIGHT | FULL [OUTER] JOIN`,
//! `CROSS JOIN` (refused: no equality), onto the plan's `Join` node through the Table API's
//! lowering ([`plan_equi_join`]), so SQL and the Table API agree.
//!
//! Columns in `ON` are named as anywhere else: `c` if one side has it, `a.c` (table or alias)
//! otherwise; an unqualified name both sides have is an error naming it and both tables.

use sqlparser::ast::{self, Spanned, TableFactor};

use super::error::SqlError;
use super::query::{Binder, Bound};
use crate::expr::lit;
use crate::plan::{equi_join_schema, JoinType};
use crate::table::equi_join::plan_equi_join;

impl Binder<'_> {
    /// `left <join_type> JOIN factor ON on` (no `on`: a CROSS JOIN, refused for want of an
    /// equality, as Flink refuses it on a stream).
    pub(super) fn regular_join(
        &self,
        left: Bound,
        factor: &TableFactor,
        join_type: JoinType,
        on: Option<&ast::Expr>,
    ) -> Result<Bound, SqlError> {
        let right = self.factor(factor)?;
        let joined = equi_join_schema(&left.plan.schema, &right.plan.schema, join_type);
        let scope = left.scope.join(&right.scope, &joined);
        let condition = match on {
            Some(on) => self.translator(&scope).expr(on)?,
            None => lit(true),
        };
        let span = on.map_or_else(|| factor.span(), |on| on.span());
        let shown = on.map_or_else(|| "TRUE".to_string(), |on| on.to_string());
        let plan = plan_equi_join(
            left.plan,
            right.plan,
            &condition,
            &shown,
            join_type,
            &self.registry,
        )
        .map_err(|e| SqlError::at(span, e.to_string()))?;
        Ok(Bound { plan, scope })
    }
}
