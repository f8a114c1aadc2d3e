//! The reference of an interval join in final mode: the inputs' rows with a key and a rowtime
//! given, per system time, to the interval join's sequential model
//! ([`differential_temporal_operators::interval_join::reference`]); the other rows of a kept
//! side padded when they arrive (they can match nothing).

use crate::expr::RowArena;
use crate::plan::{joined_row, EquiJoin, IntervalBounds};
use crate::repr::{Datum, DatumVec, Row, Ts};
use differential_temporal_operators::interval_join::reference::{interval_join, Side};
use differential_temporal_operators::interval_join::Bounds;
use differential_temporal_operators::testing::Epoch;
use differential_temporal_operators::{Change, RowKind, Seq, SysTime};

use super::{event_time, has_null, project, refuse, Refused, Stream};

/// A keyed row: `(key, (rowtime, seq, row))`.
type Timed = (Row, (Ts, Seq, Row));

/// The output stream of `join` (an interval join with `bounds`) over its inputs' streams.
pub(super) fn evaluate(
    join: &EquiJoin,
    bounds: &IntervalBounds,
    left: &Stream,
    right: &Stream,
    refused: &mut Vec<Refused>,
) -> Stream {
    let widths = (join.left.schema.len(), join.right.schema.len());
    let kept = (join.join_type.keeps_left(), join.join_type.keeps_right());
    let mut out = Vec::new();
    let (left_epochs, left_alone) = timed(left, &join.left_key, bounds.left_time);
    let (right_epochs, right_alone) = timed(right, &join.right_key, bounds.right_time);
    let mut pad = |alone: Vec<(SysTime, Row)>, left_side: bool| {
        for (time, row) in alone {
            let padded = match left_side {
                true => joined_row(Some(&row), None, widths),
                false => joined_row(None, Some(&row), widths),
            };
            out.push((time, Change::new(time, RowKind::Insert, padded)));
        }
    };
    if kept.0 {
        pad(left_alone, true);
    }
    if kept.1 {
        pad(right_alone, false);
    }
    let delay =
        |plan: &crate::plan::RelExpr| plan.schema.rowtime.as_ref().map_or(0, |r| r.delay_ms);
    let (left_delay, right_delay) = (delay(&join.left), delay(&join.right));
    let lateness = |d: i64| {
        move |max: &Ts| Ts {
            millis: max.millis.saturating_sub(d),
            ..*max
        }
    };
    let (left_late, right_late) = (lateness(left_delay), lateness(right_delay));
    let shift = |t: &Ts, ms: i64| Ts {
        millis: t.millis.saturating_add(ms),
        ..*t
    };
    let window = Bounds::new(bounds.lower_ms, bounds.upper_ms, shift);
    let residual = |l: &Row, r: &Row| match &join.residual {
        None => true,
        Some(residual) => {
            let arena = RowArena::new();
            let datums: Vec<Datum> = l.iter().chain(r.iter()).collect();
            matches!(residual.eval(&datums, &arena), Ok(Datum::Bool(true)))
        }
    };
    let (joined, late) = interval_join(
        Side {
            epochs: &left_epochs,
            lateness: &left_late,
            padded: kept.0,
        },
        Side {
            epochs: &right_epochs,
            lateness: &right_late,
            padded: kept.1,
        },
        &window,
        residual,
        |_, l, r| joined_row(l, r, widths),
    );
    for (row, time, diff) in joined {
        for _ in 0..diff {
            out.push((time, Change::new(time, RowKind::Insert, row.clone())));
        }
    }
    for (seq, time, count) in late {
        for _ in 0..count {
            refused.push(refuse(time, seq, "late row"));
        }
    }
    out
}

/// The stream's rows with a key free of NULLs and a rowtime, as epochs of the model's records,
/// and the other rows with their system times.
fn timed(stream: &Stream, key: &[usize], time: usize) -> (Vec<Epoch<Timed>>, Vec<(SysTime, Row)>) {
    let mut epochs: Vec<Epoch<Timed>> = Vec::new();
    let mut alone = Vec::new();
    let mut datums = DatumVec::new();
    for (at, change) in stream {
        let k = project(&change.row, key, &mut datums);
        match (has_null(&k), event_time(&change.row, time)) {
            (false, Some(t)) => {
                let at = *at as usize;
                if epochs.len() <= at {
                    epochs.resize_with(at + 1, Vec::new);
                }
                epochs[at].push(((k, (t, change.seq, change.row.clone())), 1));
            }
            _ => alone.push((*at, change.row.clone())),
        }
    }
    (epochs, alone)
}
