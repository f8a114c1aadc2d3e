//! The sort node ([`Node::Sort`]): `ORDER BY` with `OFFSET` / `FETCH` (`LIMIT`), and the rules
//! that decide which sorts an unbounded table can have (case E05).
//!
//! A dynamic table is a multiset: its rows have no order, and a sort only means something with
//! a `FETCH`, which makes it a **Top-N**: the `fetch` rows after the first `offset` ones in the
//! order, maintained exactly at every system time (a row entering the top retracts the one it
//! pushes out). Rows that tie on every sort key are ordered by their value (Flink leaves them
//! to arrival), so the result does not depend on arrival or on the worker count.
//!
//! Without a `FETCH` Flink's streaming planner takes only a sort whose first key is the rowtime
//! attribute, ascending (it emits rows in time order as the watermark passes): that one is
//! accepted, and its table is its input's (rows are emitted as they are complete at each system
//! time, not reordered). Every other sort is refused with the reason.

use std::cmp::Ordering;

use crate::repr::{Datum, Row};

use super::{Mode, Node, PlanError, RelExpr};

/// One key of an `ORDER BY`: a column, its direction, and where NULLs go (Flink's default:
/// NULL is the smallest value, first when ascending, last when descending).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SortKey {
    /// The input column.
    pub column: usize,
    /// `DESC` (or `ASC`).
    pub descending: bool,
    /// `NULLS FIRST` (or `NULLS LAST`).
    pub nulls_first: bool,
}

impl SortKey {
    /// `column ASC|DESC [NULLS FIRST|LAST]`; without a NULLS clause, NULL is the smallest value.
    pub fn new(column: usize, descending: bool, nulls_first: Option<bool>) -> SortKey {
        SortKey {
            column,
            descending,
            nulls_first: nulls_first.unwrap_or(!descending),
        }
    }
}

/// The Top-N of a multiset: `rows` (with their multiplicities, positive) ordered by `keys`,
/// ties by value, then the `fetch` rows after the first `offset`, with their multiplicities
/// (a row straddling a boundary keeps the part inside). With `rank`, each copy of a row is its
/// own output row with its row number appended (`ROW_NUMBER()`, from 1 before the offset, a
/// BIGINT). Each row is decoded once.
pub fn top_n(
    keys: &[SortKey],
    offset: usize,
    fetch: usize,
    rank: bool,
    rows: &[(&Row, isize)],
) -> Vec<(Row, isize)> {
    let mut decorated: Vec<(Vec<Datum>, &Row, isize)> = rows
        .iter()
        .map(|&(row, count)| (row.iter().collect(), row, count))
        .collect();
    decorated.sort_by(|a, b| compare(keys, &a.0, &b.0).then_with(|| a.1.cmp(b.1)));
    let (start, end) = (offset, offset.saturating_add(fetch));
    let mut seen = 0;
    let mut out = Vec::new();
    for (_, row, count) in decorated {
        let count = count.max(0) as usize;
        let (from, to) = (seen.max(start), (seen + count).min(end));
        if from < to && rank {
            out.extend((from..to).map(|i| {
                let number = Datum::Int(i as i64 + 1);
                (Row::pack(row.iter().chain([number])), 1)
            }));
        } else if from < to {
            out.push((row.clone(), (to - from) as isize));
        }
        seen += count;
        if seen >= end {
            break;
        }
    }
    out
}

/// The order of two decoded rows by `keys`.
fn compare(keys: &[SortKey], a: &[Datum], b: &[Datum]) -> Ordering {
    keys.iter()
        .map(|k| {
            let (x, y) = (a[k.column], b[k.column]);
            match (x.is_null(), y.is_null()) {
                (true, true) => Ordering::Equal,
                (true, false) if k.nulls_first => Ordering::Less,
                (true, false) => Ordering::Greater,
                (false, true) if k.nulls_first => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) if k.descending => y.cmp(&x),
                (false, false) => x.cmp(&y),
            }
        })
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

impl RelExpr {
    /// `ORDER BY order [OFFSET offset] [FETCH NEXT fetch ROWS ONLY]` (see the
    /// [`Node::Sort`] rules): with `fetch` a Top-N, updating, without time attributes; without,
    /// only an ascending rowtime as the first key, the input's table unchanged.
    ///
    /// Errors, each saying why: a `fetch` without `order` (which rows are kept would depend on
    /// arrival), an `offset` without `fetch`, a sort without `fetch` whose first key is not the
    /// rowtime attribute ascending, a column out of range.
    pub fn sort(
        self,
        order: Vec<SortKey>,
        offset: usize,
        fetch: Option<usize>,
    ) -> Result<RelExpr, PlanError> {
        const NODE: &str = "Sort";
        if let Some(bad) = order.iter().find(|k| k.column >= self.schema.len()) {
            return Err(PlanError::invalid(
                NODE,
                format!("sort column {} out of range", bad.column),
            ));
        }
        let name = |k: &SortKey| self.schema.fields[k.column].name.clone();
        let rowtime = self.schema.rowtime.as_ref().map(|r| r.column);
        let (schema, mode) = match (fetch, order.first()) {
            (Some(_), None) => {
                return Err(PlanError::invalid(
                    NODE,
                    "FETCH / LIMIT without ORDER BY is not supported: which rows are kept would depend on their arrival; add ORDER BY",
                ))
            }
            (Some(_), Some(_)) => {
                let mut schema = self.schema.clone();
                (schema.rowtime, schema.proctime, schema.primary_key) = (None, None, None);
                (schema, Mode::Updating { upsert_key: None })
            }
            (None, _) if offset > 0 => {
                return Err(PlanError::invalid(
                    NODE,
                    "OFFSET without FETCH / LIMIT on an unbounded table is not supported: the result would be every row but the first ones, changing with every row; add FETCH (Flink: offset requires fetch on unbounded input)",
                ))
            }
            (None, Some(first)) if Some(first.column) == rowtime && !first.descending => {
                (self.schema.clone(), self.mode.clone())
            }
            (None, first) => {
                let first = match first {
                    Some(k) if Some(k.column) == rowtime => {
                        format!("the time attribute '{}' descending", name(k))
                    }
                    Some(k) => format!("'{}', not a time attribute", name(k)),
                    None => "missing".to_string(),
                };
                return Err(PlanError::invalid(
                    NODE,
                    format!("Sort on a non-time-attribute field is not supported: ORDER BY on an unbounded table needs FETCH / LIMIT (a Top-N) or an ascending time attribute as its first key, and the first key is {first}"),
                ));
            }
        };
        Ok(RelExpr {
            node: Node::Sort {
                input: Box::new(self),
                order,
                offset,
                fetch,
            },
            schema,
            mode,
        })
    }
}
