//! The state of one aggregate over one group: accumulate, retract, merge, get_value.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::repr::{ColumnType, Datum, Row, RowPacker};

use super::AggregateExpr;

use super::udaf::{udaf_error, UdafAccumulator};
use super::AggregateFunc;
use crate::expr::error::EvalError;
use crate::expr::func::{decimal, IntType, Numeric};

/// A value ordered as a datum ([`Datum`]'s value order), for MIN/MAX.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ByValue(Row);

impl Ord for ByValue {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.get(0).cmp(&other.0.get(0))
    }
}

impl PartialOrd for ByValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// An `i128` stored as two words, so that a state holding one needs no 16-byte alignment (an
/// accumulator stays at 32 bytes).
#[derive(Clone, Copy, Debug)]
struct Wide([u64; 2]);

impl Wide {
    fn new(v: i128) -> Wide {
        Wide([v as u64, (v >> 64) as u64])
    }

    fn get(self) -> i128 {
        (((self.0[1] as u128) << 64) | self.0[0] as u128) as i128
    }
}

/// A DISTINCT aggregate's state: the function's, and how many times each argument tuple is
/// present (signed, as `Values`); the function sees a tuple when its count becomes positive and
/// loses it when it no longer is.
#[derive(Debug)]
struct Distinct {
    state: State,
    seen: BTreeMap<Row, i64>,
}

#[derive(Debug)]
enum State {
    /// COUNT, COUNT(*).
    Count(i64),
    /// SUM, AVG of integers and DECIMALs: the exact total and the count of values.
    ExactSum { total: Wide, count: i64 },
    /// SUM, AVG of FLOAT and DOUBLE: the total and the count of values.
    FloatSum { total: f64, count: i64 },
    /// MIN, MAX: the multiset of values, in value order, with signed multiplicities (a
    /// retraction applied before its insertion leaves a negative count, never a lost value).
    Values(BTreeMap<ByValue, i64>),
    /// FIRST_VALUE, LAST_VALUE, LISTAGG: the values with multiplicities in arrival order.
    Sequence(Vec<(Row, u64)>),
    /// STDDEV/VAR: count, sum and sum of squares.
    Moments { count: i64, sum: f64, squares: f64 },
    /// A UDAF's own accumulator.
    Udaf(Box<dyn UdafAccumulator>),
    /// A DISTINCT aggregate (boxed: few are, and the box keeps every state at 32 bytes).
    Distinct(Box<Distinct>),
}

/// The state of one aggregate over one group (Flink's accumulator). Created by
/// [`AggregateExpr::create_accumulator`](super::AggregateExpr::create_accumulator); fed the
/// argument values of each input row (after FILTER) by
/// [`AggregateExpr::update`](super::AggregateExpr::update), read by
/// [`AggregateExpr::get_value`](super::AggregateExpr::get_value). The function and result type
/// live in the [`AggregateExpr`](super::AggregateExpr), not here: a COUNT or SUM accumulator is
/// 32 bytes and needs no allocation, so a group's accumulators can sit inline in its state.
#[derive(Debug)]
pub struct Accumulator {
    state: State,
}

/// The error of an accumulator of an aggregate of type `ty` that overflows.
pub(crate) fn overflow(ty: &ColumnType) -> EvalError {
    EvalError::Overflow {
        expr: "the aggregate's accumulator".into(),
        ty: ty.data_type.clone(),
    }
}

impl Accumulator {
    pub(super) fn new(func: &AggregateFunc, distinct: bool) -> Accumulator {
        let state = match func {
            AggregateFunc::Count | AggregateFunc::CountStar => State::Count(0),
            AggregateFunc::Sum(Numeric::Float | Numeric::Double)
            | AggregateFunc::Avg(Numeric::Float | Numeric::Double) => State::FloatSum {
                total: 0.0,
                count: 0,
            },
            AggregateFunc::Sum(_) | AggregateFunc::Avg(_) => State::ExactSum {
                total: Wide::new(0),
                count: 0,
            },
            AggregateFunc::Min | AggregateFunc::Max => State::Values(BTreeMap::new()),
            AggregateFunc::FirstValue | AggregateFunc::LastValue | AggregateFunc::ListAgg(_) => {
                State::Sequence(Vec::new())
            }
            AggregateFunc::StddevPop
            | AggregateFunc::StddevSamp
            | AggregateFunc::VarPop
            | AggregateFunc::VarSamp => State::Moments {
                count: 0,
                sum: 0.0,
                squares: 0.0,
            },
            AggregateFunc::Udaf(udaf) => State::Udaf(udaf.create_accumulator()),
        };
        let state = match distinct {
            true => State::Distinct(Box::new(Distinct {
                state,
                seen: BTreeMap::new(),
            })),
            false => state,
        };
        Accumulator { state }
    }

    /// Adds (`add`) or removes the argument values of `times` input rows. Retractions may come
    /// before the insertions they cancel (within one system time, in any order): COUNT, SUM,
    /// MIN, MAX and DISTINCT keep signed counts, so the value once both are applied is the same.
    pub(super) fn update(
        &mut self,
        agg: &AggregateExpr,
        args: &[Datum<'_>],
        times: u64,
        add: bool,
    ) -> Result<(), EvalError> {
        self.state.apply(agg, args, times, add)
    }

    /// Adds the state of `other`, an accumulator of the same aggregate (a window's panes, a
    /// two-phase aggregation).
    pub(super) fn merge(
        &mut self,
        agg: &AggregateExpr,
        other: Accumulator,
    ) -> Result<(), EvalError> {
        match (&mut self.state, other.state) {
            (State::Distinct(mine), State::Distinct(theirs)) => {
                // Replay the tuples the other side has that this side has not.
                let Distinct { state, seen } = &mut **mine;
                for (key, n) in theirs.seen {
                    let count = seen.get(&key).copied().unwrap_or(0);
                    if count <= 0 && count + n > 0 {
                        let args: Vec<Datum> = key.iter().collect();
                        state.apply(agg, &args, 1, true)?;
                    }
                    *seen.entry(key).or_insert(0) += n;
                }
            }
            (State::Count(a), State::Count(b)) => *a += b,
            (State::ExactSum { total, count }, State::ExactSum { total: t, count: c }) => {
                let sum = total.get().checked_add(t.get());
                *total = Wide::new(sum.ok_or_else(|| overflow(&agg.ty))?);
                *count += c;
            }
            (State::FloatSum { total, count }, State::FloatSum { total: t, count: c }) => {
                *total += t;
                *count += c;
            }
            (State::Values(a), State::Values(b)) => {
                for (k, n) in b {
                    *a.entry(k).or_insert(0) += n;
                }
            }
            (State::Sequence(a), State::Sequence(b)) => a.extend(b),
            (
                State::Moments {
                    count,
                    sum,
                    squares,
                },
                State::Moments {
                    count: c,
                    sum: s,
                    squares: q,
                },
            ) => {
                *count += c;
                *sum += s;
                *squares += q;
            }
            (State::Udaf(a), State::Udaf(b)) => {
                if let AggregateFunc::Udaf(udaf) = &agg.func {
                    a.merge(b.as_ref()).map_err(udaf_error(udaf.name()))?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Pushes the aggregate's value (one datum).
    pub(super) fn get_value(
        &self,
        agg: &AggregateExpr,
        packer: &mut RowPacker<'_>,
    ) -> Result<(), EvalError> {
        let state = match &self.state {
            State::Distinct(distinct) => &distinct.state,
            state => state,
        };
        let datum = match (&agg.func, state) {
            (_, State::Count(n)) => Datum::Int(*n),
            (func, State::ExactSum { total, count }) => {
                exact_value(func, &agg.ty, total.get(), *count)?
            }
            (_, State::FloatSum { count, .. }) if *count <= 0 => Datum::Null,
            (AggregateFunc::Sum(Numeric::Float), State::FloatSum { total, .. }) => {
                Datum::Float(*total as f32 as f64)
            }
            (AggregateFunc::Sum(_), State::FloatSum { total, .. }) => Datum::Float(*total),
            (AggregateFunc::Avg(Numeric::Float), State::FloatSum { total, count }) => {
                Datum::Float((total / *count as f64) as f32 as f64)
            }
            (AggregateFunc::Avg(_), State::FloatSum { total, count }) => {
                Datum::Float(total / *count as f64)
            }
            (AggregateFunc::Min, State::Values(values)) => {
                let min = values.iter().find(|(_, n)| **n > 0);
                return push_first(packer, min.map(|(k, _)| &k.0));
            }
            (AggregateFunc::Max, State::Values(values)) => {
                let max = values.iter().rev().find(|(_, n)| **n > 0);
                return push_first(packer, max.map(|(k, _)| &k.0));
            }
            (AggregateFunc::FirstValue, State::Sequence(seq)) => {
                return push_first(packer, seq.first().map(|(r, _)| r))
            }
            (AggregateFunc::LastValue, State::Sequence(seq)) => {
                return push_first(packer, seq.last().map(|(r, _)| r))
            }
            (AggregateFunc::ListAgg(separator), State::Sequence(seq)) => {
                if seq.is_empty() {
                    Datum::Null
                } else {
                    let mut text = String::new();
                    let mut first = true;
                    for (value, n) in seq {
                        for _ in 0..*n {
                            if !first {
                                text.push_str(separator);
                            }
                            first = false;
                            if let Some(Datum::Str(s)) = value.get(0) {
                                text.push_str(s);
                            }
                        }
                    }
                    packer.push(Datum::Str(&text));
                    return Ok(());
                }
            }
            (
                func,
                State::Moments {
                    count,
                    sum,
                    squares,
                },
            ) => {
                let n = *count as f64;
                let sample = matches!(func, AggregateFunc::StddevSamp | AggregateFunc::VarSamp);
                if *count <= 0 || (sample && *count == 1) {
                    Datum::Null
                } else {
                    let variance =
                        ((squares - sum * sum / n) / if sample { n - 1.0 } else { n }).max(0.0);
                    let stddev =
                        matches!(func, AggregateFunc::StddevPop | AggregateFunc::StddevSamp);
                    Datum::Float(if stddev { variance.sqrt() } else { variance })
                }
            }
            (AggregateFunc::Udaf(udaf), State::Udaf(acc)) => {
                return acc.get_value(packer).map_err(udaf_error(udaf.name()));
            }
            _ => Datum::Null,
        };
        packer.push(datum);
        Ok(())
    }
}

/// The value of an exact SUM / AVG `func` of result type `ty` over `count` values totalling
/// `total` (unscaled, at the argument's scale): NULL when `count <= 0`, the overflow error of
/// `ty` when the value does not fit it. Any other function's value is NULL.
fn exact_value(
    func: &AggregateFunc,
    ty: &ColumnType,
    total: i128,
    count: i64,
) -> Result<Datum<'static>, EvalError> {
    match Exact::of(func) {
        Some(exact) => exact.value(total, count).ok_or_else(|| overflow(ty)),
        None => Ok(Datum::Null),
    }
}

/// An exact SUM / AVG (over integers or DECIMALs): of its [`AggregateFunc`], what its value
/// needs, in a few bytes, so that a caller computing a value per group (a GROUP BY's counters)
/// matches on the function once, when the plan is built, not per value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exact {
    /// SUM of an integer type: that type.
    IntSum(IntType),
    /// SUM of a DECIMAL: DECIMAL(`precision`, s), at the argument's scale.
    DecimalSum { precision: u8 },
    /// AVG of an integer type: that type (integer division, truncating toward zero).
    IntAvg(IntType),
    /// AVG of a DECIMAL at scale `left`: DECIMAL(`precision`, `scale`).
    DecimalAvg { left: u8, scale: u8, precision: u8 },
}

impl Exact {
    /// `func`'s exact form, or `None` when it is not an exact SUM / AVG.
    pub(crate) fn of(func: &AggregateFunc) -> Option<Exact> {
        Some(match *func {
            AggregateFunc::Sum(Numeric::Int(t)) => Exact::IntSum(t),
            AggregateFunc::Sum(Numeric::Decimal { precision, .. }) => {
                Exact::DecimalSum { precision }
            }
            AggregateFunc::Avg(Numeric::Int(t)) => Exact::IntAvg(t),
            AggregateFunc::Avg(Numeric::Decimal {
                left,
                scale,
                precision,
                ..
            }) => Exact::DecimalAvg {
                left,
                scale,
                precision,
            },
            _ => return None,
        })
    }

    /// The value over `count` values totalling `total` (unscaled, at the argument's scale):
    /// NULL when `count <= 0`, `None` when the value overflows the result type.
    #[inline(always)]
    pub(crate) fn value(self, total: i128, count: i64) -> Option<Datum<'static>> {
        if count <= 0 {
            return Some(Datum::Null);
        }
        let int = |t: IntType, v: i128| {
            let v = i64::try_from(v).ok()?;
            t.check(v).ok().map(Datum::Int)
        };
        match self {
            Exact::IntSum(t) => int(t, total),
            // Java's long division truncates toward zero, as Rust's.
            Exact::IntAvg(t) => int(t, total / count as i128),
            Exact::DecimalSum { .. } | Exact::DecimalAvg { .. } => {
                self.decimal_value(total, count).map(Datum::Decimal)
            }
        }
    }

    /// Whether this is a SUM, whose value (over values) is its total.
    pub(crate) fn is_sum(self) -> bool {
        matches!(self, Exact::IntSum(_) | Exact::DecimalSum { .. })
    }

    /// Whether the value is an integer (or NULL): a SUM / AVG of integers.
    pub(crate) fn is_int(self) -> bool {
        matches!(self, Exact::IntSum(_) | Exact::IntAvg(_))
    }

    /// [`value`](Self::value) of a DECIMAL SUM / AVG over `count > 0` values: the unscaled
    /// value, `None` when it overflows (or when `self` is not a DECIMAL one).
    fn decimal_value(self, total: i128, count: i64) -> Option<i128> {
        match self {
            Exact::DecimalSum { precision } => decimal::fits(total, precision).then_some(total),
            Exact::DecimalAvg {
                left,
                scale,
                precision,
            } => decimal::divide(total, left, count as i128, 0, scale)
                .filter(|v| decimal::fits(*v, precision)),
            Exact::IntSum(_) | Exact::IntAvg(_) => None,
        }
    }
}

/// `total` plus `signed` copies of `value` (an exact SUM / AVG's total, unscaled), or `None`
/// when that overflows the accumulator's 128 bits.
#[inline]
pub(crate) fn add_exact(total: i128, value: i128, signed: i64) -> Option<i128> {
    // One row added or retracted (the usual update) needs no 128-bit multiply.
    let delta = match signed {
        1 => Some(value),
        -1 => value.checked_neg(),
        _ => value.checked_mul(signed as i128),
    };
    delta.and_then(|v| total.checked_add(v))
}

impl State {
    /// Adds (`add`) or removes the argument values of `times` input rows (see
    /// [`Accumulator::update`]).
    fn apply(
        &mut self,
        agg: &AggregateExpr,
        args: &[Datum<'_>],
        times: u64,
        add: bool,
    ) -> Result<(), EvalError> {
        let first = args.first().copied().unwrap_or(Datum::Null);
        let signed = if add { times as i64 } else { -(times as i64) };
        let (func, ty) = (&agg.func, &agg.ty);
        match self {
            State::Count(n) => {
                let counted =
                    matches!(func, AggregateFunc::CountStar) || args.iter().all(|a| !a.is_null());
                if counted {
                    *n += signed;
                }
            }
            State::ExactSum { total, count } => {
                let value = match first {
                    Datum::Int(v) => v as i128,
                    Datum::Decimal(v) => v,
                    _ => return Ok(()),
                };
                let sum = add_exact(total.get(), value, signed).ok_or_else(|| overflow(ty))?;
                *total = Wide::new(sum);
                *count += signed;
            }
            State::FloatSum { total, count } => {
                let Datum::Float(v) = first else {
                    return Ok(());
                };
                *total += v * signed as f64;
                *count += signed;
            }
            State::Values(values) => {
                if first.is_null() {
                    return Ok(());
                }
                let key = ByValue(Row::pack_one(first));
                let n = values.get(&key).copied().unwrap_or(0) + signed;
                if n == 0 {
                    values.remove(&key);
                } else {
                    values.insert(key, n);
                }
            }
            State::Sequence(seq) => {
                if first.is_null() {
                    return Ok(());
                }
                let value = Row::pack_one(first);
                if add {
                    match seq.last_mut() {
                        Some((last, n)) if *last == value => *n += times,
                        _ => seq.push((value, times)),
                    }
                } else {
                    // Retract the latest occurrences first.
                    let mut left = times;
                    for i in (0..seq.len()).rev() {
                        if left == 0 {
                            break;
                        }
                        if seq[i].0 == value {
                            let take = left.min(seq[i].1);
                            seq[i].1 -= take;
                            left -= take;
                            if seq[i].1 == 0 {
                                seq.remove(i);
                            }
                        }
                    }
                }
            }
            State::Moments {
                count,
                sum,
                squares,
            } => {
                let x = match first {
                    Datum::Float(x) => x,
                    _ => return Ok(()),
                };
                *count += signed;
                *sum += x * signed as f64;
                *squares += x * x * signed as f64;
            }
            State::Distinct(distinct) => {
                let Distinct { state, seen } = &mut **distinct;
                let key = Row::pack(args.iter().copied());
                let before = seen.get(&key).copied().unwrap_or(0);
                let after = before + signed;
                if after == 0 {
                    seen.remove(&key);
                } else {
                    seen.insert(key, after);
                }
                match (before > 0, after > 0) {
                    (false, true) => state.apply(agg, args, 1, true)?,
                    (true, false) => state.apply(agg, args, 1, false)?,
                    _ => {}
                }
            }
            State::Udaf(acc) => {
                let AggregateFunc::Udaf(udaf) = func else {
                    return Ok(());
                };
                let error = udaf_error(udaf.name());
                for _ in 0..times {
                    if add {
                        acc.accumulate(args).map_err(&error)?;
                    } else if udaf.has_retract() {
                        acc.retract(args).map_err(&error)?;
                    } else {
                        return Err(error(
                            "this aggregate function does not support retraction".into(),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

fn push_first(packer: &mut RowPacker<'_>, value: Option<&Row>) -> Result<(), EvalError> {
    packer.push(value.and_then(|r| r.get(0)).unwrap_or(Datum::Null));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Wide;

    #[test]
    fn a_wide_total_round_trips_every_i128() {
        for v in [
            0,
            1,
            -1,
            1 << 64,
            -(1 << 64),
            (1 << 64) - 1,
            i128::MIN,
            i128::MAX,
        ] {
            assert_eq!(Wide::new(v).get(), v);
        }
    }
}
