//! The Top-N node ([`Node::TopN`]): Flink's Top-N pattern (`docs/dev/table/sql/queries/topn.md`)
//!
//! ```sql
//! SELECT * FROM (
//!   SELECT *, ROW_NUMBER() OVER (PARTITION BY keys ORDER BY cols [ASC|DESC]) AS rn FROM t)
//! WHERE rn <= N
//! ```
//!
//! Per partition (the whole table without `PARTITION BY`), the first `limit` rows in the order
//! of the sort keys, maintained exactly at every system time: a row entering a partition's top
//! retracts the row it pushes out. Rows that tie on every sort key are ordered by their value
//! (Flink leaves them to arrival), so the result does not depend on arrival or on the worker
//! count. With `rank`, the row number (`rn`, BIGINT from 1) is the last column, and a row
//! entering above others re-emits them with their new numbers (Flink's output with the rank
//! number); without it only the rows entering and leaving the top change (Flink's "no ranking
//! number" optimisation). The input may be updating: a retracted row leaves the top and the
//! next one enters.

use crate::repr::{DataType, Field, Schema};

use super::{Mode, Node, PlanError, RelExpr, SortKey};

/// The parts of a Top-N; see the [module documentation](self).
#[derive(Clone, Debug, PartialEq)]
pub struct TopN {
    /// The input.
    pub input: Box<RelExpr>,
    /// The `PARTITION BY` columns (none: one partition).
    pub partition: Vec<usize>,
    /// The `ORDER BY` keys.
    pub order: Vec<SortKey>,
    /// `N`: the rows kept per partition.
    pub limit: usize,
    /// Whether the row number is appended.
    pub rank: bool,
}

impl RelExpr {
    /// The first `limit` rows of each partition `partition` by `order`, with the row number
    /// appended as `rank_name` when given (see the [module docs](self)). Updating; keyed by the
    /// partition and the row number when it is output.
    ///
    /// Errors: no sort key (which rows are kept would depend on arrival), a limit of 0, a
    /// column out of range, a rank name the input has.
    ///
    /// ```
    /// use differential_temporal::plan::{RelExpr, SortKey};
    /// use differential_temporal::repr::{DataType, Schema};
    ///
    /// let schema = Schema::builder()
    ///     .column("category", DataType::STRING.nullable())
    ///     .column("sales", DataType::BigInt.nullable())
    ///     .build()
    ///     .unwrap();
    /// // The 3 best-selling rows per category, with their rank.
    /// let top3 = RelExpr::scan("Products", schema, false)
    ///     .top_n(vec![0], vec![SortKey::new(1, true, None)], 3, Some("rn"))
    ///     .unwrap();
    /// assert_eq!(top3.schema.names().collect::<Vec<_>>(), vec!["category", "sales", "rn"]);
    /// ```
    pub fn top_n(
        self,
        partition: Vec<usize>,
        order: Vec<SortKey>,
        limit: usize,
        rank_name: Option<&str>,
    ) -> Result<RelExpr, PlanError> {
        const NODE: &str = "TopN";
        let width = self.schema.len();
        if let Some(c) = (partition.iter().copied())
            .chain(order.iter().map(|k| k.column))
            .find(|&c| c >= width)
        {
            return Err(PlanError::invalid(NODE, format!("column {c} out of range")));
        }
        if order.is_empty() {
            return Err(PlanError::invalid(
                NODE,
                "Top-N needs ORDER BY: which rows are kept would depend on their arrival",
            ));
        }
        if limit == 0 {
            return Err(PlanError::invalid(
                NODE,
                "Top-N keeps at least one row: the row number starts at 1",
            ));
        }
        let mut fields = self.schema.fields.clone();
        if let Some(name) = rank_name {
            fields.push(Field::new(name, DataType::BigInt.not_null()));
        }
        let mut schema = Schema::new(fields)?;
        (schema.rowtime, schema.proctime, schema.primary_key) = (None, None, None);
        let upsert_key = rank_name.map(|_| partition.iter().copied().chain([width]).collect());
        Ok(RelExpr {
            node: Node::TopN(TopN {
                input: Box::new(self),
                partition,
                order,
                limit,
                rank: rank_name.is_some(),
            }),
            schema,
            mode: Mode::Updating { upsert_key },
        })
    }
}
