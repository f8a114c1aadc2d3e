//! OVER windows in the Table API (Flink's `Over`):
//! `window(Over::partition_by([col("a")]).order_by(col("rowtime")).preceding(minutes(10))
//! .alias("w"))`, then `select` with aggregates `col("b").sum().over(col("w"))`, lowered onto
//! the plan's [`Over`](crate::plan::Over) node (its semantics, frames and both modes are
//! documented there). The SQL form (`OVER (...)`, `WINDOW w AS (...)`) lowers through
//! [`over_select`] too.

use std::time::Duration;

use crate::expr::{col, Expr};
use crate::plan::lower::{over_select, transform};
use crate::plan::{OverFrame, PlanError};

use super::window::{ms, WindowKind};
use super::Table;

/// How far an OVER window reaches before the current row (Flink's `preceding(..)` argument): a
/// time interval (a [`Duration`], RANGE), a number of rows ([`row_interval`], ROWS), or
/// [`UNBOUNDED_RANGE`] / [`UNBOUNDED_ROW`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preceding(OverFrame);

/// Every row up to the current row's time, rows of the same time included (Flink's default).
pub const UNBOUNDED_RANGE: Preceding = Preceding(OverFrame::Range(None));

/// Every row up to the current row.
pub const UNBOUNDED_ROW: Preceding = Preceding(OverFrame::Rows(None));

/// `n` rows before the current row (Flink's `rowInterval(n)`).
pub fn row_interval(n: u64) -> Preceding {
    Preceding(OverFrame::Rows(Some(n)))
}

/// The rows at most `d` (whole milliseconds) before the current row's time.
impl From<Duration> for Preceding {
    fn from(d: Duration) -> Preceding {
        Preceding(OverFrame::Range(Some(ms(d))))
    }
}

/// OVER windows (Flink's `Over`): `Over::partition_by(keys).order_by(time).preceding(p)
/// .alias(name)`, or `Over::order_by(time)...` for one partition.
pub struct Over;

impl Over {
    /// Partitioned by the columns `keys`.
    pub fn partition_by(keys: impl IntoIterator<Item = Expr>) -> OverWindow {
        OverWindow {
            partition: keys.into_iter().collect(),
            order: None,
            frame: OverFrame::Range(None),
            alias: None,
        }
    }

    /// One partition, ordered by the rowtime attribute `time`.
    pub fn order_by(time: Expr) -> OverWindow {
        Over::partition_by([]).order_by(time)
    }
}

/// An OVER window: its partition columns, time attribute, frame and alias.
#[derive(Clone, Debug)]
pub struct OverWindow {
    partition: Vec<Expr>,
    order: Option<Expr>,
    frame: OverFrame,
    alias: Option<String>,
}

impl OverWindow {
    /// Ordered by the rowtime attribute `time` (ascending; Flink's only order for streams).
    pub fn order_by(mut self, time: Expr) -> OverWindow {
        self.order = Some(time);
        self
    }

    /// The frame: from `preceding` rows or time before the current row to it (without this
    /// call, [`UNBOUNDED_RANGE`]).
    pub fn preceding(mut self, preceding: impl Into<Preceding>) -> OverWindow {
        self.frame = preceding.into().0;
        self
    }

    /// Named `alias`, the name aggregates refer to with `.over(col(alias))`.
    pub fn alias(mut self, alias: impl Into<String>) -> OverWindow {
        self.alias = Some(alias.into());
        self
    }
}

impl WindowKind for OverWindow {
    type Windowed = OverWindowedTable;

    fn windowed(self, table: Table) -> OverWindowedTable {
        OverWindowedTable {
            table,
            window: self,
        }
    }
}

impl Expr {
    /// The aggregate `self` over the OVER window named `window` (`col("w")`), in an
    /// [`OverWindowedTable::select`].
    pub fn over(self, window: Expr) -> Expr {
        Expr::Call {
            func: "$over".to_string(),
            args: vec![self, window],
        }
    }
}

/// A table with an OVER window, waiting for its `select` (Flink's `OverWindowedTable`).
#[derive(Clone)]
pub struct OverWindowedTable {
    table: Table,
    window: OverWindow,
}

impl OverWindowedTable {
    /// `SELECT items`: columns, and aggregates `.over(col(alias))` (or expressions over them).
    /// One output row per input row. Errors (when the plan is built): the window has no
    /// `order_by` or no `alias`, an `.over(..)` that does not name the alias or is not on an
    /// aggregate, a partition or order that is not a column, and those of [`RelExpr::over`](crate::plan::RelExpr::over).
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::col;
    /// use differential_temporal::table::{Over, UNBOUNDED_RANGE};
    /// let (env, _dir) = doc_env();
    /// let running = env
    ///     .from("Rates")
    ///     .window(Over::partition_by([col("currency")]).order_by(col("update_time"))
    ///         .preceding(UNBOUNDED_RANGE).alias("w"))
    ///     .select([col("rate"), col("rate").max().over(col("w")).alias("top")]);
    /// assert_eq!(running.execute().unwrap().rows_as_text(), vec!["114,114", "116,116"]);
    /// ```
    pub fn select(&self, items: impl IntoIterator<Item = Expr>) -> Table {
        let items: Vec<Expr> = items.into_iter().collect();
        let window = self.window.clone();
        let registry = self.table.env.functions();
        self.table.then("window(Over..).select", move |plan| {
            let (Some(order), Some(alias)) = (&window.order, &window.alias) else {
                return Err(invalid(
                    "an OVER window needs its time attribute and alias: .order_by(col(\"rowtime\")).alias(\"w\")",
                ));
            };
            let mut calls = Vec::new();
            let mut misused = None;
            let items: Vec<Expr> = (items.iter())
                .map(|item| {
                    transform(item, &mut |e| match e {
                        Expr::Call { func, args } if func == "$over" => match args.as_slice() {
                            [agg, w] if matches!(w.unaliased(), Expr::Column(c) if c == alias) => {
                                calls.push(agg.clone());
                                Some(col(format!("$over{}", calls.len() - 1)))
                            }
                            _ => {
                                misused = Some(format!(
                                    "'{}' is not the OVER window alias '{alias}'",
                                    args.get(1).map_or(String::new(), |w| w.to_string())
                                ));
                                None
                            }
                        },
                        _ => None,
                    })
                })
                .collect();
            if let Some(reason) = misused {
                return Err(invalid(reason));
            }
            let column = |e: &Expr| match e.unaliased() {
                Expr::Column(name) => Ok(plan.schema.resolve(name)?),
                other => Err(invalid(format!(
                    "an OVER window partitions and orders by columns, not by '{other}'"
                ))),
            };
            let partition = (window.partition.iter())
                .map(column)
                .collect::<Result<Vec<_>, _>>()?;
            let time = column(order)?;
            over_select(plan, partition, time, window.frame, &calls, &items, &registry)
        })
    }
}

fn invalid(reason: impl Into<String>) -> PlanError {
    PlanError::invalid("OverAggregate", reason)
}
