//! The built-in scalar functions: what a bound call computes, one family a module. Binding
//! (`expr::bind`) picks the variant and its operand types; evaluation here assumes the operands
//! have them (the binder inserted the casts).

pub mod arithmetic;
pub mod cast;
pub mod comparison;
pub mod decimal;
pub mod math;
pub mod string;
pub mod time;

use smallvec::SmallVec;

use crate::repr::Datum;

use super::arena::RowArena;
use super::error::{EvalError, Fault};

pub use arithmetic::{IntType, Numeric};
pub use cast::CastOp;
pub use comparison::{CmpOp, LikePattern};
pub use math::RoundOp;
pub use string::TrimSide;
pub use time::{IntervalOp, TimeUnit};

/// A built-in scalar function with its operand types resolved.
#[derive(Clone, Debug, PartialEq)]
pub enum ScalarFunc {
    /// `a + b`.
    Add(Numeric),
    /// `a - b`.
    Sub(Numeric),
    /// `a * b`.
    Mul(Numeric),
    /// `a / b`: integer division on integers (Flink's INT / INT is INT).
    Div(Numeric),
    /// `a % b`, `MOD(a, b)`.
    Mod(Numeric),
    /// `-a`.
    Neg(Numeric),
    /// `ABS(a)`.
    Abs(Numeric),
    /// A comparison.
    Cmp(CmpOp),
    /// `a IS DISTINCT FROM b` (`false`: IS NOT DISTINCT FROM): NULLs compare equal.
    IsDistinctFrom(bool),
    /// `a IN (b, c, ...)`.
    In,
    /// `a LIKE p [ESCAPE e]`; the pattern precompiled when it is a literal.
    Like(Option<LikePattern>),
    /// `a AND b AND ...` (FALSE wins over NULL).
    And,
    /// `a OR b OR ...` (TRUE wins over NULL).
    Or,
    /// `NOT a`.
    Not,
    /// `a IS NULL`.
    IsNull,
    /// `a IS NOT NULL`.
    IsNotNull,
    /// `a IS TRUE`, `IS FALSE`; negated: `IS NOT TRUE`, `IS NOT FALSE`.
    IsBool {
        /// The value tested for.
        value: bool,
        /// IS NOT.
        negated: bool,
    },
    /// `COALESCE(a, b, ...)`: the first non-NULL, evaluating no further.
    Coalesce,
    /// `NULLIF(a, b)`: NULL when `a = b`, else `a`.
    NullIf,
    /// A cast.
    Cast(Box<CastOp>),
    /// `LOWER(s)`.
    Lower,
    /// `UPPER(s)`.
    Upper,
    /// `SUBSTRING(s, from [, len])`, 1-based.
    Substring,
    /// `CONCAT(a, b, ...)`: NULL if any is NULL.
    Concat,
    /// `CONCAT_WS(sep, a, b, ...)`: skips NULLs; NULL if `sep` is.
    ConcatWs,
    /// `CHAR_LENGTH(s)`.
    CharLength,
    /// `TRIM`, `LTRIM`, `RTRIM` of spaces.
    Trim(TrimSide),
    /// `REPLACE(s, from, to)`.
    Replace,
    /// `SPLIT_INDEX(s, sep, i)`: the `i`th (0-based) field of `s` split at `sep`.
    SplitIndex,
    /// `POSITION(needle IN s)`: 1-based, 0 when absent.
    Position,
    /// `ROUND(x [, d])`, `FLOOR(x)`, `CEIL(x)`.
    Round(RoundOp),
    /// `POWER(x, y)` in DOUBLE.
    Power,
    /// `SQRT(x)` in DOUBLE.
    Sqrt,
    /// `LN(x)` in DOUBLE.
    Ln,
    /// `LOG10(x)` in DOUBLE.
    Log10,
    /// `EXP(x)` in DOUBLE.
    Exp,
    /// `EXTRACT(unit FROM t)` of a DATE (`true`) or TIMESTAMP (`false`): BIGINT.
    Extract(TimeUnit, bool),
    /// `FLOOR(t TO unit)` of a TIMESTAMP.
    FloorTo(TimeUnit),
    /// `CEIL(t TO unit)` of a TIMESTAMP.
    CeilTo(TimeUnit),
    /// Datetime +/- interval.
    Interval(IntervalOp),
    /// `DATE_FORMAT(ts, format)` with Java `SimpleDateFormat` letters.
    DateFormat,
    /// `TO_TIMESTAMP(s [, format])`.
    ToTimestamp,
    /// `TO_DATE(s [, format])`.
    ToDate,
}

impl ScalarFunc {
    /// Whether a NULL operand makes the result NULL without calling the kernel.
    pub fn is_strict(&self) -> bool {
        !matches!(
            self,
            ScalarFunc::IsDistinctFrom(_)
                | ScalarFunc::In
                | ScalarFunc::And
                | ScalarFunc::Or
                | ScalarFunc::IsNull
                | ScalarFunc::IsNotNull
                | ScalarFunc::IsBool { .. }
                | ScalarFunc::Coalesce
                | ScalarFunc::NullIf
                | ScalarFunc::ConcatWs
                | ScalarFunc::Cast(_)
        )
    }

    /// Calls the function on `args`, evaluating each with `eval` (lazily for AND, OR and
    /// COALESCE); `text` names the call in errors.
    pub(crate) fn call<'a, E: 'a>(
        &self,
        args: &'a [E],
        mut eval: impl FnMut(&'a E) -> Result<Datum<'a>, EvalError>,
        arena: &'a RowArena,
        text: &str,
    ) -> Result<Datum<'a>, EvalError> {
        match self {
            ScalarFunc::And | ScalarFunc::Or => {
                let decisive = matches!(self, ScalarFunc::Or);
                let mut null = false;
                for arg in args {
                    match eval(arg)? {
                        Datum::Bool(b) if b == decisive => return Ok(Datum::Bool(decisive)),
                        Datum::Null => null = true,
                        _ => {}
                    }
                }
                Ok(if null {
                    Datum::Null
                } else {
                    Datum::Bool(!decisive)
                })
            }
            ScalarFunc::Coalesce => {
                for arg in args {
                    let datum = eval(arg)?;
                    if !datum.is_null() {
                        return Ok(datum);
                    }
                }
                Ok(Datum::Null)
            }
            _ => {
                let mut values: SmallVec<[Datum<'a>; 4]> = SmallVec::new();
                for arg in args {
                    let datum = eval(arg)?;
                    if datum.is_null() && self.is_strict() {
                        return Ok(Datum::Null);
                    }
                    values.push(datum);
                }
                self.apply(&values, arena).map_err(|fault| fault.at(text))
            }
        }
    }

    /// The kernel: the result on evaluated operands (NULLs already handled for strict
    /// functions).
    pub(crate) fn apply<'a>(
        &self,
        args: &[Datum<'a>],
        arena: &'a RowArena,
    ) -> Result<Datum<'a>, Fault> {
        use ScalarFunc::*;
        match self {
            Add(n) => n.add(arg(args, 0), arg(args, 1)),
            Sub(n) => n.sub(arg(args, 0), arg(args, 1)),
            Mul(n) => n.mul(arg(args, 0), arg(args, 1)),
            Div(n) => n.div(arg(args, 0), arg(args, 1)),
            Mod(n) => n.rem(arg(args, 0), arg(args, 1)),
            Neg(n) => n.neg(arg(args, 0)),
            Abs(n) => n.abs(arg(args, 0)),
            Cmp(op) => Ok(op.apply(arg(args, 0), arg(args, 1))),
            IsDistinctFrom(distinct) => Ok(comparison::is_distinct_from(args, *distinct)),
            In => Ok(comparison::in_list(args)),
            Like(pattern) => comparison::like(args, pattern.as_ref()),
            Not => Ok(match arg(args, 0) {
                Datum::Bool(b) => Datum::Bool(!b),
                _ => Datum::Null,
            }),
            IsNull => Ok(Datum::Bool(arg(args, 0).is_null())),
            IsNotNull => Ok(Datum::Bool(!arg(args, 0).is_null())),
            IsBool { value, negated } => {
                let is = matches!(arg(args, 0), Datum::Bool(b) if b == *value);
                Ok(Datum::Bool(is != *negated))
            }
            NullIf => Ok(comparison::null_if(arg(args, 0), arg(args, 1))),
            Cast(op) => op.apply(arg(args, 0), arena),
            Lower | Upper | Substring | Concat | ConcatWs | CharLength | Trim(_) | Replace
            | SplitIndex | Position => string::apply(self, args, arena),
            Round(op) => op.apply(args),
            Power | Sqrt | Ln | Log10 | Exp => Ok(math::apply_double(self, args)),
            Extract(..) | FloorTo(_) | CeilTo(_) | Interval(_) | DateFormat | ToTimestamp
            | ToDate => time::apply(self, args, arena),
            // Evaluated lazily by `call`; reached only through `apply` on evaluated operands.
            And | Or | Coalesce => Ok(lazy_on_values(self, args)),
        }
    }
}

/// AND, OR and COALESCE on operands already evaluated.
fn lazy_on_values<'a>(func: &ScalarFunc, args: &[Datum<'a>]) -> Datum<'a> {
    match func {
        ScalarFunc::Coalesce => args
            .iter()
            .copied()
            .find(|d| !d.is_null())
            .unwrap_or(Datum::Null),
        _ => {
            let decisive = matches!(func, ScalarFunc::Or);
            if args.contains(&Datum::Bool(decisive)) {
                Datum::Bool(decisive)
            } else if args.iter().any(Datum::is_null) {
                Datum::Null
            } else {
                Datum::Bool(!decisive)
            }
        }
    }
}

/// Operand `i`, or NULL if the call has fewer (binding checks the count).
#[inline]
pub(crate) fn arg<'a>(args: &[Datum<'a>], i: usize) -> Datum<'a> {
    args.get(i).copied().unwrap_or(Datum::Null)
}
