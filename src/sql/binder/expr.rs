//! SQL expressions onto the unbound [`Expr`] the Table API builds, with identifiers resolved
//! through a [`Scope`]: binding and type-checking are then `expr`'s, shared with the Table API.

use sqlparser::ast::{
    self, BinaryOperator, CastKind, DuplicateTreatment, FunctionArg, FunctionArgExpr,
    FunctionArguments, Spanned, UnaryOperator, Value,
};

use super::scope::Scope;
use crate::expr::{call, lit, null_of, try_lit_decimal, Expr, FunctionRegistry};
use crate::repr::{DataType, Datum};
use crate::sql::error::SqlError;
use crate::sql::parser::types::data_type;

/// Translates SQL expressions in one scope.
pub(super) struct Translator<'a> {
    /// The visible columns.
    pub scope: &'a Scope,
    /// The functions (for user-defined aggregates).
    pub registry: &'a FunctionRegistry,
}

impl Translator<'_> {
    /// `e` as an unbound expression over the scope's plan.
    ///
    /// Errors (at the part): unknown or ambiguous column, a construct Flink SQL has but this
    /// crate does not compute (subqueries, OVER windows outside deduplication...).
    pub(super) fn expr(&self, e: &ast::Expr) -> Result<Expr, SqlError> {
        use ast::Expr as E;
        let unsupported =
            |what: &str| SqlError::at(e.span(), format!("{what} is not supported: {e}"));
        Ok(match e {
            E::Identifier(ident) => {
                crate::expr::col(self.scope.resolve(std::slice::from_ref(ident))?.0)
            }
            E::CompoundIdentifier(parts) => crate::expr::col(self.scope.resolve(parts)?.0),
            E::Nested(inner) => self.expr(inner)?,
            E::Value(v) => literal(&v.value).ok_or_else(|| unsupported("this literal"))?,
            E::TypedString(t) => {
                let ty = data_type(&t.data_type).map_err(|m| SqlError::at(e.span(), m))?;
                let text = match &t.value.value {
                    Value::SingleQuotedString(s) => s.clone(),
                    _ => return Err(unsupported("this literal")),
                };
                lit(text.as_str()).cast(ty)
            }
            E::Interval(interval) => {
                interval_literal(interval).map_err(|m| SqlError::at(e.span(), m))?
            }
            E::BinaryOp { left, op, right } => {
                let name = match op {
                    BinaryOperator::Plus => "+",
                    BinaryOperator::Minus => "-",
                    BinaryOperator::Multiply => "*",
                    BinaryOperator::Divide => "/",
                    BinaryOperator::Modulo => "%",
                    BinaryOperator::Eq => "=",
                    BinaryOperator::NotEq => "<>",
                    BinaryOperator::Lt => "<",
                    BinaryOperator::LtEq => "<=",
                    BinaryOperator::Gt => ">",
                    BinaryOperator::GtEq => ">=",
                    BinaryOperator::And => "and",
                    BinaryOperator::Or => "or",
                    BinaryOperator::StringConcat => "||",
                    _ => return Err(unsupported(&format!("the operator {op}"))),
                };
                call(name, [self.expr(left)?, self.expr(right)?])
            }
            E::UnaryOp { op, expr } => match op {
                UnaryOperator::Minus => self.expr(expr)?.neg(),
                UnaryOperator::Plus => self.expr(expr)?,
                UnaryOperator::Not => self.expr(expr)?.not(),
                _ => return Err(unsupported(&format!("the operator {op}"))),
            },
            E::IsNull(x) => self.expr(x)?.is_null(),
            E::IsNotNull(x) => self.expr(x)?.is_not_null(),
            E::IsTrue(x) => self.expr(x)?.is_true(),
            E::IsFalse(x) => self.expr(x)?.is_false(),
            E::IsNotTrue(x) => call("is_not_true", [self.expr(x)?]),
            E::IsNotFalse(x) => call("is_not_false", [self.expr(x)?]),
            E::IsDistinctFrom(a, b) => self.expr(a)?.is_distinct_from(self.expr(b)?),
            E::IsNotDistinctFrom(a, b) => self.expr(a)?.is_not_distinct_from(self.expr(b)?),
            E::Between {
                expr,
                negated,
                low,
                high,
            } => negate(
                *negated,
                self.expr(expr)?.between(self.expr(low)?, self.expr(high)?),
            ),
            E::In {
                expr,
                target: ast::InTarget::List(list),
                negated,
                ..
            } => {
                let list = list
                    .iter()
                    .map(|x| self.expr(x))
                    .collect::<Result<Vec<_>, _>>()?;
                negate(*negated, self.expr(expr)?.in_list(list))
            }
            E::Like {
                negated,
                any: false,
                expr,
                pattern,
                escape_char,
            } => {
                let (x, p) = (self.expr(expr)?, self.expr(pattern)?);
                let like = match escape_char {
                    Some(esc) => x.like_escape(p, self.expr(esc)?),
                    None => x.like(p),
                };
                negate(*negated, like)
            }
            E::Cast {
                kind,
                expr,
                data_type: ty,
                format: None,
            } => {
                let to = data_type(ty).map_err(|m| SqlError::at(e.span(), m))?;
                let x = self.expr(expr)?;
                match kind {
                    CastKind::Cast | CastKind::DoubleColon => x.cast(to),
                    CastKind::TryCast | CastKind::SafeCast => x.try_cast(to),
                }
            }
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => Expr::Case {
                operand: operand
                    .as_deref()
                    .map(|o| self.expr(o))
                    .transpose()?
                    .map(Box::new),
                whens: conditions
                    .iter()
                    .map(|w| Ok((self.expr(&w.condition)?, self.expr(&w.result)?)))
                    .collect::<Result<_, SqlError>>()?,
                otherwise: else_result
                    .as_deref()
                    .map(|o| self.expr(o))
                    .transpose()?
                    .map(Box::new),
            },
            E::Extract { field, expr, .. } => self.expr(expr)?.extract(&field.to_string()),
            E::Floor {
                expr,
                field: ast::CeilFloorKind::DateTimeField(f),
            } if !matches!(f, ast::DateTimeField::NoDateTime) => {
                self.expr(expr)?.floor_to(&f.to_string())
            }
            E::Ceil {
                expr,
                field: ast::CeilFloorKind::DateTimeField(f),
            } if !matches!(f, ast::DateTimeField::NoDateTime) => {
                self.expr(expr)?.ceil_to(&f.to_string())
            }
            E::Floor { expr, .. } => self.expr(expr)?.floor(),
            E::Ceil { expr, .. } => self.expr(expr)?.ceil(),
            E::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let start = match substring_from {
                    Some(s) => self.expr(s)?,
                    None => lit(1),
                };
                let len = substring_for.as_deref().map(|l| self.expr(l)).transpose()?;
                self.expr(expr)?.substring(start, len)
            }
            E::Trim {
                expr,
                trim_where: None,
                trim_what: None,
                trim_characters: None,
            } => self.expr(expr)?.trim(),
            E::Function(f) => self.function(f, e)?,
            _ => {
                return Err(match crate::sql::unsupported::expression(e) {
                    Some(feature) => crate::sql::unsupported::not_supported(e.span(), feature),
                    None => unsupported("this expression"),
                })
            }
        })
    }

    fn function(&self, f: &ast::Function, e: &ast::Expr) -> Result<Expr, SqlError> {
        let name = f.name.to_string().to_ascii_lowercase();
        if f.over.is_some() {
            return Err(SqlError::at(
                e.span(),
                format!(
                    "OVER aggregates are supported as select items (or arithmetic, casts and parentheses around them), and ROW_NUMBER() in Flink's deduplication pattern; found {e}"
                ),
            ));
        }
        let defined = crate::expr::is_builtin(&name)
            || self.registry.scalar(&name).is_some()
            || self.registry.aggregate(&name).is_some()
            || self.registry.table(&name).is_some();
        if let Some(missing) = (!defined)
            .then(|| crate::sql::unsupported::function(&name, e))
            .flatten()
        {
            return Err(missing);
        }
        let (args, distinct) = match &f.args {
            FunctionArguments::None => (Vec::new(), false),
            FunctionArguments::List(list) => {
                let distinct =
                    matches!(list.duplicate_treatment, Some(DuplicateTreatment::Distinct));
                let mut args = Vec::new();
                for arg in &list.args {
                    match arg {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => args.push(self.expr(x)?),
                        FunctionArg::Unnamed(FunctionArgExpr::Wildcard) if name == "count" => {}
                        _ => {
                            return Err(SqlError::at(
                                e.span(),
                                format!("unsupported argument {arg} of {}", f.name),
                            ))
                        }
                    }
                }
                (args, distinct)
            }
            FunctionArguments::Subquery(_) => {
                return Err(SqlError::at(e.span(), "subqueries are not supported"))
            }
        };
        let is_aggregate = crate::expr::AGGREGATES.contains(&name.as_str())
            || self.registry.aggregate(&name).is_some();
        if !is_aggregate {
            if distinct || f.filter.is_some() {
                return Err(SqlError::at(
                    e.span(),
                    format!(
                        "DISTINCT and FILTER apply to aggregate functions only, and {} is not one",
                        f.name
                    ),
                ));
            }
            return Ok(call(name, args));
        }
        Ok(Expr::Aggregate {
            func: name,
            args,
            distinct,
            filter: f
                .filter
                .as_deref()
                .map(|c| self.expr(c))
                .transpose()?
                .map(Box::new),
        })
    }
}

fn negate(negated: bool, e: Expr) -> Expr {
    if negated {
        e.not()
    } else {
        e
    }
}

/// A SQL literal as Flink types it: an integer is INT (BIGINT when it does not fit), a number
/// with a point DECIMAL(p, s), with an exponent DOUBLE; a string CHAR(n).
fn literal(v: &Value) -> Option<Expr> {
    Some(match v {
        Value::Number(n, _) => {
            if let Ok(i) = n.parse::<i32>() {
                lit(i)
            } else if let Ok(i) = n.parse::<i64>() {
                lit(i)
            } else if n.contains(['e', 'E']) {
                lit(n.parse::<f64>().ok()?)
            } else {
                try_lit_decimal(n)?
            }
        }
        Value::SingleQuotedString(s) => lit(s.as_str()),
        Value::Boolean(b) => lit(*b),
        Value::Null => null_of(DataType::Null),
        _ => return None,
    })
}

/// `INTERVAL 'n' unit` as a day-time interval literal.
fn interval_literal(interval: &ast::Interval) -> Result<Expr, String> {
    let millis = interval_millis(interval)?;
    Ok(lit((
        Datum::IntervalDayTime(millis),
        DataType::IntervalDayTime.not_null(),
    )))
}

/// The length of a single-unit day-time interval (`INTERVAL '5' SECOND`, `'0.001' SECOND`,
/// `'10' MINUTES`), in milliseconds.
pub(super) fn interval_millis(interval: &ast::Interval) -> Result<i64, String> {
    let text = match interval.value.as_ref() {
        ast::Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::Number(s, _) => s.clone(),
            _ => String::new(),
        },
        _ => String::new(),
    };
    let unit_ms: f64 = match interval.leading_field.as_ref().map(|f| f.to_string().to_ascii_uppercase()).as_deref() {
        Some("MILLISECOND" | "MILLISECONDS") => 1.0,
        Some("SECOND" | "SECONDS") => 1_000.0,
        Some("MINUTE" | "MINUTES") => 60_000.0,
        Some("HOUR" | "HOURS") => 3_600_000.0,
        Some("DAY" | "DAYS") => 86_400_000.0,
        _ => return Err(format!("only single-unit day-time intervals (INTERVAL 'n' SECOND | MINUTE | HOUR | DAY) are supported, not {interval}")),
    };
    if interval.last_field.is_some() {
        return Err(format!(
            "only single-unit day-time intervals are supported, not {interval}"
        ));
    }
    let n: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number of {interval}"))?;
    Ok((n * unit_ms).round() as i64)
}
