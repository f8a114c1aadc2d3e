//! Name resolution: which column of a plan's output an SQL identifier (`c`, `t.c`) means.
//!
//! A scope lists, for each column of the plan being bound, the table (or alias) it came from
//! and its SQL name. The plan's own column names are unique (a join renames a build column
//! whose name is taken, `currency0`), so a resolved identifier becomes a plain
//! [`Expr::Column`](crate::expr::Expr::Column) of the plan's name.

use sqlparser::ast::{Ident, ObjectName};
use sqlparser::tokenizer::Span;

use crate::plan::RelExpr;
use crate::repr::Schema;
use crate::sql::error::SqlError;

/// The name an object name means, its parts unquoted and joined by `.` (`` `customers` `` is
/// `customers`): identifiers are compared after unquoting, case-sensitively, as Flink compares
/// them.
pub(super) fn object_name(name: &ObjectName) -> String {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|part| match part.as_ident() {
            Some(ident) => ident.value.clone(),
            None => part.to_string(),
        })
        .collect();
    parts.join(".")
}

/// The columns visible to an expression.
#[derive(Clone, Debug, Default)]
pub(super) struct Scope {
    columns: Vec<ScopeColumn>,
}

#[derive(Clone, Debug)]
struct ScopeColumn {
    /// The table name or alias it can be qualified with.
    qualifier: Option<String>,
    /// Its SQL name.
    name: String,
    /// Its name in the plan's output.
    plan_name: String,
    /// Left out of `*` (a column the binder computed for an expression, as an OVER call's).
    hidden: bool,
}

impl Scope {
    /// The columns of `plan`, qualified by `qualifier`.
    pub(super) fn of(plan: &RelExpr, qualifier: Option<&str>) -> Scope {
        Scope::of_schema(&plan.schema, qualifier)
    }

    /// The columns of `schema`, qualified by `qualifier`.
    pub(super) fn of_schema(schema: &Schema, qualifier: Option<&str>) -> Scope {
        Scope {
            columns: schema
                .names()
                .map(|n| ScopeColumn {
                    qualifier: qualifier.map(str::to_string),
                    name: n.to_string(),
                    plan_name: n.to_string(),
                    hidden: false,
                })
                .collect(),
        }
    }

    /// This scope followed by `right`'s columns, which the schema `joined` names by position
    /// (`joined` has this scope's columns, then `right`'s).
    pub(super) fn join(&self, right: &Scope, joined: &Schema) -> Scope {
        let columns = self
            .columns
            .iter()
            .chain(&right.columns)
            .zip(joined.names())
            .map(|(c, plan_name)| ScopeColumn {
                plan_name: plan_name.to_string(),
                ..c.clone()
            })
            .collect();
        Scope { columns }
    }

    /// This scope followed by unqualified columns named `names` (in SQL and in the plan), left
    /// out of `*`.
    pub(super) fn with_columns(&self, names: &[String]) -> Scope {
        let mut columns = self.columns.clone();
        columns.extend(names.iter().map(|n| ScopeColumn {
            qualifier: None,
            name: n.clone(),
            plan_name: n.clone(),
            hidden: true,
        }));
        Scope { columns }
    }

    /// The plan's column names (for `*`), with their SQL names, optionally of one qualifier.
    pub(super) fn star(&self, qualifier: Option<&str>) -> Vec<(String, String)> {
        self.columns
            .iter()
            .filter(|c| !c.hidden)
            .filter(|c| qualifier.is_none() || c.qualifier.as_deref() == qualifier)
            .map(|c| (c.plan_name.clone(), c.name.clone()))
            .collect()
    }

    /// Whether `qualifier` names a table of this scope.
    pub(super) fn has_qualifier(&self, qualifier: &str) -> bool {
        self.columns
            .iter()
            .any(|c| c.qualifier.as_deref() == Some(qualifier))
    }

    /// The plan column that `parts` (`c` or `t.c`) names, with its SQL name.
    ///
    /// Errors (at the identifier): no such column (listing the visible ones), or an
    /// unqualified name that two tables have ("Column 'c' is ambiguous", as Calcite says).
    pub(super) fn resolve(&self, parts: &[Ident]) -> Result<(String, String), SqlError> {
        let span = parts
            .iter()
            .map(|p| p.span)
            .reduce(|a, b| a.union(&b))
            .unwrap_or(Span::empty());
        let (qualifier, name) = match parts {
            [name] => (None, name),
            [qualifier, name] => (Some(qualifier.value.as_str()), name),
            _ => {
                return Err(SqlError::at(
                    span,
                    format!(
                        "'{}' is not a column: write column or table.column",
                        parts
                            .iter()
                            .map(|p| p.value.as_str())
                            .collect::<Vec<_>>()
                            .join(".")
                    ),
                ))
            }
        };
        let found: Vec<&ScopeColumn> = self
            .columns
            .iter()
            .filter(|c| c.name == name.value)
            .filter(|c| qualifier.is_none() || c.qualifier.as_deref() == qualifier)
            .collect();
        match found.as_slice() {
            [one] => Ok((one.plan_name.clone(), one.name.clone())),
            [] => {
                if let Some(q) = qualifier.filter(|q| !self.has_qualifier(q)) {
                    return Err(SqlError::at(
                        parts[0].span,
                        format!(
                            "Table '{q}' not found; the tables in scope are: {}",
                            self.qualifiers()
                        ),
                    ));
                }
                Err(SqlError::at(
                    span,
                    format!(
                        "Column '{}' not found in {}; the columns are: {}",
                        name.value,
                        qualifier.map_or("any table".to_string(), |q| format!("table '{q}'")),
                        self.visible()
                    ),
                ))
            }
            _ => Err(SqlError::at(
                span,
                format!(
                    "Column '{}' is ambiguous: it is a column of {}; qualify it",
                    name.value,
                    found
                        .iter()
                        .map(|c| c.qualifier.clone().unwrap_or_else(|| "?".into()))
                        .collect::<Vec<_>>()
                        .join(" and ")
                ),
            )),
        }
    }

    fn visible(&self) -> String {
        self.columns
            .iter()
            .map(|c| match &c.qualifier {
                Some(q) => format!("{q}.{}", c.name),
                None => c.name.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn qualifiers(&self) -> String {
        let mut names: Vec<&str> = self
            .columns
            .iter()
            .filter_map(|c| c.qualifier.as_deref())
            .collect();
        names.dedup();
        names.join(", ")
    }
}
