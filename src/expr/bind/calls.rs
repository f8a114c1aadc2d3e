//! Binding calls of built-in functions and operators, and of scalar UDFs: the operand types
//! each accepts (Flink's input type strategies), the implicit casts, the result type.

use crate::repr::{ColumnType, DataType, Datum};

use super::coerce::{self, ArithOp};
use super::{call_node, coerce_to, is_builtin, Binder};
use crate::expr::ast::Expr;
use crate::expr::error::ExprError;
use crate::expr::func::comparison::{escape_char, LikePattern};
use crate::expr::func::{decimal, CmpOp, IntervalOp, Numeric, ScalarFunc, TrimSide};
use crate::expr::scalar::{ScalarExpr, ScalarKind};

fn nullable(args: &[ScalarExpr]) -> bool {
    args.iter().any(|a| a.ty.nullable)
}

fn ty(data_type: DataType, nullable: bool) -> ColumnType {
    ColumnType {
        data_type,
        nullable,
    }
}

fn is_string_or_null(t: &DataType) -> bool {
    t.is_string() || *t == DataType::Null
}

impl Binder<'_> {
    pub(super) fn count(
        &self,
        func: &str,
        args: &[Expr],
        ok: bool,
        expected: &str,
        e: &Expr,
    ) -> Result<(), ExprError> {
        if ok {
            Ok(())
        } else {
            Err(ExprError::ArgumentCount {
                func: func.to_ascii_uppercase(),
                expr: e.to_string(),
                expected: expected.into(),
                got: args.len(),
            })
        }
    }

    /// A literal argument's text (units, formats, separators).
    pub(super) fn literal_text(
        &self,
        arg: &ScalarExpr,
        what: &str,
        e: &Expr,
    ) -> Result<String, ExprError> {
        match arg.as_literal() {
            Some(Datum::Str(s)) => Ok(s.to_string()),
            _ => Err(ExprError::InvalidArgument {
                expr: e.to_string(),
                reason: format!("{what} must be a string literal"),
            }),
        }
    }

    /// Binds `func(args)`.
    pub(crate) fn call(
        &self,
        func: &str,
        args: &[Expr],
        e: &Expr,
    ) -> Result<ScalarExpr, ExprError> {
        let name = func.to_ascii_lowercase();
        if name == "distinct" || name == "filter" {
            return Err(ExprError::InvalidArgument {
                expr: e.to_string(),
                reason: format!(
                    "{} applies only to an aggregate function call",
                    name.to_ascii_uppercase()
                ),
            });
        }
        if !is_builtin(&name) {
            return self.udf_call(func, &name, args, e);
        }
        let arity = |ok: bool, expected: &str| self.count(func, args, ok, expected, e);
        let n = args.len();
        match name.as_str() {
            "+" | "*" | "/" | "%" | "mod" => arity(n == 2, "2")?,
            "-" => arity(n == 1 || n == 2, "1 or 2")?,
            "abs" | "not" | "is_null" | "is_not_null" | "is_true" | "is_not_true" | "is_false"
            | "is_not_false" | "lower" | "upper" | "trim" | "ltrim" | "rtrim" | "char_length"
            | "floor" | "ceil" | "sqrt" | "ln" | "log10" | "exp" => arity(n == 1, "1")?,
            "="
            | "<>"
            | "<"
            | "<="
            | ">"
            | ">="
            | "is_distinct_from"
            | "is_not_distinct_from"
            | "nullif"
            | "power"
            | "extract"
            | "floor_to"
            | "ceil_to"
            | "date_format"
            | "position" => arity(n == 2, "2")?,
            "between" | "not_between" | "if" | "replace" | "split_index" => arity(n == 3, "3")?,
            "like" => arity(n == 2 || n == 3, "2 or 3")?,
            "substring" => arity(n == 2 || n == 3, "2 or 3")?,
            "round" | "to_timestamp" | "to_date" => arity(n == 1 || n == 2, "1 or 2")?,
            "and" | "or" | "in" | "concat_ws" => arity(n >= 2, "at least 2")?,
            "coalesce" | "concat" | "||" => arity(n >= 1, "at least 1")?,
            _ => {
                return Err(ExprError::AggregateNotAllowed {
                    aggregate: e.to_string(),
                    expr: self.root.clone(),
                })
            }
        }
        if name == "between" || name == "not_between" {
            // a BETWEEN lo AND hi is a >= lo AND a <= hi (NOT BETWEEN: a < lo OR a > hi).
            let (x, lo, hi) = (&args[0], &args[1], &args[2]);
            let (ge, le, join) = if name == "between" {
                (">=", "<=", "and")
            } else {
                ("<", ">", "or")
            };
            let low = self.call(ge, &[x.clone(), lo.clone()], e)?;
            let high = self.call(le, &[x.clone(), hi.clone()], e)?;
            let nullable = low.ty.nullable || high.ty.nullable;
            let func = if join == "and" {
                ScalarFunc::And
            } else {
                ScalarFunc::Or
            };
            return Ok(call_node(
                func,
                vec![low, high],
                ty(DataType::Boolean, nullable),
                e,
            ));
        }
        let bound = args
            .iter()
            .map(|a| self.scalar(a))
            .collect::<Result<Vec<_>, _>>()?;
        self.builtin(&name, bound, e)
    }

    fn builtin(
        &self,
        name: &str,
        args: Vec<ScalarExpr>,
        e: &Expr,
    ) -> Result<ScalarExpr, ExprError> {
        let types: Vec<&DataType> = args.iter().map(|a| &a.ty.data_type).collect();
        let null = nullable(&args);
        let op_name = name.to_ascii_uppercase();
        match name {
            "+" | "-" | "*" | "/" | "%" | "mod" if args.len() == 2 => {
                self.arithmetic(name, args, e)
            }
            "-" | "abs" => {
                let t = types[0].clone();
                let kind = match coerce::arithmetic(ArithOp::Add, &t, &t) {
                    Some((
                        Numeric::Decimal {
                            scale, precision, ..
                        },
                        _,
                        _,
                    )) if t != DataType::Null => {
                        let (p, s) = decimal::integer_precision(&t).unwrap_or((precision, scale));
                        Numeric::Decimal {
                            left: s,
                            right: s,
                            precision: p,
                            scale: s,
                        }
                    }
                    Some((kind, _, _)) => kind,
                    None => return Err(self.mismatch(&op_name, &args, e, "'<NUMERIC>'")),
                };
                let t = if t == DataType::Null {
                    DataType::Int
                } else {
                    t
                };
                let func = if name == "-" {
                    ScalarFunc::Neg(kind)
                } else {
                    ScalarFunc::Abs(kind)
                };
                Ok(call_node(func, args, ty(t, null), e))
            }
            "=" | "<>" | "<" | "<=" | ">" | ">=" => {
                let op = match name {
                    "=" => CmpOp::Eq,
                    "<>" => CmpOp::Ne,
                    "<" => CmpOp::Lt,
                    "<=" => CmpOp::Le,
                    ">" => CmpOp::Gt,
                    _ => CmpOp::Ge,
                };
                let args =
                    self.common(name, args, e, "'<COMPARABLE_TYPE> op <COMPARABLE_TYPE>'")?;
                Ok(call_node(
                    ScalarFunc::Cmp(op),
                    args,
                    ty(DataType::Boolean, null),
                    e,
                ))
            }
            "is_distinct_from" | "is_not_distinct_from" => {
                let args = self.common(
                    name,
                    args,
                    e,
                    "'<COMPARABLE_TYPE> IS DISTINCT FROM <COMPARABLE_TYPE>'",
                )?;
                let func = ScalarFunc::IsDistinctFrom(name == "is_distinct_from");
                Ok(call_node(func, args, ty(DataType::Boolean, false), e))
            }
            "in" => {
                let args = self.common("IN", args, e, "'<T> IN (<T>, ...)'")?;
                Ok(call_node(
                    ScalarFunc::In,
                    args,
                    ty(DataType::Boolean, null),
                    e,
                ))
            }
            "like" => {
                if !types.iter().all(|t| is_string_or_null(t)) {
                    return Err(self.mismatch(
                        "LIKE",
                        &args,
                        e,
                        "'<STRING> LIKE <STRING> [ESCAPE <STRING>]'",
                    ));
                }
                let invalid = |reason: String| ExprError::InvalidArgument {
                    expr: e.to_string(),
                    reason,
                };
                let escape = match args.get(2).map(|a| a.as_literal()) {
                    Some(Some(Datum::Str(s))) => Some(Some(escape_char(s).map_err(invalid)?)),
                    Some(_) => None,
                    None => Some(None),
                };
                let compiled = match (args[1].as_literal(), escape) {
                    (Some(Datum::Str(p)), Some(escape)) => {
                        Some(LikePattern::new(p, escape).map_err(invalid)?)
                    }
                    _ => None,
                };
                Ok(call_node(
                    ScalarFunc::Like(compiled),
                    args,
                    ty(DataType::Boolean, null),
                    e,
                ))
            }
            "and" | "or" | "not" => {
                if !types
                    .iter()
                    .all(|t| matches!(t, DataType::Boolean | DataType::Null))
                {
                    let form = if name == "not" {
                        "'NOT <BOOLEAN>'".to_string()
                    } else {
                        format!("'<BOOLEAN> {op_name} <BOOLEAN>'")
                    };
                    return Err(self.mismatch(&op_name, &args, e, &form));
                }
                let func = match name {
                    "and" => ScalarFunc::And,
                    "or" => ScalarFunc::Or,
                    _ => ScalarFunc::Not,
                };
                Ok(call_node(func, args, ty(DataType::Boolean, null), e))
            }
            "is_null" | "is_not_null" => {
                let func = if name == "is_null" {
                    ScalarFunc::IsNull
                } else {
                    ScalarFunc::IsNotNull
                };
                Ok(call_node(func, args, ty(DataType::Boolean, false), e))
            }
            "is_true" | "is_not_true" | "is_false" | "is_not_false" => {
                if !matches!(types[0], DataType::Boolean | DataType::Null) {
                    return Err(self.mismatch(
                        &op_name,
                        &args,
                        e,
                        "'<BOOLEAN> IS [NOT] TRUE|FALSE'",
                    ));
                }
                let func = ScalarFunc::IsBool {
                    value: name.ends_with("true"),
                    negated: name.contains("not"),
                };
                Ok(call_node(func, args, ty(DataType::Boolean, false), e))
            }
            "coalesce" => {
                let all_nullable = args.iter().all(|a| a.ty.nullable);
                let mut args = self.common("COALESCE", args, e, "'COALESCE(<T>, <T>, ...)'")?;
                let t = args[0].ty.data_type.clone();
                if args.len() == 1 {
                    return Ok(args.remove(0));
                }
                Ok(call_node(
                    ScalarFunc::Coalesce,
                    args,
                    ty(t, all_nullable),
                    e,
                ))
            }
            "nullif" => {
                let args = self.common("NULLIF", args, e, "'NULLIF(<T>, <T>)'")?;
                let t = args[0].ty.data_type.clone();
                Ok(call_node(ScalarFunc::NullIf, args, ty(t, true), e))
            }
            "if" => {
                let mut args = args.into_iter();
                let (Some(cond), Some(then), Some(otherwise)) =
                    (args.next(), args.next(), args.next())
                else {
                    return Err(ExprError::InvalidArgument {
                        expr: e.to_string(),
                        reason: "IF takes 3 arguments".into(),
                    });
                };
                if !matches!(cond.ty.data_type, DataType::Boolean | DataType::Null) {
                    return Err(self.mismatch(
                        "IF",
                        &[cond, then, otherwise],
                        e,
                        "'IF(<BOOLEAN>, <T>, <T>)'",
                    ));
                }
                let branches =
                    self.common("IF", vec![then, otherwise], e, "'IF(<BOOLEAN>, <T>, <T>)'")?;
                let t = ty(branches[0].ty.data_type.clone(), nullable(&branches));
                let mut branches = branches.into_iter();
                let (Some(then), Some(otherwise)) = (branches.next(), branches.next()) else {
                    return Err(ExprError::InvalidArgument {
                        expr: e.to_string(),
                        reason: "IF takes 3 arguments".into(),
                    });
                };
                Ok(ScalarExpr {
                    kind: ScalarKind::If {
                        cond: Box::new(cond),
                        then: Box::new(then),
                        otherwise: Box::new(otherwise),
                    },
                    ty: t,
                })
            }
            "lower" | "upper" | "trim" | "ltrim" | "rtrim" | "char_length" | "concat" | "||"
            | "concat_ws" | "replace" | "position" => {
                if !types.iter().all(|t| is_string_or_null(t)) {
                    return Err(self.mismatch(
                        &op_name,
                        &args,
                        e,
                        &format!("'{op_name}(<STRING>, ...)'"),
                    ));
                }
                let (func, result) = match name {
                    "lower" => (ScalarFunc::Lower, coerce::string()),
                    "upper" => (ScalarFunc::Upper, coerce::string()),
                    "trim" => (ScalarFunc::Trim(TrimSide::Both), coerce::string()),
                    "ltrim" => (ScalarFunc::Trim(TrimSide::Leading), coerce::string()),
                    "rtrim" => (ScalarFunc::Trim(TrimSide::Trailing), coerce::string()),
                    "char_length" => (ScalarFunc::CharLength, DataType::Int),
                    "position" => (ScalarFunc::Position, DataType::Int),
                    "replace" => (ScalarFunc::Replace, coerce::string()),
                    "concat_ws" => (ScalarFunc::ConcatWs, coerce::string()),
                    _ => (ScalarFunc::Concat, coerce::string()),
                };
                let null = if name == "concat_ws" {
                    args[0].ty.nullable
                } else {
                    null
                };
                Ok(call_node(func, args, ty(result, null), e))
            }
            "substring" | "split_index" => {
                let ints_at = if name == "substring" { 1 } else { 2 };
                let ok = types.iter().enumerate().all(|(i, t)| {
                    if i >= ints_at {
                        t.is_integer() || **t == DataType::Null
                    } else {
                        is_string_or_null(t)
                    }
                });
                if !ok {
                    let form = if name == "substring" {
                        "'SUBSTRING(<STRING>, <INTEGER> [, <INTEGER>])'"
                    } else {
                        "'SPLIT_INDEX(<STRING>, <STRING>, <INTEGER>)'"
                    };
                    return Err(self.mismatch(&op_name, &args, e, form));
                }
                let func = if name == "substring" {
                    ScalarFunc::Substring
                } else {
                    ScalarFunc::SplitIndex
                };
                let null = null || name == "split_index";
                Ok(call_node(func, args, ty(coerce::string(), null), e))
            }
            "round" | "floor" | "ceil" => self.round(name, args, e),
            "power" | "sqrt" | "ln" | "log10" | "exp" => {
                if !types
                    .iter()
                    .all(|t| t.is_numeric() || **t == DataType::Null)
                {
                    return Err(self.mismatch(
                        &op_name,
                        &args,
                        e,
                        &format!("'{op_name}(<NUMERIC>)'"),
                    ));
                }
                let func = match name {
                    "power" => ScalarFunc::Power,
                    "sqrt" => ScalarFunc::Sqrt,
                    "ln" => ScalarFunc::Ln,
                    "log10" => ScalarFunc::Log10,
                    _ => ScalarFunc::Exp,
                };
                let args = args
                    .into_iter()
                    .map(|a| coerce_to(a, &DataType::Double))
                    .collect();
                Ok(call_node(func, args, ty(DataType::Double, null), e))
            }
            _ => self.time(name, args, e),
        }
    }

    /// Casts `args` to their common type, or the "Cannot apply" error.
    fn common(
        &self,
        func: &str,
        args: Vec<ScalarExpr>,
        e: &Expr,
        supported: &str,
    ) -> Result<Vec<ScalarExpr>, ExprError> {
        match coerce::common_of(args.iter().map(|a| &a.ty.data_type)) {
            Some(t) => Ok(args.into_iter().map(|a| coerce_to(a, &t)).collect()),
            None => Err(self.mismatch(&func.to_ascii_uppercase(), &args, e, supported)),
        }
    }

    fn arithmetic(
        &self,
        name: &str,
        args: Vec<ScalarExpr>,
        e: &Expr,
    ) -> Result<ScalarExpr, ExprError> {
        let symbol = if name == "mod" { "MOD" } else { name };
        let (a, b) = (args[0].ty.data_type.clone(), args[1].ty.data_type.clone());
        let (a, b) = (&a, &b);
        let null = nullable(&args);
        // Datetime +/- interval (and interval + datetime).
        let interval =
            |t: &DataType| matches!(t, DataType::IntervalDayTime | DataType::IntervalYearMonth);
        let datetime = |t: &DataType| {
            matches!(
                t,
                DataType::Date | DataType::Timestamp(_) | DataType::TimestampLtz(_)
            )
        };
        if (name == "+" || name == "-")
            && ((datetime(a) && interval(b)) || (name == "+" && interval(a) && datetime(b)))
        {
            let mut args = args;
            if interval(a) {
                args.swap(0, 1);
            }
            let op = IntervalOp {
                date: args[0].ty.data_type == DataType::Date,
                months: args[1].ty.data_type == DataType::IntervalYearMonth,
                negate: name == "-",
            };
            let result = args[0].ty.data_type.clone();
            return Ok(call_node(
                ScalarFunc::Interval(op),
                args,
                ty(result, null),
                e,
            ));
        }
        let op = match name {
            "+" | "-" => ArithOp::Add,
            "*" => ArithOp::Mul,
            "/" => ArithOp::Div,
            _ => ArithOp::Mod,
        };
        let Some((kind, casts, result)) = coerce::arithmetic(op, a, b) else {
            let supported = match op {
                ArithOp::Add => {
                    format!("'<NUMERIC> {symbol} <NUMERIC>', '<DATETIME> {symbol} <INTERVAL>'")
                }
                ArithOp::Mod => format!("'{symbol}(<EXACT_NUMERIC>, <EXACT_NUMERIC>)'"),
                _ => format!("'<NUMERIC> {symbol} <NUMERIC>'"),
            };
            return Err(self.mismatch(symbol, &args, e, &supported));
        };
        let args: Vec<ScalarExpr> = args
            .into_iter()
            .zip(casts)
            .map(|(arg, cast)| match cast {
                Some(t) => coerce_to(arg, &t),
                None => arg,
            })
            .collect();
        let func = match name {
            "+" => ScalarFunc::Add(kind),
            "-" => ScalarFunc::Sub(kind),
            "*" => ScalarFunc::Mul(kind),
            "/" => ScalarFunc::Div(kind),
            _ => ScalarFunc::Mod(kind),
        };
        // DECIMAL division by zero is NULL.
        let null = null
            || (matches!(kind, Numeric::Decimal { .. })
                && matches!(op, ArithOp::Div | ArithOp::Mod));
        Ok(call_node(func, args, ty(result, null), e))
    }
}
