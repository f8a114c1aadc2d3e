//! The reference of the row-count window aggregation ([`CountWindowAgg`]): at every system
//! time, per group key, the accumulated rows in arrival order and the complete windows among
//! them, recomputed from scratch.

use std::collections::BTreeMap;

use crate::plan::{CountWindowAgg, PlanError};
use crate::repr::{DatumVec, Row};
use differential_temporal_operators::{Seq, SysTime};

use super::window::aggregated;
use super::{consolidate, diff_counts_into, project, times, Stream};

/// The output stream of `w` over its (append-only) input's `changes`.
pub(super) fn evaluate(w: &CountWindowAgg, changes: &Stream) -> Result<Stream, PlanError> {
    let mut out = Vec::new();
    let mut previous: Vec<(Row, isize)> = Vec::new();
    for at in times(changes.iter().map(|(t, _)| *t)) {
        let mut keys: BTreeMap<Row, Vec<(SysTime, Seq, Row)>> = BTreeMap::new();
        for (time, change) in changes.iter().filter(|(t, _)| *t <= at) {
            let key = project(&change.row, &w.group, &mut DatumVec::new());
            let arrival = (*time, change.seq, change.row.clone());
            keys.entry(key).or_default().push(arrival);
        }
        let mut now = Vec::new();
        for (key, mut rows) in keys {
            rows.sort();
            for window in w.complete_windows(rows.len()) {
                let members: Vec<&Row> = rows[window].iter().map(|(_, _, r)| r).collect();
                let row = aggregated("CountWindowAggregate", &w.aggregates, &key, &members)?;
                now.push((row, 1));
            }
        }
        let now = consolidate(now);
        diff_counts_into(&mut out, at, &previous, &now);
        previous = now;
    }
    Ok(out)
}
