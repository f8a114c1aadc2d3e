//! Binding of regular joins: `a [INNER] JOIN b ON ..`, `LEFT | RIGHT | FULL [OUTER] JOIN`,
//! `CROSS JOIN` (refused: no equality), and the comma join `FROM a, b WHERE a.k = b.k` (an
//! INNER join whose condition is the WHERE conjuncts that name only columns in scope so far),
//! onto the plan's `Join` node through the lowering the Table API shares ([`plan_equi_join`]),
//! so SQL and the Table API agree.
//!
//! Columns are named as anywhere else: `c` if one side has it, `a.c` (table or alias)
//! otherwise; an unqualified name both sides have is an error naming it and both tables.

use sqlparser::ast::{self, Spanned, TableFactor};
use sqlparser::tokenizer::Span;

use super::query::{Binder, Bound};
use super::scope::Scope;
use crate::expr::{lit, Expr};
use crate::plan::lower::plan_equi_join;
use crate::plan::{equi_join_schema, JoinType};
use crate::sql::error::SqlError;

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
        let scope = joined_scope(&left, &right, join_type);
        let condition = match on {
            Some(on) => self.translator(&scope).expr(on)?,
            None => lit(true),
        };
        let span = on.map_or_else(|| factor.span(), |on| on.span());
        let shown = on.map_or_else(|| "TRUE".to_string(), |on| on.to_string());
        self.bind_join(left, right, scope, join_type, (condition, shown, span))
    }

    /// `left, factor` with the WHERE `conjuncts`: an INNER join on the conjuncts that name only
    /// columns of `left` and `factor` (they leave `conjuncts`; for an INNER join a condition in
    /// ON and in WHERE are the same).
    pub(super) fn comma_join(
        &self,
        left: Bound,
        factor: &TableFactor,
        conjuncts: &mut Vec<ast::Expr>,
    ) -> Result<Bound, SqlError> {
        let right = self.factor(factor)?;
        let scope = joined_scope(&left, &right, JoinType::Inner);
        let tr = self.translator(&scope);
        let (mut on, mut kept) = (Vec::new(), Vec::new());
        for conjunct in conjuncts.drain(..) {
            match tr.expr(&conjunct) {
                Ok(e) => on.push((e, conjunct)),
                Err(_) => kept.push(conjunct),
            }
        }
        *conjuncts = kept;
        let span = on
            .iter()
            .map(|(_, c)| c.span())
            .reduce(|a, b| a.union(&b))
            .unwrap_or_else(|| factor.span());
        let shown: Vec<String> = on.iter().map(|(_, c)| c.to_string()).collect();
        let shown = if shown.is_empty() {
            "TRUE".to_string()
        } else {
            shown.join(" AND ")
        };
        let condition = on
            .into_iter()
            .map(|(e, _)| e)
            .reduce(Expr::and)
            .unwrap_or_else(|| lit(true));
        self.bind_join(
            left,
            right,
            scope,
            JoinType::Inner,
            (condition, shown, span),
        )
    }

    /// The join node of `left` and `right` on `condition` (shown as written, errors at `span`).
    fn bind_join(
        &self,
        left: Bound,
        right: Bound,
        scope: Scope,
        join_type: JoinType,
        (condition, shown, span): (Expr, String, Span),
    ) -> Result<Bound, SqlError> {
        let plan = plan_equi_join(
            left.plan,
            right.plan,
            &condition,
            &shown,
            (join_type, self.catalog.plan_options().state_ttl),
            &self.registry,
        )
        .map_err(|e| SqlError::at(span, e.to_string()))?;
        Ok(Bound { plan, scope })
    }
}

/// The names visible in the join of `left` and `right`.
fn joined_scope(left: &Bound, right: &Bound, join_type: JoinType) -> Scope {
    let joined = equi_join_schema(&left.plan.schema, &right.plan.schema, join_type);
    left.scope.join(&right.scope, &joined)
}
