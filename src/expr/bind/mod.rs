//! Binding: an [`Expr`] against a [`Schema`] becomes a typed [`ScalarExpr`] (or
//! [`AggregateExpr`]): names resolved to column indices, every node typed, implicit casts made
//! explicit, and whatever does not type-check rejected with an [`ExprError`] that names the
//! expression.

mod aggregate;
mod builtins;
mod calls;
pub mod coerce;
mod functions;

use std::sync::Arc;

use crate::repr::{ColumnType, DataType, Schema};

use super::aggregate::AggregateExpr;
use super::ast::Expr;
use super::error::ExprError;
use super::func::cast::{can_cast, CastOp};
use super::func::ScalarFunc;
use super::registry::FunctionRegistry;
use super::scalar::{ScalarExpr, ScalarKind};

pub(crate) use builtins::{is_builtin, AGGREGATES};

/// Binds a scalar expression (a projection, a filter, a computed column). An aggregate call
/// inside it is an error ("aggregate function not allowed here").
///
/// ```
/// use differential_temporal::expr::{bind_scalar, col, lit, FunctionRegistry};
/// use differential_temporal::repr::{DataType, Schema};
///
/// let schema = Schema::builder().column("s", DataType::STRING.nullable()).build().unwrap();
/// let err = bind_scalar(&col("s").add(lit(1)), &schema, &FunctionRegistry::new()).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "Cannot apply '+' to arguments of type '<STRING>, <INT>' in 's + 1'. \
///      Supported form(s): '<NUMERIC> + <NUMERIC>', '<DATETIME> + <INTERVAL>'"
/// );
/// ```
pub fn bind_scalar(
    expr: &Expr,
    schema: &Schema,
    registry: &FunctionRegistry,
) -> Result<ScalarExpr, ExprError> {
    Binder::new(schema, registry, expr).scalar(expr)
}

/// Binds an aggregate call (`expr` must be one, under any aliases): its arguments and FILTER
/// are scalar expressions over the input's columns.
pub fn bind_aggregate(
    expr: &Expr,
    schema: &Schema,
    registry: &FunctionRegistry,
) -> Result<AggregateExpr, ExprError> {
    Binder::new(schema, registry, expr).aggregate(expr.unaliased())
}

/// The state of one binding: the input schema, the functions, the whole expression's text.
pub(crate) struct Binder<'s> {
    schema: &'s Schema,
    registry: &'s FunctionRegistry,
    root: String,
}

impl<'s> Binder<'s> {
    pub(crate) fn new(
        schema: &'s Schema,
        registry: &'s FunctionRegistry,
        root: &Expr,
    ) -> Binder<'s> {
        Binder {
            schema,
            registry,
            root: root.to_string(),
        }
    }

    /// Binds a scalar (sub)expression.
    pub(crate) fn scalar(&self, e: &Expr) -> Result<ScalarExpr, ExprError> {
        match e {
            Expr::Column(name) => self.column(name),
            Expr::Literal(literal) => Ok(ScalarExpr::literal(literal.datum(), literal.ty.clone())),
            Expr::Alias(inner, _) => self.scalar(inner),
            Expr::Cast { expr, to, safe } => {
                let inner = self.scalar(expr)?;
                self.cast(inner, to, *safe, e)
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => self.case(operand.as_deref(), whens, otherwise.as_deref(), e),
            Expr::Aggregate { .. } => Err(ExprError::AggregateNotAllowed {
                aggregate: e.to_string(),
                expr: self.root.clone(),
            }),
            Expr::Call { func, args } => self.call(func, args, e),
        }
    }

    /// Resolves a column name: the exact name first; else, for `t.a`, the column `a`; else,
    /// for `a`, the one column named `<qualifier>.a`.
    fn column(&self, name: &str) -> Result<ScalarExpr, ExprError> {
        let fields = &self.schema.fields;
        let found = |i: usize| Ok(ScalarExpr::column(i, fields[i].ty.clone()));
        if let Some(i) = self.schema.index_of(name) {
            return found(i);
        }
        let unqualified = name.rsplit('.').next().unwrap_or(name);
        let matches: Vec<usize> = (0..fields.len())
            .filter(|&i| {
                let field = fields[i].name.as_str();
                field == unqualified
                    || field
                        .rsplit_once('.')
                        .is_some_and(|(_, f)| f == unqualified && !name.contains('.'))
            })
            .collect();
        match matches.as_slice() {
            [i] => found(*i),
            [] => Err(ExprError::UnknownColumn {
                name: name.into(),
                expr: self.root.clone(),
                columns: self.schema.names().collect::<Vec<_>>().join(", "),
            }),
            many => Err(ExprError::AmbiguousColumn {
                name: name.into(),
                expr: self.root.clone(),
                candidates: many
                    .iter()
                    .map(|&i| fields[i].name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// `CAST(inner AS to)` / `TRY_CAST`.
    fn cast(
        &self,
        inner: ScalarExpr,
        to: &DataType,
        safe: bool,
        e: &Expr,
    ) -> Result<ScalarExpr, ExprError> {
        let from = inner.ty.data_type.clone();
        if !can_cast(&from, to) {
            return Err(ExprError::InvalidCast {
                from,
                to: to.clone(),
                expr: e.to_string(),
            });
        }
        let nullable = inner.ty.nullable || safe;
        if from == *to || from == DataType::Null {
            return Ok(ScalarExpr {
                kind: inner.kind,
                ty: ColumnType {
                    data_type: to.clone(),
                    nullable,
                },
            });
        }
        Ok(call_node(
            ScalarFunc::Cast(Box::new(CastOp {
                from,
                to: to.clone(),
                safe,
            })),
            vec![inner],
            ColumnType {
                data_type: to.clone(),
                nullable,
            },
            e,
        ))
    }

    /// CASE: a chain of IFs from the last WHEN back; the branches cast to their common type.
    fn case(
        &self,
        operand: Option<&Expr>,
        whens: &[(Expr, Expr)],
        otherwise: Option<&Expr>,
        e: &Expr,
    ) -> Result<ScalarExpr, ExprError> {
        let mut conditions = Vec::with_capacity(whens.len());
        let mut results = Vec::with_capacity(whens.len() + 1);
        for (when, then) in whens {
            let condition = match operand {
                Some(operand) => self.call("=", &[operand.clone(), when.clone()], e)?,
                None => self.scalar(when)?,
            };
            if !matches!(condition.ty.data_type, DataType::Boolean | DataType::Null) {
                return Err(self.mismatch(
                    "CASE",
                    &[condition],
                    e,
                    "'CASE WHEN <BOOLEAN> THEN <ANY> END'",
                ));
            }
            conditions.push(condition);
            results.push(self.scalar(then)?);
        }
        let otherwise = match otherwise {
            Some(o) => self.scalar(o)?,
            None => ScalarExpr::literal(crate::repr::Datum::Null, DataType::Null.nullable()),
        };
        results.push(otherwise);
        let Some(ty) = coerce::common_of(results.iter().map(|r| &r.ty.data_type)) else {
            return Err(self.mismatch(
                "CASE",
                &results,
                e,
                "'CASE WHEN <BOOLEAN> THEN <T> ELSE <T> END'",
            ));
        };
        let nullable = results.iter().any(|r| r.ty.nullable);
        let mut results = results
            .into_iter()
            .map(|r| coerce_to(r, &ty))
            .collect::<Vec<_>>();
        let mut acc = results.pop().unwrap_or_else(|| {
            ScalarExpr::literal(crate::repr::Datum::Null, ty.clone().nullable())
        });
        while let (Some(cond), Some(then)) = (conditions.pop(), results.pop()) {
            acc = ScalarExpr {
                kind: ScalarKind::If {
                    cond: Box::new(cond),
                    then: Box::new(then),
                    otherwise: Box::new(acc),
                },
                ty: ColumnType {
                    data_type: ty.clone(),
                    nullable,
                },
            };
        }
        Ok(acc)
    }

    /// The "Cannot apply" error for `func` on `args`.
    pub(crate) fn mismatch(
        &self,
        func: &str,
        args: &[ScalarExpr],
        e: &Expr,
        supported: &str,
    ) -> ExprError {
        ExprError::TypeMismatch {
            func: func.into(),
            types: args
                .iter()
                .map(|a| format!("<{}>", a.ty.data_type))
                .collect::<Vec<_>>()
                .join(", "),
            expr: e.to_string(),
            supported: supported.into(),
        }
    }
}

/// A call node of `func` on `args` with result type `ty`, named by `e`'s text.
pub(crate) fn call_node(
    func: ScalarFunc,
    args: Vec<ScalarExpr>,
    ty: ColumnType,
    e: &Expr,
) -> ScalarExpr {
    ScalarExpr {
        kind: ScalarKind::Call {
            func,
            args,
            text: Arc::from(e.to_string()),
        },
        ty,
    }
}

/// `arg` as type `to` (an implicit cast): retyped where the datum is the same (integers among
/// themselves, strings, a timestamp to a higher precision, NULL), else through a CAST node.
pub(crate) fn coerce_to(arg: ScalarExpr, to: &DataType) -> ScalarExpr {
    let from = &arg.ty.data_type;
    let same_datum = from == to
        || *from == DataType::Null
        || (from.is_integer() && to.is_integer())
        || (from.is_string() && to.is_string())
        || (from.is_timestamp() && to.is_timestamp())
        || matches!(
            (from, to),
            (DataType::Float, DataType::Double) | (DataType::Time(_), DataType::Time(_))
        );
    let ty = ColumnType {
        data_type: to.clone(),
        nullable: arg.ty.nullable,
    };
    if same_datum {
        return ScalarExpr { kind: arg.kind, ty };
    }
    let text: Arc<str> = Arc::from(format!("CAST(... AS {to})"));
    let func = ScalarFunc::Cast(Box::new(CastOp {
        from: from.clone(),
        to: to.clone(),
        safe: false,
    }));
    ScalarExpr {
        kind: ScalarKind::Call {
            func,
            args: vec![arg],
            text,
        },
        ty,
    }
}
