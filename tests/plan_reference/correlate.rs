//! Lateral joins with a table function and UNNEST (issue 13) against the reference
//! interpreter: a random UDTF ("repeat `s` `v` times", NULLs giving no rows, negative counts
//! below -3 failing), with and without a condition (one that may fail), INNER and LEFT; UNNEST
//! of an ARRAY (NULL elements, NULL and empty arrays, WITH ORDINALITY) and of a MAP; over an
//! append-only and an updating input, random batching, 1, 2 and 4 workers.

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;

use differential_temporal::expr::{
    bind_scalar, bind_table_call, call, col, lit, Collector, FunctionRegistry, TableFunction,
};
use differential_temporal::operators::{Change, SysTime};
use differential_temporal::plan::reference::Inputs;
use differential_temporal::plan::{join_schema, unnest_columns, Expansion, JoinKind, RelExpr};
use differential_temporal::repr::{DataType, Datum, Field, Row, Schema};

use super::{append_only, changelog, check_plan};

/// `repeat(s, n)`: `n` rows `(s, i)` for `i` in `0..n` (at most 3); none when either is NULL
/// or `n <= 0`; an error when `n < -3`.
struct Repeat;

impl TableFunction for Repeat {
    fn name(&self) -> &str {
        "repeat"
    }
    fn arguments(&self) -> Vec<DataType> {
        vec![DataType::STRING, DataType::BigInt]
    }
    fn output(&self) -> Vec<Field> {
        vec![
            Field::new("part", DataType::STRING.nullable()),
            Field::new("i", DataType::BigInt.nullable()),
        ]
    }
    fn eval(&self, args: &[Datum<'_>], out: &mut Collector<'_>) -> Result<(), String> {
        match (args[0], args[1]) {
            (_, Datum::Int(n)) if n < -3 => Err(format!("negative count {n}")),
            (Datum::Str(s), Datum::Int(n)) => {
                for i in 0..n.min(3) {
                    out.collect([Datum::Str(s), Datum::Int(i)]);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// `D(k BIGINT, s STRING, v BIGINT, arr ARRAY<BIGINT>, m MAP<STRING, BIGINT>, ts
/// TIMESTAMP(3))`.
fn schema_d() -> Schema {
    let element = DataType::BigInt.nullable();
    Schema::builder()
        .column("k", DataType::BigInt.nullable())
        .column("s", DataType::STRING.nullable())
        .column("v", DataType::BigInt.nullable())
        .column("arr", DataType::Array(Box::new(element.clone())).nullable())
        .column(
            "m",
            DataType::Map(Box::new(DataType::STRING.not_null()), Box::new(element)).nullable(),
        )
        .column("ts", DataType::Timestamp(3).nullable())
        .build()
        .unwrap()
}

/// A row of `A` (`k, s, v, d, ts`) as a row of `D` (`k, s, v` kept): `arr` has `v mod 4` elements `v, v + 1,
/// ..` (the second NULL when `k` is), NULL when `v` is; `m` has `d mod 3` entries (`s -> 0`,
/// `z -> k`), NULL when `s` or `d` is.
fn row_d(a: &Row) -> Row {
    let datums: Vec<Datum> = a.iter().collect();
    let (k, s, v, d, ts) = (datums[0], datums[1], datums[2], datums[3], datums[4]);
    let mut row = Row::new();
    let mut packer = row.packer();
    packer.extend([k, s, v]);
    match v {
        Datum::Int(v) => packer.push_array(|p| {
            for i in 0..v.rem_euclid(4) {
                p.push(match (i, k) {
                    (1, Datum::Null) => Datum::Null,
                    _ => Datum::Int(v + i),
                });
            }
        }),
        _ => packer.push(Datum::Null),
    }
    match (s, d) {
        (Datum::Str(key), Datum::Decimal(d)) => packer.push_map(|p| {
            for i in 0..d.rem_euclid(3) {
                match i {
                    0 => p.extend([Datum::Str(key), Datum::Int(0)]),
                    _ => p.extend([Datum::Str("z"), k]),
                }
            }
        }),
        _ => packer.push(Datum::Null),
    }
    packer.push(ts);
    row
}

/// The lateral join of `template` over `D` (append-only when `append`).
fn correlate_plan(template: u8, flag: bool, append: bool) -> RelExpr {
    let input = RelExpr::scan("D", schema_d(), !append);
    let registry = {
        let mut r = FunctionRegistry::new();
        r.register_table(Arc::new(Repeat)).unwrap();
        r
    };
    let kind = if flag {
        JoinKind::Left
    } else {
        JoinKind::Inner
    };
    match template {
        0..=2 => {
            let repeat = call("repeat", [col("s"), col("v")]);
            let (function, args) = bind_table_call(&repeat, &input.schema, &registry).unwrap();
            let columns = Schema::new(function.0.output()).unwrap();
            // INNER only: a condition that holds for some rows, or one that may fail.
            let condition = match template {
                1 => Some(col("i").lt(col("k").sub(lit(2i64)))),
                2 => Some(lit(6i64).div(col("i")).gt(lit(2i64))),
                _ => None,
            };
            let kind = if condition.is_some() {
                JoinKind::Inner
            } else {
                kind
            };
            let joined = join_schema(&input.schema, &columns, kind);
            let condition = condition.map(|c| bind_scalar(&c, &joined, &registry).unwrap());
            input
                .correlate(
                    Expansion::Function(function),
                    args,
                    columns,
                    kind,
                    condition,
                )
                .unwrap()
        }
        _ => {
            let column = if template == 3 { "arr" } else { "m" };
            let arg = bind_scalar(&col(column), &input.schema, &registry).unwrap();
            let ordinality = template == 3 && !flag;
            let columns =
                Schema::new(unnest_columns(&arg.ty, ordinality, column).unwrap()).unwrap();
            input
                .correlate(
                    Expansion::Unnest { ordinality },
                    vec![arg],
                    columns,
                    kind,
                    None,
                )
                .unwrap()
        }
    }
}

fn inputs(rows: Vec<(SysTime, Change<Row>)>) -> Inputs {
    let d = rows
        .into_iter()
        .map(|(t, ch)| (t, Change::new(ch.seq, ch.kind, row_d(&ch.row))))
        .collect();
    BTreeMap::from([("D".to_string(), d)])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(36))]

    #[test]
    fn lateral_joins_equal_the_reference(
        template in 0u8..5,
        flag in any::<bool>(),
        append in any::<bool>(),
        a in append_only(12),
        c in changelog(12),
    ) {
        let plan = correlate_plan(template, flag, append);
        let rows = if append { a } else { c };
        check_plan(&plan, &inputs(rows), &format!("correlate template {template}"))?;
    }
}

/// Each template once over fixed rows (a failing call, an empty and a NULL array included).
#[test]
fn every_correlate_template_builds_and_runs() {
    let spec = |k, s, v, d| super::RowSpec {
        k,
        s,
        v,
        d,
        ts: Some(1),
    };
    let rows = [
        spec(Some(3), Some("a"), Some(2), Some(2)),
        spec(None, Some("b"), Some(-4), Some(1)),
        spec(Some(0), None, Some(4), None),
        spec(Some(-5), Some("c"), None, Some(5)),
    ];
    let a: Vec<_> = (rows.iter().enumerate())
        .map(|(i, r)| {
            let kind = differential_temporal::operators::RowKind::Insert;
            (i as SysTime, Change::new(i as u64 + 2, kind, r.row()))
        })
        .collect();
    for template in 0..5 {
        for (flag, append) in [(false, true), (true, false)] {
            let plan = correlate_plan(template, flag, append);
            check_plan(&plan, &inputs(a.clone()), &format!("template {template}")).unwrap();
        }
    }
}
