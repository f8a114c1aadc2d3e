//! The reference model of [`Correlate`]: each input change mapped, on its own, to its
//! expansion's changes (the same kind and `seq`), the arguments and condition evaluated by
//! walking the expression trees; a row whose expansion fails is refused.

use crate::expr::RowArena;
use crate::repr::{Datum, Row};
use differential_temporal_operators::Change;

use super::{refuse, Refused, Stream};
use crate::plan::Correlate;

/// The output stream of `correlate` (whose output has `width` expansion columns) over its
/// input's changes.
pub(super) fn correlate(
    correlate: &Correlate,
    width: usize,
    changes: Stream,
    refused: &mut Vec<Refused>,
) -> Stream {
    let mut out = Vec::new();
    let mut arena = RowArena::new();
    for (time, change) in changes {
        arena.clear();
        let datums: Vec<Datum> = change.row.iter().collect();
        let args: Result<Vec<Datum>, _> = (correlate.args.iter())
            .map(|a| a.eval(&datums, &arena))
            .collect();
        let mut rows: Vec<Row> = Vec::new();
        let expanded = args.and_then(|args| {
            correlate.expand_row(&args, change.row.as_row_ref(), width, &mut rows, |row| {
                let joined: Vec<Datum> = row.iter().collect();
                let condition = correlate
                    .condition
                    .as_ref()
                    .expect("called with a condition");
                Ok(matches!(
                    condition.eval(&joined, &arena)?,
                    Datum::Bool(true)
                ))
            })
        });
        match expanded {
            Ok(()) => out.extend(
                rows.into_iter()
                    .map(|row| (time, Change::new(change.seq, change.kind, row))),
            ),
            Err(e) => refused.push(refuse(time, change.seq, e.to_string())),
        }
    }
    out
}
