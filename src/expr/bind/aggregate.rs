//! Binding aggregate calls: argument types, result types (Flink's, see
//! [`crate::expr::aggregate`]), FILTER.

use std::sync::Arc;

use crate::repr::{ColumnType, DataType, Datum};

use super::coerce::{self, ArithOp};
use super::{coerce_to, Binder};
use crate::expr::aggregate::{AggregateExpr, AggregateFunc};
use crate::expr::ast::Expr;
use crate::expr::error::ExprError;
use crate::expr::func::{decimal, IntType, Numeric};

impl Binder<'_> {
    /// Binds an aggregate call.
    pub(crate) fn aggregate(&self, e: &Expr) -> Result<AggregateExpr, ExprError> {
        let Expr::Aggregate {
            func,
            args,
            distinct,
            filter,
        } = e
        else {
            return Err(ExprError::NotAnAggregate {
                expr: e.to_string(),
            });
        };
        let name = func.to_ascii_lowercase();
        let mut bound = args
            .iter()
            .map(|a| self.scalar(a))
            .collect::<Result<Vec<_>, _>>()?;
        let filter = match filter {
            Some(f) => {
                let f = self.scalar(f)?;
                if !matches!(f.ty.data_type, DataType::Boolean | DataType::Null) {
                    return Err(self.mismatch("FILTER", &[f], e, "'FILTER (WHERE <BOOLEAN>)'"));
                }
                Some(f)
            }
            None => None,
        };
        let count = |ok: bool, expected: &str| {
            if ok {
                Ok(())
            } else {
                Err(ExprError::ArgumentCount {
                    func: name.to_ascii_uppercase(),
                    expr: e.to_string(),
                    expected: expected.into(),
                    got: bound.len(),
                })
            }
        };
        let nullable = |t: DataType| ColumnType {
            data_type: t,
            nullable: true,
        };
        let op_name = name.to_ascii_uppercase();
        let arg_type = bound
            .first()
            .map(|a| a.ty.data_type.clone())
            .unwrap_or(DataType::Null);
        let (func, ty) = match name.as_str() {
            "count" if bound.is_empty() => {
                if *distinct {
                    return Err(ExprError::InvalidArgument {
                        expr: e.to_string(),
                        reason: "COUNT(DISTINCT *) is not allowed".into(),
                    });
                }
                (AggregateFunc::CountStar, DataType::BigInt.not_null())
            }
            "count" => (AggregateFunc::Count, DataType::BigInt.not_null()),
            "sum" | "avg" => {
                count(bound.len() == 1, "1")?;
                let t = if arg_type == DataType::Null {
                    DataType::Int
                } else {
                    arg_type.clone()
                };
                if !t.is_numeric() {
                    return Err(self.mismatch(
                        &op_name,
                        &bound,
                        e,
                        &format!("'{op_name}(<NUMERIC>)'"),
                    ));
                }
                let (func, result) = match (&t, name.as_str()) {
                    (DataType::Decimal { scale, .. }, "sum") => {
                        let (p, s) = decimal::sum_type(*scale);
                        (
                            AggregateFunc::Sum(Numeric::Decimal {
                                left: s,
                                right: s,
                                precision: p,
                                scale: s,
                            }),
                            DataType::Decimal {
                                precision: p,
                                scale: s,
                            },
                        )
                    }
                    (DataType::Decimal { scale, .. }, _) => {
                        let (p, s) = decimal::avg_type(*scale);
                        (
                            AggregateFunc::Avg(Numeric::Decimal {
                                left: *scale,
                                right: 0,
                                precision: p,
                                scale: s,
                            }),
                            DataType::Decimal {
                                precision: p,
                                scale: s,
                            },
                        )
                    }
                    (t, _) => {
                        let kind = match IntType::of(t) {
                            Some(int) => Numeric::Int(int),
                            None if *t == DataType::Float => Numeric::Float,
                            None => Numeric::Double,
                        };
                        let func = if name == "sum" {
                            AggregateFunc::Sum(kind)
                        } else {
                            AggregateFunc::Avg(kind)
                        };
                        (func, t.clone())
                    }
                };
                (func, nullable(result))
            }
            "min" | "max" => {
                count(bound.len() == 1, "1")?;
                if matches!(
                    arg_type,
                    DataType::Array(_) | DataType::Map(..) | DataType::Row(_)
                ) {
                    return Err(self.mismatch(
                        &op_name,
                        &bound,
                        e,
                        &format!("'{op_name}(<COMPARABLE_TYPE>)'"),
                    ));
                }
                let func = if name == "min" {
                    AggregateFunc::Min
                } else {
                    AggregateFunc::Max
                };
                (func, nullable(arg_type))
            }
            "first_value" | "last_value" => {
                count(bound.len() == 1, "1")?;
                let func = if name == "first_value" {
                    AggregateFunc::FirstValue
                } else {
                    AggregateFunc::LastValue
                };
                (func, nullable(arg_type))
            }
            "listagg" => {
                count(bound.len() == 1 || bound.len() == 2, "1 or 2")?;
                if !(arg_type.is_string() || arg_type == DataType::Null) {
                    return Err(self.mismatch(
                        "LISTAGG",
                        &bound,
                        e,
                        "'LISTAGG(<STRING> [, <STRING literal>])'",
                    ));
                }
                let separator: Arc<str> = match bound.get(1) {
                    None => Arc::from(","),
                    Some(sep) => match sep.as_literal() {
                        Some(Datum::Str(s)) => Arc::from(s),
                        _ => {
                            return Err(ExprError::InvalidArgument {
                                expr: e.to_string(),
                                reason: "the LISTAGG separator must be a string literal".into(),
                            })
                        }
                    },
                };
                bound.truncate(1);
                (
                    AggregateFunc::ListAgg(separator),
                    nullable(coerce::string()),
                )
            }
            "stddev_pop" | "stddev_samp" | "var_pop" | "var_samp" => {
                count(bound.len() == 1, "1")?;
                if coerce::arithmetic(ArithOp::Add, &arg_type, &arg_type).is_none() {
                    return Err(self.mismatch(
                        &op_name,
                        &bound,
                        e,
                        &format!("'{op_name}(<NUMERIC>)'"),
                    ));
                }
                let func = match name.as_str() {
                    "stddev_pop" => AggregateFunc::StddevPop,
                    "stddev_samp" => AggregateFunc::StddevSamp,
                    "var_pop" => AggregateFunc::VarPop,
                    _ => AggregateFunc::VarSamp,
                };
                bound = bound
                    .into_iter()
                    .map(|a| coerce_to(a, &DataType::Double))
                    .collect();
                (func, nullable(DataType::Double))
            }
            _ => match self.registry.aggregate(&name) {
                Some(udaf) => {
                    let types: Vec<ColumnType> = bound.iter().map(|a| a.ty.clone()).collect();
                    let ty = udaf.return_type(&types)?;
                    (AggregateFunc::Udaf(udaf.clone()), ty)
                }
                None if self.registry.scalar(&name).is_some() || super::is_builtin(&name) => {
                    return Err(ExprError::NotAnAggregate {
                        expr: e.to_string(),
                    });
                }
                None => {
                    return Err(ExprError::UnknownFunction {
                        name: func.clone(),
                        expr: e.to_string(),
                        suggestions: String::new(),
                    });
                }
            },
        };
        Ok(AggregateExpr {
            func,
            args: bound,
            distinct: *distinct,
            filter,
            ty,
        })
    }
}
