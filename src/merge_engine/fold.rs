//! One column's aggregate function applied to one write: the cell fold shared by
//! `aggregation` and `partial-update`'s aggregated columns. The arithmetic and comparisons are
//! the column type's ([`values`](super::values)).

use super::order::OrderKey;
use super::values::{boolean, boolean_cell, compare, text, zero, Num};
use super::{AggFunction, FieldAgg};
use crate::operators::RowKind;
use crate::repr::Datum;

/// A cell of a row being merged: a datum (borrowed from the stored row or the write, or a
/// computed number or boolean, which borrows nothing) or computed text.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Cell<'a> {
    /// A datum.
    Datum(Datum<'a>),
    /// Computed text (a `listagg`, a number of a text column).
    Text(String),
}

impl<'a> Cell<'a> {
    /// NULL.
    pub(super) const NULL: Cell<'static> = Cell::Datum(Datum::Null);

    /// The cell's datum.
    pub(super) fn datum(&self) -> Datum<'_> {
        match self {
            Cell::Datum(d) => *d,
            Cell::Text(s) => Datum::Str(s),
        }
    }

    /// Whether the cell is NULL.
    pub(super) fn is_null(&self) -> bool {
        matches!(self, Cell::Datum(Datum::Null))
    }
}

/// One column's value after a write of `kind` with order `rank`: `input` accumulated into
/// `acc`, or retracted from it (left as it is with `ignore_retract`); `stored` is the order of
/// the write that supplied the value of an order-dependent function. An error names the column.
pub(super) fn fold_cell<'a>(
    f: &FieldAgg,
    kind: RowKind,
    acc: Cell<'a>,
    input: Datum<'a>,
    rank: &OrderKey,
    stored: &mut Option<OrderKey>,
) -> Result<Cell<'a>, String> {
    let result = if kind.is_accumulate() {
        accumulate(f, acc, input, rank, stored)
    } else if f.ignore_retract {
        Ok(acc)
    } else {
        retract(f, acc, input)
    };
    result.map_err(|e| format!("column '{}': {e}", f.name))
}

fn accumulate<'a>(
    f: &FieldAgg,
    acc: Cell<'a>,
    input: Datum<'a>,
    rank: &OrderKey,
    stored: &mut Option<OrderKey>,
) -> Result<Cell<'a>, String> {
    use AggFunction::*;
    let ty = &f.ty;
    let later = stored.as_ref().is_none_or(|s| rank >= s);
    let earlier = stored.as_ref().is_none_or(|s| rank < s);
    let take = match f.function {
        LastValue => later,
        LastNonNullValue => later && !input.is_null(),
        FirstValue => earlier,
        FirstNonNullValue => earlier && !input.is_null(),
        _ => false,
    };
    if take {
        *stored = Some(rank.clone());
        return Ok(Cell::Datum(input));
    }
    if matches!(
        f.function,
        LastValue | LastNonNullValue | FirstValue | FirstNonNullValue
    ) {
        return Ok(acc);
    }
    if input.is_null() {
        return match (f.function, acc.is_null()) {
            (Count, true) => Num::Int(0).cell(ty),
            _ => Ok(acc),
        };
    }
    if acc.is_null() {
        return match f.function {
            Count => Num::Int(1).cell(ty),
            Sum | Product => Num::read(ty, input)?.cell(ty),
            BoolAnd | BoolOr => Ok(boolean_cell(ty, boolean(input)?)),
            _ => Ok(Cell::Datum(input)),
        };
    }
    let acc_value = acc.datum();
    let number = |cell| Num::read(ty, cell);
    let combined = match f.function {
        Sum => number(acc_value)?
            .add(number(input)?, false, ty)?
            .cell(ty)?,
        Product => number(acc_value)?.mul(number(input)?, ty)?.cell(ty)?,
        Count => number(acc_value)?.add(Num::Int(1), false, ty)?.cell(ty)?,
        Max if compare(ty, input, acc_value).is_gt() => Cell::Datum(input),
        Min if compare(ty, input, acc_value).is_lt() => Cell::Datum(input),
        ListAgg => Cell::Text(format!(
            "{}{}{}",
            text(acc_value)?,
            f.delimiter,
            text(input)?
        )),
        // Both cells are read before combining: a non-boolean input is refused whatever the
        // accumulated value (no short-circuit admission of a bad cell).
        BoolAnd => {
            let (a, b) = (boolean(acc_value)?, boolean(input)?);
            boolean_cell(ty, a && b)
        }
        BoolOr => {
            let (a, b) = (boolean(acc_value)?, boolean(input)?);
            boolean_cell(ty, a || b)
        }
        _ => return Ok(acc),
    };
    Ok(combined)
}

fn retract<'a>(f: &FieldAgg, acc: Cell<'a>, input: Datum<'_>) -> Result<Cell<'a>, String> {
    use AggFunction::*;
    let ty = &f.ty;
    if !f.function.supports_retract() {
        return Err(format!(
            "aggregate function '{}' does not support retraction (-U/-D); set 'fields.{}.ignore-retract' = 'true' to ignore retractions of this column",
            f.function, f.name
        ));
    }
    if input.is_null() {
        return Ok(if f.function == LastValue {
            Cell::NULL
        } else {
            acc
        });
    }
    let input = || Num::read(ty, input);
    let number = match (f.function, acc.is_null()) {
        (LastValue | LastNonNullValue, _) => return Ok(Cell::NULL),
        (Sum, true) => zero(ty).add(input()?, true, ty)?,
        (Sum, false) => Num::read(ty, acc.datum())?.add(input()?, true, ty)?,
        (_, true) => return Err("cannot retract from a NULL product".to_string()),
        (_, false) => Num::read(ty, acc.datum())?.div(input()?, ty)?,
    };
    number.cell(ty)
}
