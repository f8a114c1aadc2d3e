//! `aggregation` (Apache Paimon, rule C11): every non-key column is merged by its aggregate
//! function, computing with values of the column's declared type ([`values`](super::values):
//! text columns by the text rules, typed ones as their type). Cells a function does not compute
//! (`max`, `min`, `last_value`, ...) keep their input value.

use std::fmt;
use std::str::FromStr;

use smallvec::SmallVec;

use super::fold::{fold_cell, Cell};
use super::order::{order_key, OrderField, OrderKey};
use super::{Deletes, KeyState, Row};
use crate::operators::keyed_merge::{Folded, Refusal};
use crate::operators::RowKind;
use crate::repr::{DataType, Datum};

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
    /// The column's declared type: the function computes with values of this type
    /// ([`values`](super::values); [`DataType::STRING`], a column without a declared type,
    /// keeps the text rules).
    pub ty: DataType,
}

impl FieldAgg {
    /// Column `name` aggregated by `function` over values of type `ty`, with Paimon's defaults
    /// (retractions applied, `listagg` delimiter `,`).
    pub fn new(name: impl Into<String>, function: AggFunction, ty: DataType) -> FieldAgg {
        FieldAgg {
            name: name.into(),
            function,
            ignore_retract: false,
            delimiter: ",".to_string(),
            ty,
        }
    }
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
        let cells: Cells<'_> = write.iter().collect();
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
            Some(old) => old.iter().collect(),
            None => (0..cells.len()).map(|_| Datum::Null).collect(),
        };
        let mut ranks = state
            .as_ref()
            .map_or_else(|| vec![None; cells.len()], |s| s.ranks.clone());
        let mut building: SmallVec<[Cell<'_>; 16]> = SmallVec::with_capacity(cells.len());
        for (c, field) in self.fields.iter().enumerate() {
            let Some(f) = field else {
                // Key columns come from the first write.
                let cell = if old.is_none() { cells[c] } else { stored[c] };
                building.push(Cell::Datum(cell));
                continue;
            };
            let acc = Cell::Datum(stored[c]);
            building.push(fold_cell(f, kind, acc, cells[c], &rank, &mut ranks[c])?);
        }
        let row = Row::pack(building.iter().map(Cell::datum));
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

/// The cells of a row, decoded.
pub(super) type Cells<'a> = SmallVec<[Datum<'a>; 16]>;
