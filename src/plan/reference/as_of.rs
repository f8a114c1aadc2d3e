//! The reference of the as-of and history nodes: at each system time, the versions of every
//! change so far read as of the event time or as their history by the versioned table's own
//! sequential model ([`operator::Reference`], rules A2-A4).

use crate::plan::RelExpr;
use crate::repr::{Datum, DatumVec, Row, Ts};
use differential_temporal_operators::versioned::reference as operator;
use differential_temporal_operators::versioned::version_of_change;
use differential_temporal_operators::{SysTime, Version};

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
    read(changes, input, refused, |table| {
        table.as_of(&at).into_iter().map(|(_, r)| r).collect()
    })
}

/// The history of the versioned table `input` (its changes `changes`): at each system time,
/// every row version so far with its `valid_to` appended (NULL while current), as a stream of
/// the differences.
pub(super) fn history(changes: &Stream, input: &RelExpr, refused: &mut Vec<Refused>) -> Stream {
    read(changes, input, refused, |table| {
        let rows = table.history().into_iter().map(|(_, h)| {
            let valid_to = h.valid_to.map_or(Datum::Null, Datum::Timestamp);
            Row::pack(h.row.iter().chain([valid_to]))
        });
        rows.collect()
    })
}

/// The table `read` gives of the versions of `changes` so far, at each system time, as a
/// stream of the differences; changes whose rowtime is NULL are refused.
fn read(
    changes: &Stream,
    input: &RelExpr,
    refused: &mut Vec<Refused>,
    read: impl Fn(&operator::Reference<Row, Ts, Row>) -> Vec<Row>,
) -> Stream {
    let key = input
        .schema
        .primary_key
        .clone()
        .expect("the plan checked the key");
    let column = input.schema.rowtime.as_ref().expect("checked").column;
    let mut datums = DatumVec::new();
    let mut versions: Vec<(SysTime, (Row, Version<Ts, Row>))> = Vec::new();
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
        let mut rows = read(&table);
        rows.sort();
        diff_into(&mut out, now, &previous, &rows);
        previous = rows;
    }
    out
}
