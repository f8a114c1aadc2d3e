//! Unbound expressions: what the Table API and the SQL front end build, before names are
//! resolved and types derived ([`bind_scalar`](super::bind_scalar),
//! [`bind_aggregate`](super::bind_aggregate)).

use std::fmt;

use crate::repr::{ColumnType, DataType, Datum, Row};

use super::func::cast::write_datum;

/// An expression over the columns of one input, by name.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A column: `"a"`, or qualified `"orders.a"` (resolved by exact name first, then by the
    /// part after the last `.`).
    Column(String),
    /// A typed constant.
    Literal(Literal),
    /// A call of a built-in or registered function or operator by case-insensitive name:
    /// `"+"`, `"="`, `"and"`, `"lower"`, `"extract"` ... (the DSL methods build these).
    Call {
        /// The function's name.
        func: String,
        /// Its arguments.
        args: Vec<Expr>,
    },
    /// `CAST(expr AS to)`, or `TRY_CAST` when `safe` (NULL instead of an error).
    Cast {
        /// The value.
        expr: Box<Expr>,
        /// The target type.
        to: DataType,
        /// TRY_CAST.
        safe: bool,
    },
    /// `CASE [operand] WHEN .. THEN .. [ELSE ..] END`.
    Case {
        /// The simple CASE's operand, compared with each WHEN value.
        operand: Option<Box<Expr>>,
        /// The WHEN conditions (or values) and their results, in order.
        whens: Vec<(Expr, Expr)>,
        /// The ELSE result (NULL when absent).
        otherwise: Option<Box<Expr>>,
    },
    /// An aggregate call: `func(DISTINCT args) FILTER (WHERE filter)`; `COUNT(*)` is `count`
    /// with no arguments.
    Aggregate {
        /// The aggregate's name (`count`, `sum`, `avg`, `min`, `max`, `first_value`,
        /// `last_value`, `listagg`, `stddev_pop`, ... or a registered UDAF).
        func: String,
        /// Its arguments.
        args: Vec<Expr>,
        /// DISTINCT: each distinct argument value counts once.
        distinct: bool,
        /// FILTER (WHERE ..): only rows where this is TRUE are aggregated.
        filter: Option<Box<Expr>>,
    },
    /// `expr AS name`: names the output column.
    Alias(Box<Expr>, String),
}

/// A constant with its type: one datum packed in a row.
#[derive(Clone, Debug, PartialEq)]
pub struct Literal {
    /// The value, as a row of one datum.
    pub value: Row,
    /// Its type.
    pub ty: ColumnType,
}

impl Literal {
    /// A literal of `datum` with type `ty`.
    pub fn new(datum: Datum<'_>, ty: ColumnType) -> Literal {
        Literal {
            value: Row::pack_one(datum),
            ty,
        }
    }

    /// The value.
    pub fn datum(&self) -> Datum<'_> {
        self.value.get(0).unwrap_or(Datum::Null)
    }
}

impl Expr {
    /// The output column name Flink gives this expression: the alias, else the column's name
    /// (the part after the last `.` of a qualified name), else `None` (the caller names it
    /// `EXPR$<i>` by its position, as Flink does).
    pub fn name(&self) -> Option<String> {
        match self {
            Expr::Alias(_, name) => Some(name.clone()),
            Expr::Column(name) => Some(name.rsplit('.').next().unwrap_or(name).to_string()),
            _ => None,
        }
    }

    /// The expression without its aliases.
    pub fn unaliased(&self) -> &Expr {
        match self {
            Expr::Alias(inner, _) => inner.unaliased(),
            other => other,
        }
    }
}

/// Whether `func` prints infix (`a + b`).
fn infix(func: &str) -> Option<&'static str> {
    Some(match func.to_ascii_lowercase().as_str() {
        "+" => "+",
        "-" => "-",
        "*" => "*",
        "/" => "/",
        "%" => "%",
        "=" => "=",
        "<>" => "<>",
        "<" => "<",
        "<=" => "<=",
        ">" => ">",
        ">=" => ">=",
        "and" => "AND",
        "or" => "OR",
        "||" => "||",
        "is_distinct_from" => "IS DISTINCT FROM",
        "is_not_distinct_from" => "IS NOT DISTINCT FROM",
        _ => return None,
    })
}

/// Whether `func` prints postfix (`a IS NULL`).
fn postfix(func: &str) -> Option<&'static str> {
    Some(match func.to_ascii_lowercase().as_str() {
        "is_null" => "IS NULL",
        "is_not_null" => "IS NOT NULL",
        "is_true" => "IS TRUE",
        "is_not_true" => "IS NOT TRUE",
        "is_false" => "IS FALSE",
        "is_not_false" => "IS NOT FALSE",
        _ => return None,
    })
}

/// An operand, parenthesised when it is itself an operator expression.
struct Operand<'a>(&'a Expr);

impl fmt::Display for Operand<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Expr::Call { func, args }
                if (infix(func).is_some() && args.len() == 2)
                    || postfix(func).is_some()
                    || matches!(
                        func.to_ascii_lowercase().as_str(),
                        "like" | "between" | "in" | "not"
                    ) =>
            {
                write!(f, "({})", self.0)
            }
            other => write!(f, "{other}"),
        }
    }
}

fn comma_list(f: &mut fmt::Formatter<'_>, items: &[Expr]) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

/// SQL-like text, as error messages quote it: `a + 1`, `LOWER(s)`, `CAST(a AS BIGINT)`,
/// `COUNT(DISTINCT a) FILTER (WHERE b > 0)`.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Column(name) => f.write_str(name),
            Expr::Literal(literal) => {
                let mut text = String::new();
                write_datum(&mut text, literal.datum(), &literal.ty.data_type);
                match (literal.datum(), &literal.ty.data_type) {
                    (Datum::Null, _) => f.write_str("NULL"),
                    (Datum::Str(_), _) => write!(f, "'{}'", text.replace('\'', "''")),
                    (_, DataType::Date | DataType::Time(_) | DataType::Timestamp(_)) => {
                        let kind = match &literal.ty.data_type {
                            DataType::Date => "DATE",
                            DataType::Time(_) => "TIME",
                            _ => "TIMESTAMP",
                        };
                        write!(f, "{kind} '{text}'")
                    }
                    _ => f.write_str(&text),
                }
            }
            Expr::Call { func, args } => {
                let lower = func.to_ascii_lowercase();
                match (lower.as_str(), args.as_slice()) {
                    (_, [l, r]) if infix(func).is_some() => {
                        write!(
                            f,
                            "{} {} {}",
                            Operand(l),
                            infix(func).unwrap_or("?"),
                            Operand(r)
                        )
                    }
                    (_, [x]) if postfix(func).is_some() => {
                        write!(f, "{} {}", Operand(x), postfix(func).unwrap_or("?"))
                    }
                    ("-", [x]) => write!(f, "-{}", Operand(x)),
                    ("not", [x]) => write!(f, "NOT {}", Operand(x)),
                    ("like", [x, p]) => write!(f, "{} LIKE {}", Operand(x), Operand(p)),
                    ("like", [x, p, e]) => {
                        write!(
                            f,
                            "{} LIKE {} ESCAPE {}",
                            Operand(x),
                            Operand(p),
                            Operand(e)
                        )
                    }
                    ("between", [x, lo, hi]) => {
                        write!(
                            f,
                            "{} BETWEEN {} AND {}",
                            Operand(x),
                            Operand(lo),
                            Operand(hi)
                        )
                    }
                    ("in", [x, list @ ..]) => {
                        write!(f, "{} IN (", Operand(x))?;
                        comma_list(f, list)?;
                        f.write_str(")")
                    }
                    _ => {
                        write!(f, "{}(", func.to_ascii_uppercase())?;
                        comma_list(f, args)?;
                        f.write_str(")")
                    }
                }
            }
            Expr::Cast { expr, to, safe } => {
                let name = if *safe { "TRY_CAST" } else { "CAST" };
                write!(f, "{name}({expr} AS {to})")
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                f.write_str("CASE")?;
                if let Some(operand) = operand {
                    write!(f, " {operand}")?;
                }
                for (when, then) in whens {
                    write!(f, " WHEN {when} THEN {then}")?;
                }
                if let Some(otherwise) = otherwise {
                    write!(f, " ELSE {otherwise}")?;
                }
                f.write_str(" END")
            }
            Expr::Aggregate {
                func,
                args,
                distinct,
                filter,
            } => {
                write!(f, "{}(", func.to_ascii_uppercase())?;
                if *distinct {
                    f.write_str("DISTINCT ")?;
                }
                if args.is_empty() && func.eq_ignore_ascii_case("count") {
                    f.write_str("*")?;
                }
                comma_list(f, args)?;
                f.write_str(")")?;
                if let Some(filter) = filter {
                    write!(f, " FILTER (WHERE {filter})")?;
                }
                Ok(())
            }
            Expr::Alias(expr, name) => write!(f, "{expr} AS {name}"),
        }
    }
}
