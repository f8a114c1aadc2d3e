//! A GROUP BY's aggregates when each is a counter: `COUNT(*)`, `COUNT(x)`, or an exact
//! `SUM(x)` / `AVG(x)` (over integers or DECIMALs), without DISTINCT or FILTER, `x` a column.
//!
//! Their results, NULLs and overflow errors are those of Flink's accumulators (the
//! [`Accumulator`](crate::expr::Accumulator)s of [`RowFold`](super::RowFold)); what differs is
//! the group's state and how a row reaches it:
//!
//! * **State**: a fixed array of `i64` words ([`CounterFold`]'s `W`), each quantity the
//!   aggregates need kept once: the group's row count (`COUNT(*)`, and the number of values of
//!   a NOT NULL column), the number of non-NULL values of a nullable column (`COUNT(x)`, and
//!   the count of a `SUM(x)` / `AVG(x)` over it), and the exact total of a column (two words,
//!   an `i128` as an accumulator keeps it), shared by a `SUM(x)` and an `AVG(x)`. So
//!   `COUNT(*), SUM(x)` over a NOT NULL BIGINT `x` is three words, where one 32-byte
//!   accumulator per aggregate was 64 bytes and a length.
//! * **Reading**: the columns the aggregates read are read in place from the packed row by
//!   their tags ([`ColumnCursor`]), in ascending order, each once; the others are skipped.
//! * **Output**: each exact SUM / AVG's function is matched once, when the plan is built
//!   ([`Exact`]), and a row of an integer key and integer values (counts, SUM / AVG of
//!   integers; at most [`IntPacker::COLUMNS`] columns) is packed in registers and stored into
//!   its [`Row`] once ([`IntPacker`]): most input rows pack two rows of their group, the one it
//!   retracts and the one it inserts. Whether the two differ is read from the counters
//!   ([`GroupFold::outputs_differ`]), not from the rows.

use crate::expr::aggregate::{add_exact, overflow_error, Exact};
use crate::expr::{AggregateExpr, AggregateFunc, ScalarKind};
use crate::repr::{ColumnCursor, Datum, IntPacker, Number, Row, RowPacker};
use differential_temporal_operators::group_aggregate::GroupFold;

use super::keys::OutputKey;

#[cfg(test)]
mod tests;

/// Where one aggregate's value lies in a group's words.
#[derive(Clone, Copy, Debug)]
enum Output {
    /// `COUNT(*)` / `COUNT(x)`: the count in this word.
    Count(usize),
    /// An exact `SUM(x)` / `AVG(x)` computing `func`: the total in the two words from `total`
    /// (low word first), the number of values in the word `count`.
    Exact {
        func: Exact,
        total: usize,
        count: usize,
    },
}

/// A column the aggregates read, and the words a row's value of it moves.
#[derive(Clone, Copy, Debug)]
struct ColumnRead {
    column: usize,
    /// The word counting the column's non-NULL values (a nullable column's `COUNT(x)`, or the
    /// count of its `SUM` / `AVG`).
    non_null: Option<usize>,
    /// The first of the two words totalling its values (its `SUM` / `AVG`).
    total: Option<usize>,
    /// The first aggregate (in the query's order) that reads the total: whose overflow error a
    /// row overflowing it is refused with.
    first_sum: usize,
}

/// The layout of a group's words for a list of counter aggregates (see the
/// [module docs](self)), made by [`Counters::new`] and used by a [`CounterFold`].
pub(super) struct Counters {
    aggregates: Vec<AggregateExpr>,
    /// Where each aggregate's value lies, in aggregate order.
    outputs: Vec<Output>,
    /// The word counting the group's rows, if an aggregate needs it.
    rows: Option<usize>,
    /// The columns read, ascending.
    reads: Vec<ColumnRead>,
    /// How many words the quantities take.
    words: usize,
}

impl Counters {
    /// The layout of `aggregates`, or `None` when one of them is not a counter.
    pub(super) fn new(aggregates: &[AggregateExpr]) -> Option<Counters> {
        let mut counters = Counters {
            aggregates: aggregates.to_vec(),
            outputs: Vec::with_capacity(aggregates.len()),
            rows: None,
            reads: Vec::new(),
            words: 0,
        };
        for (i, agg) in aggregates.iter().enumerate() {
            if agg.distinct || agg.filter.is_some() {
                return None;
            }
            // The argument column and whether it may be NULL.
            let arg = match agg.args.as_slice() {
                [] => None,
                [arg] => match arg.kind {
                    ScalarKind::Column(c) => Some((c, arg.ty.nullable)),
                    _ => return None,
                },
                _ => return None,
            };
            let output = match (&agg.func, arg, Exact::of(&agg.func)) {
                (AggregateFunc::CountStar, _, _) => Output::Count(counters.rows_word()),
                (AggregateFunc::Count, Some(arg), _) => Output::Count(counters.count_word(arg)),
                (_, Some(arg), Some(func)) => Output::Exact {
                    func,
                    total: counters.total_words(arg.0, i),
                    count: counters.count_word(arg),
                },
                _ => return None,
            };
            counters.outputs.push(output);
        }
        counters.reads.sort_unstable_by_key(|read| read.column);
        Some(counters)
    }

    /// How many words a group's state needs.
    pub(super) fn words(&self) -> usize {
        self.words
    }

    /// The first of `n` new words.
    fn allocate(&mut self, n: usize) -> usize {
        self.words += n;
        self.words - n
    }

    /// The word counting the group's rows.
    fn rows_word(&mut self) -> usize {
        let word = match self.rows {
            Some(word) => word,
            None => self.allocate(1),
        };
        self.rows = Some(word);
        word
    }

    /// How `column` is read, added when it is not read yet.
    fn read(&mut self, column: usize) -> &mut ColumnRead {
        let at = match self.reads.iter().position(|r| r.column == column) {
            Some(at) => at,
            None => {
                self.reads.push(ColumnRead {
                    column,
                    non_null: None,
                    total: None,
                    first_sum: usize::MAX,
                });
                self.reads.len() - 1
            }
        };
        &mut self.reads[at]
    }

    /// The word counting the non-NULL values of column `column`: the row count when the column
    /// is NOT NULL (`nullable` false).
    fn count_word(&mut self, (column, nullable): (usize, bool)) -> usize {
        if !nullable {
            return self.rows_word();
        }
        if let Some(word) = self.read(column).non_null {
            return word;
        }
        let word = self.allocate(1);
        self.read(column).non_null = Some(word);
        word
    }

    /// The first of the two words totalling column `column`, read by aggregate `aggregate`.
    fn total_words(&mut self, column: usize, aggregate: usize) -> usize {
        if let Some(word) = self.read(column).total {
            return word;
        }
        let word = self.allocate(2);
        let read = self.read(column);
        (read.total, read.first_sum) = (Some(word), aggregate);
        word
    }
}

/// The aggregates of a group as counters in `W` words (see the [module docs](self)): the state
/// of a group is `[i64; W]`, of which the [`Counters`]' layout uses the first
/// [`Counters::words`] (at most `W`).
pub(super) struct CounterFold<const W: usize> {
    counters: Counters,
    /// Whether every aggregate's value is an integer or NULL and a row of them after a key
    /// column fits an [`IntPacker`].
    ints: bool,
}

impl<const W: usize> CounterFold<W> {
    /// The fold of the aggregates laid out by `counters`.
    ///
    /// # Panics
    ///
    /// When the layout needs more than `W` words.
    pub(super) fn new(counters: Counters) -> CounterFold<W> {
        assert!(counters.words <= W, "{} words in {W}", counters.words);
        let ints = counters.outputs.len() < IntPacker::COLUMNS
            && counters.outputs.iter().all(|output| match output {
                Output::Count(_) => true,
                Output::Exact { func, .. } => func.is_int(),
            });
        CounterFold { counters, ints }
    }

    /// Appends each aggregate's value in group state `state` to `packer`, or returns the
    /// overflow error of the first whose value does not fit its type.
    #[inline(always)]
    fn pack_values(&self, state: &[i64; W], packer: &mut impl Values) -> Result<(), String> {
        let Counters {
            aggregates,
            outputs,
            ..
        } = &self.counters;
        for (agg, output) in aggregates.iter().zip(outputs) {
            match *output {
                Output::Count(word) => packer.int(state[word]),
                Output::Exact {
                    func,
                    total: at,
                    count,
                } => match func.value(total(state, at), state[count]) {
                    Some(Datum::Int(v)) => packer.int(v),
                    Some(datum) => packer.datum(datum),
                    None => return Err(overflow_error(&agg.ty).to_string()),
                },
            }
        }
        Ok(())
    }
}

/// The total in `words[at]` (low) and `words[at + 1]` (high).
#[inline]
fn total(words: &[i64], at: usize) -> i128 {
    ((words[at + 1] as i128) << 64) | (words[at] as u64 as i128)
}

/// Stores `total` in `words[at]` (low) and `words[at + 1]` (high).
#[inline]
fn set_total(words: &mut [i64], at: usize, total: i128) {
    (words[at], words[at + 1]) = (total as i64, (total >> 64) as i64);
}

impl<K: OutputKey, const W: usize> GroupFold<K> for CounterFold<W> {
    type Value = Row;
    type State = [i64; W];
    type Output = Row;

    fn init(&self) -> [i64; W] {
        [0; W]
    }

    /// Counts and totals `diff` copies of `row`; when a total would overflow its 128 bits, the
    /// row is refused with the overflow error of the first aggregate reading that total, and
    /// the group is left as it was.
    #[inline]
    fn update(&self, state: &mut [i64; W], row: &Row, diff: isize) -> Result<(), String> {
        let Counters { rows, reads, .. } = &self.counters;
        let signed = diff as i64;
        // Updated in place, word by word, and put back if a total overflows: a copy updated
        // and stored back whole was read back in wider loads than its words were written in,
        // which the CPU cannot forward from its pending stores.
        let before = *state;
        let words = state;
        if let Some(word) = *rows {
            words[word] += signed;
        }
        let mut cursor = ColumnCursor::new(row);
        let mut refused = usize::MAX;
        for read in reads {
            let value = match cursor.number(read.column) {
                Number::Null => continue,
                Number::Int(v) => Some(v as i128),
                Number::Decimal(v) => Some(v),
                // A COUNT(x) of a column of another type; the plan's types give a SUM / AVG a
                // number.
                Number::Other => None,
            };
            if let Some(word) = read.non_null {
                words[word] += signed;
            }
            if let (Some(at), Some(value)) = (read.total, value) {
                match add_exact(total(words, at), value, signed) {
                    Some(sum) => set_total(words, at, sum),
                    None => refused = refused.min(read.first_sum),
                }
            }
        }
        if refused != usize::MAX {
            *words = before;
            return Err(overflow_error(&self.counters.aggregates[refused].ty).to_string());
        }
        Ok(())
    }

    fn order_independent(&self) -> bool {
        true
    }

    /// The words themselves: copied where the output row would be packed (and moved) when the
    /// group is first changed at a time, then packed once its updates are folded in.
    fn snapshot(&self, state: &[i64; W]) -> Option<[i64; W]> {
        Some(*state)
    }

    /// When a COUNT differs, or a SUM's total while both groups have values of it: each is a
    /// value of the output row as it is (or, for a SUM that overflows, no row).
    fn outputs_differ(&self, a: &[i64; W], b: &[i64; W]) -> bool {
        self.counters.outputs.iter().any(|output| match *output {
            Output::Count(word) => a[word] != b[word],
            Output::Exact {
                func,
                total: at,
                count,
            } => func.is_sum() && a[count] > 0 && b[count] > 0 && total(a, at) != total(b, at),
        })
    }

    /// The key, then each aggregate's value, or the overflow error of the first whose value
    /// does not fit its type. A key of one integer column and values that are all integers
    /// (counts, SUM / AVG of integers) are packed in registers ([`IntPacker`]), inlined where
    /// the row is used (so it is stored once, where it goes); any other row by a [`RowPacker`].
    #[inline(always)]
    fn output(&self, key: &K, state: &[i64; W]) -> Result<Row, String> {
        match key.int() {
            Some(key) if self.ints => {
                let mut packer = IntPacker::new();
                match key {
                    Some(k) => packer.push_int(k),
                    None => packer.push_null(),
                }
                self.pack_values(state, &mut packer)?;
                Ok(packer.finish())
            }
            _ => self.packed_row(key, state),
        }
    }
}

impl<const W: usize> CounterFold<W> {
    /// [`GroupFold::output`] by a [`RowPacker`].
    #[inline(never)]
    fn packed_row<K: OutputKey>(&self, key: &K, state: &[i64; W]) -> Result<Row, String> {
        let mut row = Row::new();
        let mut packer = row.packer();
        key.pack_key(&mut packer);
        self.pack_values(state, &mut packer)?;
        Ok(row)
    }
}

/// Where [`CounterFold`] packs a group's values.
trait Values {
    /// Appends an integer.
    fn int(&mut self, v: i64);
    /// Appends any other value.
    fn datum(&mut self, datum: Datum<'_>);
}

impl Values for RowPacker<'_> {
    #[inline(always)]
    fn int(&mut self, v: i64) {
        self.push_int(v);
    }

    fn datum(&mut self, datum: Datum<'_>) {
        self.push(datum);
    }
}

/// Used only when every value is an integer or NULL (`CounterFold::ints`).
impl Values for IntPacker {
    #[inline(always)]
    fn int(&mut self, v: i64) {
        self.push_int(v);
    }

    #[inline(always)]
    fn datum(&mut self, datum: Datum<'_>) {
        match datum {
            Datum::Null => self.push_null(),
            other => unreachable!("a count or an integer SUM / AVG is {other:?}"),
        }
    }
}
