//! The state of one aggregate over one group: accumulate, retract, merge, get_value.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::repr::{ColumnType, Datum, Row, RowPacker};

use super::udaf::{udaf_error, UdafAccumulator};
use super::AggregateFunc;
use crate::expr::error::EvalError;
use crate::expr::func::{decimal, Numeric};

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

#[derive(Debug)]
enum State {
    /// COUNT, COUNT(*).
    Count(i64),
    /// SUM, AVG: the total (integers and decimals exact in `i128`) and the count of values.
    Sum {
        exact: i128,
        approx: f64,
        count: i64,
    },
    /// MIN, MAX: the multiset of values, in value order, with signed multiplicities (a
    /// retraction applied before its insertion leaves a negative count, never a lost value).
    Values(BTreeMap<ByValue, i64>),
    /// FIRST_VALUE, LAST_VALUE, LISTAGG: the values with multiplicities in arrival order.
    Sequence(Vec<(Row, u64)>),
    /// STDDEV/VAR: count, sum and sum of squares.
    Moments { count: i64, sum: f64, squares: f64 },
    /// A UDAF's own accumulator.
    Udaf(Box<dyn UdafAccumulator>),
}

/// The state of one aggregate over one group (Flink's accumulator). Created by
/// [`AggregateExpr::create_accumulator`](super::AggregateExpr::create_accumulator); fed the
/// argument values of each input row (after FILTER) by
/// [`AggregateExpr::update`](super::AggregateExpr::update).
#[derive(Debug)]
pub struct Accumulator {
    func: AggregateFunc,
    ty: ColumnType,
    /// DISTINCT: how many times each argument tuple is present (signed, as `Values`); the
    /// function sees a tuple when its count becomes positive and loses it when it no longer is.
    distinct: Option<BTreeMap<Row, i64>>,
    state: State,
}

fn overflow(ty: &ColumnType) -> EvalError {
    EvalError::Overflow {
        expr: "the aggregate's accumulator".into(),
        ty: ty.data_type.clone(),
    }
}

impl Accumulator {
    pub(super) fn new(func: AggregateFunc, distinct: bool, ty: ColumnType) -> Accumulator {
        let state = match &func {
            AggregateFunc::Count | AggregateFunc::CountStar => State::Count(0),
            AggregateFunc::Sum(_) | AggregateFunc::Avg(_) => State::Sum {
                exact: 0,
                approx: 0.0,
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
        Accumulator {
            func,
            ty,
            distinct: distinct.then(BTreeMap::new),
            state,
        }
    }

    /// Adds the argument values of `times` input rows.
    pub fn accumulate(&mut self, args: &[Datum<'_>], times: u64) -> Result<(), EvalError> {
        self.update(args, times, true)
    }

    /// Removes the argument values of `times` input rows. Retractions may come before the
    /// insertions they cancel (within one system time, in any order): COUNT, SUM, MIN, MAX and
    /// DISTINCT keep signed counts, so the value once both are applied is the same.
    pub fn retract(&mut self, args: &[Datum<'_>], times: u64) -> Result<(), EvalError> {
        self.update(args, times, false)
    }

    fn update(&mut self, args: &[Datum<'_>], times: u64, add: bool) -> Result<(), EvalError> {
        let Some(seen) = &mut self.distinct else {
            return self.apply(args, times, add);
        };
        let key = Row::pack(args.iter().copied());
        let signed = if add { times as i64 } else { -(times as i64) };
        let before = seen.get(&key).copied().unwrap_or(0);
        let after = before + signed;
        if after == 0 {
            seen.remove(&key);
        } else {
            seen.insert(key, after);
        }
        match (before > 0, after > 0) {
            (false, true) => self.apply(args, 1, true),
            (true, false) => self.apply(args, 1, false),
            _ => Ok(()),
        }
    }

    fn apply(&mut self, args: &[Datum<'_>], times: u64, add: bool) -> Result<(), EvalError> {
        let first = args.first().copied().unwrap_or(Datum::Null);
        let signed = if add { times as i64 } else { -(times as i64) };
        let Accumulator {
            func, ty, state, ..
        } = self;
        let ty = &*ty;
        match state {
            State::Count(n) => {
                let counted =
                    matches!(func, AggregateFunc::CountStar) || args.iter().all(|a| !a.is_null());
                if counted {
                    *n += signed;
                }
            }
            State::Sum {
                exact,
                approx,
                count,
            } => {
                match first {
                    Datum::Int(v) => {
                        *exact = exact
                            .checked_add(
                                (v as i128)
                                    .checked_mul(signed as i128)
                                    .ok_or_else(|| overflow(ty))?,
                            )
                            .ok_or_else(|| overflow(ty))?;
                    }
                    Datum::Decimal(v) => {
                        *exact = exact
                            .checked_add(v.checked_mul(signed as i128).ok_or_else(|| overflow(ty))?)
                            .ok_or_else(|| overflow(ty))?;
                    }
                    Datum::Float(v) => *approx += v * signed as f64,
                    _ => return Ok(()),
                }
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
            State::Udaf(acc) => {
                let AggregateFunc::Udaf(udaf) = &*func else {
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

    /// Adds the state of `other`, an accumulator of the same aggregate (a window's panes, a
    /// two-phase aggregation).
    pub fn merge(&mut self, other: Accumulator) -> Result<(), EvalError> {
        let ty = self.ty.clone();
        if let (Some(mine), Some(theirs)) = (&mut self.distinct, &other.distinct) {
            // DISTINCT: replay the tuples the other side has that this side has not.
            let mut fresh = Vec::new();
            for (key, n) in theirs {
                let count = mine.entry(key.clone()).or_insert(0);
                if *count <= 0 && *count + n > 0 {
                    fresh.push(key.clone());
                }
                *count += n;
            }
            for key in fresh {
                let args: Vec<Datum> = key.iter().collect();
                self.apply(&args, 1, true)?;
            }
            return Ok(());
        }
        match (&mut self.state, other.state) {
            (State::Count(a), State::Count(b)) => *a += b,
            (
                State::Sum {
                    exact,
                    approx,
                    count,
                },
                State::Sum {
                    exact: e,
                    approx: x,
                    count: c,
                },
            ) => {
                *exact = exact.checked_add(e).ok_or_else(|| overflow(&ty))?;
                *approx += x;
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
                if let AggregateFunc::Udaf(udaf) = &self.func {
                    a.merge(b.as_ref()).map_err(udaf_error(udaf.name()))?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Pushes the aggregate's value (one datum).
    pub fn get_value(&self, packer: &mut RowPacker<'_>) -> Result<(), EvalError> {
        let datum = match (&self.func, &self.state) {
            (_, State::Count(n)) => Datum::Int(*n),
            (_, State::Sum { count, .. }) if *count <= 0 => Datum::Null,
            (AggregateFunc::Sum(kind), State::Sum { exact, approx, .. }) => match kind {
                Numeric::Int(t) => {
                    let v = i64::try_from(*exact).map_err(|_| overflow(&self.ty))?;
                    Datum::Int(t.check(v).map_err(|_| overflow(&self.ty))?)
                }
                Numeric::Float => Datum::Float(*approx as f32 as f64),
                Numeric::Double => Datum::Float(*approx),
                Numeric::Decimal { precision, .. } => {
                    if !decimal::fits(*exact, *precision) {
                        return Err(overflow(&self.ty));
                    }
                    Datum::Decimal(*exact)
                }
            },
            (
                AggregateFunc::Avg(kind),
                State::Sum {
                    exact,
                    approx,
                    count,
                },
            ) => match kind {
                // Java's long division truncates toward zero, as Rust's.
                Numeric::Int(t) => {
                    let v =
                        i64::try_from(exact / *count as i128).map_err(|_| overflow(&self.ty))?;
                    Datum::Int(t.check(v).map_err(|_| overflow(&self.ty))?)
                }
                Numeric::Float => Datum::Float((approx / *count as f64) as f32 as f64),
                Numeric::Double => Datum::Float(approx / *count as f64),
                Numeric::Decimal {
                    left,
                    scale,
                    precision,
                    ..
                } => match decimal::divide(*exact, *left, *count as i128, 0, *scale) {
                    Some(v) if decimal::fits(v, *precision) => Datum::Decimal(v),
                    _ => return Err(overflow(&self.ty)),
                },
            },
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

fn push_first(packer: &mut RowPacker<'_>, value: Option<&Row>) -> Result<(), EvalError> {
    packer.push(value.and_then(|r| r.get(0)).unwrap_or(Datum::Null));
    Ok(())
}
