//! The closure tree of a bound expression.
//!
//! [`CompiledExpr::new`] walks a [`ScalarExpr`] once and gives every node a closure chosen for
//! its kind and operand types (a column read, a constant, an integer addition, a comparison),
//! so evaluating a row runs straight-line closures with no dispatch on the expression's
//! shape. Each closure receives its own node, so constants and children are borrowed from the
//! tree and results can borrow from it (a string literal) or from the row's arena. Evaluation
//! gives the same answers and errors as [`ScalarExpr::eval`] (checked by proptest).

use std::sync::Arc;

use crate::repr::{Datum, Row};

use super::arena::RowArena;
use super::error::EvalError;
use super::func::ScalarFunc;
use super::registry::ScalarUdf;
use super::scalar::{ScalarExpr, ScalarKind};

#[cfg(test)]
mod tests;

type EvalFn = dyn for<'a> Fn(&'a Node, &[Datum<'a>], &'a RowArena) -> Result<Datum<'a>, EvalError>
    + Send
    + Sync;

/// One node of the closure tree.
struct Node {
    eval: Box<EvalFn>,
    children: Vec<Node>,
    literal: Row,
    func: Option<ScalarFunc>,
    udf: Option<Arc<ScalarUdf>>,
    text: Arc<str>,
}

impl Node {
    #[inline]
    fn run<'a>(
        &'a self,
        datums: &[Datum<'a>],
        arena: &'a RowArena,
    ) -> Result<Datum<'a>, EvalError> {
        (self.eval)(self, datums, arena)
    }

    /// Child `i`'s value (NULL if the node has fewer children).
    #[inline]
    fn child<'a>(
        &'a self,
        i: usize,
        datums: &[Datum<'a>],
        arena: &'a RowArena,
    ) -> Result<Datum<'a>, EvalError> {
        match self.children.get(i) {
            Some(child) => child.run(datums, arena),
            None => Ok(Datum::Null),
        }
    }
}

/// A compiled expression: `Send + Sync + Clone` (the tree is shared), evaluated per row.
#[derive(Clone)]
pub struct CompiledExpr {
    root: Arc<Node>,
}

impl std::fmt::Debug for CompiledExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompiledExpr")
    }
}

impl CompiledExpr {
    /// Compiles `expr`.
    pub fn new(expr: &ScalarExpr) -> CompiledExpr {
        CompiledExpr {
            root: Arc::new(compile(expr)),
        }
    }

    /// The value on one row (see [`ScalarExpr::eval`]).
    #[inline]
    pub fn eval<'a>(
        &'a self,
        datums: &[Datum<'a>],
        arena: &'a RowArena,
    ) -> Result<Datum<'a>, EvalError> {
        self.root.run(datums, arena)
    }
}

fn node(eval: Box<EvalFn>) -> Node {
    Node {
        eval,
        children: Vec::new(),
        literal: Row::new(),
        func: None,
        udf: None,
        text: Arc::from(""),
    }
}

/// A datum that borrows nothing, if `d` is one.
fn owned(d: Datum<'_>) -> Option<Datum<'static>> {
    Some(match d {
        Datum::Null => Datum::Null,
        Datum::Bool(b) => Datum::Bool(b),
        Datum::Int(v) => Datum::Int(v),
        Datum::Float(v) => Datum::Float(v),
        Datum::Decimal(v) => Datum::Decimal(v),
        Datum::Date(v) => Datum::Date(v),
        Datum::Time(v) => Datum::Time(v),
        Datum::Timestamp(v) => Datum::Timestamp(v),
        Datum::IntervalDayTime(v) => Datum::IntervalDayTime(v),
        Datum::IntervalYearMonth(v) => Datum::IntervalYearMonth(v),
        _ => return None,
    })
}

fn compile(expr: &ScalarExpr) -> Node {
    match &expr.kind {
        ScalarKind::Column(i) => {
            let i = *i;
            node(Box::new(move |_, datums, _| {
                Ok(datums.get(i).copied().unwrap_or(Datum::Null))
            }))
        }
        ScalarKind::Literal(row) => {
            let value = row.get(0).unwrap_or(Datum::Null);
            let mut n = match owned(value) {
                Some(d) => node(Box::new(move |_, _, _| Ok(d))),
                None => node(Box::new(|n, _, _| {
                    Ok(n.literal.iter().next().unwrap_or(Datum::Null))
                })),
            };
            n.literal = row.clone();
            n
        }
        ScalarKind::If {
            cond,
            then,
            otherwise,
        } => {
            let mut n = node(Box::new(|n, d, a| match n.child(0, d, a)? {
                Datum::Bool(true) => n.child(1, d, a),
                _ => n.child(2, d, a),
            }));
            n.children = vec![compile(cond), compile(then), compile(otherwise)];
            n
        }
        ScalarKind::Udf { udf, args } => {
            let mut n = node(Box::new(|n, d, a| {
                let mut values: smallvec::SmallVec<[Datum<'_>; 4]> = smallvec::SmallVec::new();
                for child in &n.children {
                    values.push(child.run(d, a)?);
                }
                match &n.udf {
                    Some(udf) => udf.invoke(&values, a),
                    None => Ok(Datum::Null),
                }
            }));
            n.children = args.iter().map(compile).collect();
            n.udf = Some(udf.clone());
            n
        }
        ScalarKind::Call { func, args, text } => {
            let mut n = node(call_closure(func, args.len()));
            n.children = args.iter().map(compile).collect();
            n.func = Some(func.clone());
            n.text = text.clone();
            n
        }
    }
}

/// The closure of a call: specialised for the hot binary operators, generic otherwise.
fn call_closure(func: &ScalarFunc, arity: usize) -> Box<EvalFn> {
    macro_rules! strict_binary {
        ($op:expr, $method:ident) => {{
            let op = $op;
            Box::new(move |n, d, a| {
                let x = n.child(0, d, a)?;
                if x.is_null() {
                    return Ok(Datum::Null);
                }
                let y = n.child(1, d, a)?;
                if y.is_null() {
                    return Ok(Datum::Null);
                }
                op.$method(x, y).map_err(|f| f.at(&n.text))
            })
        }};
    }
    match (func, arity) {
        (ScalarFunc::Add(op), 2) => strict_binary!(*op, add),
        (ScalarFunc::Sub(op), 2) => strict_binary!(*op, sub),
        (ScalarFunc::Mul(op), 2) => strict_binary!(*op, mul),
        (ScalarFunc::Div(op), 2) => strict_binary!(*op, div),
        (ScalarFunc::Mod(op), 2) => strict_binary!(*op, rem),
        (ScalarFunc::Cmp(op), 2) => {
            let op = *op;
            Box::new(move |n, d, a| {
                let x = n.child(0, d, a)?;
                if x.is_null() {
                    return Ok(Datum::Null);
                }
                Ok(op.apply(x, n.child(1, d, a)?))
            })
        }
        (ScalarFunc::IsNull, 1) => Box::new(|n, d, a| Ok(Datum::Bool(n.child(0, d, a)?.is_null()))),
        (ScalarFunc::IsNotNull, 1) => {
            Box::new(|n, d, a| Ok(Datum::Bool(!n.child(0, d, a)?.is_null())))
        }
        _ => Box::new(|n, d, a| match &n.func {
            Some(func) => func.call(&n.children, |c| c.run(d, a), a, &n.text),
            None => Ok(Datum::Null),
        }),
    }
}
