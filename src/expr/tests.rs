use super::*;
use crate::repr::{DataType, Datum, Schema, Ts};

pub(super) fn schema() -> Schema {
    Schema::builder()
        .column("a", DataType::Int.nullable())
        .column("b", DataType::BigInt.nullable())
        .column("s", DataType::STRING.nullable())
        .column("d", DataType::decimal(10, 2).unwrap().nullable())
        .column("x", DataType::Double.nullable())
        .column("p", DataType::Boolean.nullable())
        .column("t", DataType::Timestamp(3).nullable())
        .column("q", DataType::Boolean.nullable())
        .build()
        .unwrap()
}

fn row<'a>() -> Vec<Datum<'a>> {
    vec![
        Datum::Int(7),
        Datum::Int(-3),
        Datum::Str("Hello World"),
        Datum::Decimal(1250), // 12.50
        Datum::Float(2.5),
        Datum::Bool(true),
        Datum::Timestamp(Ts {
            millis: 1_700_000_123_456,
            nanos_of_milli: 0,
        }), // 2023-11-14 22:15:23.456
        Datum::Null,
    ]
}

/// Binds `e`, evaluates it on `row()` both ways, checks they agree, and returns the value as
/// text (with its type).
fn eval(e: Expr) -> Result<String, EvalError> {
    eval_on(e, &row())
}

fn eval_on(e: Expr, datums: &[Datum<'_>]) -> Result<String, EvalError> {
    let bound = bind_scalar(&e, &schema(), &FunctionRegistry::new())
        .unwrap_or_else(|err| panic!("{e}: {err}"));
    let arena = RowArena::new();
    let walked = bound.eval(datums, &arena);
    let compiled = bound.compile();
    let fast = compiled.eval(datums, &arena);
    assert_eq!(walked, fast, "eval and compile disagree on {e}");
    walked.map(|d| text(d, &bound.ty.data_type))
}

pub(super) fn text(d: Datum<'_>, ty: &DataType) -> String {
    let mut out = String::new();
    func::cast::write_datum(&mut out, d, ty);
    out
}

fn bind_err(e: Expr) -> String {
    bind_scalar(&e, &schema(), &FunctionRegistry::new())
        .unwrap_err()
        .to_string()
}

fn ty(e: Expr) -> String {
    bind_scalar(&e, &schema(), &FunctionRegistry::new())
        .unwrap()
        .ty
        .to_string()
}

#[test]
fn arithmetic_exact_values_and_types() {
    assert_eq!(eval(col("a").add(lit(1))).unwrap(), "8");
    assert_eq!(ty(col("a").add(lit(1))), "INT");
    assert_eq!(ty(col("a").add(lit(1i64))), "BIGINT");
    assert_eq!(eval(col("a").sub(col("b"))).unwrap(), "10");
    assert_eq!(eval(col("a").mul(col("b"))).unwrap(), "-21");
    assert_eq!(eval(col("a").div(lit(2))).unwrap(), "3"); // INT / INT is integer division
    assert_eq!(eval(col("b").div(lit(2))).unwrap(), "-1"); // toward zero, as Java
    assert_eq!(eval(col("b").rem(lit(2))).unwrap(), "-1");
    assert_eq!(eval(col("a").neg()).unwrap(), "-7");
    assert_eq!(eval(col("b").abs()).unwrap(), "3");
    assert_eq!(eval(col("x").mul(lit(2))).unwrap(), "5.0");
    assert_eq!(ty(col("x").add(col("a"))), "DOUBLE");
    assert_eq!(eval(col("a").add(null_of(DataType::Int))).unwrap(), "NULL");
}

#[test]
fn decimal_arithmetic_follows_flink_precision_and_scale() {
    // DECIMAL(10, 2) + INT(as DECIMAL(10, 0)) = DECIMAL(13, 2)
    assert_eq!(ty(col("d").add(col("a"))), "DECIMAL(13, 2)");
    assert_eq!(eval(col("d").add(col("a"))).unwrap(), "19.50");
    // * : p1 + p2 + 1, s1 + s2
    assert_eq!(ty(col("d").mul(col("d"))), "DECIMAL(21, 4)");
    assert_eq!(eval(col("d").mul(col("d"))).unwrap(), "156.2500");
    // / : scale max(6, s1 + p2 + 1) = 13, precision p1 - s1 + s2 + scale = 23
    assert_eq!(ty(col("d").div(col("d"))), "DECIMAL(23, 13)");
    assert_eq!(eval(col("d").div(lit_decimal("3"))).unwrap(), "4.166667");
    assert_eq!(ty(col("d").div(lit_decimal("3"))), "DECIMAL(14, 6)");
    // % : min(p1-s1, p2-s2) + max(s1, s2), max(s1, s2)
    assert_eq!(eval(col("d").rem(lit(5))).unwrap(), "2.50");
    // DECIMAL with DOUBLE is DOUBLE
    assert_eq!(ty(col("d").add(col("x"))), "DOUBLE");
    assert_eq!(eval(col("d").add(col("x"))).unwrap(), "15.0");
    // HALF_UP
    assert_eq!(eval(lit_decimal("2.5").round()).unwrap(), "3");
    assert_eq!(eval(lit_decimal("-2.5").round()).unwrap(), "-3");
    assert_eq!(eval(lit_decimal("1.005").round_to(lit(2))).unwrap(), "1.01");
    assert_eq!(
        ty(lit_decimal("1.005").round_to(lit(2))),
        "DECIMAL(4, 2) NOT NULL"
    );
}

#[test]
fn division_by_zero_integer_errors_decimal_null_double_infinite() {
    assert_eq!(
        eval(col("a").div(lit(0))),
        Err(EvalError::DivisionByZero {
            expr: "a / 0".into()
        })
    );
    assert_eq!(
        eval(col("a").rem(lit(0))).unwrap_err().to_string(),
        "division by zero in 'a % 0'"
    );
    assert_eq!(eval(col("d").div(lit(0))).unwrap(), "NULL");
    assert_eq!(eval(col("x").div(lit(0.0))).unwrap(), "Infinity");
    assert_eq!(eval(lit(0.0).div(lit(0.0))).unwrap(), "NaN");
}

#[test]
fn integer_overflow_is_an_error() {
    assert_eq!(
        eval(lit(i32::MAX).add(lit(1))).unwrap_err().to_string(),
        "numeric overflow in '2147483647 + 1': the result does not fit INT"
    );
    assert!(matches!(
        eval(lit(i64::MIN).neg()),
        Err(EvalError::Overflow { .. })
    ));
    assert!(matches!(
        eval(lit(i64::MAX).mul(lit(2i64))),
        Err(EvalError::Overflow { .. })
    ));
    assert!(matches!(
        eval(lit(i64::MIN).div(lit(-1i64))),
        Err(EvalError::Overflow { .. })
    ));
}

#[test]
fn comparison_and_three_valued_logic() {
    assert_eq!(eval(col("a").gt(lit(5))).unwrap(), "TRUE");
    assert_eq!(eval(col("a").eq(col("d"))).unwrap(), "FALSE"); // INT vs DECIMAL
    assert_eq!(eval(col("a").le(lit(7.0))).unwrap(), "TRUE");
    assert_eq!(eval(col("s").lt(lit("Z"))).unwrap(), "TRUE");
    assert_eq!(eval(col("q").eq(lit(true))).unwrap(), "NULL");
    // AND / OR truth tables with NULL
    let (t, f, n) = (lit(true), lit(false), col("q"));
    assert_eq!(eval(f.clone().and(n.clone())).unwrap(), "FALSE");
    assert_eq!(eval(n.clone().and(f.clone())).unwrap(), "FALSE");
    assert_eq!(eval(t.clone().and(n.clone())).unwrap(), "NULL");
    assert_eq!(eval(t.clone().or(n.clone())).unwrap(), "TRUE");
    assert_eq!(eval(n.clone().or(t.clone())).unwrap(), "TRUE");
    assert_eq!(eval(f.clone().or(n.clone())).unwrap(), "NULL");
    assert_eq!(eval(n.clone().not()).unwrap(), "NULL");
    assert_eq!(eval(n.clone().is_null()).unwrap(), "TRUE");
    assert_eq!(eval(n.clone().is_not_null()).unwrap(), "FALSE");
    assert_eq!(eval(n.clone().is_true()).unwrap(), "FALSE");
    assert_eq!(eval(call("is_not_false", [n.clone()])).unwrap(), "TRUE");
    assert_eq!(
        eval(n.clone().is_distinct_from(n.clone())).unwrap(),
        "FALSE"
    );
    assert_eq!(eval(n.clone().is_distinct_from(t.clone())).unwrap(), "TRUE");
    // FALSE AND <error> does not evaluate the error
    assert_eq!(
        eval(f.and(col("a").div(lit(0)).gt(lit(1)))).unwrap(),
        "FALSE"
    );
    // NaN equals nothing
    assert_eq!(eval(lit(f64::NAN).eq(lit(f64::NAN))).unwrap(), "FALSE");
    assert_eq!(eval(lit(f64::NAN).ne(lit(f64::NAN))).unwrap(), "TRUE");
}

#[test]
fn between_in_like() {
    assert_eq!(eval(col("a").between(lit(1), lit(7))).unwrap(), "TRUE");
    assert_eq!(eval(col("a").between(lit(8), lit(9))).unwrap(), "FALSE");
    assert_eq!(eval(col("a").in_list([lit(1), lit(7)])).unwrap(), "TRUE");
    assert_eq!(
        eval(col("a").in_list([lit(1), null_of(DataType::Int)])).unwrap(),
        "NULL"
    );
    assert_eq!(eval(col("a").in_list([lit(1), lit(2)])).unwrap(), "FALSE");
    assert_eq!(eval(col("s").like(lit("Hello%"))).unwrap(), "TRUE");
    assert_eq!(eval(col("s").like(lit("%o W%d"))).unwrap(), "TRUE");
    assert_eq!(eval(col("s").like(lit("H_llo%"))).unwrap(), "TRUE");
    assert_eq!(eval(col("s").like(lit("hello%"))).unwrap(), "FALSE");
    assert_eq!(
        eval(lit("50%").like_escape(lit("50!%"), lit("!"))).unwrap(),
        "TRUE"
    );
    assert_eq!(
        eval(lit("501").like_escape(lit("50!%"), lit("!"))).unwrap(),
        "FALSE"
    );
    assert_eq!(
        eval(col("q").cast(DataType::STRING).like(lit("%"))).unwrap(),
        "NULL"
    );
    assert_eq!(
        bind_err(col("s").like_escape(lit("a!b"), lit("!"))),
        "Invalid argument in 's LIKE 'a!b' ESCAPE '!'': Invalid escape sequence 'a!b'"
    );
}

#[test]
fn conditionals() {
    let case = Expr::Case {
        operand: None,
        whens: vec![
            (col("a").gt(lit(10)), lit("big")),
            (col("a").gt(lit(5)), lit("medium")),
        ],
        otherwise: Some(Box::new(lit("small"))),
    };
    assert_eq!(eval(case.clone()).unwrap(), "medium");
    // CHARs of different lengths meet in VARCHAR (LogicalTypeMerging.findCommonType).
    assert_eq!(ty(case), "VARCHAR(6) NOT NULL");
    let simple = Expr::Case {
        operand: Some(Box::new(col("a"))),
        whens: vec![(lit(7), lit(1.5))],
        otherwise: None,
    };
    assert_eq!(eval(simple.clone()).unwrap(), "1.5");
    assert_eq!(ty(simple), "DOUBLE");
    assert_eq!(eval(col("q").coalesce(col("p"))).unwrap(), "TRUE");
    // COALESCE stops at the first non-NULL: the division by zero is never evaluated.
    assert_eq!(
        eval(call(
            "coalesce",
            [null_of(DataType::Int), col("a"), col("a").div(lit(0))]
        ))
        .unwrap(),
        "7"
    );
    assert_eq!(eval(call("if", [col("q"), lit(1), lit(2)])).unwrap(), "2");
    assert_eq!(
        eval(call("if", [col("p"), lit(1), col("a").div(lit(0))])).unwrap(),
        "1"
    );
    assert_eq!(eval(col("a").nullif(lit(7))).unwrap(), "NULL");
    assert_eq!(eval(col("a").nullif(lit(8))).unwrap(), "7");
}

#[test]
fn strings() {
    assert_eq!(eval(col("s").lower()).unwrap(), "hello world");
    assert_eq!(eval(col("s").upper()).unwrap(), "HELLO WORLD");
    assert_eq!(eval(col("s").char_length()).unwrap(), "11");
    assert_eq!(eval(col("s").substring(lit(7), None)).unwrap(), "World");
    assert_eq!(
        eval(col("s").substring(lit(1), Some(lit(5)))).unwrap(),
        "Hello"
    );
    assert_eq!(
        eval(col("s").substring(lit(-5), Some(lit(3)))).unwrap(),
        "Wor"
    );
    assert_eq!(
        eval(col("s").substring(lit(0), Some(lit(2)))).unwrap(),
        "He"
    );
    assert_eq!(eval(col("s").substring(lit(20), None)).unwrap(), "");
    assert_eq!(
        eval(col("s").substring(lit(1), Some(lit(-1)))).unwrap(),
        "NULL"
    );
    assert_eq!(
        eval(lit("a").concat([col("s"), lit("!")])).unwrap(),
        "aHello World!"
    );
    assert_eq!(
        eval(lit("a").concat([col("q").cast(DataType::STRING)])).unwrap(),
        "NULL"
    );
    assert_eq!(
        eval(call(
            "concat_ws",
            [
                lit("-"),
                lit("a"),
                col("q").cast(DataType::STRING),
                lit("b")
            ]
        ))
        .unwrap(),
        "a-b"
    );
    assert_eq!(eval(lit("  x y  ").trim()).unwrap(), "x y");
    assert_eq!(eval(lit("  x ").ltrim()).unwrap(), "x ");
    assert_eq!(eval(lit("  x ").rtrim()).unwrap(), "  x");
    assert_eq!(
        eval(col("s").replace(lit("o"), lit("0"))).unwrap(),
        "Hell0 W0rld"
    );
    assert_eq!(
        eval(call("split_index", [lit("a,b,c"), lit(","), lit(1)])).unwrap(),
        "b"
    );
    assert_eq!(
        eval(call("split_index", [lit("a,b,c"), lit(","), lit(5)])).unwrap(),
        "NULL"
    );
    assert_eq!(
        eval(call("position", [lit("World"), col("s")])).unwrap(),
        "7"
    );
    assert_eq!(
        eval(col("q").cast(DataType::STRING).upper()).unwrap(),
        "NULL"
    );
}

#[test]
fn math() {
    assert_eq!(eval(lit(2.5).round()).unwrap(), "3.0");
    assert_eq!(eval(lit(2.675).round_to(lit(2))).unwrap(), "2.68");
    assert_eq!(eval(lit(1234).round_to(lit(-2))).unwrap(), "1200");
    assert_eq!(eval(lit(1250).round_to(lit(-2))).unwrap(), "1300");
    assert_eq!(eval(col("d").floor()).unwrap(), "12");
    assert_eq!(eval(col("d").ceil()).unwrap(), "13");
    assert_eq!(eval(lit_decimal("-12.5").floor()).unwrap(), "-13");
    assert_eq!(eval(lit(-2.5).ceil()).unwrap(), "-2.0");
    assert_eq!(eval(call("mod", [lit(7), lit(3)])).unwrap(), "1");
    assert_eq!(eval(lit(2).power(lit(10))).unwrap(), "1024.0");
    assert_eq!(eval(call("sqrt", [lit(16)])).unwrap(), "4.0");
    assert_eq!(eval(call("ln", [lit(1)])).unwrap(), "0.0");
    assert_eq!(eval(call("log10", [lit(1000)])).unwrap(), "3.0");
    assert_eq!(eval(call("exp", [lit(0)])).unwrap(), "1.0");
}

#[test]
fn time_functions() {
    assert_eq!(eval(col("t").extract("YEAR")).unwrap(), "2023");
    assert_eq!(eval(col("t").extract("MONTH")).unwrap(), "11");
    assert_eq!(eval(col("t").extract("DAY")).unwrap(), "14");
    assert_eq!(eval(col("t").extract("HOUR")).unwrap(), "22");
    assert_eq!(eval(col("t").extract("QUARTER")).unwrap(), "4");
    assert_eq!(eval(col("t").extract("DOW")).unwrap(), "3"); // a Tuesday
    assert_eq!(eval(col("t").extract("MILLISECOND")).unwrap(), "23456");
    assert_eq!(
        eval(col("t").floor_to("HOUR")).unwrap(),
        "2023-11-14 22:00:00.000"
    );
    assert_eq!(
        eval(col("t").floor_to("DAY")).unwrap(),
        "2023-11-14 00:00:00.000"
    );
    assert_eq!(
        eval(col("t").floor_to("MONTH")).unwrap(),
        "2023-11-01 00:00:00.000"
    );
    assert_eq!(
        eval(col("t").floor_to("WEEK")).unwrap(),
        "2023-11-12 00:00:00.000"
    );
    assert_eq!(
        eval(col("t").ceil_to("HOUR")).unwrap(),
        "2023-11-14 23:00:00.000"
    );
    assert_eq!(
        eval(col("t").ceil_to("YEAR")).unwrap(),
        "2024-01-01 00:00:00.000"
    );
    let hour = || {
        Expr::Literal(Literal::new(
            Datum::IntervalDayTime(3_600_000),
            DataType::IntervalDayTime.not_null(),
        ))
    };
    let month = || {
        Expr::Literal(Literal::new(
            Datum::IntervalYearMonth(3),
            DataType::IntervalYearMonth.not_null(),
        ))
    };
    assert_eq!(
        eval(col("t").add(hour())).unwrap(),
        "2023-11-14 23:15:23.456"
    );
    assert_eq!(
        eval(hour().add(col("t"))).unwrap(),
        "2023-11-14 23:15:23.456"
    );
    assert_eq!(
        eval(col("t").sub(hour())).unwrap(),
        "2023-11-14 21:15:23.456"
    );
    assert_eq!(
        eval(col("t").add(month())).unwrap(),
        "2024-02-14 22:15:23.456"
    );
    assert_eq!(
        eval(call(
            "date_format",
            [col("t"), lit("yyyy/MM/dd HH:mm:ss.SSS")]
        ))
        .unwrap(),
        "2023/11/14 22:15:23.456"
    );
    assert_eq!(
        eval(call("to_timestamp", [lit("2024-01-02 03:04:05")])).unwrap(),
        "2024-01-02 03:04:05.000"
    );
    assert_eq!(
        eval(call("to_timestamp", [lit("garbage")])).unwrap(),
        "NULL"
    );
    assert_eq!(
        eval(call("to_date", [lit("2024-01-02")])).unwrap(),
        "2024-01-02"
    );
    assert_eq!(
        eval(lit("2024-02-29").cast(DataType::Date).extract("DOY")).unwrap(),
        "60"
    );
}

#[test]
fn casts() {
    assert_eq!(eval(col("a").cast(DataType::STRING)).unwrap(), "7");
    assert_eq!(eval(col("d").cast(DataType::STRING)).unwrap(), "12.50");
    assert_eq!(eval(col("x").cast(DataType::STRING)).unwrap(), "2.5");
    assert_eq!(eval(lit(1e7).cast(DataType::STRING)).unwrap(), "1.0E7");
    assert_eq!(eval(col("p").cast(DataType::STRING)).unwrap(), "TRUE");
    assert_eq!(
        eval(col("t").cast(DataType::STRING)).unwrap(),
        "2023-11-14 22:15:23.456"
    );
    assert_eq!(eval(lit(" 42 ").cast(DataType::Int)).unwrap(), "42");
    assert_eq!(
        eval(lit("12.345").cast(DataType::decimal(5, 2).unwrap())).unwrap(),
        "12.35"
    );
    assert_eq!(
        eval(lit("2024-01-02 03:04:05.5").cast(DataType::Timestamp(3))).unwrap(),
        "2024-01-02 03:04:05.500"
    );
    assert_eq!(eval(col("x").cast(DataType::Int)).unwrap(), "2");
    assert_eq!(eval(col("d").cast(DataType::Int)).unwrap(), "12");
    assert_eq!(
        eval(col("a").cast(DataType::decimal(5, 1).unwrap())).unwrap(),
        "7.0"
    );
    assert_eq!(eval(col("t").cast(DataType::Date)).unwrap(), "2023-11-14");
    assert_eq!(eval(lit("abc").try_cast(DataType::Int)).unwrap(), "NULL");
    assert_eq!(
        eval(lit("abc").cast(DataType::Int))
            .unwrap_err()
            .to_string(),
        "cannot cast 'abc' to INT: not a valid INT"
    );
    assert_eq!(
        eval(lit(300).cast(DataType::TinyInt))
            .unwrap_err()
            .to_string(),
        "cannot cast '300' to TINYINT: out of the range of TINYINT"
    );
    assert_eq!(
        bind_err(col("a").cast(DataType::Date)),
        "Cast function cannot convert value of type INT to type DATE in 'CAST(a AS DATE)'"
    );
}

#[test]
fn binding_errors_name_the_expression() {
    assert_eq!(
        bind_err(col("nope").add(lit(1))),
        "Column 'nope' not found in any table, in 'nope + 1'; the columns are: a, b, s, d, x, p, t, q"
    );
    assert_eq!(
        bind_err(col("s").add(lit(1))),
        "Cannot apply '+' to arguments of type '<STRING>, <INT>' in 's + 1'. Supported form(s): '<NUMERIC> + <NUMERIC>', '<DATETIME> + <INTERVAL>'"
    );
    assert_eq!(
        bind_err(call("lowr", [col("s")])),
        "No match found for function 'lowr' in 'LOWR(s)'; did you mean: LOWER"
    );
    assert_eq!(
        bind_err(col("a").sum().add(lit(1))),
        "aggregate function not allowed here: 'SUM(a)' in 'SUM(a) + 1'"
    );
    assert_eq!(
        bind_err(col("a").and(lit(true))),
        "Cannot apply 'AND' to arguments of type '<INT>, <BOOLEAN>' in 'a AND TRUE'. Supported form(s): '<BOOLEAN> AND <BOOLEAN>'"
    );
    assert_eq!(
        bind_err(call("lower", [col("s"), col("s")])),
        "Invalid number of arguments to function 'LOWER' in 'LOWER(s, s)': expected 1, got 2"
    );
    assert_eq!(
        bind_err(col("a").filter(lit(true))),
        "Invalid argument in 'FILTER(a, TRUE)': FILTER applies only to an aggregate function call"
    );
    let qualified = Schema::builder()
        .column("o.id", DataType::Int.not_null())
        .column("r.id", DataType::Int.not_null())
        .column("r.rate", DataType::Int.not_null())
        .build()
        .unwrap();
    let registry = FunctionRegistry::new();
    assert_eq!(
        bind_scalar(&col("id"), &qualified, &registry)
            .unwrap_err()
            .to_string(),
        "Column 'id' is ambiguous in 'id'; it matches: o.id, r.id"
    );
    assert_eq!(
        bind_scalar(&col("rate"), &qualified, &registry)
            .unwrap()
            .kind,
        ScalarKind::Column(2)
    );
    // A qualifier that names no column's qualifier does not match.
    assert!(matches!(
        bind_scalar(&col("x.rate"), &qualified, &registry),
        Err(ExprError::UnknownColumn { .. })
    ));
}

#[test]
fn scalar_udf_registered_by_name() {
    let mut registry = FunctionRegistry::new();
    let twice = ScalarUdf::new(
        "twice",
        vec![DataType::BigInt],
        DataType::BigInt.nullable(),
        |args, _| match args[0] {
            Datum::Int(v) => v
                .checked_mul(2)
                .map(Datum::Int)
                .ok_or_else(|| "too big".to_string()),
            _ => Ok(Datum::Null),
        },
    );
    registry.register_scalar(twice.clone()).unwrap();
    assert_eq!(
        registry.register_scalar(twice).unwrap_err().to_string(),
        "function 'twice' is already defined"
    );
    let e = bind_scalar(&call("TWICE", [col("a")]), &schema(), &registry).unwrap();
    let arena = RowArena::new();
    assert_eq!(e.eval(&row(), &arena), Ok(Datum::Int(14)));
    assert_eq!(e.compile().eval(&row(), &arena), Ok(Datum::Int(14)));
    let big = [Datum::Int(i64::MAX)];
    let e = bind_scalar(
        &call("twice", [col("a")]),
        &Schema::builder()
            .column("a", DataType::BigInt.nullable())
            .build()
            .unwrap(),
        &registry,
    )
    .unwrap();
    assert_eq!(
        e.eval(&big, &arena).unwrap_err().to_string(),
        "function 'twice' failed: too big"
    );
    assert!(bind_scalar(&call("twice", [col("s")]), &schema(), &registry).is_err());
}

#[test]
fn columns_permute_literal_true() {
    let mut e = bind_scalar(
        &col("a").add(col("b")).gt(col("a")),
        &schema(),
        &FunctionRegistry::new(),
    )
    .unwrap();
    let mut cols = Vec::new();
    e.columns(&mut cols);
    assert_eq!(cols, vec![0, 1, 0]);
    e.permute(&[5, 6]);
    cols.clear();
    e.columns(&mut cols);
    assert_eq!(cols, vec![5, 6, 5]);
    assert!(bind_scalar(&lit(true), &schema(), &FunctionRegistry::new())
        .unwrap()
        .is_literal_true());
    assert!(!bind_scalar(&col("p"), &schema(), &FunctionRegistry::new())
        .unwrap()
        .is_literal_true());
}
