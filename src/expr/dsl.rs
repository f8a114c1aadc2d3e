//! The expression DSL (Polars style, re-exported by the Table API): free functions that start
//! an expression and methods that extend it. Nothing is checked here; names and types are
//! checked when the expression is bound, and every error names the expression.
//!
//! ```
//! use differential_temporal::expr::{col, lit};
//!
//! let e = col("a").add(lit(1)).gt(lit(10)).and(col("s").lower().like(lit("eu%")));
//! assert_eq!(e.to_string(), "((a + 1) > 10) AND (LOWER(s) LIKE 'eu%')");
//! ```

use crate::repr::{ColumnType, DataType, Datum};

use super::ast::{Expr, Literal};
use super::func::decimal;

/// A column by name (`"a"` or qualified `"orders.a"`).
pub fn col(name: impl Into<String>) -> Expr {
    Expr::Column(name.into())
}

/// A constant: `lit(5)` is INT NOT NULL, `lit(5i64)` BIGINT NOT NULL, `lit(2.5)` DOUBLE NOT
/// NULL, `lit(true)` BOOLEAN NOT NULL, `lit("abc")` CHAR(3) NOT NULL (Flink types a string
/// literal as CHAR of its length).
pub fn lit(value: impl IntoLiteral) -> Expr {
    Expr::Literal(value.into_literal())
}

/// A DECIMAL constant from its text: `lit_decimal("12.30")` is DECIMAL(4, 2) NOT NULL (as a SQL
/// exact numeric literal: precision = the digits written, scale = the digits after the point).
/// Text that is not a decimal of at most 38 digits becomes a NULL literal of DECIMAL(38, 0),
/// which binding reports nowhere; use [`try_lit_decimal`] to check.
pub fn lit_decimal(text: &str) -> Expr {
    try_lit_decimal(text).unwrap_or_else(|| {
        null_of(DataType::Decimal {
            precision: 38,
            scale: 0,
        })
    })
}

/// [`lit_decimal`], or `None` when `text` is not a decimal of at most 38 digits.
pub fn try_lit_decimal(text: &str) -> Option<Expr> {
    let (value, precision, scale) = decimal::parse_literal(text)?;
    Some(Expr::Literal(Literal::new(
        Datum::Decimal(value),
        DataType::Decimal { precision, scale }.not_null(),
    )))
}

/// A typed NULL (`CAST(NULL AS ty)`).
pub fn null_of(ty: DataType) -> Expr {
    Expr::Literal(Literal::new(Datum::Null, ty.nullable()))
}

/// A call of a built-in or registered function by name.
pub fn call(func: impl Into<String>, args: impl IntoIterator<Item = Expr>) -> Expr {
    Expr::Call {
        func: func.into(),
        args: args.into_iter().collect(),
    }
}

/// `COUNT(*)`.
pub fn count_star() -> Expr {
    call_aggregate("count", [])
}

/// A call of the aggregate function `func` (a built-in or a registered UDAF, see
/// [`TableEnv::register_aggregate_function`](crate::table::TableEnv::register_aggregate_function))
/// on `args`: Flink's `call(WeightedAvg.class, $("value"), $("weight"))` in a grouped select.
///
/// ```
/// use differential_temporal::expr::{call_aggregate, col};
/// let avg = call_aggregate("WeightedAvg", [col("value"), col("weight")]);
/// assert_eq!(avg.to_string(), "WEIGHTEDAVG(value, weight)");
/// ```
pub fn call_aggregate(func: impl Into<String>, args: impl IntoIterator<Item = Expr>) -> Expr {
    Expr::Aggregate {
        func: func.into(),
        args: args.into_iter().collect(),
        distinct: false,
        filter: None,
    }
}

/// A Rust value that is a SQL literal.
pub trait IntoLiteral {
    /// The literal.
    fn into_literal(self) -> Literal;
}

macro_rules! int_literal {
    ($($t:ty => $dt:expr),*) => {$(
        impl IntoLiteral for $t {
            fn into_literal(self) -> Literal {
                Literal::new(Datum::Int(self as i64), $dt.not_null())
            }
        }
    )*};
}

int_literal!(i8 => DataType::TinyInt, i16 => DataType::SmallInt, i32 => DataType::Int, i64 => DataType::BigInt);

impl IntoLiteral for f64 {
    fn into_literal(self) -> Literal {
        Literal::new(Datum::Float(self), DataType::Double.not_null())
    }
}

impl IntoLiteral for f32 {
    fn into_literal(self) -> Literal {
        Literal::new(Datum::Float(self as f64), DataType::Float.not_null())
    }
}

impl IntoLiteral for bool {
    fn into_literal(self) -> Literal {
        Literal::new(Datum::Bool(self), DataType::Boolean.not_null())
    }
}

impl IntoLiteral for &str {
    fn into_literal(self) -> Literal {
        let len = self.chars().count() as u32;
        Literal::new(Datum::Str(self), DataType::Char(len).not_null())
    }
}

impl IntoLiteral for String {
    fn into_literal(self) -> Literal {
        self.as_str().into_literal()
    }
}

impl IntoLiteral for Literal {
    fn into_literal(self) -> Literal {
        self
    }
}

impl IntoLiteral for (Datum<'_>, ColumnType) {
    fn into_literal(self) -> Literal {
        Literal::new(self.0, self.1)
    }
}

macro_rules! binary {
    ($($(#[$doc:meta])* $name:ident => $op:literal),* $(,)?) => {$(
        $(#[$doc])*
        pub fn $name(self, other: Expr) -> Expr {
            call($op, [self, other])
        }
    )*};
}

macro_rules! unary {
    ($($(#[$doc:meta])* $name:ident => $op:literal),* $(,)?) => {$(
        $(#[$doc])*
        pub fn $name(self) -> Expr {
            call($op, [self])
        }
    )*};
}

macro_rules! unary_aggregate {
    ($($(#[$doc:meta])* $name:ident => $op:literal),* $(,)?) => {$(
        $(#[$doc])*
        pub fn $name(self) -> Expr {
            call_aggregate($op, [self])
        }
    )*};
}

// `add`, `neg`, `not` ... are the spec's DSL names (Polars' too): inherent methods need no
// trait import at the call site, which `std::ops` traits would.
#[allow(clippy::should_implement_trait)]
impl Expr {
    binary! {
        /// `self + other`.
        add => "+",
        /// `self - other`.
        sub => "-",
        /// `self * other`.
        mul => "*",
        /// `self / other`.
        div => "/",
        /// `self % other` (MOD).
        rem => "%",
        /// `self = other`.
        eq => "=",
        /// `self <> other`.
        ne => "<>",
        /// `self < other`.
        lt => "<",
        /// `self <= other`.
        le => "<=",
        /// `self > other`.
        gt => ">",
        /// `self >= other`.
        ge => ">=",
        /// `self AND other`.
        and => "and",
        /// `self OR other`.
        or => "or",
        /// `self IS DISTINCT FROM other`.
        is_distinct_from => "is_distinct_from",
        /// `self IS NOT DISTINCT FROM other`.
        is_not_distinct_from => "is_not_distinct_from",
        /// `self LIKE pattern` (`%` any run, `_` one character).
        like => "like",
        /// `POWER(self, other)`.
        power => "power",
        /// `COALESCE(self, other)`.
        coalesce => "coalesce",
        /// `NULLIF(self, other)`.
        nullif => "nullif",
    }

    unary! {
        /// `-self`.
        neg => "-",
        /// `NOT self`.
        not => "not",
        /// `self IS NULL`.
        is_null => "is_null",
        /// `self IS NOT NULL`.
        is_not_null => "is_not_null",
        /// `self IS TRUE`.
        is_true => "is_true",
        /// `self IS FALSE`.
        is_false => "is_false",
        /// `LOWER(self)`.
        lower => "lower",
        /// `UPPER(self)`.
        upper => "upper",
        /// `TRIM(self)` (spaces at both ends).
        trim => "trim",
        /// `LTRIM(self)`.
        ltrim => "ltrim",
        /// `RTRIM(self)`.
        rtrim => "rtrim",
        /// `CHAR_LENGTH(self)`.
        char_length => "char_length",
        /// `ABS(self)`.
        abs => "abs",
        /// `FLOOR(self)`.
        floor => "floor",
        /// `CEIL(self)`.
        ceil => "ceil",
        /// `ROUND(self)` (to an integer, HALF_UP).
        round => "round",
    }

    unary_aggregate! {
        /// `COUNT(self)`: the non-NULL values.
        count => "count",
        /// `SUM(self)`.
        sum => "sum",
        /// `AVG(self)`.
        avg => "avg",
        /// `MIN(self)`.
        min => "min",
        /// `MAX(self)`.
        max => "max",
        /// `FIRST_VALUE(self)`.
        first_value => "first_value",
        /// `LAST_VALUE(self)`.
        last_value => "last_value",
        /// `STDDEV_POP(self)`.
        stddev_pop => "stddev_pop",
        /// `STDDEV_SAMP(self)`.
        stddev_samp => "stddev_samp",
        /// `VAR_POP(self)`.
        var_pop => "var_pop",
        /// `VAR_SAMP(self)`.
        var_samp => "var_samp",
    }

    /// `self BETWEEN low AND high`.
    pub fn between(self, low: Expr, high: Expr) -> Expr {
        call("between", [self, low, high])
    }

    /// `self IN (list)`.
    pub fn in_list(self, list: impl IntoIterator<Item = Expr>) -> Expr {
        call("in", std::iter::once(self).chain(list))
    }

    /// `self LIKE pattern ESCAPE escape`.
    pub fn like_escape(self, pattern: Expr, escape: Expr) -> Expr {
        call("like", [self, pattern, escape])
    }

    /// `CAST(self AS to)`.
    pub fn cast(self, to: DataType) -> Expr {
        Expr::Cast {
            expr: Box::new(self),
            to,
            safe: false,
        }
    }

    /// `TRY_CAST(self AS to)`: NULL where the value does not convert.
    pub fn try_cast(self, to: DataType) -> Expr {
        Expr::Cast {
            expr: Box::new(self),
            to,
            safe: true,
        }
    }

    /// `SUBSTRING(self FROM start [FOR len])`, 1-based.
    pub fn substring(self, start: Expr, len: Option<Expr>) -> Expr {
        call("substring", std::iter::once(self).chain([start]).chain(len))
    }

    /// `CONCAT(self, others...)`.
    pub fn concat(self, others: impl IntoIterator<Item = Expr>) -> Expr {
        call("concat", std::iter::once(self).chain(others))
    }

    /// `REPLACE(self, from, to)`.
    pub fn replace(self, from: Expr, to: Expr) -> Expr {
        call("replace", [self, from, to])
    }

    /// `ROUND(self, digits)`.
    pub fn round_to(self, digits: Expr) -> Expr {
        call("round", [self, digits])
    }

    /// `EXTRACT(unit FROM self)`, unit one of YEAR, QUARTER, MONTH, WEEK, DAY, DOY, DOW, HOUR,
    /// MINUTE, SECOND, MILLISECOND, MICROSECOND, NANOSECOND, EPOCH.
    pub fn extract(self, unit: &str) -> Expr {
        call("extract", [lit(unit), self])
    }

    /// `FLOOR(self TO unit)`.
    pub fn floor_to(self, unit: &str) -> Expr {
        call("floor_to", [lit(unit), self])
    }

    /// `CEIL(self TO unit)`.
    pub fn ceil_to(self, unit: &str) -> Expr {
        call("ceil_to", [lit(unit), self])
    }

    /// `COUNT(DISTINCT self)`.
    pub fn count_distinct(self) -> Expr {
        self.count().distinct()
    }

    /// `SUM(DISTINCT self)`.
    pub fn sum_distinct(self) -> Expr {
        self.sum().distinct()
    }

    /// `LISTAGG(self, separator)`.
    pub fn listagg(self, separator: &str) -> Expr {
        call_aggregate("listagg", [self, lit(separator)])
    }

    /// Marks an aggregate DISTINCT (on another expression, binding reports that DISTINCT
    /// applies to aggregates only).
    pub fn distinct(self) -> Expr {
        match self {
            Expr::Aggregate {
                func, args, filter, ..
            } => Expr::Aggregate {
                func,
                args,
                distinct: true,
                filter,
            },
            other => call("distinct", [other]),
        }
    }

    /// Adds `FILTER (WHERE condition)` to an aggregate (on another expression, binding
    /// reports that FILTER applies to aggregates only).
    pub fn filter(self, condition: Expr) -> Expr {
        match self {
            Expr::Aggregate {
                func,
                args,
                distinct,
                ..
            } => Expr::Aggregate {
                func,
                args,
                distinct,
                filter: Some(Box::new(condition)),
            },
            other => call("filter", [other, condition]),
        }
    }

    /// `self AS name`.
    pub fn alias(self, name: impl Into<String>) -> Expr {
        Expr::Alias(Box::new(self), name.into())
    }

    /// A table function call with its output columns renamed, in order (Flink's
    /// `call("split", $("s")).as("word", "length")` in `joinLateral`); only a lateral join
    /// reads it.
    ///
    /// ```
    /// use differential_temporal::expr::{call, col};
    /// let aliased = call("split", [col("s")]).as_columns(["word", "length"]);
    /// assert_eq!(aliased.to_string(), "AS_COLUMNS(SPLIT(s), 'word', 'length')");
    /// ```
    pub fn as_columns<S: Into<String>>(self, names: impl IntoIterator<Item = S>) -> Expr {
        let names = names.into_iter().map(|n| lit(n.into()));
        call(AS_COLUMNS, std::iter::once(self).chain(names))
    }
}

/// The function name of [`Expr::as_columns`].
pub const AS_COLUMNS: &str = "AS_COLUMNS";
