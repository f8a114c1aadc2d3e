use crate::expr::{bind_aggregate, bind_scalar, col, lit, FunctionRegistry};
use crate::repr::{DataType, Schema};

use super::*;

fn orders() -> Schema {
    Schema::builder()
        .column("a", DataType::STRING.nullable())
        .column("b", DataType::BigInt.nullable())
        .column("ts", DataType::Timestamp(3).not_null())
        .rowtime("ts", 1000)
        .build()
        .unwrap()
}

fn rates(with_key: bool) -> Schema {
    let builder = Schema::builder()
        .column("a", DataType::STRING.not_null())
        .column("rate", DataType::BigInt.nullable())
        .column("ts", DataType::Timestamp(3).not_null())
        .rowtime("ts", 0);
    let builder = if with_key {
        builder.primary_key(["a"])
    } else {
        builder
    };
    builder.build().unwrap()
}

#[test]
fn explain_shows_arguments_schema_mode_and_time_attributes() {
    let registry = FunctionRegistry::new();
    let scan = RelExpr::scan("Orders", orders(), false);
    let filtered = scan
        .filter_expr(&col("b").gt(lit(1i64)), &registry)
        .unwrap();
    let count = bind_aggregate(&col("b").count(), &filtered.schema, &registry).unwrap();
    let plan = filtered
        .reduce(vec![0], vec![(count, "cnt".into())])
        .unwrap();
    assert_eq!(
        plan.explain(),
        "Reduce(group=[a], aggs=[COUNT(b) AS cnt]) -> [a STRING, cnt BIGINT NOT NULL] updating(key=[a])
  Filter(condition=[b > 1]) -> [a STRING, b BIGINT, ts TIMESTAMP(3) NOT NULL] append-only rowtime=ts
    Scan(table=[Orders]) -> [a STRING, b BIGINT, ts TIMESTAMP(3) NOT NULL] append-only rowtime=ts
"
    );
    assert_eq!(plan.schema.primary_key, Some(vec![0]));
    assert_eq!(plan.scans(), vec!["Orders"]);
}

#[test]
fn temporal_join_schema_renames_taken_build_columns_and_pads_left() {
    let probe = RelExpr::scan("Orders", orders(), false);
    let build = RelExpr::scan("Rates", rates(true), true);
    let joined = probe
        .temporal_join(build, vec![0], vec![0], JoinKind::Left, None)
        .unwrap();
    let names: Vec<&str> = joined.schema.names().collect();
    assert_eq!(names, vec!["a", "b", "ts", "a0", "rate", "ts0"]);
    assert!(
        joined.schema.fields[3].ty.nullable,
        "LEFT pads the build side"
    );
    assert_eq!(joined.schema.rowtime.as_ref().unwrap().column, 2);
    assert_eq!(joined.mode, Mode::AppendOnly);
}

#[test]
fn invalid_plans_are_refused_with_flinks_reasons() {
    let registry = FunctionRegistry::new();
    let probe = || RelExpr::scan("Orders", orders(), false);
    // A build side without a primary key is not a versioned table.
    let err = probe()
        .temporal_join(
            RelExpr::scan("R", rates(false), false),
            vec![0],
            vec![0],
            JoinKind::Inner,
            None,
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "TemporalJoin: Temporal Table Join requires primary key in versioned table, but no primary key can be found"
    );
    // The primary key must be in the equality condition.
    let build = RelExpr::scan("R", rates(true), true);
    let err = probe()
        .temporal_join(build, vec![1], vec![1], JoinKind::Inner, None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "TemporalJoin: Temporal table's primary key [a] must be included in the equivalence condition of temporal join, but current temporal join condition is [b=rate]."
    );
    // Equality columns beyond the key are join keys too (Flink: the key is a subset of them).
    let build = RelExpr::scan("R", rates(true), true);
    assert!(probe()
        .temporal_join(build, vec![0, 1], vec![0, 1], JoinKind::Inner, None)
        .is_ok());
    // Deduplication needs an append-only input.
    let updating = RelExpr::scan("R", rates(true), true);
    let err = updating
        .dedup(vec![0], Keep::Last, DedupOrder::EventTime)
        .unwrap_err();
    assert!(err.to_string().contains("append-only"), "{err}");
    // An event-time state TTL is for the operators that wait for the watermark (keep-first by
    // event time, the temporal join), and is not negative.
    let last = RelExpr::scan("O", orders(), false)
        .dedup(vec![0], Keep::Last, DedupOrder::EventTime)
        .unwrap();
    let err = last.with_event_time_ttl(1000).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Dedup: an event-time state TTL applies to a keep-first deduplication by event time and to an event-time temporal join, the operators that wait for the watermark"
    );
    let first = RelExpr::scan("O", orders(), false)
        .dedup(vec![0], Keep::First, DedupOrder::EventTime)
        .unwrap();
    let err = first.clone().with_event_time_ttl(-1).unwrap_err();
    assert_eq!(err.to_string(), "Dedup: a state TTL cannot be negative");
    let explained = first.with_event_time_ttl(0).unwrap().explain();
    assert!(!explained.contains("state_ttl"), "{explained}");
    // Reading as of a time needs a versioned table: a primary key and a rowtime.
    let at = crate::repr::Ts::from_millis(0);
    let err = RelExpr::scan("O", orders(), false).as_of(at).unwrap_err();
    assert_eq!(
        err.to_string(),
        "AsOf: reading a table as of an event time needs a versioned table, but it has no primary key"
    );
    let keyed = Schema {
        rowtime: None,
        ..rates(true)
    };
    let err = RelExpr::scan("R", keyed, true).as_of(at).unwrap_err();
    assert_eq!(
        err.to_string(),
        "AsOf: reading a table as of an event time needs a versioned table, but it has no rowtime attribute"
    );
    let read = RelExpr::scan("R", rates(true), true).as_of(at).unwrap();
    assert_eq!(read.schema, rates(true));
    assert!(
        read.mode.upsert_key().is_some_and(|k| k == [0]),
        "{:?}",
        read.mode
    );
    // FIRST_VALUE over an updating input has no arrival order.
    let updating = RelExpr::scan("R", rates(true), true);
    let first = bind_aggregate(&col("rate").first_value(), &updating.schema, &registry).unwrap();
    let err = updating
        .reduce(vec![0], vec![(first, "f".into())])
        .unwrap_err();
    assert!(err.to_string().contains("arrival order"), "{err}");
    // A filter must be BOOLEAN.
    let scan = probe();
    let not_bool = bind_scalar(&col("b"), &scan.schema, &registry).unwrap();
    let err = scan.filter(not_bool).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Filter: the filter condition must be of type BOOLEAN, but is of type BIGINT"
    );
}

#[test]
fn project_keeps_attributes_of_kept_columns_only() {
    let scan = RelExpr::scan("Orders", orders(), false);
    let kept = scan
        .clone()
        .project(vec![2, 0], Some(vec!["t".into(), "x".into()]))
        .unwrap();
    assert_eq!(kept.schema.rowtime.as_ref().unwrap().column, 0);
    let dropped = scan.project(vec![0, 1], None).unwrap();
    assert_eq!(dropped.schema.rowtime, None);
}

#[test]
fn regular_join_schema_mode_and_explain() {
    let orders = RelExpr::scan("Orders", orders(), false);
    let rates = RelExpr::scan("Rates", rates(false), false);
    let inner = orders
        .clone()
        .join(rates.clone(), vec![0], vec![0], JoinType::Inner, None)
        .unwrap();
    // Both inputs append-only and INNER: append-only; time attributes become plain timestamps.
    assert_eq!(inner.mode, Mode::AppendOnly);
    assert_eq!(
        (inner.schema.rowtime.clone(), inner.schema.proctime),
        (None, None)
    );
    let full = orders
        .clone()
        .join(rates.clone(), vec![0], vec![0], JoinType::Full, None)
        .unwrap();
    assert_eq!(full.mode, Mode::Updating { upsert_key: None });
    let nullable: Vec<bool> = full.schema.fields.iter().map(|f| f.ty.nullable).collect();
    assert_eq!(nullable, vec![true; 6]);
    let right = orders
        .clone()
        .join(rates.clone(), vec![0], vec![0], JoinType::Right, None)
        .unwrap();
    let nullable: Vec<bool> = right.schema.fields.iter().map(|f| f.ty.nullable).collect();
    assert_eq!(nullable, vec![true, true, true, false, true, false]);
    assert_eq!(
        right.explain().lines().next().unwrap(),
        "Join(kind=RIGHT, keys=[a=a0]) -> [a STRING, b BIGINT, ts TIMESTAMP(3), a0 STRING NOT NULL, rate BIGINT, ts0 TIMESTAMP(3) NOT NULL] updating"
    );
    let error = orders
        .join(rates, vec![], vec![], JoinType::Inner, None)
        .unwrap_err();
    assert!(error
        .to_string()
        .starts_with("Join: At least one equi-join predicate is required"));
}

#[test]
fn set_operation_schema_and_mode() {
    let orders = RelExpr::scan("Orders", orders(), false);
    let rates = RelExpr::scan("Rates", rates(false), false);
    let union_all = orders
        .clone()
        .set_op(rates.clone(), SetOpKind::Union, true)
        .unwrap();
    assert_eq!(union_all.mode, Mode::AppendOnly);
    // The left's names; nullable if either side is.
    assert_eq!(
        union_all.schema.names().collect::<Vec<_>>(),
        vec!["a", "b", "ts"]
    );
    let nullable: Vec<bool> = union_all
        .schema
        .fields
        .iter()
        .map(|f| f.ty.nullable)
        .collect();
    assert_eq!(nullable, vec![true, true, false]);
    let except = orders.set_op(rates, SetOpKind::Except, false).unwrap();
    assert_eq!(
        except.mode,
        Mode::Updating {
            upsert_key: Some(vec![0, 1, 2])
        }
    );
    assert_eq!(
        except.explain().lines().next().unwrap(),
        "SetOp(op=[EXCEPT]) -> [a STRING, b BIGINT, ts TIMESTAMP(3) NOT NULL] updating(key=[a, b, ts])"
    );
}

#[test]
fn asof_join_explain_schema_and_errors() {
    let orders = || RelExpr::scan("Orders", orders(), false);
    let rates = || RelExpr::scan("Rates", rates(false), false);
    let order = |probe, build, tolerance| AsofOrder {
        probe,
        build,
        condition: AsofMatch::Ge,
        tolerance,
    };
    let five_seconds = Some(Tolerance::Interval { millis: 5000 });
    let joined = orders()
        .asof_join(
            rates(),
            vec![0],
            vec![0],
            order(2, 2, five_seconds),
            JoinKind::Left,
        )
        .unwrap();
    assert_eq!(
        joined.explain().lines().next().unwrap(),
        "AsofJoin(kind=LEFT, keys=[a=a0], match=[ts >= ts0], tolerance=[5000 ms]) -> [a STRING, b BIGINT, ts TIMESTAMP(3) NOT NULL, a0 STRING, rate BIGINT, ts0 TIMESTAMP(3)] updating"
    );
    assert_eq!(joined.mode, Mode::Updating { upsert_key: None });
    assert_eq!(joined.schema.rowtime, None);
    let error = |result: Result<RelExpr, PlanError>| result.unwrap_err().to_string();
    // A STRING column cannot be the ordering column.
    assert_eq!(
        error(orders().asof_join(rates(), vec![], vec![], order(0, 2, None), JoinKind::Inner)),
        "AsofJoin: the match condition's column 'a' is of type STRING, which an ASOF join cannot order by: use an integer, DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ column"
    );
    // A TIMESTAMP and a BIGINT are not comparable.
    assert_eq!(
        error(orders().asof_join(rates(), vec![], vec![], order(2, 1, None), JoinKind::Inner)),
        "AsofJoin: the match condition compares 'ts' (TIMESTAMP(3)) with 'rate' (BIGINT), which cannot be compared"
    );
    // A tolerance must fit the ordering columns.
    assert_eq!(
        error(orders().asof_join(
            rates(),
            vec![],
            vec![],
            order(1, 1, five_seconds),
            JoinKind::Inner
        )),
        "AsofJoin: the TOLERANCE 5000 ms does not fit the ordering column 'b' (BIGINT): an integer column takes a number"
    );
    assert_eq!(
        error(orders().asof_join(
            rates(),
            vec![],
            vec![],
            order(1, 1, Some(Tolerance::Number(-1))),
            JoinKind::Inner
        )),
        "AsofJoin: the TOLERANCE -1 does not fit the ordering column 'b' (BIGINT): it is negative"
    );
    // Keys as many on each side.
    assert_eq!(
        error(orders().asof_join(rates(), vec![0], vec![], order(2, 2, None), JoinKind::Inner)),
        "AsofJoin: an ASOF join takes as many equality keys on the probe side as on the build side"
    );
}

#[test]
fn a_merge_engine_merges_a_tables_writes_and_names_what_it_refuses() {
    let options = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let key = ["a".to_string()];
    let versioned = options(&[
        ("table.merge-engine", "versioned"),
        ("table.merge-engine.versioned.ver-column", "rate"),
    ]);
    let scan = || RelExpr::scan("Rates", rates(false), true);
    let merged = scan().merge_engine(&key, &versioned).unwrap();
    assert_eq!(
        merged.explain(),
        "MergeEngine(engine=versioned, key=[a]) -> [a STRING NOT NULL, rate BIGINT, ts TIMESTAMP(3) NOT NULL] updating(key=[a]) rowtime=ts
  Scan(table=[Rates]) -> [a STRING NOT NULL, rate BIGINT, ts TIMESTAMP(3) NOT NULL] updating rowtime=ts
"
    );
    // A first_row table that ignores deletes only inserts.
    let first = scan()
        .merge_engine(&key, &options(&[("table.merge-engine", "first_row")]))
        .unwrap();
    assert_eq!(first.mode, Mode::AppendOnly);
    let error = |plan: Result<RelExpr, PlanError>| plan.unwrap_err().to_string();
    assert_eq!(
        error(scan().merge_engine(&[], &versioned)),
        "MergeEngine: the primary key is empty"
    );
    assert_eq!(
        error(scan().merge_engine(&key, &options(&[("merge-engine", "newest")]))),
        "MergeEngine: unknown merge engine 'newest' for 'merge-engine'; valid choices: deduplicate, first-row, partial-update, aggregation"
    );
    let distinct = scan().distinct();
    assert_eq!(
        error(distinct.merge_engine(&key, &versioned)),
        "MergeEngine: a merge engine merges a table's writes in source order, but its input is a Distinct (merge a scanned table, optionally filtered, projected or with computed columns)"
    );
}

#[test]
fn a_changelog_check_is_a_table_of_findings_and_names_what_it_cannot_check() {
    let names = |n: &[&str]| -> Vec<String> { n.iter().map(|s| s.to_string()).collect() };
    let scan = || RelExpr::scan("Rates", rates(false), true);
    let checked = scan()
        .check_changelog(&names(&["a"]), &names(&["ts"]), false)
        .unwrap();
    assert_eq!(
        checked.explain(),
        "CheckChangelog(key=[a], uncompared=[ts], upsert=false) -> [a STRING NOT NULL, seq BIGINT NOT NULL, follow_up BOOLEAN NOT NULL, problem STRING NOT NULL] updating
  Scan(table=[Rates]) -> [a STRING NOT NULL, rate BIGINT, ts TIMESTAMP(3) NOT NULL] updating rowtime=ts
"
    );
    // A key column named like an appended column keeps its name; the appended one gets a `$`.
    let renamed = scan().project(vec![0], Some(names(&["seq"]))).unwrap();
    let checked = renamed
        .check_changelog(&names(&["seq"]), &[], true)
        .unwrap();
    let columns: Vec<&str> = checked.schema.names().collect();
    assert_eq!(columns, ["seq", "$seq", "follow_up", "problem"]);
    let error = |plan: Result<RelExpr, PlanError>| plan.unwrap_err().to_string();
    assert_eq!(
        error(scan().check_changelog(&[], &[], false)),
        "CheckChangelog: the key is empty"
    );
    assert_eq!(
        error(scan().check_changelog(&names(&["b"]), &[], false)),
        "CheckChangelog: no column 'b'"
    );
    assert_eq!(
        error(scan().distinct().check_changelog(&names(&["a"]), &[], false)),
        "CheckChangelog: a changelog is checked in source order, but its input is a Distinct (check a scanned table, optionally filtered, projected or with computed columns)"
    );
}
