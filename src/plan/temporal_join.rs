//! The event-time temporal join's checks, Flink's: a versioned build side (a primary key and
//! a rowtime of the probe's rowtime type), its primary key among the equality columns, no
//! filter between its source and the join.

use crate::expr::ScalarExpr;
use crate::repr::{DataType, Schema};

use super::build::join;
use super::{JoinKind, Node, PlanError, RelExpr};

impl RelExpr {
    /// The event-time temporal join `self JOIN build FOR SYSTEM_TIME AS OF self.rowtime ON
    /// self.probe_key = build.build_key [AND residual]`. `build` must be a versioned table (a
    /// primary key and a rowtime attribute) and `build_key` must include its primary key, as
    /// Flink requires; further equality columns key the join too. `residual` is over the output columns (probe, then build).
    pub fn temporal_join(
        self,
        build: RelExpr,
        probe_key: Vec<usize>,
        build_key: Vec<usize>,
        kind: JoinKind,
        residual: Option<ScalarExpr>,
    ) -> Result<RelExpr, PlanError> {
        const NODE: &str = "TemporalJoin";
        // An upsert source's rows are its versions: not normalized (rule A12).
        let build = build.as_versions();
        if self.schema.rowtime.is_none() {
            return Err(PlanError::invalid(
                NODE,
                "the probe side has no rowtime attribute: FOR SYSTEM_TIME AS OF needs the left table's event-time attribute",
            ));
        }
        let Some(pk) = build.schema.primary_key.clone() else {
            return Err(PlanError::invalid(
                NODE,
                "Temporal Table Join requires primary key in versioned table, but no primary key can be found",
            ));
        };
        let (Some(probe_time), Some(build_time)) = (&self.schema.rowtime, &build.schema.rowtime)
        else {
            return Err(PlanError::invalid(
                NODE,
                "the build side is not a versioned table: it has a primary key but no rowtime attribute",
            ));
        };
        // Flink's StreamPhysicalTemporalJoin: both rowtimes TIMESTAMP or both TIMESTAMP_LTZ.
        let (probe_time, build_time) = (
            &self.schema.fields[probe_time.column].ty.data_type,
            &build.schema.fields[build_time.column].ty.data_type,
        );
        if matches!(probe_time, DataType::TimestampLtz(_))
            != matches!(build_time, DataType::TimestampLtz(_))
        {
            return Err(PlanError::invalid(
                NODE,
                format!("Event-Time Temporal Table Join requires same rowtime type in left table and versioned table, but the rowtime types are {probe_time} *ROWTIME* and {build_time} *ROWTIME*."),
            ));
        }
        // Flink's TemporalJoinRewriteWithUniqueKeyRule: the key must be among the equality
        // columns; the other equalities are join keys too.
        if !pk.iter().all(|c| build_key.contains(c)) {
            let names = |schema: &Schema, columns: &[usize]| -> Vec<String> {
                columns
                    .iter()
                    .filter_map(|&c| schema.fields.get(c).map(|f| f.name.clone()))
                    .collect()
            };
            let pairs: Vec<String> = names(&self.schema, &probe_key)
                .iter()
                .zip(names(&build.schema, &build_key))
                .map(|(p, b)| format!("{p}={b}"))
                .collect();
            return Err(PlanError::invalid(
                NODE,
                format!(
                    "Temporal table's primary key [{}] must be included in the equivalence condition of temporal join, but current temporal join condition is [{}].",
                    names(&build.schema, &pk).join(","),
                    pairs.join(",")
                ),
            ));
        }
        join(self, build, probe_key, build_key, kind, residual, NODE)
    }
}

/// Refuses `build`, the versioned table of a `FOR SYSTEM_TIME AS OF` event-time join, when it
/// is a table's source read through a filter (projections, computed columns and filters down
/// to a scan, one of them a filter): filtering a source's rows before they become versions
/// drops versions, so an earlier version stays valid where none is. Flink's
/// `EventTimeTemporalJoinRewriteRule` refuses that chain with this message; a filter over a
/// deduplication or an aggregation, or a temporal table function's history, is not refused
/// there, nor here.
pub(crate) fn check_unfiltered_versions(build: &RelExpr) -> Result<(), PlanError> {
    match filters_source(build) {
        true => Err(PlanError::invalid(
            "TemporalJoin",
            "Filter is not allowed for right changelog input of event time temporal join, it will corrupt the versioning of data. Please consider removing the filter before joining.",
        )),
        false => Ok(()),
    }
}

/// Whether `build` is a scan read through projections, computed columns and filters, one of
/// them a filter.
fn filters_source(build: &RelExpr) -> bool {
    let mut node = build;
    let mut filtered = false;
    loop {
        match &node.node {
            Node::Filter { input, .. } => {
                filtered = true;
                node = input;
            }
            Node::Project { input, .. }
            | Node::Map { input, .. }
            | Node::ProcTime { input, .. } => node = input,
            Node::Scan { .. } => return filtered,
            Node::MergeEngine {
                input,
                normalize: true,
                ..
            } => node = input,
            _ => return false,
        }
    }
}
