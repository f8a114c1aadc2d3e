//! Rendering of [`Correlate`] (a table function or UNNEST joined laterally): one pass over the
//! input, each row mapped to its expansion's rows with its kind and `seq`, so a retraction
//! retracts exactly its expansions; a row whose function fails is refused with its `seq`.
//!
//! Cost per input row: its arguments evaluated once (compiled), one packed row per output row
//! (the input's columns copied once into it), and no other allocation: the expansion is
//! written into a reused buffer and handed on in an inline vector.

use smallvec::SmallVec;

use crate::expr::{CompiledExpr, EvalError, RowArena};
use crate::plan::Correlate;
use crate::repr::{Datum, DatumVec, Row};
use differential_temporal_operators::keyed_merge::Rejected;
use differential_temporal_operators::Change;

use super::{split, Collection, RenderContext};

/// The output rows of one input row, or why it is refused.
type Expanded<T> = SmallVec<[Result<T, Rejected>; 2]>;

/// Renders `correlate` over its rendered input, whose output has `width` expansion columns.
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    correlate: &Correlate,
    width: usize,
    input: Collection<'s>,
) -> Collection<'s> {
    let mut expand = expander(correlate.clone(), width);
    let mut buffer: Vec<Row> = Vec::new();
    match input {
        Collection::Changelog(c) => {
            let (changes, refused) = split(c.flat_map(move |ch| -> Expanded<Change<Row>> {
                let (seq, kind) = (ch.seq, ch.kind);
                match expand(&ch.row, &mut buffer) {
                    Ok(()) => (buffer.drain(..))
                        .map(|row| Ok(Change::new(seq, kind, row)))
                        .collect(),
                    Err(reason) => std::iter::once(Err(Rejected::invalid(seq, reason))).collect(),
                }
            }));
            ctx.refused.push(refused);
            Collection::Changelog(changes)
        }
        Collection::Table(t) => {
            let (rows, refused) = split(t.flat_map(move |row| -> Expanded<Row> {
                match expand(&row, &mut buffer) {
                    Ok(()) => buffer.drain(..).map(Ok).collect(),
                    Err(reason) => std::iter::once(Err(Rejected::invalid(0, reason))).collect(),
                }
            }));
            ctx.refused.push(refused);
            Collection::Table(rows)
        }
    }
}

/// The per-row expansion: appends a row's output rows to the buffer, or says why it fails.
fn expander(
    correlate: Correlate,
    width: usize,
) -> impl FnMut(&Row, &mut Vec<Row>) -> Result<(), String> {
    let args: Vec<CompiledExpr> = correlate.args.iter().map(|a| a.compile()).collect();
    let condition = correlate.condition.as_ref().map(|c| c.compile());
    let (mut datums, mut joined) = (DatumVec::new(), DatumVec::new());
    let mut arena = RowArena::new();
    move |row, rows| {
        arena.clear();
        let datums = datums.borrow_with(row);
        let mut values: SmallVec<[Datum; 4]> = SmallVec::new();
        for arg in &args {
            values.push(arg.eval(&datums, &arena).map_err(|e| e.to_string())?);
        }
        let keep = |out: &Row| -> Result<bool, EvalError> {
            let Some(condition) = &condition else {
                return Ok(true);
            };
            let out = joined.borrow_with(out);
            Ok(matches!(condition.eval(&out, &arena)?, Datum::Bool(true)))
        };
        correlate
            .expand_row(&values, row.as_row_ref(), width, rows, keep)
            .map_err(|e| e.to_string())
    }
}
