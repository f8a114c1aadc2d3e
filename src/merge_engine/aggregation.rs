//! `aggregation` (Apache Paimon, rule C11): every non-key column is merged by its aggregate
//! function.
//!
//! Numbers: a cell that parses as an `i64` is an integer, otherwise one that parses as a finite
//! `f64` is a float. Integers stay integers (`sum`, `product`, `count` on integers give integers;
//! overflow is a refused write, never a wrap); mixing in a float gives a float, rendered with
//! Rust's shortest round-trip form (`35.5`, `3.0`). Cells a function does not compute (`max`,
//! `min`, `last_value`, ...) keep their input text. `max` and `min` order numbers by value
//! before any other cell, and the other cells by text.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use smallvec::{smallvec, SmallVec};

use super::order::{order_key, OrderField, OrderKey};
use super::{Deletes, KeyState, Row};
use crate::operators::keyed_merge::{Folded, Refusal};
use crate::operators::RowKind;
use crate::row::{pack_cells, TextCells};

/// An aggregate function (`'fields.<f>.aggregate-function'`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AggFunction {
    /// Sum of the non-NULL values; retractable (subtracts).
    Sum,
    /// Product of the non-NULL values; retractable (divides; an inexact integer division is an
    /// error).
    Product,
    /// Number of non-NULL values.
    Count,
    /// Largest non-NULL value (numeric if both parse as numbers, else text order).
    Max,
    /// Smallest non-NULL value.
    Min,
    /// The value of the last write (NULL overwrites); retraction sets NULL.
    LastValue,
    /// The last non-NULL value (the default); retracting a non-NULL value sets NULL.
    LastNonNullValue,
    /// The value of the first write (a leading NULL is kept).
    FirstValue,
    /// The first non-NULL value.
    FirstNonNullValue,
    /// Non-NULL values joined by the field's delimiter, in arrival order.
    ListAgg,
    /// Logical AND of the non-NULL booleans.
    BoolAnd,
    /// Logical OR of the non-NULL booleans.
    BoolOr,
}

impl AggFunction {
    /// Every function, by the name users write.
    pub const ALL: [(&'static str, AggFunction); 12] = [
        ("sum", AggFunction::Sum),
        ("product", AggFunction::Product),
        ("count", AggFunction::Count),
        ("max", AggFunction::Max),
        ("min", AggFunction::Min),
        ("last_value", AggFunction::LastValue),
        ("last_non_null_value", AggFunction::LastNonNullValue),
        ("first_value", AggFunction::FirstValue),
        ("first_non_null_value", AggFunction::FirstNonNullValue),
        ("listagg", AggFunction::ListAgg),
        ("bool_and", AggFunction::BoolAnd),
        ("bool_or", AggFunction::BoolOr),
    ];

    /// The function's name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("?", |(n, _)| n)
    }

    /// Whether a `-U`/`-D` can be applied (Paimon: sum, product, last_value,
    /// last_non_null_value).
    pub fn supports_retract(self) -> bool {
        use AggFunction::*;
        matches!(self, Sum | Product | LastValue | LastNonNullValue)
    }
}

impl fmt::Display for AggFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AggFunction {
    type Err = String;

    /// Parses a function name (case-insensitive); the error lists the valid names.
    fn from_str(s: &str) -> Result<Self, String> {
        let lower = s.trim().to_ascii_lowercase();
        Self::ALL
            .iter()
            .find(|(n, _)| *n == lower)
            .map(|(_, f)| *f)
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|(n, _)| *n).collect();
                names.join(", ")
            })
    }
}

/// How one column is aggregated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldAgg {
    /// Column name (for messages).
    pub name: String,
    /// The function.
    pub function: AggFunction,
    /// `'fields.<f>.ignore-retract' = 'true'`: retractions leave this column unchanged.
    pub ignore_retract: bool,
    /// `listagg` delimiter (`'fields.<f>.list-agg-delimiter'`, default `,`).
    pub delimiter: String,
}

/// What a `-U`/`-D` write does to an `aggregation` table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AggDeletes {
    /// Paimon's default: the retraction is applied field by field where the function supports
    /// it (Paimon `AggregateMergeFunction`, rule C11; see [`Aggregation`]).
    Retract,
    /// Paimon `'aggregation.remove-record-on-delete' = 'true'`: a `-D` removes the whole row
    /// (`-D old`; the key's next write starts from an empty row); a `-U` is still retracted
    /// field by field.
    RemoveRecordOnDelete,
    /// Fluss `'table.delete.behavior'` (rules C4, C8): a Fluss aggregate is never retracted.
    /// [`Deletes::Ignore`] (`ignore`, Fluss's default) ignores `-U` and `-D`;
    /// [`Deletes::Reject`] (`disable`) refuses them; [`Deletes::Apply`] (`allow`) makes a `-D`
    /// remove the whole row and ignores a `-U` (Fluss's Flink sink takes an upsert changelog:
    /// a `-U` never reaches the table).
    Fluss(Deletes),
}

/// The reason of a `-D` that would remove the row of a key without one (nothing to remove).
const NO_ROW_TO_REMOVE: &str = "-D of a key without a row on the aggregation merge engine";

/// The note of a retraction applied to a key without a row (reported, as it retracts what was
/// never inserted).
const RETRACTED_ABSENT: &str = "retraction of a key without a row: applied to an empty row, as Paimon does (the changelog retracts what was never inserted)";

/// Paimon `aggregation` (also Fluss `aggregation`, with [`AggDeletes::Fluss`]).
///
/// Columns with `None` in [`Aggregation::fields`] (the primary key) are copied from the first
/// write. With `sequence.field`, order-dependent functions (`last_value`, `last_non_null_value`,
/// `first_value`, `first_non_null_value`) follow the sequence (NULL lowest, ties by arrival)
/// rather than arrival, as Paimon applies writes in sequence order; the sequence columns
/// themselves are configured as `last_value` (case C11 part 3). `listagg` joins in arrival order.
///
/// A retraction (`-U`/`-D`) first goes to [`Aggregation::deletes`]. If it is retracted, that is
/// field by field where the function supports it ([`AggFunction::supports_retract`]); for any
/// other function it is a refused write naming the column, unless the column has
/// `ignore_retract`. The row stays (with `-U old, +U new`). A retraction of a key without a row
/// is applied as Paimon applies it, to an empty row (a `sum` becomes the negated value, a
/// `last_value` NULL, a `product` is refused), and it is also reported, so that a changelog
/// that retracts what was never inserted does not pass unnoticed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aggregation {
    /// Per column: its aggregation, or `None` for a primary-key column.
    pub fields: Vec<Option<FieldAgg>>,
    /// The `sequence.field` columns (empty: arrival order).
    pub sequence: Vec<OrderField>,
    /// What a `-U`/`-D` write does.
    pub deletes: AggDeletes,
}

impl Aggregation {
    /// Folds one write (see [`MergeRule::merge`](crate::operators::keyed_merge::MergeRule::merge)).
    pub fn merge(
        &self,
        state: &mut Option<KeyState>,
        kind: RowKind,
        write: &Row,
        out: &mut Vec<(RowKind, Row)>,
    ) -> Folded {
        let cells: Cells<'_> = write.cells().collect();
        if cells.len() != self.fields.len() {
            let n = self.fields.len();
            return Err(format!("write has {} columns, the table {n}", cells.len()).into());
        }
        if !kind.is_accumulate() {
            let delete = kind == RowKind::Delete;
            match &self.deletes {
                AggDeletes::Retract => {}
                AggDeletes::RemoveRecordOnDelete | AggDeletes::Fluss(Deletes::Apply) if delete => {
                    let old = state.take().and_then(|s| s.row);
                    let old = old.ok_or_else(|| Refusal::ignored(NO_ROW_TO_REMOVE))?;
                    out.push((RowKind::Delete, old));
                    return Ok(None);
                }
                AggDeletes::RemoveRecordOnDelete => {}
                AggDeletes::Fluss(Deletes::Reject(reason)) => {
                    return Err(Refusal::invalid(reason.clone()))
                }
                AggDeletes::Fluss(Deletes::Apply) => {
                    return Err(Refusal::ignored(
                        "-U write on the Fluss aggregation merge engine ('table.delete.behavior' = 'allow' applies -D only)"
                    ))
                }
                AggDeletes::Fluss(Deletes::Ignore) => {
                    return Err(Refusal::ignored(format!(
                        "{kind} write on the Fluss aggregation merge engine ('table.delete.behavior' = 'ignore')"
                    )))
                }
            }
        }
        let rank = order_key(&self.sequence, write)?;
        let old = state.as_ref().and_then(|s| s.row.as_ref());
        let stored: Cells<'_> = match old {
            Some(old) => old.cells().collect(),
            None => smallvec![None; cells.len()],
        };
        let mut ranks = state
            .as_ref()
            .map_or_else(|| vec![None; cells.len()], |s| s.ranks.clone());
        let mut building: SmallVec<[Cell<'_>; 16]> = SmallVec::with_capacity(cells.len());
        for (c, field) in self.fields.iter().enumerate() {
            let Some(f) = field else {
                // Key columns come from the first write.
                let cell = if old.is_none() { cells[c] } else { stored[c] };
                building.push(cell.map(Cow::Borrowed));
                continue;
            };
            let acc = stored[c].map(Cow::Borrowed);
            building.push(fold_cell(f, kind, acc, cells[c], &rank, &mut ranks[c])?);
        }
        let row = pack_cells(building.iter().map(|c| c.as_deref()));
        // The cells borrow the stored row, which is replaced below.
        drop((building, stored));
        let note = match state.take().and_then(|s| s.row) {
            None => {
                out.push((RowKind::Insert, row.clone()));
                (!kind.is_accumulate()).then(|| Refusal::invalid(RETRACTED_ABSENT))
            }
            Some(old) => {
                out.push((RowKind::UpdateBefore, old));
                out.push((RowKind::UpdateAfter, row.clone()));
                None
            }
        };
        *state = Some(KeyState {
            row: Some(row),
            order: OrderKey::new(),
            ranks,
        });
        Ok(note)
    }
}

/// The cells of a row, decoded (`None` is NULL).
pub(super) type Cells<'a> = SmallVec<[Option<&'a str>; 16]>;

/// A cell of a row being merged: borrowed from the stored row or the write, or computed.
pub(super) type Cell<'a> = Option<Cow<'a, str>>;

/// One column's value after a write of `kind` with order `rank`: `input` accumulated into
/// `acc`, or retracted from it (left as it is with `ignore_retract`); `stored` is the order of
/// the write that supplied the value of an order-dependent function. An error names the column.
pub(super) fn fold_cell<'a>(
    f: &FieldAgg,
    kind: RowKind,
    acc: Cell<'a>,
    input: Option<&'a str>,
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
    input: Option<&'a str>,
    rank: &OrderKey,
    stored: &mut Option<OrderKey>,
) -> Result<Cell<'a>, String> {
    use AggFunction::*;
    let later = stored.as_ref().is_none_or(|s| rank >= s);
    let earlier = stored.as_ref().is_none_or(|s| rank < s);
    let take = match f.function {
        LastValue => later,
        LastNonNullValue => later && input.is_some(),
        FirstValue => earlier,
        FirstNonNullValue => earlier && input.is_some(),
        _ => false,
    };
    if take {
        *stored = Some(rank.clone());
        return Ok(input.map(Cow::Borrowed));
    }
    if matches!(
        f.function,
        LastValue | LastNonNullValue | FirstValue | FirstNonNullValue
    ) {
        return Ok(acc);
    }
    let Some(input) = input else {
        return Ok(match (f.function, acc) {
            (Count, None) => Some(Cow::Borrowed("0")),
            (_, acc) => acc,
        });
    };
    let Some(acc) = acc else {
        return Ok(Some(match f.function {
            Count => Cow::Borrowed("1"),
            Sum | Product => Cow::Owned(Num::parse(input)?.render()),
            BoolAnd | BoolOr => Cow::Borrowed(bool_text(parse_bool(input)?)),
            _ => Cow::Borrowed(input),
        }));
    };
    Ok(Some(match f.function {
        Sum => Cow::Owned(Num::parse(&acc)?.add(Num::parse(input)?, false)?.render()),
        Product => Cow::Owned(Num::parse(&acc)?.mul(Num::parse(input)?)?.render()),
        Count => Cow::Owned(Num::parse(&acc)?.add(Num::Int(1), false)?.render()),
        Max if compare(input, &acc) == Ordering::Greater => Cow::Borrowed(input),
        Min if compare(input, &acc) == Ordering::Less => Cow::Borrowed(input),
        ListAgg => Cow::Owned(format!("{acc}{}{input}", f.delimiter)),
        // Both cells are read before combining: a non-boolean input is refused whatever the
        // accumulated value (no short-circuit admission of a bad cell).
        BoolAnd => {
            let (acc, input) = (parse_bool(&acc)?, parse_bool(input)?);
            Cow::Borrowed(bool_text(acc && input))
        }
        BoolOr => {
            let (acc, input) = (parse_bool(&acc)?, parse_bool(input)?);
            Cow::Borrowed(bool_text(acc || input))
        }
        _ => acc,
    }))
}

fn retract<'a>(f: &FieldAgg, acc: Cell<'a>, input: Option<&str>) -> Result<Cell<'a>, String> {
    use AggFunction::*;
    if !f.function.supports_retract() {
        return Err(format!(
            "aggregate function '{}' does not support retraction (-U/-D); set 'fields.{}.ignore-retract' = 'true' to ignore retractions of this column",
            f.function, f.name
        ));
    }
    let Some(input) = input else {
        return Ok(if f.function == LastValue { None } else { acc });
    };
    let number = match (f.function, acc) {
        (LastValue | LastNonNullValue, _) => return Ok(None),
        (Sum, None) => Num::Int(0).add(Num::parse(input)?, true)?,
        (Sum, Some(acc)) => Num::parse(&acc)?.add(Num::parse(input)?, true)?,
        (_, None) => return Err("cannot retract from a NULL product".to_string()),
        (_, Some(acc)) => Num::parse(&acc)?.div(Num::parse(input)?)?,
    };
    Ok(Some(Cow::Owned(number.render())))
}

/// A number: an integer if the text parses as `i64`, else a finite float.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn parse(text: &str) -> Result<Num, String> {
        let text = text.trim();
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Num::Int(i));
        }
        match text.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Num::Float(x)),
            _ => Err(format!("{text:?} is not a number")),
        }
    }

    fn float(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(x) => x,
        }
    }

    fn render(self) -> String {
        match self {
            Num::Int(i) => i.to_string(),
            Num::Float(x) => format!("{x:?}"),
        }
    }

    fn add(self, other: Num, subtract: bool) -> Result<Num, String> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => {
                let r = if subtract {
                    a.checked_sub(b)
                } else {
                    a.checked_add(b)
                };
                r.map(Num::Int)
                    .ok_or_else(|| "integer overflow".to_string())
            }
            (a, b) if subtract => Ok(Num::Float(a.float() - b.float())),
            (a, b) => Ok(Num::Float(a.float() + b.float())),
        }
    }

    fn mul(self, other: Num) -> Result<Num, String> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a
                .checked_mul(b)
                .map(Num::Int)
                .ok_or_else(|| "integer overflow".to_string()),
            (a, b) => Ok(Num::Float(a.float() * b.float())),
        }
    }

    fn div(self, other: Num) -> Result<Num, String> {
        match (self, other) {
            (_, Num::Int(0)) => Err("cannot retract a zero from a product".to_string()),
            (Num::Int(a), Num::Int(b)) if a % b == 0 => Ok(Num::Int(a / b)),
            (Num::Int(_), Num::Int(_)) => {
                Err("retraction would make an integer product inexact".to_string())
            }
            (_, b) if b.float() == 0.0 => Err("cannot retract a zero from a product".to_string()),
            (a, b) => Ok(Num::Float(a.float() / b.float())),
        }
    }
}

/// The order of `max` and `min`: numbers by value before every other cell, the other cells by
/// text, and equal numbers written differently (`10`, `10.0`) by text. A total order over the
/// cells, so the result does not depend on the order the writes arrive in. (Comparing "as
/// numbers if both are, else as text" is not one: `10 > 9`, `9 > 10a` and `10a > 10` as
/// text, so the maximum of `10, 9, 10a` was whichever came last of a cycle.)
fn compare(a: &str, b: &str) -> Ordering {
    let by_value = match (Num::parse(a), Num::parse(b)) {
        (Ok(Num::Int(x)), Ok(Num::Int(y))) => x.cmp(&y),
        (Ok(x), Ok(y)) => x.float().total_cmp(&y.float()),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => Ordering::Equal,
    };
    by_value.then_with(|| a.cmp(b))
}

fn bool_text(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

fn parse_bool(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("{text:?} is not a boolean (true or false)")),
    }
}
