//! The reference of the OVER aggregation ([`Over`]): per row, its frame among the accepted rows
//! of its partition sorted by `(rowtime, seq)`, aggregated from scratch. Incremental mode
//! recomputes every row at every system time; final mode emits each row once, at the first
//! system time whose watermark has passed its rowtime, and refuses rows behind the watermark.

use std::collections::{BTreeMap, BTreeSet};

use crate::expr::RowArena;
use crate::plan::{watermark_delay_ms, Over, OverFrame, PlanError};
use crate::repr::{Datum, Row, Ts};
use differential_temporal_operators::{Change, RowKind, Seq, SysTime};

use super::{as_table_stream, event_time, refuse, Refused, Stream};

/// The output stream of `o` over its input's `changes`, in final mode if `final_mode`.
pub(super) fn evaluate(
    o: &Over,
    changes: Stream,
    refused: &mut Vec<Refused>,
    final_mode: bool,
) -> Result<Stream, PlanError> {
    let mut accepted = Vec::new();
    let mut arena = RowArena::new();
    for (time, change) in changes {
        // As the rendered operator (`render::over`): an OVER aggregation consumes inserts
        // only, a retraction that still came is refused, not read as a row.
        if change.kind != RowKind::Insert {
            let reason = format!(
                "a {} row into an OVER aggregation, which consumes inserts only",
                change.kind
            );
            refused.push(refuse(time, change.seq, reason));
            continue;
        }
        let Some(t) = event_time(&change.row, o.time) else {
            refused.push(refuse(time, change.seq, "the event time is NULL"));
            continue;
        };
        let datums: Vec<Datum> = change.row.iter().collect();
        let failed = o.aggregates.iter().find_map(|agg| {
            arena.clear();
            let mut acc = agg.create_accumulator();
            agg.update(&mut acc, &datums, 1, &arena).err()
        });
        match failed {
            Some(e) => refused.push(refuse(time, change.seq, e.to_string())),
            None => accepted.push((time, t, change)),
        }
    }
    let failed = std::cell::RefCell::new(BTreeSet::new());
    let out = if final_mode {
        on_watermark(o, accepted, &failed, refused)
    } else {
        let changes: Stream = accepted.into_iter().map(|(s, _, c)| (s, c)).collect();
        as_table_stream(&changes, true, |rows| {
            // Every accepted change is an insertion, and `as_table_stream` passes positive
            // multiplicities: `count >= 1`.
            let rows = rows.into_iter().flat_map(|(seq, row, count)| {
                std::iter::repeat_n((seq, row), count.unsigned_abs())
            });
            let mut outputs = Vec::new();
            for_each_output(o, rows.collect(), |_, out| match out {
                Ok(row) => outputs.push(row),
                Err(seq) => {
                    failed.borrow_mut().insert(seq);
                }
            });
            outputs
        })
    };
    refused.extend((failed.into_inner().into_iter()).map(|seq| refuse(0, seq, "overflow")));
    Ok(out)
}

/// Final mode: per system time `s` with watermark `W(s)` (the greatest rowtime of the rows of
/// earlier system times, minus the delay), the waiting rows with rowtime `< W(s)` emit, then
/// the rows of `s` behind `W(s)` are refused as late and the others wait; at the system time
/// after the last row, every waiting row emits.
fn on_watermark(
    o: &Over,
    accepted: Vec<(SysTime, Ts, Change<Row>)>,
    failed: &std::cell::RefCell<BTreeSet<Seq>>,
    refused: &mut Vec<Refused>,
) -> Stream {
    let delay = watermark_delay_ms(&o.input.schema, o.time);
    let epochs: BTreeSet<SysTime> = accepted.iter().flat_map(|r| [r.0, r.0 + 1]).collect();
    let end = epochs.last().copied().unwrap_or(0);
    let mut kept: Vec<(Seq, Row)> = Vec::new();
    let mut waiting: BTreeSet<Seq> = BTreeSet::new();
    let mut out = Vec::new();
    for now in epochs {
        let mark = (accepted.iter())
            .filter(|r| r.0 < now)
            .map(|r| Ts {
                millis: r.1.millis.saturating_sub(delay),
                ..r.1
            })
            .max();
        let passed = |t: Ts| now == end || mark.is_some_and(|m| t < m);
        for_each_output(o, kept.clone(), |(seq, t), result| {
            if waiting.contains(&seq) && passed(t) {
                waiting.remove(&seq);
                match result {
                    Ok(row) => out.push((now, Change::new(now, RowKind::Insert, row))),
                    Err(seq) => {
                        failed.borrow_mut().insert(seq);
                    }
                }
            }
        });
        for (_, t, change) in accepted.iter().filter(|r| r.0 == now) {
            if mark.is_some_and(|m| *t < m) {
                let reason = format!("late row: event time {t:?} is behind the watermark");
                refused.push(refuse(now, change.seq, reason));
                continue;
            }
            waiting.insert(change.seq);
            kept.push((change.seq, change.row.clone()));
        }
    }
    out
}

/// Calls `f` with each row's `(seq, rowtime)` and its output row (the row, then the aggregates
/// over its frame), or its `seq` when an aggregate cannot be computed.
fn for_each_output(
    o: &Over,
    rows: Vec<(Seq, Row)>,
    mut f: impl FnMut((Seq, Ts), Result<Row, Seq>),
) {
    let mut partitions: BTreeMap<Row, Vec<(Ts, Seq, Row)>> = BTreeMap::new();
    for (seq, row) in rows {
        let key = Row::pack(
            o.partition
                .iter()
                .map(|&c| row.get(c).unwrap_or(Datum::Null)),
        );
        let t = event_time(&row, o.time).expect("accepted rows have a rowtime");
        partitions.entry(key).or_default().push((t, seq, row));
    }
    for mut rows in partitions.into_values() {
        rows.sort_by_key(|(t, seq, _)| (*t, *seq));
        let decoded: Vec<Vec<Datum>> = rows.iter().map(|(_, _, r)| r.iter().collect()).collect();
        for (i, (t, seq, row)) in rows.iter().enumerate() {
            let frame = frame_of(o.frame, &rows, i);
            let mut out = Row::new();
            let mut packer = out.packer();
            packer.extend_by_row(row.as_row_ref());
            let failed = o.aggregates.iter().any(|agg| {
                let group = decoded[frame.clone()].iter().map(|d| (d.as_slice(), 1));
                agg.eval_group(group, &mut packer).is_err()
            });
            f((*seq, *t), if failed { Err(*seq) } else { Ok(out) });
        }
    }
}

/// The positions of the frame of row `i` among `rows`, sorted by `(rowtime, seq)`.
fn frame_of(frame: OverFrame, rows: &[(Ts, Seq, Row)], i: usize) -> std::ops::Range<usize> {
    let t = rows[i].0;
    let peers_end = i + rows[i..].iter().take_while(|r| r.0 == t).count();
    match frame {
        OverFrame::Rows(n) => i.saturating_sub(n.map_or(i, |n| n as usize))..i + 1,
        OverFrame::Range(None) => 0..peers_end,
        OverFrame::Range(Some(p)) => {
            let lower = Ts {
                millis: t.millis.saturating_sub(p),
                ..t
            };
            rows.iter().take_while(|r| r.0 < lower).count()..peers_end
        }
    }
}
