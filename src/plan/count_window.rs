//! The row-count window aggregation node ([`Node::CountWindowAgg`]): Flink's row-count group
//! windows of the Table API, `Tumble::over(rows(n)).on(proctime)` and
//! `Slide::over(rows(n)).every(rows(m)).on(proctime)`, then `group_by(w, keys)`.
//!
//! Semantics (rule E2 of `semantics.md`, Flink's `CountTumblingWindowAssigner` and
//! `CountSlidingWindowAssigner` with the trigger `ElementTriggers.count(size)`): per group key,
//! the key's rows are numbered `0, 1, 2, ..` in arrival order, which is the order of their
//! system time, then of their `seq`, then of their value (rows of one system time and `seq`
//! are equal in every column the window can read, so that last tie does not change a result).
//! Window `k` (`k >= 0`) holds the rows numbered `k * slide .. k * slide + size`; it fires once,
//! when its `size`-th row arrives, with the aggregates over its rows in that order. A window
//! short of `size` rows never fires (Flink drops it when the job ends); with `slide > size`
//! the rows between two windows are in none. A tumbling window is `slide = size`.
//!
//! The output (append-only) has one row per fired window: the group columns, then the
//! aggregates. A row-count window has no start, end or time attribute (Flink's count windows
//! have no time bounds), so `w.start()`, `w.end()` and `w.rowtime()` are refused. As a window
//! fires on its last row and is never revised, both execution modes emit the same rows, and
//! the result is a deterministic function of the input and its division into system times.
//! SQL has no row-count group window (neither has Flink's).
//!
//! Its rendering keeps per key only its position modulo `slide` and the accumulators of its
//! open windows (at most `ceil(size / slide)`), and drops a window's state when it fires; an
//! update costs one accumulator update per open window of its key.

use crate::expr::AggregateExpr;
use crate::repr::{Field, Schema};

use super::{Mode, Node, PlanError, RelExpr};

/// The parts of a row-count window aggregation (Flink's `CountTumblingWindowAssigner` and
/// `CountSlidingWindowAssigner` with the trigger `ElementTriggers.count(size)`): per group key,
/// the rows are numbered `0, 1, ..` in arrival order (system time, then `seq`); window `k`
/// holds the rows numbered `k * slide .. k * slide + size` and fires once, when its `size`-th
/// row arrives; a window short of `size` rows never fires. The output is append-only, one row
/// per fired window (the group columns, then the aggregates), the same in both execution modes.
///
/// Rendered state: per key, its position modulo `slide` and the accumulators of its open
/// windows (at most `ceil(size / slide)`); a window's state is dropped when it fires, and a key
/// with no open window whose next row opens one is freed.
#[derive(Clone, Debug, PartialEq)]
pub struct CountWindowAgg {
    /// The input (append-only, with a processing-time attribute).
    pub input: Box<RelExpr>,
    /// The input's processing-time column the windows are declared on (its value is not read).
    pub time: usize,
    /// The rows of a window (`> 0`).
    pub size: i64,
    /// The rows between the first rows of two consecutive windows (`> 0`; `size` to tumble).
    pub slide: i64,
    /// The group columns besides the window.
    pub group: Vec<usize>,
    /// The aggregates, over the input's columns.
    pub aggregates: Vec<AggregateExpr>,
}

impl CountWindowAgg {
    /// The windows complete among a key's first `rows` rows (numbered from 0 in arrival
    /// order), each as the range of the row numbers it holds, by ascending first row.
    pub fn complete_windows(&self, rows: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
        let (size, slide) = (self.size as usize, self.slide as usize);
        (0..)
            .map(move |k: usize| k * slide..k * slide + size)
            .take_while(move |window| window.end <= rows)
    }
}

/// As `explain` prints it: `ROWS(size=3, slide=3)`.
impl std::fmt::Display for CountWindowAgg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ROWS(size={}, slide={})", self.size, self.slide)
    }
}

impl RelExpr {
    /// `GROUP BY window, group` computing `aggregates` (aggregate, output name) over the
    /// row-count windows of `size` rows every `slide` rows (`slide = size`: tumbling) declared
    /// on the processing-time column `time` (see [`CountWindowAgg`]).
    ///
    /// Errors, each naming the column: `time` is the rowtime attribute (Flink's message:
    /// row-count windows on event time are not supported) or not the processing-time attribute,
    /// the input is updating (Flink's group windows consume inserts only), a size or slide that
    /// is not positive, a group column out of range, a duplicate output name.
    pub fn count_window_agg(
        self,
        time: usize,
        size: i64,
        slide: i64,
        group: Vec<usize>,
        aggregates: Vec<(AggregateExpr, String)>,
    ) -> Result<RelExpr, PlanError> {
        const NODE: &str = "CountWindowAggregate";
        let invalid = |reason: String| PlanError::invalid(NODE, reason);
        let field = (self.schema.fields.get(time))
            .ok_or_else(|| invalid(format!("time column {time} out of range")))?;
        if self.schema.rowtime.as_ref().map(|r| r.column) == Some(time) {
            return Err(invalid(
                "Event-time grouping windows on row intervals in a stream environment are currently not supported.".to_string(),
            ));
        }
        if self.schema.proctime != Some(time) {
            return Err(invalid(format!(
                "a row-count window is defined over a processing time attribute, but '{}' ({}) is not one (declare it AS PROCTIME())",
                field.name, field.ty
            )));
        }
        self.require_append_only(NODE)?;
        if size <= 0 || slide <= 0 {
            return Err(invalid(format!(
                "Count window parameters must satisfy slide > 0 and size > 0, but got slide {slide} rows and size {size} rows."
            )));
        }
        let mut fields = Vec::with_capacity(group.len() + aggregates.len());
        for &c in &group {
            let field = (self.schema.fields.get(c).cloned())
                .ok_or_else(|| invalid(format!("group column {c} out of range")))?;
            fields.push(field);
        }
        for (agg, name) in &aggregates {
            fields.push(Field::new(name.clone(), agg.ty.clone()));
        }
        let schema = Schema::new(fields)?;
        Ok(RelExpr {
            node: Node::CountWindowAgg(CountWindowAgg {
                input: Box::new(self),
                time,
                size,
                slide,
                group,
                aggregates: aggregates.into_iter().map(|(a, _)| a).collect(),
            }),
            schema,
            mode: Mode::AppendOnly,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::expr::{count_star, AggregateExpr, FunctionRegistry};
    use crate::plan::{CountWindowAgg, Node, RelExpr};
    use crate::repr::{DataType, Schema};

    fn clicks(changelog: bool) -> RelExpr {
        let schema = Schema::builder()
            .column("user", DataType::STRING.nullable())
            .column("ts", DataType::Timestamp(3).nullable())
            .column("pt", DataType::TimestampLtz(3).not_null())
            .rowtime("ts", 0)
            .proctime("pt")
            .build()
            .unwrap();
        RelExpr::scan("Clicks", schema, changelog)
    }

    fn count(plan: &RelExpr) -> Vec<(AggregateExpr, String)> {
        let registry = FunctionRegistry::new();
        let agg = crate::expr::bind_aggregate(&count_star(), &plan.schema, &registry).unwrap();
        vec![(agg, "n".to_string())]
    }

    #[test]
    fn the_output_is_keys_and_aggregates() {
        let input = clicks(false);
        let aggs = count(&input);
        let plan = input.count_window_agg(2, 3, 2, vec![0], aggs).unwrap();
        assert_eq!(
            plan.explain(),
            "CountWindowAggregate(window=[ROWS(size=3, slide=2) ON pt], group=[user], aggs=[COUNT(*) AS n]) -> [user STRING, n BIGINT NOT NULL] append-only\n  Scan(table=[Clicks]) -> [user STRING, ts TIMESTAMP(3), pt TIMESTAMP_LTZ(3) NOT NULL] append-only rowtime=ts proctime=pt\n"
        );
        let Node::CountWindowAgg(w) = &plan.node else {
            panic!("{plan:?}")
        };
        let windows = |w: &CountWindowAgg, rows| w.complete_windows(rows).collect::<Vec<_>>();
        assert_eq!(windows(w, 2), vec![]);
        assert_eq!(windows(w, 6), vec![0..3, 2..5]);
        let hopping = CountWindowAgg {
            slide: 4,
            ..w.clone()
        };
        assert_eq!(windows(&hopping, 8), vec![0..3, 4..7]);
    }

    #[test]
    fn misuse_is_refused_naming_the_column() {
        let input = clicks(false);
        let aggs = count(&input);
        let err = |plan: RelExpr, time, size, slide| {
            (plan.count_window_agg(time, size, slide, vec![], aggs.clone()))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(err(input.clone(), 1, 2, 2), "CountWindowAggregate: Event-time grouping windows on row intervals in a stream environment are currently not supported.");
        assert_eq!(err(input.clone(), 0, 2, 2), "CountWindowAggregate: a row-count window is defined over a processing time attribute, but 'user' (STRING) is not one (declare it AS PROCTIME())");
        assert_eq!(err(input.clone(), 2, 0, 0), "CountWindowAggregate: Count window parameters must satisfy slide > 0 and size > 0, but got slide 0 rows and size 0 rows.");
        assert_eq!(err(clicks(true), 2, 2, 2), "CountWindowAggregate: CountWindowAggregate doesn't support consuming update and delete changes which is produced by node Scan");
    }
}
