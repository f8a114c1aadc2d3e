//! The plans the reference test draws: scans of the tables A, B, C and B2, and the templates
//! [`plan`] builds from the plan's nodes (filters, maps, joins, aggregations, set operations,
//! deduplications, sorts, merges), each over the scans.

use differential_temporal::expr::{
    bind_aggregate, bind_scalar, col, count_star, lit, Expr, FunctionRegistry,
};
use differential_temporal::plan::{
    equi_join_schema, DedupOrder, JoinKind, JoinType, Keep, RelExpr, SetOpKind, SortKey,
};
use differential_temporal::repr::Ts;

use super::asof_templates;
use super::inputs::{schema_a, schema_b, schema_c};

pub fn scan_a() -> RelExpr {
    RelExpr::scan("A", schema_a(), false)
}

pub fn scan_b() -> RelExpr {
    RelExpr::scan("B", schema_b(), true)
}

pub fn scan_c() -> RelExpr {
    RelExpr::scan("C", schema_c(), true)
}

pub fn bind(plan: &RelExpr, e: Expr) -> differential_temporal::expr::ScalarExpr {
    bind_scalar(&e, &plan.schema, &FunctionRegistry::new()).unwrap()
}

pub fn aggs(
    plan: &RelExpr,
    exprs: Vec<Expr>,
) -> Vec<(differential_temporal::expr::AggregateExpr, String)> {
    exprs
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            (
                bind_aggregate(&e, &plan.schema, &FunctionRegistry::new()).unwrap(),
                format!("agg{i}"),
            )
        })
        .collect()
}

/// GROUP BY the columns `threshold` picks (`s`; `k, s`, one span of the row; `v, k`, reversed;
/// `s, d`, apart; `k`), so every way the rendered grouping reads its key (a span of the row's bytes,
/// or column by column) are checked, with the order-independent aggregates (rendered with
/// accumulators), and with
/// `order_dependent` also those that follow arrival order (FIRST_VALUE, LAST_VALUE, LISTAGG over
/// an append-only input, with accumulators too) or value order (LISTAGG over an updating input,
/// recomputed per group).
///
/// `threshold` 1 and 2 group by `k` alone, an integer (kept as an `i64`); 2 and 3 take only
/// counters (COUNT, exact SUM and AVG: read in place from each row).
pub fn grouped(input: RelExpr, order_dependent: bool, threshold: i64) -> RelExpr {
    let append_only = input.mode.is_append_only();
    let counters = matches!(threshold, 2 | 3);
    let mut exprs = match counters {
        true => vec![
            count_star(),
            col("s").count(),
            col("v").sum(),
            col("d").sum(),
            col("v").avg(),
            col("d").avg(),
            col("v").count(),
        ],
        false => vec![
            count_star(),
            col("v").count(),
            col("v").sum(),
            col("v").min(),
            col("s").max(),
            col("d").sum(),
            col("v").avg(),
            col("v").sum().distinct(),
            col("v").count().filter(col("v").gt(lit(0i64))),
        ],
    };
    if order_dependent && append_only && !counters {
        exprs.extend([col("v").first_value(), col("s").last_value()]);
    }
    if order_dependent && !counters {
        exprs.push(col("s").listagg(";"));
    }
    let aggregates = aggs(&input, exprs);
    let names: &[&str] = match threshold {
        0 => &["s"],
        1 | 2 => &["k"],
        -3 => &["k", "s"],
        -2 => &["v", "k"],
        _ => &["s", "d"],
    };
    let group = names
        .iter()
        .map(|name| input.schema.index_of(name).unwrap())
        .collect();
    input.reduce(group, aggregates).unwrap()
}

/// The plan templates, by number, with their parameters.
pub fn plan(template: u8, flag: bool, threshold: i64) -> RelExpr {
    match template {
        0 => {
            let a = scan_a();
            let filtered = a
                .clone()
                .filter(bind(&a, col("v").gt(lit(threshold))))
                .unwrap();
            filtered.project(vec![1, 2, 4], None).unwrap()
        }
        1 => {
            let input = if flag { scan_a() } else { scan_c() };
            let exprs = vec![
                (
                    bind(&input, col("v").mul(lit(2i64)).add(col("k"))),
                    "x".to_string(),
                ),
                (bind(&input, col("s").upper()), "u".to_string()),
                (bind(&input, lit(100i64).div(col("v"))), "q".to_string()),
            ];
            input.map(exprs).unwrap()
        }
        2 => grouped(if flag { scan_a() } else { scan_c() }, flag, threshold),
        3 => {
            let a = scan_a();
            let filtered = a.clone().filter(bind(&a, col("k").is_not_null())).unwrap();
            grouped(filtered, true, threshold)
        }
        4 => {
            let input = if flag { scan_a() } else { scan_c() };
            input.project(vec![1, 0], None).unwrap().distinct()
        }
        5 | 6 => {
            let keep = if flag { Keep::Last } else { Keep::First };
            let order = if template == 5 {
                DedupOrder::EventTime
            } else {
                DedupOrder::Arrival
            };
            let key = vec![if threshold > 0 { 0 } else { 1 }];
            scan_a().dedup(key, keep, order).unwrap()
        }
        7 => {
            let dedup = scan_a()
                .dedup(vec![0], Keep::Last, DedupOrder::EventTime)
                .unwrap();
            grouped(dedup, flag, threshold)
        }
        8 | 9 => {
            let kind = if flag {
                JoinKind::Left
            } else {
                JoinKind::Inner
            };
            // The key is the build side's primary key: `k`, an integer (joined on its i64), or
            // for the deduplicated build side with some thresholds `s`, a string (joined on the
            // packed key).
            let key = match template == 9 && threshold.rem_euclid(3) == 2 {
                true => vec![1],
                false => vec![0],
            };
            let build = if template == 8 {
                scan_b()
            } else {
                RelExpr::scan("B2", schema_a(), false)
                    .dedup(key.clone(), Keep::Last, DedupOrder::EventTime)
                    .unwrap()
            };
            let joined = differential_temporal::plan::join_schema(&schema_a(), &build.schema, kind);
            let residual = (threshold > 0).then(|| {
                bind_scalar(&col("v").le(col("v0")), &joined, &FunctionRegistry::new()).unwrap()
            });
            let join = scan_a()
                .temporal_join(build, key.clone(), key, kind, residual)
                .unwrap();
            // A projection over the join (build columns first) is fused into it when rendered.
            match threshold < 0 {
                true => join.project(vec![6, 2, 0, 9], None).unwrap(),
                false => join,
            }
        }
        11 => {
            // A regular join of updating inputs (or an append-only with an updating one), with
            // NULL keys, one or two key columns, and a residual that may fail (a division by
            // zero counts as no match).
            let join_type = [
                JoinType::Inner,
                JoinType::Left,
                JoinType::Right,
                JoinType::Full,
            ][(threshold + 3) as usize % 4];
            let (left, right) = match flag {
                true => (scan_a(), scan_c()),
                false => (scan_c(), scan_b()),
            };
            let joined = equi_join_schema(&left.schema, &right.schema, join_type);
            let residual = match threshold {
                -3 => Some(lit(10i64).div(col("v0")).gt(col("v"))),
                t if t % 2 == 0 => Some(col("v").le(col("v0"))),
                _ => None,
            };
            let residual =
                residual.map(|r| bind_scalar(&r, &joined, &FunctionRegistry::new()).unwrap());
            let key = if threshold > 1 { vec![0, 1] } else { vec![0] };
            left.join(right, key.clone(), key, join_type, residual)
                .unwrap()
        }
        12 => {
            // A set operation over (s, k) of two inputs, updating or not.
            let op = [SetOpKind::Union, SetOpKind::Intersect, SetOpKind::Except]
                [(threshold + 3) as usize % 3];
            let left = if threshold > 0 { scan_a() } else { scan_c() };
            let right = if flag { scan_c() } else { scan_b() };
            let (left, right) = (
                left.project(vec![1, 0], None).unwrap(),
                right.project(vec![1, 0], None).unwrap(),
            );
            left.set_op(right, op, threshold % 2 == 0).unwrap()
        }
        13 => {
            // A Top-N over (v, s) with NULLs and ties, or a sort by the ascending rowtime.
            if threshold == 3 {
                let order = vec![SortKey::new(4, false, None), SortKey::new(0, true, None)];
                return scan_a().sort(order, 0, None).unwrap();
            }
            let input = if flag { scan_a() } else { scan_c() };
            let order = vec![
                SortKey::new(2, threshold < 0, None),
                SortKey::new(1, true, Some(threshold % 2 == 0)),
            ];
            let offset = threshold.rem_euclid(3) as usize;
            input.sort(order, offset, Some(3)).unwrap()
        }
        14..=17 => asof_templates::asof(template, flag, threshold),
        18 => {
            // A Top-N per partition (k, s, or none) by (v, d) with NULLs and ties, 1 to 3
            // rows, with the row number or without, over an append-only or updating input.
            let input = if flag { scan_a() } else { scan_c() };
            let partition = [vec![0], vec![1], vec![]][threshold.rem_euclid(3) as usize].clone();
            let order = vec![
                SortKey::new(2, threshold < 0, None),
                SortKey::new(3, true, Some(threshold % 2 == 0)),
            ];
            let limit = 1 + (threshold + 3) as usize % 3;
            let rank = (threshold % 2 != 0).then_some("rn");
            input.top_n(partition, order, limit, rank).unwrap()
        }
        20 => merged(flag, threshold),
        // A versioned table read as of 0, 3, .. 12 s, or its history (thresholds 2 and 3): B (a
        // changelog) or, for odd thresholds, B's inserts as an append-only table (every row a
        // version); alone, or counted per `s` (its revisions through a GROUP BY).
        21 => {
            let at = Ts::from_millis((threshold + 3) * 3_000);
            let versions = match threshold.rem_euclid(2) {
                0 => scan_b(),
                _ => RelExpr::scan("B2", schema_b(), false),
            };
            let read = match threshold >= 2 {
                true => versions.history().unwrap(),
                false => versions.as_of(at).unwrap(),
            };
            match flag {
                true => {
                    let aggregates = aggs(&read, vec![count_star(), col("v").sum()]);
                    read.reduce(vec![1], aggregates).unwrap()
                }
                false => read,
            }
        }
        // A changelog checked per key (`dtemporal validate`): C (retractions by value, not by
        // key; as C2 one change per system time, so a `-U` waits for its `+U` across system
        // times), A (inserts only) or B, by k, s or (k, s), a retract or (flag) an upsert
        // changelog, ts compared or not.
        22 => {
            let input = match threshold {
                -1 => RelExpr::scan("C2", schema_c(), true),
                t if t < 0 => scan_c(),
                0 => scan_a(),
                _ => scan_b(),
            };
            let key: &[&str] = [&["k"][..], &["s"], &["k", "s"]][threshold.rem_euclid(3) as usize];
            let key: Vec<String> = key.iter().map(|k| k.to_string()).collect();
            let uncompared = match threshold % 2 == 0 {
                true => vec!["ts".to_string()],
                false => vec![],
            };
            input.check_changelog(&key, &uncompared, flag).unwrap()
        }
        _ => {
            let kind = if flag {
                JoinKind::Left
            } else {
                JoinKind::Inner
            };
            let join = scan_a()
                .lookup_join(scan_b(), vec![0], vec![0], kind, None)
                .unwrap();
            match threshold < 0 {
                true => join.project(vec![8, 1], None).unwrap(),
                false => join,
            }
        }
    }
}

/// The merge engines (issue 11) over the writes of A (append-only) or B (a changelog whose
/// `-U`/`-D` writes are retractions), keyed by `k` (NULL a key value): each engine (from
/// `threshold`) with a variant of its options (`flag`): an integer or timestamp version, deletes
/// honoured or not, a sequence field, a sequence group, aggregate functions that retract or
/// refuse retractions (Paimon) or ignore deletes (Fluss).
pub fn merged(flag: bool, threshold: i64) -> RelExpr {
    let input = if flag { scan_b() } else { scan_a() };
    let variant = threshold.rem_euclid(2) == 0;
    let options: &[(&str, &str)] = match threshold {
        -3 => &[
            ("table.merge-engine", "versioned"),
            ("table.merge-engine.versioned.ver-column", "v"),
        ],
        -2 => &[
            ("table.merge-engine", "versioned"),
            ("table.merge-engine.versioned.ver-column", "ts"),
            ("dtemporal.honor-deletes", "true"),
        ],
        -1 => &[("table.merge-engine", "first_row")],
        0 => &[("merge-engine", "deduplicate"), ("sequence.field", "v")],
        1 => &[("merge-engine", "first-row")],
        2 => &[
            ("merge-engine", "partial-update"),
            ("fields.v.sequence-group", "s,d"),
        ],
        _ if variant => &[
            ("merge-engine", "aggregation"),
            ("fields.v.aggregate-function", "sum"),
            ("fields.d.aggregate-function", "max"),
            ("fields.s.aggregate-function", "listagg"),
        ],
        _ => &[
            ("table.merge-engine", "aggregation"),
            ("fields.v.agg", "sum"),
            ("fields.d.agg", "min"),
        ],
    };
    let options: Vec<(String, String)> = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    input.merge_engine(&["k".to_string()], &options).unwrap()
}

pub fn scan_b2() -> RelExpr {
    RelExpr::scan("B2", schema_a(), false)
}
