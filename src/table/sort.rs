//! Ordering in the Table API: `order_by`, `offset`, `fetch` (Flink's `orderBy`, `offset`,
//! `fetch`), lowered onto the plan's [`Sort`](crate::plan::Node::Sort) node with its streaming
//! rules (case E05): a sort with a `fetch` is a Top-N, maintained exactly; without one only an
//! ascending rowtime as the first key is accepted. `offset` and `fetch` extend the sort before
//! them, so `order_by(..).offset(3).fetch(5)` is one Top-N.

use crate::expr::SortExpr;
use crate::plan::lower::column_indices;
use crate::plan::{RelExpr, SortKey};

use super::{Table, TableError};

/// A sort under construction: its input and what `order_by`, `offset` and `fetch` gave so far.
#[derive(Clone)]
pub(super) struct Sorting {
    input: RelExpr,
    order: Vec<SortKey>,
    offset: usize,
    fetch: Option<usize>,
}

impl Table {
    /// `ORDER BY keys`: each key a column with a direction, `col("a").asc()`,
    /// `col("b").desc().nulls_last()`. On its own only an ascending rowtime as the first key is
    /// accepted (Flink's rule on unbounded tables); follow it with [`fetch`](Table::fetch) for a
    /// Top-N. Errors (deferred): an unknown column, a key that is not a column, a sort that needs
    /// a fetch.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, _dir) = doc_env();
    /// let top = env.from("Orders").order_by([col("b").desc()]).fetch(2);
    /// assert_eq!(top.execute().unwrap().rows_as_text(), vec!["x,2", "y,3"]);
    /// let refused = env.from("Orders").order_by([col("b").asc()]).execute().unwrap_err();
    /// assert!(refused.to_string().contains("needs FETCH / LIMIT (a Top-N)"));
    /// ```
    pub fn order_by(&self, keys: impl IntoIterator<Item = SortExpr>) -> Table {
        let keys: Vec<SortExpr> = keys.into_iter().collect();
        let input = match &self.plan {
            Ok(plan) => plan.clone(),
            Err(e) => return Table::new(&self.env, Err(e.clone())),
        };
        let exprs: Vec<_> = keys.iter().map(|k| k.expr.clone()).collect();
        match column_indices(&input.schema, &exprs, "order_by") {
            Err(e) => Table::new(&self.env, Err(TableError::plan("order_by")(e))),
            Ok(columns) => {
                let order = columns
                    .iter()
                    .zip(&keys)
                    .map(|(&c, k)| SortKey::new(c, k.descending, k.nulls_first))
                    .collect();
                self.sorted(
                    "order_by",
                    Sorting {
                        input,
                        order,
                        offset: 0,
                        fetch: None,
                    },
                )
            }
        }
    }

    /// `OFFSET n`: skips the first `n` rows of the sort before it; on an unbounded table it
    /// needs a [`fetch`](Table::fetch) after it (Flink's rule). Errors: not after `order_by`.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, _dir) = doc_env();
    /// let rest = env.from("Orders").order_by([col("b").asc()]).offset(1);
    /// assert!(rest.execute().unwrap_err().to_string().contains("OFFSET without FETCH"));
    /// assert_eq!(rest.fetch(5).execute().unwrap().rows_as_text(), vec!["x,2", "y,3"]);
    /// ```
    pub fn offset(&self, n: usize) -> Table {
        self.extend_sort("offset", |s| s.offset = n)
    }

    /// `FETCH NEXT n ROWS ONLY` (SQL's `LIMIT n`): keeps the first `n` rows of the sort before
    /// it, which makes it a Top-N (updating: a row entering the top retracts the one it pushes
    /// out; ties on every key are ordered by value). Errors: not after `order_by`.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// let (env, _dir) = doc_env();
    /// let second = env.from("Orders").order_by([col("b").asc()]).offset(1).fetch(1);
    /// assert_eq!(second.execute().unwrap().rows_as_text(), vec!["x,2"]);
    /// ```
    pub fn fetch(&self, n: usize) -> Table {
        self.extend_sort("fetch", |s| s.fetch = Some(n))
    }

    fn extend_sort(&self, operation: &'static str, f: impl FnOnce(&mut Sorting)) -> Table {
        match &self.sorting {
            Some(sorting) => {
                let mut sorting = sorting.clone();
                f(&mut sorting);
                self.sorted(operation, sorting)
            }
            None => Table::new(
                &self.env,
                Err(TableError::Invalid(format!(
                    "{operation} follows order_by: it limits a sorted table (Flink's orderBy(..).offset(..).fetch(..))"
                ))),
            ),
        }
    }

    /// The table of `sorting`, which remembers it for a following `offset` or `fetch`.
    fn sorted(&self, operation: &'static str, sorting: Sorting) -> Table {
        let plan = sorting
            .input
            .clone()
            .sort(sorting.order.clone(), sorting.offset, sorting.fetch)
            .map_err(TableError::plan(operation));
        let mut table = Table::new(&self.env, plan);
        table.sorting = Some(sorting);
        table
    }
}
