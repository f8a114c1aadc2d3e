//! Projections and aggregations: `select`, `add_columns`, `drop_columns`, `rename_columns`,
//! `as_`, and `group_by(..).select(..)`, lowered onto `Map`, `Project` and `Reduce`.

use crate::expr::{col, Expr};
use crate::plan::lower::{aggregate, column_indices, contains_aggregate, project};
use crate::plan::PlanError;

use super::Table;

/// A table grouped by keys, waiting for the `select` that names its aggregates (Flink's
/// `GroupedTable`).
#[derive(Clone)]
pub struct GroupedTable {
    table: Table,
    keys: Vec<Expr>,
}

impl GroupedTable {
    /// `SELECT items ... GROUP BY keys`: each item is a grouping column, an aggregate
    /// (`col("b").count()`, `col("b").sum().distinct()`...), or an expression over those. One
    /// output row per group, updated as the group changes.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, _dir) = doc_env();
    /// let counts = env
    ///     .from("Orders")
    ///     .group_by([col("a")])
    ///     .select([col("a"), col("b").count().alias("cnt")]);
    /// assert_eq!(counts.execute().unwrap().rows_as_text(), vec!["x,2", "y,1"]);
    /// ```
    pub fn select(&self, items: impl IntoIterator<Item = Expr>) -> Table {
        let items: Vec<Expr> = items.into_iter().collect();
        let keys = self.keys.clone();
        let registry = self.table.env.functions();
        self.table.then("group_by(..).select", move |plan| {
            aggregate(plan, &keys, &items, &registry)
        })
    }
}

impl Table {
    /// `SELECT items`: each item an expression over the columns, named by its alias, its
    /// column, or `EXPR$i` (its position). An item with an aggregate makes this a global
    /// aggregation (one row over the whole table).
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::{col, lit};
    /// let (env, _dir) = doc_env();
    /// let doubled = env.from("Orders").select([col("a").upper(), col("b").mul(lit(2i64)).alias("b2")]);
    /// let result = doubled.execute().unwrap();
    /// assert_eq!(result.schema().names().collect::<Vec<_>>(), vec!["EXPR$0", "b2"]);
    /// assert_eq!(result.rows_as_text(), vec!["X,2", "X,4", "Y,6"]);
    /// ```
    pub fn select(&self, items: impl IntoIterator<Item = Expr>) -> Table {
        let items: Vec<Expr> = items.into_iter().collect();
        let registry = self.env.functions();
        self.then("select", move |plan| {
            if items.iter().any(contains_aggregate) {
                aggregate(plan, &[], &items, &registry)
            } else {
                project(plan, &items, &registry)
            }
        })
    }

    /// Groups by `keys`: columns, or expressions (computed before grouping, named by their
    /// alias or `$key<i>`; the items of [`GroupedTable::select`] may repeat them). The
    /// aggregates come with [`GroupedTable::select`].
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, _dir) = doc_env();
    /// let counts = env
    ///     .from("Orders")
    ///     .group_by([col("a").upper()])
    ///     .select([col("a").upper().alias("ua"), col("b").sum().alias("total")]);
    /// assert_eq!(counts.execute().unwrap().rows_as_text(), vec!["X,3", "Y,3"]);
    /// ```
    pub fn group_by(&self, keys: impl IntoIterator<Item = Expr>) -> GroupedTable {
        GroupedTable {
            table: self.clone(),
            keys: keys.into_iter().collect(),
        }
    }

    /// Appends computed columns (Flink's `addColumns`); a name already taken is an error.
    pub fn add_columns(&self, items: impl IntoIterator<Item = Expr>) -> Table {
        let items: Vec<Expr> = items.into_iter().collect();
        let registry = self.env.functions();
        self.then("add_columns", move |plan| {
            let mut all: Vec<Expr> = plan.schema.names().map(col).collect();
            all.extend(items);
            project(plan, &all, &registry)
        })
    }

    /// Removes the named columns (Flink's `dropColumns`); an unknown name is an error.
    pub fn drop_columns(&self, names: impl IntoIterator<Item = Expr>) -> Table {
        let names: Vec<Expr> = names.into_iter().collect();
        self.then("drop_columns", move |plan| {
            let dropped = column_indices(&plan.schema, &names, "drop_columns")?;
            let kept: Vec<usize> = (0..plan.schema.len())
                .filter(|c| !dropped.contains(c))
                .collect();
            plan.project(kept, None)
        })
    }

    /// Renames columns: each item is `col("old").alias("new")` (Flink's `renameColumns`).
    pub fn rename_columns(&self, renames: impl IntoIterator<Item = Expr>) -> Table {
        let renames: Vec<Expr> = renames.into_iter().collect();
        self.then("rename_columns", move |plan| {
            let mut names: Vec<String> = plan.schema.names().map(str::to_string).collect();
            for rename in &renames {
                let (Expr::Alias(inner, new), Some(old)) = (rename, rename.unaliased().name())
                else {
                    return Err(PlanError::invalid(
                        "Project",
                        format!("'{rename}' is not a rename: write col(\"old\").alias(\"new\")"),
                    ));
                };
                if !matches!(inner.unaliased(), Expr::Column(_)) {
                    return Err(PlanError::invalid(
                        "Project",
                        format!("'{rename}' renames an expression, not a column"),
                    ));
                }
                names[plan.schema.resolve(&old)?] = new.clone();
            }
            let all = (0..plan.schema.len()).collect();
            plan.project(all, Some(names))
        })
    }

    /// Renames every column, in order (Flink's `as("x", "y")`).
    pub fn as_<S: Into<String>>(&self, names: impl IntoIterator<Item = S>) -> Table {
        let names: Vec<String> = names.into_iter().map(Into::into).collect();
        self.then("as", move |plan| {
            if names.len() != plan.schema.len() {
                return Err(PlanError::invalid(
                    "Project",
                    format!(
                        "as() needs one name per column: {} given for {} columns",
                        names.len(),
                        plan.schema.len()
                    ),
                ));
            }
            let all = (0..plan.schema.len()).collect();
            plan.project(all, Some(names))
        })
    }

    /// The same as [`as_`](Table::as_) (Polars' spelling).
    pub fn alias<S: Into<String>>(&self, names: impl IntoIterator<Item = S>) -> Table {
        self.as_(names)
    }
}
