use std::any::Any;
use std::sync::Arc;

use crate::expr::{
    bind_aggregate, col, count_star, lit, AggregateExpr, AggregateUdf, ExprError, FunctionRegistry,
    RowArena, UdafAccumulator,
};
use crate::repr::{ColumnType, DataType, Datum, Row, RowPacker, Schema};

fn schema() -> Schema {
    Schema::builder()
        .column("k", DataType::STRING.nullable())
        .column("v", DataType::Int.nullable())
        .column("d", DataType::decimal(10, 2).unwrap().nullable())
        .column("x", DataType::Double.nullable())
        .build()
        .unwrap()
}

/// The group: (k, v, d, x) rows with multiplicities, in arrival order.
fn group() -> Vec<(Vec<Datum<'static>>, usize)> {
    vec![
        (
            vec![
                Datum::Str("a"),
                Datum::Int(3),
                Datum::Decimal(150),
                Datum::Float(1.0),
            ],
            2,
        ),
        (
            vec![Datum::Str("b"), Datum::Null, Datum::Null, Datum::Null],
            1,
        ),
        (
            vec![
                Datum::Str("c"),
                Datum::Int(1),
                Datum::Decimal(-25),
                Datum::Float(3.0),
            ],
            1,
        ),
        (
            vec![
                Datum::Str("a"),
                Datum::Int(4),
                Datum::Decimal(1),
                Datum::Float(2.0),
            ],
            1,
        ),
    ]
}

fn agg_on(
    e: crate::expr::Expr,
    rows: &[(Vec<Datum<'static>>, usize)],
    registry: &FunctionRegistry,
) -> (Row, String) {
    let bound = bind_aggregate(&e, &schema(), registry).unwrap_or_else(|err| panic!("{e}: {err}"));
    let mut out = Row::new();
    bound
        .eval_group(rows.iter().map(|(r, n)| (&r[..], *n)), &mut out.packer())
        .unwrap();
    (out, bound.ty.to_string())
}

fn agg(e: crate::expr::Expr) -> (Row, String) {
    agg_on(e, &group(), &FunctionRegistry::new())
}

fn empty(e: crate::expr::Expr) -> Row {
    agg_on(e, &[], &FunctionRegistry::new()).0
}

fn one(d: Datum<'_>) -> Row {
    Row::pack_one(d)
}

#[test]
fn builtins_over_a_multiset() {
    assert_eq!(
        agg(count_star()),
        (one(Datum::Int(5)), "BIGINT NOT NULL".into())
    );
    assert_eq!(
        agg(col("v").count()),
        (one(Datum::Int(4)), "BIGINT NOT NULL".into())
    );
    // SUM(INT) is INT (Flink's IntSumAggFunction); 3*2 + 1 + 4
    assert_eq!(agg(col("v").sum()), (one(Datum::Int(11)), "INT".into()));
    // SUM(DECIMAL(10, 2)) is DECIMAL(38, 2): 1.50*2 - 0.25 + 0.01
    assert_eq!(
        agg(col("d").sum()),
        (one(Datum::Decimal(276)), "DECIMAL(38, 2)".into())
    );
    // AVG(INT) is INT: 11 / 4 = 2 (integer division)
    assert_eq!(agg(col("v").avg()), (one(Datum::Int(2)), "INT".into()));
    // AVG(DECIMAL(10, 2)) is DECIMAL(38, 6): 2.76 / 4 = 0.69
    assert_eq!(
        agg(col("d").avg()),
        (one(Datum::Decimal(690_000)), "DECIMAL(38, 6)".into())
    );
    assert_eq!(
        agg(col("x").avg()),
        (one(Datum::Float(1.75)), "DOUBLE".into())
    );
    assert_eq!(agg(col("v").min()).0, one(Datum::Int(1)));
    assert_eq!(agg(col("v").max()).0, one(Datum::Int(4)));
    assert_eq!(agg(col("k").max()).0, one(Datum::Str("c")));
    assert_eq!(agg(col("v").first_value()).0, one(Datum::Int(3)));
    assert_eq!(agg(col("v").last_value()).0, one(Datum::Int(4)));
    assert_eq!(
        agg(col("k").listagg(";")),
        (one(Datum::Str("a;a;b;c;a")), "STRING".into())
    );
    assert_eq!(agg(col("v").var_pop()).0, one(Datum::Float(1.1875)));
    let Some(Datum::Float(stddev)) = agg(col("v").stddev_samp()).0.get(0) else {
        panic!("STDDEV_SAMP is a DOUBLE");
    };
    assert!((stddev - (19.0f64 / 12.0).sqrt()).abs() < 1e-12, "{stddev}");
}

#[test]
fn distinct_and_filter() {
    assert_eq!(agg(col("k").count_distinct()).0, one(Datum::Int(3)));
    assert_eq!(agg(col("v").sum_distinct()).0, one(Datum::Int(8)));
    assert_eq!(
        agg(col("k").listagg(",").distinct()).0,
        one(Datum::Str("a,b,c"))
    );
    assert_eq!(
        agg(count_star().filter(col("v").gt(lit(1)))).0,
        one(Datum::Int(3))
    );
    assert_eq!(
        agg(col("v").sum().filter(col("k").eq(lit("a")))).0,
        one(Datum::Int(10))
    );
    assert_eq!(
        agg(col("k").count_distinct().filter(col("v").lt(lit(4)))).0,
        one(Datum::Int(2))
    );
    // A filter that is NULL drops the row.
    assert_eq!(
        agg(count_star().filter(col("v").is_not_null().and(col("x").gt(lit(1.5))))).0,
        one(Datum::Int(2))
    );
}

#[test]
fn empty_groups() {
    assert_eq!(empty(count_star()), one(Datum::Int(0)));
    assert_eq!(empty(col("v").count()), one(Datum::Int(0)));
    for e in [
        col("v").sum(),
        col("v").avg(),
        col("v").min(),
        col("v").max(),
        col("v").first_value(),
        col("k").listagg(","),
        col("x").stddev_pop(),
    ] {
        assert_eq!(empty(e.clone()), one(Datum::Null), "{e}");
    }
}

#[test]
fn accumulators_retract_and_merge_exactly() {
    let registry = FunctionRegistry::new();
    let max = bind_aggregate(&col("v").max(), &schema(), &registry).unwrap();
    let arena = RowArena::new();
    let mut acc = max.create_accumulator();
    let row = |v: i64| vec![Datum::Null, Datum::Int(v), Datum::Null, Datum::Null];
    max.update(&mut acc, &row(5), 1, &arena).unwrap();
    max.update(&mut acc, &row(9), 2, &arena).unwrap();
    max.update(&mut acc, &row(9), -1, &arena).unwrap();
    let value = |agg: &AggregateExpr, acc: &crate::expr::Accumulator| {
        let mut out = Row::new();
        agg.get_value(acc, &mut out.packer()).unwrap();
        out
    };
    assert_eq!(value(&max, &acc).get(0), Some(Datum::Int(9)));
    max.update(&mut acc, &row(9), -1, &arena).unwrap();
    assert_eq!(value(&max, &acc).get(0), Some(Datum::Int(5)));
    let mut other = max.create_accumulator();
    max.update(&mut other, &row(7), 1, &arena).unwrap();
    max.merge(&mut acc, other).unwrap();
    assert_eq!(value(&max, &acc).get(0), Some(Datum::Int(7)));

    let count = bind_aggregate(&col("v").count_distinct(), &schema(), &registry).unwrap();
    let mut a = count.create_accumulator();
    let mut b = count.create_accumulator();
    count.update(&mut a, &row(1), 1, &arena).unwrap();
    count.update(&mut b, &row(1), 3, &arena).unwrap();
    count.update(&mut b, &row(2), 1, &arena).unwrap();
    count.merge(&mut a, b).unwrap();
    assert_eq!(value(&count, &a).get(0), Some(Datum::Int(2)));
    count.update(&mut a, &row(1), -4, &arena).unwrap();
    assert_eq!(value(&count, &a).get(0), Some(Datum::Int(1)));
}

#[test]
fn sum_overflow_is_an_error() {
    let schema = Schema::builder()
        .column("v", DataType::Int.nullable())
        .build()
        .unwrap();
    let sum = bind_aggregate(&col("v").sum(), &schema, &FunctionRegistry::new()).unwrap();
    let rows = [[Datum::Int(i32::MAX as i64)]];
    let mut out = Row::new();
    let err = sum
        .eval_group(rows.iter().map(|r| (&r[..], 2)), &mut out.packer())
        .unwrap_err();
    assert!(
        matches!(
            err,
            crate::expr::EvalError::Overflow {
                ty: DataType::Int,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn aggregate_binding_errors() {
    let registry = FunctionRegistry::new();
    let err = |e: crate::expr::Expr| {
        bind_aggregate(&e, &schema(), &registry)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(err(col("k").sum()), "Cannot apply 'SUM' to arguments of type '<STRING>' in 'SUM(k)'. Supported form(s): 'SUM(<NUMERIC>)'");
    assert_eq!(
        err(col("v").add(lit(1))),
        "'v + 1' is not an aggregate function call"
    );
    assert_eq!(
        err(col("v").sum().sum()),
        "aggregate function not allowed here: 'SUM(v)' in 'SUM(SUM(v))'"
    );
    assert_eq!(err(col("v").count().filter(col("v"))), "Cannot apply 'FILTER' to arguments of type '<INT>' in 'COUNT(v) FILTER (WHERE v)'. Supported form(s): 'FILTER (WHERE <BOOLEAN>)'");
}

/// A UDAF without retract: the plan must refuse it over an updating input.
#[derive(Debug)]
struct Product;

#[derive(Debug)]
struct ProductAcc(i64);

impl UdafAccumulator for ProductAcc {
    fn accumulate(&mut self, args: &[Datum<'_>]) -> Result<(), String> {
        if let Some(Datum::Int(v)) = args.first() {
            self.0 = self.0.checked_mul(*v).ok_or("overflow")?;
        }
        Ok(())
    }
    fn merge(&mut self, other: &dyn UdafAccumulator) -> Result<(), String> {
        let other = other
            .as_any()
            .downcast_ref::<ProductAcc>()
            .ok_or("not a product")?;
        self.0 *= other.0;
        Ok(())
    }
    fn get_value(&self, packer: &mut RowPacker<'_>) -> Result<(), String> {
        packer.push(Datum::Int(self.0));
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl AggregateUdf for Product {
    fn name(&self) -> &str {
        "product"
    }
    fn return_type(&self, args: &[ColumnType]) -> Result<ColumnType, ExprError> {
        match args {
            [t] if t.data_type.is_integer() => Ok(DataType::BigInt.not_null()),
            _ => Err(ExprError::InvalidArgument {
                expr: "PRODUCT".into(),
                reason: "takes one integer".into(),
            }),
        }
    }
    fn create_accumulator(&self) -> Box<dyn UdafAccumulator> {
        Box::new(ProductAcc(1))
    }
    fn has_retract(&self) -> bool {
        false
    }
}

#[test]
fn udaf_without_retract() {
    let mut registry = FunctionRegistry::new();
    registry.register_aggregate(Arc::new(Product)).unwrap();
    let e = crate::expr::Expr::Aggregate {
        func: "PRODUCT".into(),
        args: vec![col("v")],
        distinct: false,
        filter: None,
    };
    let bound = bind_aggregate(&e, &schema(), &registry).unwrap();
    assert!(!bound.supports_retraction());
    assert!(bind_aggregate(&col("v").sum(), &schema(), &registry)
        .unwrap()
        .supports_retraction());
    let (row, ty) = agg_on(e, &group(), &registry);
    assert_eq!((row, ty.as_str()), (one(Datum::Int(36)), "BIGINT NOT NULL"));
    let arena = RowArena::new();
    let mut acc = bound.create_accumulator();
    let err = bound
        .update(&mut acc, &group()[0].0, -1, &arena)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "function 'product' failed: this aggregate function does not support retraction"
    );
}

#[test]
fn accumulators_are_small_enough_to_sit_inline_in_a_group() {
    // The group-aggregate keeps two inline; a larger accumulator spills every group's state.
    assert!(std::mem::size_of::<crate::expr::Accumulator>() <= 32);
}

/// COUNT(*) and unfiltered one-column aggregates read the row directly; the same aggregate
/// behind `FILTER (WHERE TRUE)` evaluates its arguments. Both paths give the same values.
#[test]
fn the_direct_path_equals_the_evaluated_one() {
    for e in [
        count_star(),
        col("v").count(),
        col("v").sum(),
        col("d").sum(),
        col("x").avg(),
        col("k").max(),
        col("v").min(),
        col("v").first_value(),
        col("k").listagg(";"),
        col("k").count_distinct(),
    ] {
        let filtered = e.clone().filter(lit(true));
        assert_eq!(agg(e.clone()), agg(filtered), "{e}");
    }
}
