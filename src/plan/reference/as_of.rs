//! The reference of the as-of node: at each system time, per key, the latest version at or
//! before the event time read, recomputed from every change so far.

use std::collections::BTreeMap;

use crate::plan::RelExpr;
use crate::repr::{DatumVec, Row, Ts};
use differential_temporal_operators::{RowKind, Seq};

use super::rows::{diff_into, event_time, project, refuse, times};
use super::{Refused, Stream};

/// The versioned table `input` (its changes `changes`) read as of `at`: at each system time,
/// per primary key, the row of the version with the greatest `(rowtime, seq)` at or before
/// `at` among the changes so far (`+I`/`+U` rows, `-D` deletes, `-U` none), none if it is a
/// delete; as a stream of the differences. Changes whose rowtime is NULL are refused.
pub(super) fn as_of(
    changes: &Stream,
    input: &RelExpr,
    at: Ts,
    refused: &mut Vec<Refused>,
) -> Stream {
    let key = input
        .schema
        .primary_key
        .clone()
        .expect("the plan checked the key");
    let column = input.schema.rowtime.as_ref().expect("checked").column;
    for (time, change) in changes {
        if event_time(&change.row, column).is_none() {
            refused.push(refuse(*time, change.seq, "NULL event time"));
        }
    }
    let mut datums = DatumVec::new();
    let (mut out, mut previous) = (Vec::new(), Vec::new());
    for now in times(changes.iter().map(|(t, _)| *t)) {
        let mut latest: BTreeMap<Row, (Ts, Seq, Option<Row>)> = BTreeMap::new();
        for (_, change) in changes.iter().filter(|(t, _)| *t <= now) {
            let Some(time) = event_time(&change.row, column) else {
                continue;
            };
            if change.kind == RowKind::UpdateBefore || time > at {
                continue;
            }
            let row = (change.kind != RowKind::Delete).then(|| change.row.clone());
            let k = project(&change.row, &key, &mut datums);
            match latest.get(&k) {
                Some((t, seq, _)) if (*t, *seq) > (time, change.seq) => {}
                _ => {
                    latest.insert(k, (time, change.seq, row));
                }
            }
        }
        let mut rows: Vec<Row> = latest.into_values().filter_map(|(_, _, r)| r).collect();
        rows.sort();
        diff_into(&mut out, now, &previous, &rows);
        previous = rows;
    }
    out
}
