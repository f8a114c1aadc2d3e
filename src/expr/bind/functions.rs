//! Binding the math, time and user-defined scalar functions: ROUND/FLOOR/CEIL (with Flink's
//! `findRoundDecimalType`), EXTRACT, FLOOR/CEIL TO, DATE_FORMAT, TO_TIMESTAMP, TO_DATE, UDFs.

use crate::repr::{ColumnType, DataType, Datum};

use super::builtins::{AGGREGATES, BUILTINS};
use super::coerce::{self, ArithOp};
use super::{call_node, coerce_to, Binder};
use crate::expr::ast::Expr;
use crate::expr::error::ExprError;
use crate::expr::func::{decimal, Numeric, RoundOp, ScalarFunc, TimeUnit};
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

/// The edit distance of two short names, for "did you mean".
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != b[j]))
                .min(row[j] + 1)
                .min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

impl Binder<'_> {
    pub(super) fn round(
        &self,
        name: &str,
        args: Vec<ScalarExpr>,
        e: &Expr,
    ) -> Result<ScalarExpr, ExprError> {
        let op_name = name.to_ascii_uppercase();
        let t = args[0].ty.data_type.clone();
        let digits = match args.get(1) {
            None => Some(0),
            Some(d) => match d.as_literal() {
                Some(Datum::Int(v)) if d.ty.data_type.is_integer() => i32::try_from(v).ok(),
                _ => None,
            },
        };
        let (Some(digits), true) = (digits, t.is_numeric()) else {
            return Err(self.mismatch(
                &op_name,
                &args,
                e,
                &format!("'{op_name}(<NUMERIC> [, <INTEGER literal>])'"),
            ));
        };
        let null = nullable(&args);
        let input = match coerce::arithmetic(ArithOp::Add, &t, &t) {
            Some((Numeric::Decimal { .. }, _, _)) | None => {
                let (p, s) = decimal::integer_precision(&t).unwrap_or((38, 0));
                Numeric::Decimal {
                    left: s,
                    right: s,
                    precision: p,
                    scale: s,
                }
            }
            Some((kind, _, _)) => kind,
        };
        let (op, result) = match (name, &t) {
            ("round", DataType::Decimal { precision, scale }) => {
                // LogicalTypeMerging.findRoundDecimalType.
                let (p, s) = if digits >= *scale as i32 {
                    (*precision, *scale)
                } else if digits < 0 {
                    ((1 + precision - scale).min(decimal::MAX_PRECISION), 0)
                } else {
                    (1 + precision - scale + digits as u8, digits as u8)
                };
                (
                    RoundOp::Round {
                        input,
                        digits,
                        out_scale: s,
                    },
                    DataType::Decimal {
                        precision: p,
                        scale: s,
                    },
                )
            }
            ("round", _) => (
                RoundOp::Round {
                    input,
                    digits,
                    out_scale: 0,
                },
                t.clone(),
            ),
            (_, DataType::Decimal { precision, scale }) => {
                let op = if name == "floor" {
                    RoundOp::Floor(input)
                } else {
                    RoundOp::Ceil(input)
                };
                let p = if *scale == 0 {
                    *precision
                } else {
                    (precision - scale + 1).min(decimal::MAX_PRECISION)
                };
                (
                    op,
                    DataType::Decimal {
                        precision: p,
                        scale: 0,
                    },
                )
            }
            _ => (
                if name == "floor" {
                    RoundOp::Floor(input)
                } else {
                    RoundOp::Ceil(input)
                },
                t.clone(),
            ),
        };
        Ok(call_node(ScalarFunc::Round(op), args, ty(result, null), e))
    }

    pub(super) fn time(
        &self,
        name: &str,
        args: Vec<ScalarExpr>,
        e: &Expr,
    ) -> Result<ScalarExpr, ExprError> {
        let op_name = name.to_ascii_uppercase();
        let null = nullable(&args[1.min(args.len() - 1)..]);
        let invalid = |reason: String| ExprError::InvalidArgument {
            expr: e.to_string(),
            reason,
        };
        match name {
            "extract" | "floor_to" | "ceil_to" => {
                let unit_text = self.literal_text(&args[0], "the time unit", e)?;
                let unit = TimeUnit::parse(&unit_text)
                    .ok_or_else(|| invalid(format!("unknown time unit '{unit_text}'")))?;
                let t = args[1].ty.data_type.clone();
                if name == "extract" {
                    if !matches!(
                        t,
                        DataType::Date | DataType::Timestamp(_) | DataType::TimestampLtz(_)
                    ) {
                        return Err(self.mismatch(
                            "EXTRACT",
                            &args[1..],
                            e,
                            "'EXTRACT(<TIME UNIT> FROM <DATETIME>)'",
                        ));
                    }
                    let func = ScalarFunc::Extract(unit, t == DataType::Date);
                    return Ok(call_node(func, args, ty(DataType::BigInt, null), e));
                }
                if !t.is_timestamp() || !unit.floorable() {
                    return Err(self.mismatch(
                        &op_name,
                        &args[1..],
                        e,
                        &format!("'{op_name}(<TIMESTAMP> TO <TIME UNIT>)'"),
                    ));
                }
                let func = if name == "floor_to" {
                    ScalarFunc::FloorTo(unit)
                } else {
                    ScalarFunc::CeilTo(unit)
                };
                Ok(call_node(func, args, ty(t, null), e))
            }
            "date_format" => {
                if !args[0].ty.data_type.is_timestamp() || !is_string_or_null(&args[1].ty.data_type)
                {
                    return Err(self.mismatch(
                        "DATE_FORMAT",
                        &args,
                        e,
                        "'DATE_FORMAT(<TIMESTAMP>, <STRING>)'",
                    ));
                }
                let null = nullable(&args);
                Ok(call_node(
                    ScalarFunc::DateFormat,
                    args,
                    ty(coerce::string(), null),
                    e,
                ))
            }
            _ => {
                // to_timestamp, to_date: NULL when the text does not parse.
                if !args.iter().all(|a| is_string_or_null(&a.ty.data_type)) {
                    return Err(self.mismatch(
                        &op_name,
                        &args,
                        e,
                        &format!("'{op_name}(<STRING> [, <STRING>])'"),
                    ));
                }
                let (func, result) = if name == "to_date" {
                    (ScalarFunc::ToDate, DataType::Date)
                } else {
                    (ScalarFunc::ToTimestamp, DataType::Timestamp(3))
                };
                Ok(call_node(func, args, ty(result, true), e))
            }
        }
    }

    pub(super) fn udf_call(
        &self,
        func: &str,
        name: &str,
        args: &[Expr],
        e: &Expr,
    ) -> Result<ScalarExpr, ExprError> {
        if self.registry.aggregate(name).is_some() {
            return Err(ExprError::AggregateNotAllowed {
                aggregate: e.to_string(),
                expr: self.root.clone(),
            });
        }
        let Some(udf) = self.registry.scalar(name) else {
            let mut close: Vec<&str> = BUILTINS
                .iter()
                .chain(AGGREGATES)
                .copied()
                .chain(self.registry.names())
                .filter(|c| {
                    c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                        && distance(name, c) <= (name.len() / 3).max(1)
                })
                .collect();
            close.sort_by_key(|c| distance(name, c));
            let suggestions = if close.is_empty() {
                String::new()
            } else {
                format!(
                    "; did you mean: {}",
                    close
                        .iter()
                        .map(|c| c.to_ascii_uppercase())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return Err(ExprError::UnknownFunction {
                name: func.into(),
                expr: e.to_string(),
                suggestions,
            });
        };
        let cast = self.udf_args(func, &udf.name, &udf.args, args, e)?;
        Ok(ScalarExpr {
            kind: ScalarKind::Udf {
                udf: udf.clone(),
                args: cast,
            },
            ty: udf.ret.clone(),
        })
    }

    /// The arguments of a call of the user function `udf_name` (called as `func`), bound and
    /// cast to its `declared` types as Flink casts them implicitly; a wrong count or a type that
    /// does not cast is the "Cannot apply" error with the function's form.
    pub(crate) fn udf_args(
        &self,
        func: &str,
        udf_name: &str,
        declared: &[DataType],
        args: &[Expr],
        e: &Expr,
    ) -> Result<Vec<ScalarExpr>, ExprError> {
        self.count(
            func,
            args,
            args.len() == declared.len(),
            &declared.len().to_string(),
            e,
        )?;
        let bound = args
            .iter()
            .map(|a| self.scalar(a))
            .collect::<Result<Vec<_>, _>>()?;
        let mut cast = Vec::with_capacity(bound.len());
        for (arg, want) in bound.iter().zip(declared) {
            match coerce::common_type(&arg.ty.data_type, want) {
                Some(t) if t == *want => cast.push(coerce_to(arg.clone(), want)),
                _ => {
                    let forms = (declared.iter())
                        .map(|t| format!("<{t}>"))
                        .collect::<Vec<_>>()
                        .join(", ");
                    return Err(self.mismatch(
                        udf_name,
                        &bound,
                        e,
                        &format!("'{udf_name}({forms})'"),
                    ));
                }
            }
        }
        Ok(cast)
    }
}
