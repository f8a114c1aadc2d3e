//! A plan's changelog modes in an execution mode (issue 46, item 13).
//!
//! The constructors derive each node's [`Mode`] as Flink's planner does
//! (`FlinkChangelogModeInferenceProgram`): an event-time temporal join forwards its probe side's
//! changes, so over an append-only probe side it is append-only. That is the truth of the
//! [final mode](ExecutionMode::Final), which emits each probe row once, when the watermark
//! passes it. In the [incremental mode](ExecutionMode::Incremental) the join is exact at every
//! system time: a build version arriving late retracts the rows joined with the version it
//! supersedes, so the join is updating whatever its probe side is. [`RelExpr::in_execution`]
//! gives the plan with every node's mode exact in a mode: the join updating, and every node
//! above it updating too where its output follows its input. A node that consumes inserts only
//! (an OVER aggregation, a deduplication, a row-count window, a processing-time stamp) and
//! reads such an input is refused, as Flink refuses it over an updating input; an aggregation
//! over it must be able to retract, as over any updating input.

use crate::expr::{AggregateExpr, AggregateFunc};

use super::{Mode, Node, PlanError, RelExpr};

/// Incremental (exact at every system time) or final (Flink's watermark-driven output).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ExecutionMode {
    /// Exact at every system time; late rows retract and re-emit.
    #[default]
    Incremental,
    /// Results that depend on event-time completeness (the temporal join) are emitted once,
    /// when the watermark passes them; rows behind the watermark are reported as late.
    Final,
}

impl RelExpr {
    /// This plan with each node's [`Mode`] exact in `mode`: as built in final mode; in
    /// incremental mode, an event-time temporal join and every node whose output follows an
    /// updating input are updating (no upsert key). Rendering and the reference interpreter
    /// read the plan through it.
    ///
    /// # Errors
    ///
    /// In incremental mode, a node that consumes inserts only over an input that updates there
    /// (Flink's message, naming both nodes, with the reason and the way out), or an aggregation
    /// over such an input whose aggregate cannot retract (as [`reduce`](RelExpr::reduce) refuses
    /// it over any updating input).
    ///
    /// # Examples
    ///
    /// An OVER aggregation over a temporal join's rows is refused in incremental mode, in which
    /// a late rate version retracts joined rows:
    ///
    /// ```text
    /// OverAggregate: OverAggregate doesn't support consuming update and delete changes which
    /// is produced by node TemporalJoin in the incremental mode (a build version arriving late
    /// retracts the rows joined with the version it supersedes); run it in the final mode
    /// (`--mode final`), which emits each joined row once
    /// ```
    pub fn in_execution(&self, mode: ExecutionMode) -> Result<RelExpr, PlanError> {
        let mut plan = self.clone();
        if mode == ExecutionMode::Incremental {
            plan.incremental_modes()?;
        }
        Ok(plan)
    }

    /// Rewrites the modes of this subtree to the incremental mode's (see
    /// [`in_execution`](Self::in_execution)).
    fn incremental_modes(&mut self) -> Result<(), PlanError> {
        let built: Vec<bool> = self
            .inputs()
            .iter()
            .map(|i| i.mode.is_append_only())
            .collect();
        for input in self.inputs_mut() {
            input.incremental_modes()?;
        }
        let inputs = self.inputs();
        let updated = built
            .iter()
            .zip(&inputs)
            .any(|(append_only, now)| *append_only && !now.mode.is_append_only());
        if updated {
            let refuse = |node: &'static str| {
                PlanError::invalid(
                    node,
                    format!(
                        "{node} doesn't support consuming update and delete changes which is produced by node TemporalJoin in the incremental mode (a build version arriving late retracts the rows joined with the version it supersedes); run it in the final mode (`--mode final`), which emits each joined row once"
                    ),
                )
            };
            match &self.node {
                Node::Over(_) => return Err(refuse("OverAggregate")),
                Node::Dedup { .. } => return Err(refuse("Dedup")),
                Node::CountWindowAgg(_) => return Err(refuse("CountWindowAggregate")),
                Node::ProcTime { .. } => return Err(refuse("ProcessingTime")),
                Node::Reduce { aggregates, .. } => {
                    let names = self.schema.fields[self.schema.len() - aggregates.len()..]
                        .iter()
                        .map(|f| f.name.as_str());
                    retractable("Reduce", aggregates.iter().zip(names))?;
                }
                Node::WindowAgg(w) => {
                    let names = self.schema.fields[self.schema.len() - w.aggregates.len()..]
                        .iter()
                        .map(|f| f.name.as_str());
                    retractable("WindowAggregate", w.aggregates.iter().zip(names))?;
                }
                _ => {}
            }
            if self.mode.is_append_only() {
                self.mode = Mode::Updating { upsert_key: None };
            }
        }
        if matches!(self.node, Node::TemporalJoin(_)) && self.mode.is_append_only() {
            self.mode = Mode::Updating { upsert_key: None };
        }
        Ok(())
    }
}

/// `Ok` when every aggregate (with its output name) can retract and does not follow arrival
/// order, else the error `node` gives for it over an updating input.
pub(super) fn retractable<'a>(
    node: &'static str,
    mut aggregates: impl Iterator<Item = (&'a AggregateExpr, &'a str)>,
) -> Result<(), PlanError> {
    aggregates.try_for_each(|(agg, name)| {
        if matches!(agg.func, AggregateFunc::FirstValue | AggregateFunc::LastValue) {
            return Err(PlanError::invalid(
                node,
                format!(
                    "the aggregate '{name}' takes rows in arrival order, which an updating input does not define (its rows are retracted); use MIN/MAX, or aggregate an append-only input"
                ),
            ));
        }
        if !agg.supports_retraction() {
            return Err(PlanError::invalid(
                node,
                format!(
                    "the aggregate '{name}' ({:?}) does not support retraction, but its input is an updating table",
                    agg.func
                ),
            ));
        }
        Ok(())
    })
}
