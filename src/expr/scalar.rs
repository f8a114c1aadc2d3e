//! Bound scalar expressions: every node typed, every name resolved to a column index, implicit
//! casts explicit. Evaluated per row by walking the tree ([`ScalarExpr::eval`]) or, faster, by
//! the closure tree [`ScalarExpr::compile`] builds once.

use std::sync::Arc;

use crate::repr::{ColumnType, Datum, Row};

use super::arena::RowArena;
use super::compile::CompiledExpr;
use super::error::EvalError;
use super::func::ScalarFunc;
use super::registry::ScalarUdf;

/// A bound, typed scalar expression.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalarExpr {
    /// What it computes.
    pub kind: ScalarKind,
    /// The type of its value.
    pub ty: ColumnType,
}

/// The node kinds of a [`ScalarExpr`].
#[derive(Clone, Debug, PartialEq)]
pub enum ScalarKind {
    /// The input row's column at this index.
    Column(usize),
    /// A constant: a row of one datum.
    Literal(Row),
    /// A built-in function on its arguments.
    Call {
        /// The function, with its operand types resolved.
        func: ScalarFunc,
        /// The arguments, already of the types the function takes.
        args: Vec<ScalarExpr>,
        /// The call's SQL text, for error messages.
        text: Arc<str>,
    },
    /// `CASE WHEN cond THEN then ELSE otherwise END` (and `IF(cond, then, otherwise)`):
    /// `otherwise` unless `cond` is TRUE; only the chosen branch is evaluated.
    If {
        /// The condition.
        cond: Box<ScalarExpr>,
        /// The value when the condition is TRUE.
        then: Box<ScalarExpr>,
        /// The value otherwise (FALSE or NULL).
        otherwise: Box<ScalarExpr>,
    },
    /// A registered scalar UDF on its arguments (NULL in, NULL out is the UDF's choice).
    Udf {
        /// The function.
        udf: Arc<ScalarUdf>,
        /// The arguments, of the UDF's declared types.
        args: Vec<ScalarExpr>,
    },
}

impl ScalarExpr {
    /// The input's column `index`, of type `ty`.
    pub fn column(index: usize, ty: ColumnType) -> ScalarExpr {
        ScalarExpr {
            kind: ScalarKind::Column(index),
            ty,
        }
    }

    /// The constant `datum` of type `ty`.
    pub fn literal(datum: Datum<'_>, ty: ColumnType) -> ScalarExpr {
        ScalarExpr {
            kind: ScalarKind::Literal(Row::pack_one(datum)),
            ty,
        }
    }

    /// The value on one row, given as its datums (see [`DatumVec`](crate::repr::DatumVec)).
    /// Computed strings are put in `arena`; clear it between rows.
    ///
    /// ```
    /// use differential_temporal::expr::{bind_scalar, col, lit, FunctionRegistry, RowArena};
    /// use differential_temporal::repr::{DataType, Datum, Schema};
    ///
    /// let schema = Schema::builder().column("a", DataType::Int.nullable()).build().unwrap();
    /// let e = bind_scalar(&col("a").add(lit(1)), &schema, &FunctionRegistry::new()).unwrap();
    /// assert_eq!(e.ty, DataType::Int.nullable());
    /// let arena = RowArena::new();
    /// assert_eq!(e.eval(&[Datum::Int(41)], &arena), Ok(Datum::Int(42)));
    /// assert_eq!(e.eval(&[Datum::Null], &arena), Ok(Datum::Null));
    /// // Compiled once, evaluated per row: the same answers.
    /// let c = e.compile();
    /// assert_eq!(c.eval(&[Datum::Int(41)], &arena), Ok(Datum::Int(42)));
    /// ```
    pub fn eval<'a>(
        &'a self,
        datums: &[Datum<'a>],
        arena: &'a RowArena,
    ) -> Result<Datum<'a>, EvalError> {
        match &self.kind {
            ScalarKind::Column(i) => Ok(datums.get(*i).copied().unwrap_or(Datum::Null)),
            ScalarKind::Literal(row) => Ok(row.iter().next().unwrap_or(Datum::Null)),
            ScalarKind::Call { func, args, text } => {
                func.call(args, |e| e.eval(datums, arena), arena, text)
            }
            ScalarKind::If {
                cond,
                then,
                otherwise,
            } => match cond.eval(datums, arena)? {
                Datum::Bool(true) => then.eval(datums, arena),
                _ => otherwise.eval(datums, arena),
            },
            ScalarKind::Udf { udf, args } => {
                let mut values: smallvec::SmallVec<[Datum<'a>; 4]> = smallvec::SmallVec::new();
                for arg in args {
                    values.push(arg.eval(datums, arena)?);
                }
                udf.invoke(&values, arena)
            }
        }
    }

    /// The closure tree of this expression, built once and evaluated per row.
    pub fn compile(&self) -> CompiledExpr {
        CompiledExpr::new(self)
    }

    /// Appends the indices of the columns this expression reads (in tree order, repeats kept).
    pub fn columns(&self, out: &mut Vec<usize>) {
        match &self.kind {
            ScalarKind::Column(i) => out.push(*i),
            ScalarKind::Literal(_) => {}
            ScalarKind::Call { args, .. } | ScalarKind::Udf { args, .. } => {
                args.iter().for_each(|a| a.columns(out));
            }
            ScalarKind::If {
                cond,
                then,
                otherwise,
            } => {
                cond.columns(out);
                then.columns(out);
                otherwise.columns(out);
            }
        }
    }

    /// Renumbers columns: column `i` becomes `map[i]` (for a projection pushed below the
    /// expression). Indices past `map` are left as they are.
    pub fn permute(&mut self, map: &[usize]) {
        match &mut self.kind {
            ScalarKind::Column(i) => *i = map.get(*i).copied().unwrap_or(*i),
            ScalarKind::Literal(_) => {}
            ScalarKind::Call { args, .. } | ScalarKind::Udf { args, .. } => {
                args.iter_mut().for_each(|a| a.permute(map));
            }
            ScalarKind::If {
                cond,
                then,
                otherwise,
            } => {
                cond.permute(map);
                then.permute(map);
                otherwise.permute(map);
            }
        }
    }

    /// Whether this is the literal TRUE (a filter that keeps every row).
    pub fn is_literal_true(&self) -> bool {
        matches!(&self.kind, ScalarKind::Literal(row) if row.get(0) == Some(Datum::Bool(true)))
    }

    /// The literal's value, if this is a literal.
    pub fn as_literal(&self) -> Option<Datum<'_>> {
        match &self.kind {
            ScalarKind::Literal(row) => row.get(0),
            _ => None,
        }
    }
}
