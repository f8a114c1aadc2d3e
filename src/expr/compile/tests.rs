//! The closure tree agrees with the tree-walking evaluator, over random expressions of mixed
//! types and random rows with NULLs.

use proptest::prelude::*;

use crate::expr::tests::{schema, text};
use crate::expr::{
    bind_scalar, call, col, lit, lit_decimal, null_of, Expr, FunctionRegistry, RowArena,
};
use crate::repr::{DataType, Datum};

fn leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        Just(col("a")),
        Just(col("b")),
        Just(col("s")),
        Just(col("d")),
        Just(col("x")),
        Just(col("p")),
        Just(col("q")),
        (-5i32..5).prop_map(lit),
        (-3i64..3).prop_map(lit),
        Just(lit_decimal("1.5")),
        Just(lit(0.5)),
        Just(lit("ab")),
        Just(null_of(DataType::Int)),
    ]
}

fn expr() -> impl Strategy<Value = Expr> {
    leaf().prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.add(b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.mul(b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.div(b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.rem(b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.lt(b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.eq(b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.and(b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.or(b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.coalesce(b)),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| call("if", [a, b, c])),
            inner.clone().prop_map(|a| a.is_null()),
            inner.clone().prop_map(|a| a.neg()),
            inner.clone().prop_map(|a| a.cast(DataType::STRING).upper()),
            inner.clone().prop_map(|a| a.try_cast(DataType::Int)),
        ]
    })
}

fn datum_of(kind: usize) -> BoxedStrategy<Datum<'static>> {
    let value: BoxedStrategy<Datum<'static>> = match kind {
        0 => (-100i64..100).prop_map(Datum::Int).boxed(),
        1 => any::<i64>().prop_map(Datum::Int).boxed(),
        2 => prop_oneof![Just("ab"), Just("Zz"), Just("")]
            .prop_map(Datum::Str)
            .boxed(),
        3 => (-100_000i128..100_000).prop_map(Datum::Decimal).boxed(),
        4 => (-1e3f64..1e3).prop_map(Datum::Float).boxed(),
        _ => any::<bool>().prop_map(Datum::Bool).boxed(),
    };
    prop_oneof![1 => Just(Datum::Null), 4 => value].boxed()
}

fn random_row() -> impl Strategy<Value = Vec<Datum<'static>>> {
    (
        datum_of(0),
        datum_of(1),
        datum_of(2),
        datum_of(3),
        datum_of(4),
        datum_of(5),
        datum_of(5),
    )
        .prop_map(|(a, b, s, d, x, p, q)| vec![a, b, s, d, x, p, Datum::Null, q])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn compile_agrees_with_eval(e in expr(), rows in proptest::collection::vec(random_row(), 1..6)) {
        let Ok(bound) = bind_scalar(&e, &schema(), &FunctionRegistry::new()) else {
            return Ok(());
        };
        let compiled = bound.compile();
        let mut arena = RowArena::new();
        for row in &rows {
            let walked = bound.eval(row, &arena).map(|d| text(d, &bound.ty.data_type));
            let fast = compiled.eval(row, &arena).map(|d| text(d, &bound.ty.data_type));
            prop_assert_eq!(&walked, &fast, "{}", e);
            if let Ok(value) = &walked {
                prop_assert!(value != "NULL" || bound.ty.nullable, "{} is NOT NULL but gave NULL", e);
            }
            arena.clear();
        }
    }
}
