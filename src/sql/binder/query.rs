//! The binder: a SQL query onto the plan the Table API builds, through the same lowering
//! (`plan::lower`'s projection and aggregation, temporal joins...), so SQL and the Table API
//! agree by construction.
//!
//! Flink's rules: `FOR SYSTEM_TIME AS OF left.rowtime` is an event-time temporal join (the
//! build side a versioned table), `AS OF left.proctime` a lookup join; `LATERAL TABLE (f(t))`
//! in `FROM` joins a temporal table function, its condition taken from `WHERE` (both bound in
//! [`super::temporal`]); `ROW_NUMBER() OVER (PARTITION BY k ORDER BY time) AS rn` in a
//! subquery with `WHERE rn = 1` outside it is deduplication (see [`super::dedup`]);
//! aggregates `OVER (..)` in the select list are OVER aggregations (see [`super::over`]).
//! Regular joins, set operations and ORDER BY / LIMIT are bound in [`super::join`],
//! [`super::set_op`] and [`super::order`].

use sqlparser::ast::{
    self, GroupByExpr, JoinConstraint, JoinOperator, SelectItem, SelectItemQualifiedWildcardKind,
    Spanned, TableFactor, TableVersion,
};
use sqlparser::tokenizer::Span;

use super::catalog::Catalog;
use super::dedup;
use super::expr::Translator;
use super::lateral::is_unnest;
use super::over;
use super::scope::{object_name, Scope};
use super::window;
use crate::expr::{col, lit, Expr, FunctionRegistry};
use crate::plan::lower::{aggregate, contains_aggregate, project};
use crate::plan::{JoinKind, JoinType, RelExpr};
use crate::sql::error::SqlError;

/// A bound relation: its plan and the names it answers to.
pub(super) struct Bound {
    pub plan: RelExpr,
    pub scope: Scope,
}

/// Binds queries against the tables, views and functions of a [`Catalog`].
pub(crate) struct Binder<'a> {
    pub catalog: &'a dyn Catalog,
    /// The catalog's functions, read once.
    pub registry: FunctionRegistry,
}

impl<'a> Binder<'a> {
    /// A binder over `catalog`.
    pub(crate) fn new(catalog: &'a dyn Catalog) -> Binder<'a> {
        Binder {
            catalog,
            registry: catalog.functions(),
        }
    }
}

impl Binder<'_> {
    /// The plan of `query`.
    pub(crate) fn query(&self, query: &ast::Query) -> Result<RelExpr, SqlError> {
        Ok(self.bind_query(query)?.plan)
    }

    pub(super) fn bind_query(&self, query: &ast::Query) -> Result<Bound, SqlError> {
        let refuse =
            |span: Span, what: &str| Err(SqlError::at(span, format!("{what} is not supported")));
        if let Some(with) = &query.with {
            return refuse(with.span(), "WITH (common table expressions)");
        }
        let body = self.set_expr(&query.body)?;
        self.order_limit(body, query)
    }

    pub(super) fn select(&self, select: &ast::Select) -> Result<Bound, SqlError> {
        let mut conjuncts = Vec::new();
        if let Some(selection) = &select.selection {
            split_and(selection, &mut conjuncts);
        }
        if let Some(qualify) = &select.qualify {
            return self.qualify(select, qualify);
        }
        if select.from.is_empty() {
            return Err(SqlError::at(
                select.span(),
                "a SELECT without FROM is not supported",
            ));
        }
        let (input, mut window) = match window::tvf(self, select)? {
            Some((input, window)) => (input, Some(window)),
            None => match dedup::recognize(select, &mut conjuncts)? {
                Some(pattern) => (self.dedup(pattern)?, None),
                None => (self.from(&select.from, &mut conjuncts)?, None),
            },
        };
        let input = self.filter(input, conjuncts)?;
        if over::used(select) {
            if window.is_some() || select.group_by != GroupByExpr::Expressions(vec![], vec![]) {
                return Err(SqlError::at(
                    select.group_by.span().union(&select.projection[0].span()),
                    "OVER aggregates and GROUP BY in one select are not supported: aggregate in a subquery, then apply the OVER window",
                ));
            }
            return over::select(self, select, input);
        }
        let tr = self.translator(&input.scope);
        let mut keys = match &select.group_by {
            // `GROUP BY (a, b)` is `GROUP BY a, b` (Calcite reads the parenthesized list so).
            GroupByExpr::Expressions(exprs, modifiers) if modifiers.is_empty() => exprs
                .iter()
                .flat_map(|e| match e {
                    ast::Expr::Tuple(items) => items.iter().collect::<Vec<_>>(),
                    e => vec![e],
                })
                .map(|e| tr.expr(e))
                .collect::<Result<Vec<_>, _>>()?,
            other => {
                return Err(SqlError::at(
                    other.span(),
                    "GROUP BY ALL and grouping modifiers are not supported",
                ))
            }
        };
        let mut items = self.select_list(&input.scope, &select.projection, None)?;
        let span = select
            .projection
            .first()
            .map_or(Span::empty(), |i| i.span());
        if window.is_none() {
            window =
                window::legacy(&mut keys).map_err(|m| SqlError::at(select.group_by.span(), m))?;
        }
        let width = items.len();
        let having = select
            .having
            .as_ref()
            .map(|h| Ok::<_, SqlError>((tr.expr(h)?, h.span())))
            .transpose()?;
        let grouped = !keys.is_empty() || having.is_some() || items.iter().any(contains_aggregate);
        let mut plan = if grouped || window.is_some() {
            if let Some((h, _)) = &having {
                items.push(h.clone().alias("$having"));
            }
            match &window {
                Some(w) => window::aggregate(w, input.plan, keys, &items, self),
                None => aggregate(input.plan, &keys, &items, &self.registry),
            }
            .map_err(|e| SqlError::at(span, e.to_string()))?
        } else {
            project(input.plan, &items, &self.registry)
                .map_err(|e| SqlError::at(span, e.to_string()))?
        };
        if let Some((_, at)) = having {
            plan = plan
                .filter_expr(&col("$having"), &self.registry)
                .and_then(|p| p.project((0..width).collect(), None))
                .map_err(|e| SqlError::at(at, e.to_string()))?;
        }
        if select.distinct.is_some() {
            plan = plan.distinct();
        }
        let scope = Scope::of(&plan, None);
        Ok(Bound { plan, scope })
    }

    pub(super) fn translator<'s>(&'s self, scope: &'s Scope) -> Translator<'s> {
        Translator {
            scope,
            registry: &self.registry,
        }
    }

    /// Keeps the rows for which every conjunct is TRUE.
    pub(super) fn filter(
        &self,
        input: Bound,
        conjuncts: Vec<ast::Expr>,
    ) -> Result<Bound, SqlError> {
        let Some(span) = conjuncts
            .iter()
            .map(|c| c.span())
            .reduce(|a, b| a.union(&b))
        else {
            return Ok(input);
        };
        let tr = self.translator(&input.scope);
        let predicate = conjuncts
            .iter()
            .map(|c| tr.expr(c))
            .reduce(|a, b| Ok(a?.and(b?)))
            .transpose()?
            .unwrap_or_else(|| lit(true));
        let plan = input
            .plan
            .filter_expr(&predicate, &self.registry)
            .map_err(|e| SqlError::at(span, e.to_string()))?;
        Ok(Bound {
            plan,
            scope: input.scope,
        })
    }

    /// The select items as named expressions: `*` and `t.*` expanded, a column named by its
    /// SQL name, an expression by its alias or `EXPR$i`; a name taken gets the first free
    /// suffix `0`, `1`, ... (Calcite's rule). The `ROW_NUMBER()` item of a deduplication or
    /// Top-N (`rownum`: its alias) is the given expression (the constant 1 of a deduplication,
    /// the Top-N's row number).
    pub(super) fn select_list(
        &self,
        scope: &Scope,
        projection: &[SelectItem],
        rownum: Option<(&str, Expr)>,
    ) -> Result<Vec<Expr>, SqlError> {
        let tr = self.translator(scope);
        let mut named: Vec<(Expr, String)> = Vec::new();
        for item in projection {
            match item {
                SelectItem::Wildcard(_) => named.extend(
                    scope
                        .star(None)
                        .into_iter()
                        .map(|(plan, sql)| (col(plan), sql)),
                ),
                SelectItem::QualifiedWildcard(
                    SelectItemQualifiedWildcardKind::ObjectName(q),
                    _,
                ) => {
                    let q = object_name(q);
                    if !scope.has_qualifier(&q) {
                        return Err(SqlError::at(
                            item.span(),
                            format!("Table '{q}' not found in FROM"),
                        ));
                    }
                    named.extend(
                        scope
                            .star(Some(&q))
                            .into_iter()
                            .map(|(plan, sql)| (col(plan), sql)),
                    );
                }
                SelectItem::ExprWithAlias { alias, .. }
                    if rownum.as_ref().is_some_and(|(r, _)| *r == alias.value) =>
                {
                    let rank = rownum.as_ref().map(|(_, e)| e.clone());
                    named.push((rank.unwrap_or_else(|| lit(1i64)), alias.value.clone()));
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    named.push((tr.expr(expr)?, alias.value.clone()))
                }
                SelectItem::UnnamedExpr(expr) => {
                    let name = match expr {
                        ast::Expr::Identifier(i) => i.value.clone(),
                        ast::Expr::CompoundIdentifier(parts) => {
                            parts.last().map(|p| p.value.clone()).unwrap_or_default()
                        }
                        _ => format!("EXPR${}", named.len()),
                    };
                    named.push((tr.expr(expr)?, name));
                }
                other => {
                    return Err(SqlError::at(
                        other.span(),
                        format!("unsupported select item {other}"),
                    ))
                }
            }
        }
        let mut taken: Vec<String> = Vec::new();
        Ok(named
            .into_iter()
            .map(|(expr, name)| {
                let unique = if taken.contains(&name) {
                    (0..)
                        .map(|i| format!("{name}{i}"))
                        .find(|n| !taken.contains(n))
                        .unwrap_or(name)
                } else {
                    name
                };
                taken.push(unique.clone());
                expr.alias(unique)
            })
            .collect())
    }

    /// `FROM a [JOIN ..], b, LATERAL TABLE (..), ..`: the first relation with its joins, then
    /// each further comma item, a `LATERAL TABLE` call of a temporal table function or a table
    /// joined INNER (either's condition taken from `conjuncts`, the WHERE clause).
    pub(super) fn from(
        &self,
        from: &[ast::TableWithJoins],
        conjuncts: &mut Vec<ast::Expr>,
    ) -> Result<Bound, SqlError> {
        let Some((first, rest)) = from.split_first() else {
            return Err(SqlError::at(
                Span::empty(),
                "a SELECT without FROM is not supported",
            ));
        };
        let mut bound = self.factor(&first.relation)?;
        for join in &first.joins {
            bound = self.join(bound, join, conjuncts)?;
        }
        for item in rest {
            bound = match &item.relation {
                factor @ TableFactor::Function { lateral: true, .. } => {
                    self.lateral(bound, factor, JoinKind::Inner, None, conjuncts)?
                }
                factor if is_unnest(factor) => self.unnest(bound, factor, JoinKind::Inner, None)?,
                factor => self.comma_join(bound, factor, conjuncts)?,
            };
            for join in &item.joins {
                bound = self.join(bound, join, conjuncts)?;
            }
        }
        Ok(bound)
    }

    /// A table, view or derived table.
    pub(super) fn factor(&self, factor: &TableFactor) -> Result<Bound, SqlError> {
        match factor {
            TableFactor::Table { name, alias, version: None, args: None, .. } => {
                let plan = self.table(name)?;
                let qualifier = alias.as_ref().map_or_else(|| object_name(name), |a| a.name.value.clone());
                let scope = Scope::of(&plan, Some(&qualifier));
                Ok(Bound { plan, scope })
            }
            TableFactor::Derived { lateral: false, subquery, alias, .. } => {
                let plan = self.query(subquery)?;
                let scope = Scope::of(&plan, alias.as_ref().map(|a| a.name.value.as_str()));
                Ok(Bound { plan, scope })
            }
            TableFactor::Table { version: Some(_), .. } => Err(crate::sql::unsupported::not_supported(
                factor.span(),
                "time travel (FOR SYSTEM_TIME AS OF a point in time, not a join's time)",
            )),
            other => window::rows(self, other)?.ok_or_else(|| SqlError::at(
                other.span(),
                format!("{other} is not supported here: FROM takes tables, views, subqueries and window table-valued functions; FOR SYSTEM_TIME AS OF and LATERAL TABLE need a table on their left"),
            )),
        }
    }

    /// The plan of the registered table or view `name` (a quoted identifier by what it holds,
    /// as CREATE registers it: `` FROM `a b` `` reads the table `a b`).
    pub(super) fn table(&self, name: &ast::ObjectName) -> Result<RelExpr, SqlError> {
        (self.catalog.table(&object_name(name)))
            .map_err(|e| SqlError::at(name.span(), e.to_string()))
    }

    fn join(
        &self,
        left: Bound,
        join: &ast::Join,
        conjuncts: &mut Vec<ast::Expr>,
    ) -> Result<Bound, SqlError> {
        let (join_type, constraint) = match &join.join_operator {
            JoinOperator::Join(c) | JoinOperator::Inner(c) => (JoinType::Inner, Some(c)),
            JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (JoinType::Left, Some(c)),
            JoinOperator::Right(c) | JoinOperator::RightOuter(c) => (JoinType::Right, Some(c)),
            JoinOperator::FullOuter(c) => (JoinType::Full, Some(c)),
            JoinOperator::CrossJoin(_) => (JoinType::Inner, None),
            JoinOperator::AsOf {
                match_condition,
                constraint,
            } => {
                let on = match constraint {
                    JoinConstraint::On(on) => Some(on),
                    _ => None,
                };
                return self.asof_join(left, &join.relation, match_condition, on);
            }
            _ => {
                return Err(SqlError::at(
                    join.relation.span(),
                    "only INNER, LEFT, RIGHT, FULL and CROSS joins are supported",
                ))
            }
        };
        // Temporal joins and LATERAL TABLE are INNER or LEFT (Flink's rule).
        let kind = match join_type {
            JoinType::Inner => Ok(JoinKind::Inner),
            JoinType::Left => Ok(JoinKind::Left),
            other => Err(SqlError::at(
                join.relation.span(),
                format!(
                    "a {} JOIN cannot be a temporal join or join LATERAL TABLE: those are INNER or LEFT only",
                    other.sql()
                ),
            )),
        };
        let on = match constraint {
            Some(JoinConstraint::On(on)) => Some(on),
            Some(JoinConstraint::None) | None => None,
            Some(_) => {
                return Err(SqlError::at(
                    join.relation.span(),
                    "a join takes an ON condition (USING and NATURAL are not supported)",
                ))
            }
        };
        match &join.relation {
            TableFactor::Table {
                name,
                alias,
                version: Some(TableVersion::ForSystemTimeAsOf(time)),
                ..
            } => {
                let Some(on) = on else {
                    return Err(SqlError::at(
                        join.relation.span(),
                        "a temporal join needs an ON condition with the build side's primary key",
                    ));
                };
                let plan = self.table(name)?;
                let qualifier = alias
                    .as_ref()
                    .map_or_else(|| object_name(name), |a| a.name.value.clone());
                let build = Bound {
                    scope: Scope::of(&plan, Some(&qualifier)),
                    plan,
                };
                self.temporal_join(left, build, time, on, kind?)
            }
            TableFactor::Function { lateral: true, .. } => {
                self.lateral(left, &join.relation, kind?, on, conjuncts)
            }
            factor if is_unnest(factor) => self.unnest(left, factor, kind?, on),
            other => self.regular_join(left, other, join_type, on),
        }
    }
}

/// The conjuncts of `e` (`a AND b AND c`), in order.
pub(super) fn split_and(e: &ast::Expr, out: &mut Vec<ast::Expr>) {
    match e {
        ast::Expr::BinaryOp {
            left,
            op: ast::BinaryOperator::And,
            right,
        } => {
            split_and(left, out);
            split_and(right, out);
        }
        ast::Expr::Nested(inner)
            if matches!(
                inner.as_ref(),
                ast::Expr::BinaryOp {
                    op: ast::BinaryOperator::And,
                    ..
                }
            ) =>
        {
            split_and(inner, out)
        }
        other => out.push(other.clone()),
    }
}
