//! The logical plan: one tree of relational operators, [`RelExpr`], that the Table API builds
//! directly and SQL reaches through its binder.
//!
//! Every node knows, once built, its output [`Schema`] (names, types, primary key, time
//! attributes), and its changelog [`Mode`] (append-only, or updating with the upsert key the
//! changes are keyed by). Constructors check what Flink's planner checks (a temporal join's
//! build side is a versioned table, a rowtime is a time attribute, a key column exists...) and
//! return a [`PlanError`] naming the node and column, so a plan that exists can be rendered.
//!
//! Semantics, node by node, are those of Flink SQL over dynamic tables: a node's output is a
//! multiset of rows that changes over system time. [`reference`](mod@reference) evaluates a plan sequentially
//! over plain vectors (no timely): the model every rendered plan is checked against.
//!
//! ```
//! use differential_temporal::expr::{col, lit};
//! use differential_temporal::plan::RelExpr;
//! use differential_temporal::repr::{DataType, Schema};
//!
//! let orders = Schema::builder()
//!     .column("a", DataType::STRING.nullable())
//!     .column("b", DataType::BigInt.nullable())
//!     .build()
//!     .unwrap();
//! let plan = RelExpr::scan("Orders", orders, false)
//!     .filter_expr(&col("b").gt(lit(1i64)), &Default::default())
//!     .unwrap();
//! assert_eq!(plan.schema.names().collect::<Vec<_>>(), vec!["a", "b"]);
//! println!("{}", plan.explain());
//! ```

mod as_of;
mod asof_join;
mod build;
mod check;
mod correlate;
mod count_window;
mod equi_join;
mod execution;
mod explain;
mod interval_join;
pub(crate) mod lower;
mod merge;
pub mod over;
mod proctime;
pub mod reference;
mod set_op;
mod sort;
mod temporal_join;
pub(crate) use temporal_join::check_unfiltered_versions;
#[cfg(test)]
mod tests;
pub mod top_n;
pub mod window;
mod window_assign;

use serde::{Deserialize, Serialize};

use crate::expr::{AggregateExpr, ScalarExpr};
use crate::repr::{Row, Schema};
pub use asof_join::{order_value, AsofJoin, AsofMatch, AsofOrder, Tolerance};
pub(crate) use asof_join::{within, Seek};
pub use build::join_schema;
pub use check::{ChangelogCheck, Problem};
pub use correlate::{left_condition_error, unnest_columns, Correlate, Expansion};
pub use count_window::CountWindowAgg;
pub use differential_temporal_operators::dedup::{DedupOrder, Keep};
pub use differential_temporal_operators::temporal_join::JoinKind;
pub use equi_join::{equi_join_schema, joined_row, EquiJoin, JoinType};
pub use execution::ExecutionMode;
pub use interval_join::IntervalBounds;
pub use over::{Over, OverFrame};
pub(crate) use proctime::stamp;
pub use proctime::ProcessingClock;
pub use set_op::SetOpKind;
pub use sort::{top_n, SortKey};
pub use top_n::TopN;
pub use window::{sessions, watermark_delay_ms, window_datums, WindowAgg, WindowSpec};
pub use window_assign::WindowAssign;

/// A node of the logical plan with its output schema and changelog mode.
#[derive(Clone, Debug, PartialEq)]
pub struct RelExpr {
    /// The operator and its inputs.
    pub node: Node,
    /// The output columns, primary key and time attributes.
    pub schema: Schema,
    /// Whether the output only grows, or is updated (and by which key).
    pub mode: Mode,
}

/// A plan node's changelog mode (Flink's `ChangelogMode` as the planner derives it).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Mode {
    /// Only `+I`: rows are never retracted.
    AppendOnly,
    /// `+I -U +U -D`: rows are retracted. `upsert_key` is a set of columns unique in the
    /// output (its updates can be written as upserts by it), when the planner knows one.
    Updating {
        /// Columns unique in the output, if known.
        upsert_key: Option<Vec<usize>>,
    },
}

impl Mode {
    /// Whether rows are only ever inserted.
    pub fn is_append_only(&self) -> bool {
        matches!(self, Mode::AppendOnly)
    }

    /// The upsert key, if the node has one.
    pub fn upsert_key(&self) -> Option<&[usize]> {
        match self {
            Mode::Updating {
                upsert_key: Some(key),
            } => Some(key),
            _ => None,
        }
    }
}

/// The operators of the plan. Column references are indices into the input's schema (for a
/// join's residual: the probe columns, then the build columns).
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// A registered table, by name; its rows come from the environment's source of that name.
    Scan {
        /// The table's name.
        name: String,
    },
    /// Literal rows (append-only, all at system time 0).
    Values {
        /// The rows.
        rows: Vec<Row>,
    },
    /// Appends one computed column per expression.
    Map {
        /// The input.
        input: Box<RelExpr>,
        /// The expressions, over the input's columns.
        exprs: Vec<ScalarExpr>,
    },
    /// Sets the proctime attribute `column` of each row to the processing time of the system
    /// time it enters at (see [`ProcessingClock`]); append-only inputs only.
    ProcTime {
        /// The input.
        input: Box<RelExpr>,
        /// The proctime column.
        column: usize,
        /// System time to processing time.
        clock: ProcessingClock,
    },
    /// Keeps the rows for which `predicate` is TRUE (NULL and FALSE drop the row).
    Filter {
        /// The input.
        input: Box<RelExpr>,
        /// A BOOLEAN expression over the input's columns.
        predicate: ScalarExpr,
    },
    /// Keeps (and reorders, or repeats) the input columns `columns`.
    Project {
        /// The input.
        input: Box<RelExpr>,
        /// The input columns of the output, in order.
        columns: Vec<usize>,
    },
    /// `GROUP BY group` with `aggregates`: one row per group, the group columns then the
    /// aggregates. Without group columns, one row over the whole input (none while it is empty,
    /// as Flink's streaming aggregation).
    Reduce {
        /// The input.
        input: Box<RelExpr>,
        /// The grouping columns.
        group: Vec<usize>,
        /// The aggregates, over the input's columns.
        aggregates: Vec<AggregateExpr>,
    },
    /// `SELECT DISTINCT`: each row once.
    Distinct {
        /// The input.
        input: Box<RelExpr>,
    },
    /// `ROW_NUMBER() OVER (PARTITION BY key ORDER BY time ASC|DESC) = 1`: the first or last
    /// row of each key, by the rowtime attribute (`EventTime`, ties by arrival) or by arrival
    /// (`Arrival`, a proctime order). Flink's deduplication; the versioned view when keep-last
    /// by rowtime. In final mode keep-first by rowtime emits each key's row once, when the
    /// watermark passes it (rule A9, Flink >= 2.1).
    Dedup {
        /// The input (append-only).
        input: Box<RelExpr>,
        /// The partition key columns.
        key: Vec<usize>,
        /// First or last.
        keep: Keep,
        /// By event time or by arrival.
        order: DedupOrder,
        /// Final-mode keep-first by rowtime: how long, in milliseconds of event time measured
        /// on the watermark, a key's "already emitted" flag is kept (rule A13; `None`: forever).
        /// See [`RelExpr::with_event_time_ttl`].
        state_ttl: Option<i64>,
    },
    /// A primary-key table whose writes (its input's changes, in source order) are merged per
    /// key by a Fluss / Paimon merge engine (see [`RelExpr::merge_engine`]).
    MergeEngine {
        /// The writes.
        input: Box<RelExpr>,
        /// The primary-key columns.
        key: Vec<usize>,
        /// The engine, configured for the input's columns.
        engine: crate::merge_engine::MergeEngine,
        /// Whether this node is Flink's ChangelogNormalize of an upsert source (rule A12, see
        /// [`RelExpr::normalized_by_key`]) rather than a table's declared merge engine: the
        /// same fold (`deduplicate`), named so in EXPLAIN and left out where a table is read as
        /// versions (a temporal join's build side, AS OF, its history).
        normalize: bool,
    },
    /// A versioned table read as of the constant event time `at` (rules A1-A5): per key, the
    /// row of the version with the greatest `(rowtime, seq)` at or before `at`, none if that
    /// version is a delete (see [`RelExpr::as_of`]).
    AsOf {
        /// The versioned table (a primary key and a rowtime attribute).
        input: Box<RelExpr>,
        /// The event time read as of.
        at: crate::repr::Ts,
    },
    /// A changelog's consistency per key, as a table of findings (see
    /// [`RelExpr::check_changelog`]).
    CheckChangelog(ChangelogCheck),
    /// The history of a versioned table (rule A2): each row version with the event time it
    /// stops being valid appended (`valid_to`, NULL while current; see [`RelExpr::history`]).
    History {
        /// The versioned table (a primary key and a rowtime attribute).
        input: Box<RelExpr>,
    },
    /// `probe JOIN build FOR SYSTEM_TIME AS OF probe.rowtime ON keys [AND residual]`: each
    /// probe row joined with the build version valid at its event time (Flink's event-time
    /// temporal join). The build side is a versioned table (primary key and rowtime), keyed by
    /// its primary key.
    TemporalJoin(Join),
    /// `probe JOIN build FOR SYSTEM_TIME AS OF probe.proctime ON keys`: each probe row joined,
    /// when it arrives, with the build side's current row of its key (Flink's lookup join).
    LookupJoin(Join),
    /// `left [INNER|LEFT|RIGHT|FULL] JOIN right ON keys [AND residual]`: the regular join of
    /// two tables (see [`EquiJoin`]).
    Join(EquiJoin),
    /// `probe ASOF [LEFT] JOIN build MATCH_CONDITION (probe.t >= build.t) ON keys`: each probe
    /// row joined with the build row closest to it in the condition's direction (see
    /// [`AsofJoin`]).
    AsofJoin(AsofJoin),
    /// `input, LATERAL TABLE (f(..))` / `input CROSS JOIN UNNEST(arr)`: each input row joined
    /// with the rows a table function or UNNEST gives for it (see [`Correlate`]).
    Correlate(Correlate),
    /// `left UNION|INTERSECT|EXCEPT [ALL] right`, with multiset semantics (see
    /// [`SetOpKind`]).
    SetOp {
        /// The left input.
        left: Box<RelExpr>,
        /// The right input (the same column types).
        right: Box<RelExpr>,
        /// Which operation.
        op: SetOpKind,
        /// `ALL` (multiplicities kept) or not (each row once).
        all: bool,
    },
    /// `ORDER BY order [OFFSET offset] [FETCH fetch]`: with `fetch`, the Top-N, the `fetch`
    /// rows after the first `offset` in the order (ties by value); without, a sort by the
    /// ascending rowtime whose table is its input's. Any other sort of an unbounded table is
    /// refused when built ([`RelExpr::sort`]).
    Sort {
        /// The input.
        input: Box<RelExpr>,
        /// The sort keys.
        order: Vec<SortKey>,
        /// Rows skipped.
        offset: usize,
        /// Rows kept after them (`None`: all, a time-ordered sort).
        fetch: Option<usize>,
    },
    /// `ROW_NUMBER() OVER (PARTITION BY .. ORDER BY ..) <= N`: the first rows of each
    /// partition (see [`TopN`]).
    TopN(TopN),
    /// `GROUP BY window, keys` over `TUMBLE`, `HOP`, `CUMULATE` or `SESSION` windows of the
    /// rowtime or the stamped proctime (see [`WindowAgg`]).
    WindowAgg(WindowAgg),
    /// The rows of a `TUMBLE`, `HOP` or `CUMULATE` window table-valued function: each row once
    /// per window of the rowtime, the window's columns appended (see [`WindowAssign`]).
    WindowAssign(WindowAssign),
    /// `GROUP BY window, keys` over row-count windows of a processing-time attribute (see
    /// [`CountWindowAgg`]).
    CountWindowAgg(CountWindowAgg),
    /// `agg(..) OVER (PARTITION BY .. ORDER BY rowtime ROWS|RANGE .. PRECEDING)`: each row
    /// with aggregates over its frame (see [`Over`]).
    Over(Over),
    /// Writes its input to the registered sink `name`; its output is its input.
    Sink {
        /// The input.
        input: Box<RelExpr>,
        /// The sink's name.
        name: String,
    },
}

/// The parts of a temporal or lookup join. Output columns: the probe's, then the build's.
#[derive(Clone, Debug, PartialEq)]
pub struct Join {
    /// The probe side.
    pub probe: Box<RelExpr>,
    /// The build side.
    pub build: Box<RelExpr>,
    /// The probe's equality-key columns.
    pub probe_key: Vec<usize>,
    /// The build's key columns, in the order of `probe_key`.
    pub build_key: Vec<usize>,
    /// INNER or LEFT.
    pub kind: JoinKind,
    /// A condition on the chosen version or row, over the output columns.
    pub residual: Option<ScalarExpr>,
    /// Idle-state retention (Flink's `table.exec.state.ttl`; `None`: state is kept forever):
    /// of a `TemporalJoin`, in milliseconds of event time measured on the combined watermark,
    /// final mode only (rule B13, see [`RelExpr::with_event_time_ttl`]); of a `LookupJoin`, in
    /// system times (rule B17, see [`RelExpr::with_state_ttl`]).
    pub state_ttl: Option<u64>,
}

/// A plan that cannot be built: the node, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// An expression that does not bind or type-check.
    #[error(transparent)]
    Expr(#[from] crate::expr::ExprError),
    /// A schema that cannot be built (unknown column, duplicate name...).
    #[error(transparent)]
    Schema(#[from] crate::repr::SchemaError),
    /// A node whose inputs or arguments do not fit it; the message says which and why.
    #[error("{node}: {reason}")]
    Invalid {
        /// The node (`TemporalJoin`, `Reduce`...).
        node: &'static str,
        /// What is wrong.
        reason: String,
    },
}

impl PlanError {
    pub(crate) fn invalid(node: &'static str, reason: impl Into<String>) -> PlanError {
        PlanError::Invalid {
            node,
            reason: reason.into(),
        }
    }
}

impl RelExpr {
    /// The node's inputs.
    pub fn inputs(&self) -> Vec<&RelExpr> {
        match &self.node {
            Node::Scan { .. } | Node::Values { .. } => vec![],
            Node::Map { input, .. }
            | Node::ProcTime { input, .. }
            | Node::Filter { input, .. }
            | Node::Project { input, .. }
            | Node::Reduce { input, .. }
            | Node::Distinct { input }
            | Node::Dedup { input, .. }
            | Node::MergeEngine { input, .. }
            | Node::AsOf { input, .. }
            | Node::History { input }
            | Node::Sort { input, .. }
            | Node::Sink { input, .. } => vec![input],
            Node::TemporalJoin(join) | Node::LookupJoin(join) => vec![&join.probe, &join.build],
            Node::Join(join) => vec![&join.left, &join.right],
            Node::AsofJoin(join) => vec![&join.probe, &join.build],
            Node::Correlate(c) => vec![&c.input],
            Node::CheckChangelog(c) => vec![&c.input],
            Node::SetOp { left, right, .. } => vec![left, right],
            Node::WindowAgg(w) => vec![&w.input],
            Node::WindowAssign(a) => vec![&a.input],
            Node::CountWindowAgg(c) => vec![&c.input],
            Node::Over(o) => vec![&o.input],
            Node::TopN(t) => vec![&t.input],
        }
    }

    /// The node's inputs, mutably, in the order of [`inputs`](Self::inputs).
    pub(crate) fn inputs_mut(&mut self) -> Vec<&mut RelExpr> {
        match &mut self.node {
            Node::Scan { .. } | Node::Values { .. } => vec![],
            Node::Map { input, .. }
            | Node::ProcTime { input, .. }
            | Node::Filter { input, .. }
            | Node::Project { input, .. }
            | Node::Reduce { input, .. }
            | Node::Distinct { input }
            | Node::Dedup { input, .. }
            | Node::MergeEngine { input, .. }
            | Node::AsOf { input, .. }
            | Node::History { input }
            | Node::Sort { input, .. }
            | Node::Sink { input, .. } => vec![input],
            Node::TemporalJoin(join) | Node::LookupJoin(join) => {
                vec![&mut join.probe, &mut join.build]
            }
            Node::Join(join) => vec![&mut join.left, &mut join.right],
            Node::AsofJoin(join) => vec![&mut join.probe, &mut join.build],
            Node::Correlate(c) => vec![&mut c.input],
            Node::CheckChangelog(c) => vec![&mut c.input],
            Node::SetOp { left, right, .. } => vec![left, right],
            Node::WindowAgg(w) => vec![&mut w.input],
            Node::WindowAssign(a) => vec![&mut a.input],
            Node::CountWindowAgg(c) => vec![&mut c.input],
            Node::Over(o) => vec![&mut o.input],
            Node::TopN(t) => vec![&mut t.input],
        }
    }

    /// The names of the tables this plan scans, each once, in first-use order.
    pub fn scans(&self) -> Vec<&str> {
        let mut names = Vec::new();
        self.visit(&mut |node| {
            if let Node::Scan { name } = &node.node {
                if !names.contains(&name.as_str()) {
                    names.push(name.as_str());
                }
            }
        });
        names
    }

    /// Calls `f` on every node, inputs before the node that reads them.
    pub fn visit<'a>(&'a self, f: &mut impl FnMut(&'a RelExpr)) {
        for input in self.inputs() {
            input.visit(f);
        }
        f(self);
    }

    /// `Ok` when this input is append-only, else Flink's error for `node`, which consumes
    /// inserts only.
    pub(crate) fn require_append_only(&self, node: &'static str) -> Result<(), PlanError> {
        match self.mode.is_append_only() {
            true => Ok(()),
            false => Err(PlanError::invalid(
                node,
                format!(
                    "{node} doesn't support consuming update and delete changes which is produced by node {}",
                    self.kind_name()
                ),
            )),
        }
    }

    /// The node's name as `explain` prints it.
    pub fn kind_name(&self) -> &'static str {
        match &self.node {
            Node::Scan { .. } => "Scan",
            Node::Values { .. } => "Values",
            Node::Map { .. } => "Map",
            Node::ProcTime { .. } => "ProcessingTime",
            Node::Filter { .. } => "Filter",
            Node::Project { .. } => "Project",
            Node::Reduce { .. } => "Reduce",
            Node::Distinct { .. } => "Distinct",
            Node::Dedup { .. } => "Dedup",
            Node::MergeEngine {
                normalize: true, ..
            } => "ChangelogNormalize",
            Node::MergeEngine { .. } => "MergeEngine",
            Node::AsOf { .. } => "AsOf",
            Node::History { .. } => "History",
            Node::CheckChangelog(_) => "CheckChangelog",
            Node::TemporalJoin(_) => "TemporalJoin",
            Node::LookupJoin(_) => "LookupJoin",
            Node::Join(join) if join.interval.is_some() => "IntervalJoin",
            Node::Join(_) => "Join",
            Node::AsofJoin(_) => "AsofJoin",
            Node::Correlate(_) => "Correlate",
            Node::SetOp { .. } => "SetOp",
            Node::Sort { .. } => "Sort",
            Node::WindowAgg(_) => "WindowAggregate",
            Node::WindowAssign(_) => "WindowTableFunction",
            Node::CountWindowAgg(_) => "CountWindowAggregate",
            Node::Over(_) => "OverAggregate",
            Node::TopN(_) => "TopN",
            Node::Sink { .. } => "Sink",
        }
    }
}
