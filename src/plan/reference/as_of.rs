//! The reference of the as-of node: at each system time, the versions of every change so far
//! read as of the event time by the versioned table's own sequential model
//! ([`operator::Reference`], rules A2-A4).

use crate::plan::RelExpr;
use crate::repr::{DatumVec, Row, Ts};
use differential_temporal_operators::versioned::reference as operator;
use differential_temporal_operators::versioned::version_of_change;

use super::rows::{diff_into, event_time, project, refuse, times};
use super::{Refused, Stream};

/// The versioned table `input` (its changes `changes`) read as of `at`: at each system time,
/// per primary key, the row of the version with the greatest `(rowtime, seq)` at or before
/// `at` among the changes so far (`+I`/`+U` rows, `-D` deletes, `-U` none: rule A5), none if
/// it is a delete; as a stream of the differences. Changes whose rowtime is NULL are refused.
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
    let mut datums = DatumVec::new();
    let mut versions = Vec::new();
    for (time, change) in changes {
        let Some(rowtime) = event_time(&change.row, column) else {
            refused.push(refuse(*time, change.seq, "NULL event time"));
            continue;
        };
        let k = project(&change.row, &key, &mut datums);
        if let Ok(version) = version_of_change(change.clone(), rowtime) {
            versions.push((*time, (k, version)));
        }
    }
    let (mut out, mut previous) = (Vec::new(), Vec::new());
    for now in times(changes.iter().map(|(t, _)| *t)) {
        let so_far = (versions.iter()).filter(|(t, _)| *t <= now);
        let table = operator::Reference::new(so_far.map(|(_, v)| (v.clone(), 1)));
        let mut rows: Vec<Row> = table.as_of(&at).into_iter().map(|(_, r)| r).collect();
        rows.sort();
        diff_into(&mut out, now, &previous, &rows);
        previous = rows;
    }
    out
}
