//! Type derivation: the common type of several operands and the result of arithmetic, after
//! Flink's `LogicalTypeMerging` (`findCommonType`, the decimal rules) and `LogicalTypeCasts`
//! (implicit casts only widen: TINYINT < SMALLINT < INT < BIGINT < DECIMAL < FLOAT < DOUBLE,
//! CHAR < VARCHAR, a timestamp to a higher precision; NULL to anything).

use crate::repr::types::MAX_LENGTH;
use crate::repr::DataType;

use crate::expr::func::arithmetic::{IntType, Numeric};
use crate::expr::func::decimal;

/// The length of a string or binary type.
fn length(t: &DataType) -> Option<u32> {
    match t {
        DataType::Char(n) | DataType::Varchar(n) | DataType::Binary(n) | DataType::Varbinary(n) => {
            Some(*n)
        }
        _ => None,
    }
}

fn int_rank(t: &DataType) -> u8 {
    match t {
        DataType::TinyInt => 1,
        DataType::SmallInt => 2,
        DataType::Int => 3,
        _ => 4,
    }
}

/// The type both `a` and `b` cast to implicitly, if any (Flink's `findCommonType` for two
/// types).
pub fn common_type(a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType::*;
    if a == b {
        return Some(a.clone());
    }
    Some(match (a, b) {
        (Null, t) | (t, Null) => t.clone(),
        (x, y) if x.is_string() && y.is_string() => {
            let n = length(x)?.max(length(y)?);
            match (x, y) {
                (Char(_), Char(_)) if length(x) == length(y) => Char(n),
                _ => Varchar(n),
            }
        }
        (Binary(_) | Varbinary(_), Binary(_) | Varbinary(_)) => {
            Varbinary(length(a)?.max(length(b)?))
        }
        (x, y) if x.is_integer() && y.is_integer() => {
            if int_rank(x) >= int_rank(y) {
                x.clone()
            } else {
                y.clone()
            }
        }
        (x, y) if x.is_numeric() && y.is_numeric() => {
            let approximate = |t: &DataType| matches!(t, Float | Double);
            if approximate(x) || approximate(y) {
                // "in case of DECIMAL we enforce DOUBLE"
                let decimal = matches!(x, Decimal { .. }) || matches!(y, Decimal { .. });
                if *x == Double || *y == Double || decimal {
                    Double
                } else {
                    Float
                }
            } else {
                // createCommonExactNumericType: d = max whole digits, s = max scale, p = d + s.
                let (p1, s1) = decimal::integer_precision(x)?;
                let (p2, s2) = decimal::integer_precision(y)?;
                let d = (p1 - s1).max(p2 - s2).min(decimal::MAX_PRECISION);
                let s = s1.max(s2).min(decimal::MAX_PRECISION - d);
                Decimal {
                    precision: (d + s).max(1),
                    scale: s,
                }
            }
        }
        (Timestamp(p), Timestamp(q)) => Timestamp(*p.max(q)),
        (Timestamp(p) | TimestampLtz(p), Timestamp(q) | TimestampLtz(q)) => TimestampLtz(*p.max(q)),
        (Time(p), Time(q)) => Time(*p.max(q)),
        _ => return None,
    })
}

/// The common type of all of `types`.
pub fn common_of<'t>(types: impl IntoIterator<Item = &'t DataType>) -> Option<DataType> {
    let mut result = DataType::Null;
    for t in types {
        result = common_type(&result, t)?;
    }
    Some(result)
}

/// An arithmetic operator, for typing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    /// `+`, `-`.
    Add,
    /// `*`.
    Mul,
    /// `/`.
    Div,
    /// `%`, MOD.
    Mod,
}

/// How `a op b` computes and the type both operands are cast to (`None`: they stay) and the
/// result type; `None` when the operands are not numbers (or MOD of approximate numbers,
/// which Flink does not accept).
pub fn arithmetic(
    op: ArithOp,
    a: &DataType,
    b: &DataType,
) -> Option<(Numeric, [Option<DataType>; 2], DataType)> {
    use DataType::*;
    let (a, b) = match (a, b) {
        (Null, Null) => (&Int, &Int),
        (Null, t) | (t, Null) => (t, t),
        _ => (a, b),
    };
    if !a.is_numeric() || !b.is_numeric() {
        return None;
    }
    if a.is_integer() && b.is_integer() {
        // MOD takes the type of its second operand (Flink's MOD output strategy).
        let result = if op == ArithOp::Mod {
            b.clone()
        } else {
            common_type(a, b)?
        };
        return Some((Numeric::Int(IntType::of(&result)?), [None, None], result));
    }
    let approximate = |t: &DataType| matches!(t, Float | Double);
    if approximate(a) || approximate(b) {
        if op == ArithOp::Mod {
            return None;
        }
        let result = common_type(a, b)?;
        let kind = if result == Float {
            Numeric::Float
        } else {
            Numeric::Double
        };
        let cast = |t: &DataType| (*t != result).then(|| result.clone());
        return Some((kind, [cast(a), cast(b)], result));
    }
    let (p1, s1) = decimal::integer_precision(a)?;
    let (p2, s2) = decimal::integer_precision(b)?;
    let (precision, scale) = match op {
        ArithOp::Add => decimal::addition_type(p1, s1, p2, s2),
        ArithOp::Mul => decimal::multiplication_type(p1, s1, p2, s2),
        ArithOp::Div => decimal::division_type(p1, s1, p2, s2),
        ArithOp::Mod => decimal::modulo_type(p1, s1, p2, s2),
    };
    let as_decimal = |t: &DataType, p: u8, s: u8| {
        t.is_integer().then_some(Decimal {
            precision: p,
            scale: s,
        })
    };
    Some((
        Numeric::Decimal {
            left: s1,
            right: s2,
            precision,
            scale,
        },
        [as_decimal(a, p1, s1), as_decimal(b, p2, s2)],
        Decimal { precision, scale },
    ))
}

/// STRING.
pub fn string() -> DataType {
    DataType::Varchar(MAX_LENGTH)
}
