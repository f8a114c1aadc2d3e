//! The OVER aggregation node ([`Node::Over`]): `agg(..) OVER (PARTITION BY keys ORDER BY
//! rowtime ROWS|RANGE BETWEEN .. PRECEDING AND CURRENT ROW)` (rule E3 of `semantics.md`).
//!
//! One output row per input row: the input's columns, then one column per aggregate, computed
//! over the row's **frame** among the rows of its partition ordered by `(rowtime, seq)`:
//! * `ROWS BETWEEN n PRECEDING AND CURRENT ROW`: the row and the `n` rows before it
//!   ([`OverFrame::Rows`]`(Some(n))`); `UNBOUNDED PRECEDING`: every row up to it.
//! * `RANGE BETWEEN INTERVAL 'p' PRECEDING AND CURRENT ROW`: the rows whose rowtime is in
//!   `[t - p, t]`, the rows with the same rowtime as the row (its *peers*) included, whatever
//!   their arrival ([`OverFrame::Range`]`(Some(p))`); `UNBOUNDED PRECEDING`: every row up to
//!   `t`, peers included (Flink's default frame).
//!
//! **Processing time**: ordered by the proctime attribute instead, the time of a row is its
//! stamp (the processing time of the system time it entered at, see
//! [`ProcessingClock`](crate::plan::ProcessingClock)): rows are ordered by their stamp and,
//! within one system time (equal stamps), by arrival (`seq`); ROWS counts rows in that order,
//! RANGE reads the stamps (the rows of one system time are peers and share a result, as
//! event-time peers do). The watermark's delay is 0 and the stamps grow with system time, so no
//! row is ever late. This is the event-time rule with the stamp for the rowtime; Flink instead
//! orders by the wall clock at which each row reaches the operator, so its results depend on
//! the machine's speed. An updating input is refused (its rows are not stamped).
//!
//! Flink's rules: ORDER BY exactly one ascending time attribute (the rowtime or the proctime),
//! an append-only input, every aggregate of one select over the same window, no FOLLOWING but
//! CURRENT ROW. The aggregates must not depend
//! on the order rows are added and retracted in (COUNT, SUM, AVG, MIN, MAX over integers and
//! DECIMAL, with DISTINCT and FILTER): a frame slides, and a DOUBLE sum's rounding would depend
//! on how the rows were batched.
//!
//! Two modes, as every node has them ([`ExecutionMode`](crate::render::ExecutionMode)):
//! * *incremental*: each row's aggregate is exact at every system time; a row that arrives out
//!   of event-time order retracts and re-emits the rows whose frames it enters. Every row is
//!   kept.
//! * *final* (Flink's): a row's aggregate is emitted once, when the watermark passes its
//!   rowtime; a row behind the watermark when it arrives is refused as late, with its `seq`
//!   (Flink drops it silently). The output is append-only; a row is freed once no later frame
//!   can hold it (a partition keeps its last frame, or one accumulator for an unbounded frame).
//!
//! The output keeps the input's rowtime and proctime attributes; it has no key (rows may
//! repeat).
//!
//! ```
//! use differential_temporal::expr::{bind_aggregate, col, FunctionRegistry};
//! use differential_temporal::plan::{OverFrame, RelExpr};
//! use differential_temporal::repr::{DataType, Schema};
//!
//! let schema = Schema::builder()
//!     .column("product", DataType::STRING.nullable())
//!     .column("amount", DataType::BigInt.nullable())
//!     .column("rowtime", DataType::Timestamp(3).nullable())
//!     .rowtime("rowtime", 0)
//!     .build()
//!     .unwrap();
//! let orders = RelExpr::scan("Orders", schema, false);
//! let sum = bind_aggregate(&col("amount").sum(), &orders.schema, &FunctionRegistry::new()).unwrap();
//! // SUM(amount) OVER (PARTITION BY product ORDER BY rowtime
//! //   RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW)
//! let plan = orders
//!     .over(vec![0], 2, OverFrame::Range(Some(3_600_000)), vec![(sum, "total".into())])
//!     .unwrap();
//! assert_eq!(plan.schema.names().collect::<Vec<_>>(), vec!["product", "amount", "rowtime", "total"]);
//! ```

use crate::expr::AggregateExpr;
use crate::repr::{Field, Schema};

use super::{Mode, Node, PlanError, RelExpr};

/// The frame of an OVER window: how far it reaches before the current row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OverFrame {
    /// `ROWS BETWEEN n PRECEDING AND CURRENT ROW` (`None`: `UNBOUNDED PRECEDING`).
    Rows(Option<u64>),
    /// `RANGE BETWEEN p PRECEDING AND CURRENT ROW`, `p` in milliseconds (`None`: `UNBOUNDED
    /// PRECEDING`).
    Range(Option<i64>),
}

/// As `explain` prints it: `ROWS 2 PRECEDING`, `RANGE 3600000ms PRECEDING`.
impl std::fmt::Display for OverFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OverFrame::Rows(Some(n)) => write!(f, "ROWS {n} PRECEDING"),
            OverFrame::Rows(None) => f.write_str("ROWS UNBOUNDED PRECEDING"),
            OverFrame::Range(Some(p)) => write!(f, "RANGE {p}ms PRECEDING"),
            OverFrame::Range(None) => f.write_str("RANGE UNBOUNDED PRECEDING"),
        }
    }
}

/// The parts of an OVER aggregation; see the [module documentation](self).
#[derive(Clone, Debug, PartialEq)]
pub struct Over {
    /// The input (append-only, with a rowtime or proctime attribute).
    pub input: Box<RelExpr>,
    /// The `PARTITION BY` columns (none: one partition).
    pub partition: Vec<usize>,
    /// The rowtime (or stamped proctime) column the rows are ordered by.
    pub time: usize,
    /// The frame.
    pub frame: OverFrame,
    /// The aggregates, over the input's columns.
    pub aggregates: Vec<AggregateExpr>,
}

impl RelExpr {
    /// Appends to each row `aggregates` (aggregate, output name) over its frame `frame` among
    /// the rows of its partition `partition` ordered by the rowtime (or proctime) column `time`
    /// (see the [module docs](self)).
    ///
    /// Errors, each naming the column or aggregate: `time` is neither the rowtime nor the
    /// proctime attribute (Flink: "OVER windows' ordering in stream mode must be defined on a
    /// time attribute"), the input
    /// is updating, a negative RANGE, an aggregate that depends on update order, a partition
    /// column out of range, a duplicate output name.
    pub fn over(
        self,
        partition: Vec<usize>,
        time: usize,
        frame: OverFrame,
        aggregates: Vec<(AggregateExpr, String)>,
    ) -> Result<RelExpr, PlanError> {
        const NODE: &str = "OverAggregate";
        let field =
            self.schema.fields.get(time).ok_or_else(|| {
                PlanError::invalid(NODE, format!("time column {time} out of range"))
            })?;
        let rowtime = self.schema.rowtime.as_ref().map(|r| r.column);
        if rowtime != Some(time) && self.schema.proctime != Some(time) {
            return Err(PlanError::invalid(
                NODE,
                format!(
                    "OVER windows' ordering in stream mode must be defined on a time attribute, but '{}' ({}) is not one (declare a WATERMARK for it, or AS PROCTIME())",
                    field.name, field.ty
                ),
            ));
        }
        self.require_append_only(NODE)?;
        if let OverFrame::Range(Some(p)) = frame {
            if p < 0 {
                return Err(PlanError::invalid(
                    NODE,
                    format!("the RANGE of an OVER window must not be negative, but is {p} ms"),
                ));
            }
        }
        let mut fields: Vec<Field> = self.schema.fields.clone();
        for &c in &partition {
            if c >= fields.len() {
                return Err(PlanError::invalid(
                    NODE,
                    format!("partition column {c} out of range"),
                ));
            }
        }
        for (agg, name) in &aggregates {
            if !agg.func.is_order_independent() {
                return Err(PlanError::invalid(
                    NODE,
                    format!(
                        "the aggregate '{name}' depends on the order rows enter and leave its frame; OVER windows support COUNT, SUM, AVG, MIN and MAX over integer and DECIMAL values (not FLOAT / DOUBLE sums, FIRST_VALUE, LAST_VALUE, LISTAGG, user aggregates)"
                    ),
                ));
            }
            fields.push(Field::new(name.clone(), agg.ty.clone()));
        }
        let mut schema = Schema::new(fields)?;
        (schema.rowtime, schema.proctime) = (self.schema.rowtime.clone(), self.schema.proctime);
        Ok(RelExpr {
            node: Node::Over(Over {
                input: Box::new(self),
                partition,
                time,
                frame,
                aggregates: aggregates.into_iter().map(|(a, _)| a).collect(),
            }),
            schema,
            mode: Mode::Updating { upsert_key: None },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::OverFrame;
    use crate::expr::{bind_aggregate, col, FunctionRegistry};
    use crate::plan::RelExpr;
    use crate::repr::{DataType, Schema};

    fn orders(changelog: bool) -> RelExpr {
        let schema = Schema::builder()
            .column("a", DataType::STRING.nullable())
            .column("b", DataType::BigInt.nullable())
            .column("x", DataType::Double.nullable())
            .column("rowtime", DataType::Timestamp(3).nullable())
            .rowtime("rowtime", 0)
            .build()
            .unwrap();
        RelExpr::scan("Orders", schema, changelog)
    }

    fn agg(plan: &RelExpr, e: crate::expr::Expr) -> Vec<(crate::expr::AggregateExpr, String)> {
        let agg = bind_aggregate(&e, &plan.schema, &FunctionRegistry::new()).unwrap();
        vec![(agg, "agg".to_string())]
    }

    #[test]
    fn the_output_is_the_row_then_the_aggregates() {
        let input = orders(false);
        let aggs = agg(&input, col("b").sum());
        let plan = input
            .over(vec![0], 3, OverFrame::Rows(Some(2)), aggs)
            .unwrap();
        assert_eq!(
            plan.explain(),
            "OverAggregate(partition=[a], order=[rowtime], frame=[ROWS 2 PRECEDING], aggs=[SUM(b) AS agg]) -> [a STRING, b BIGINT, x DOUBLE, rowtime TIMESTAMP(3), agg BIGINT] updating rowtime=rowtime\n  Scan(table=[Orders]) -> [a STRING, b BIGINT, x DOUBLE, rowtime TIMESTAMP(3)] append-only rowtime=rowtime\n"
        );
    }

    #[test]
    fn misuse_is_refused_with_the_reason() {
        let input = orders(false);
        let aggs = agg(&input, col("b").sum());
        let err = (input.clone())
            .over(vec![], 1, OverFrame::Range(None), aggs.clone())
            .unwrap_err();
        assert_eq!(err.to_string(), "OverAggregate: OVER windows' ordering in stream mode must be defined on a time attribute, but 'b' (BIGINT) is not one (declare a WATERMARK for it, or AS PROCTIME())");
        let err = orders(true)
            .over(vec![], 3, OverFrame::Range(None), aggs.clone())
            .unwrap_err();
        assert_eq!(err.to_string(), "OverAggregate: OverAggregate doesn't support consuming update and delete changes which is produced by node Scan");
        let err = (input.clone())
            .over(vec![], 3, OverFrame::Range(Some(-1)), aggs)
            .unwrap_err();
        assert!(err.to_string().contains("must not be negative"), "{err}");
        let double_sum = agg(&input, col("x").sum());
        let err = (input.clone())
            .over(vec![], 3, OverFrame::Rows(None), double_sum)
            .unwrap_err();
        assert!(
            err.to_string().contains("'agg' depends on the order"),
            "{err}"
        );
    }
}
