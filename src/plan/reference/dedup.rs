//! The reference of the deduplication node: the rows applied one by one in arrival order
//! (incremental mode), and final-mode keep-first by rowtime on the watermark.

use std::collections::BTreeMap;

use crate::plan::{watermark_delay_ms, DedupOrder, Keep, RelExpr};
use crate::repr::{DatumVec, Row, Ts};
use differential_temporal_operators::dedup::reference as operator;
use differential_temporal_operators::retention::Retention;
use differential_temporal_operators::{Change, RowKind, Seq, SysTime};

use super::rows::{event_time, project, refuse};
use super::{Refused, Stream};

/// Per key of `input`'s rows (`changes`), the first or last by `(rowtime, seq)` (event time) or
/// by `seq` (arrival), as a changelog: a key's first row `+I`, a row replacing the kept one
/// `-U old, +U new` with the new row's `seq`. Other kinds than `+I` are refused (rule A14), as
/// are rows whose rowtime is NULL.
pub(super) fn dedup(
    changes: Stream,
    input: &RelExpr,
    key: &[usize],
    (keep, order): (Keep, DedupOrder),
    refused: &mut Vec<Refused>,
) -> Stream {
    let mut datums = DatumVec::new();
    let rowtime = input.schema.rowtime.as_ref().map(|r| r.column);
    let mut admitted = Vec::new();
    for (time, change) in changes {
        if change.kind != RowKind::Insert {
            refused.push(refuse(time, change.seq, "deduplication takes only +I rows"));
            continue;
        }
        let rank_time = match (order, rowtime) {
            (DedupOrder::EventTime, Some(c)) => match event_time(&change.row, c) {
                Some(t) => Some(t),
                None => {
                    refused.push(refuse(time, change.seq, "NULL event time"));
                    continue;
                }
            },
            _ => None,
        };
        admitted.push((time, rank_time, change));
    }
    // Rows are applied one by one in arrival order, as the operator applies them: a
    // key's first row is `+I`, a row that replaces the kept one is `-U old, +U new`
    // (with the new row's seq), so every intermediate version is in the changelog.
    admitted.sort_by_key(|(t, _, c)| (*t, c.seq));
    let mut out = Vec::new();
    let mut kept: BTreeMap<Row, (Option<Ts>, Seq, Row)> = BTreeMap::new();
    for (time, rank_time, change) in admitted {
        let k = project(&change.row, key, &mut datums);
        match kept.get(&k) {
            None => {
                out.push((
                    time,
                    Change::new(change.seq, RowKind::Insert, change.row.clone()),
                ));
                kept.insert(k, (rank_time, change.seq, change.row));
            }
            Some((t, seq, old)) => {
                let ord = (rank_time, change.seq).cmp(&(*t, *seq));
                let replace = match keep {
                    Keep::First => ord.is_lt(),
                    Keep::Last => ord.is_gt(),
                };
                if replace {
                    out.push((
                        time,
                        Change::new(change.seq, RowKind::UpdateBefore, old.clone()),
                    ));
                    out.push((
                        time,
                        Change::new(change.seq, RowKind::UpdateAfter, change.row.clone()),
                    ));
                    kept.insert(k, (rank_time, change.seq, change.row));
                }
            }
        }
    }
    out
}

/// Final-mode keep-first by rowtime (rule A9): the operator's own sequential model
/// ([`operator::first_on_watermark`]) over `changes` cut into their system times, with the
/// watermark `max rowtime - delay` and, with `state_ttl` (ms), the emitted flags' retention
/// (rule A13). Rows whose rowtime is NULL are refused first, as rendering refuses them.
pub(super) fn first_on_watermark(
    changes: Stream,
    input: &RelExpr,
    key: &[usize],
    state_ttl: Option<i64>,
    refused: &mut Vec<Refused>,
) -> Stream {
    let column = input
        .schema
        .rowtime
        .as_ref()
        .expect("the plan checked the rowtime")
        .column;
    let delay = watermark_delay_ms(&input.schema, column);
    // The model's epochs are the system times that hold rows and those right after them (where
    // the watermark their rows raise is in force), in order: its epoch `i` is `times[i]`; the
    // input ends at the system time after the last row's, the epoch after the last.
    let mut datums = DatumVec::new();
    let mut by_time: BTreeMap<SysTime, Vec<(Row, Change<Row>)>> = BTreeMap::new();
    for (time, change) in changes {
        by_time.entry(time + 1).or_default();
        if event_time(&change.row, column).is_none() {
            refused.push(refuse(time, change.seq, "NULL event time"));
            continue;
        }
        let keyed = (project(&change.row, key, &mut datums), change);
        by_time.entry(time).or_default().push(keyed);
    }
    while by_time
        .last_key_value()
        .is_some_and(|(_, rows)| rows.is_empty())
    {
        by_time.pop_last();
    }
    let times: Vec<SysTime> = by_time.keys().copied().collect();
    let epochs: Vec<Vec<(Row, Change<Row>)>> = (by_time.into_values())
        .map(|mut epoch| {
            epoch.sort_by_key(|(_, c)| c.seq);
            epoch
        })
        .collect();
    let time_of_epoch = |i: SysTime| {
        let last = times.last().map_or(0, |t| t + 1);
        times.get(i as usize).copied().unwrap_or(last)
    };
    let shift = |t: &Ts, ms: i64| Ts {
        millis: t.millis.saturating_add(ms),
        ..*t
    };
    let retention = state_ttl.map(|ttl| Retention::new(move |t: &Ts| shift(t, ttl)));
    let expected = operator::first_on_watermark(
        &epochs,
        |row: &Row| event_time(row, column).expect("checked above"),
        |max: &Ts| shift(max, -delay),
        retention.as_ref(),
    );
    for ((_, rejected), epoch, _) in expected.rejected {
        refused.push(refuse(time_of_epoch(epoch), rejected.seq, rejected.reason));
    }
    (expected.changelog.into_iter())
        .map(|((_, change), epoch, _)| (time_of_epoch(epoch), change))
        .collect()
}
