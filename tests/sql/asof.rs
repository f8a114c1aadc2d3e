//! ASOF joins (issue 13) through SQL and the Table API, on hand-made tables with their exact
//! expected rows, on 1 and 2 workers: each inequality, NEAREST (with its tie) and TOLERANCE,
//! with and without equality keys, INNER and LEFT, the MATCH_CONDITION and the ON forms, a
//! build-side filter applied before the match is chosen, a late build row that retracts
//! exactly the probe rows whose match it changes, and the refusals.

use differential_temporal::expr::{call, col, Expr};
use differential_temporal::plan::{JoinKind, Tolerance};
use differential_temporal::table::TableEnv;

use super::{env, last_rows};

/// Probe rows `(k, t, id)`: id 5 has a NULL time, id 6 a NULL key; id 7 is as far from the
/// build row at 10 as from the one at 18 (NEAREST's tie).
const P: &str = "k,t,id\nA,10,1\nA,20,2\nA,30,3\nB,15,4\nA,,5\n,20,6\nA,14,7\n";
/// Build rows `(k, t, px)`: two at A 25 (the later arrival, 103, wins the tie), one with a
/// NULL time (never matches).
const Q: &str = "k,t,px\nA,10,100\nA,18,101\nA,25,102\nA,25,103\nB,20,200\nA,,104\n";

fn tables(workers: usize, p: &str, q: &str) -> (TableEnv, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    };
    let (p, q) = (write("p.csv", p), write("q.csv", q));
    let env = env(workers);
    env.execute_sql(&format!(
        "CREATE TABLE P (k STRING, t BIGINT, id INT) WITH ('connector' = 'filesystem', 'path' = '{p}', 'format' = 'csv');
         CREATE TABLE Q (k STRING, t BIGINT, px INT) WITH ('connector' = 'filesystem', 'path' = '{q}', 'format' = 'csv');"
    ))
    .unwrap();
    (env, dir)
}

fn rows(env: &TableEnv, sql: &str) -> Vec<String> {
    last_rows(env, sql).rows_as_text()
}

/// Each condition, with keys, INNER and LEFT, in the MATCH_CONDITION form, the ON form and the
/// Table API: `id,px` rows.
#[test]
fn each_condition_with_keys_inner_and_left() {
    let cases: [(&str, &str, Expr, &[&str]); 5] = [
        (
            ">=",
            "P.t >= Q.t",
            col("t").ge(col("t0")),
            &["1,100", "2,101", "3,103", "7,100"],
        ),
        (
            ">",
            "P.t > Q.t",
            col("t").gt(col("t0")),
            &["2,101", "3,103", "7,100"],
        ),
        (
            "<=",
            "P.t <= Q.t",
            col("t").le(col("t0")),
            &["1,100", "2,103", "4,200", "7,101"],
        ),
        (
            "<",
            "Q.t > P.t",
            col("t0").gt(col("t")),
            &["1,101", "2,103", "4,200", "7,101"],
        ),
        (
            "NEAREST",
            "NEAREST(P.t, Q.t)",
            call("NEAREST", [col("t"), col("t0")]),
            &["1,100", "2,101", "3,103", "4,200", "7,100"],
        ),
    ];
    for workers in [1, 2] {
        let (env, _dir) = tables(workers, P, Q);
        for (name, condition, api, inner) in &cases {
            let inner: Vec<String> = inner.iter().map(|r| r.to_string()).collect();
            let sql = format!(
                "SELECT id, px FROM P ASOF JOIN Q MATCH_CONDITION ({condition}) ON P.k = Q.k"
            );
            assert_eq!(rows(&env, &sql), inner, "{name}, {workers} workers");
            let on_form = format!("SELECT id, px FROM P ASOF JOIN Q ON P.k = Q.k AND {condition}");
            assert_eq!(rows(&env, &on_form), inner, "{name}, the ON form");
            // LEFT: every probe row, those without a match padded (5: NULL time, 6: NULL key).
            let mut left = inner.clone();
            for id in 1..=7 {
                if !left.iter().any(|r| r.starts_with(&format!("{id},"))) {
                    left.push(format!("{id},"));
                }
            }
            left.sort();
            let sql = format!(
                "SELECT id, px FROM P ASOF LEFT JOIN Q MATCH_CONDITION ({condition}) ON P.k = Q.k"
            );
            assert_eq!(rows(&env, &sql), left, "LEFT {name}");
            let table = env
                .from("P")
                .asof_join(
                    &env.from("Q"),
                    col("k").eq(col("k0")).and(api.clone()),
                    JoinKind::Left,
                    None,
                )
                .select([col("id"), col("px")]);
            assert_eq!(
                table.execute().unwrap().rows_as_text(),
                left,
                "Table API {name}"
            );
        }
    }
}

/// Without keys every build row is a candidate; a NULL key on the probe side does not matter.
#[test]
fn without_keys() {
    let (env, _dir) = tables(2, P, Q);
    assert_eq!(
        rows(
            &env,
            "SELECT id, px FROM P ASOF JOIN Q MATCH_CONDITION (P.t >= Q.t)"
        ),
        ["1,100", "2,200", "3,103", "4,100", "6,200", "7,100"]
    );
    assert_eq!(
        rows(
            &env,
            "SELECT id, px FROM P ASOF LEFT JOIN Q MATCH_CONDITION (NEAREST(P.t, Q.t))"
        ),
        ["1,100", "2,200", "3,103", "4,101", "5,", "6,200", "7,100"]
    );
}

/// TOLERANCE bounds the distance of the match; it never picks a farther row.
#[test]
fn tolerance() {
    let (env, _dir) = tables(1, P, Q);
    assert_eq!(
        rows(
            &env,
            "SELECT id, px FROM P ASOF LEFT JOIN Q MATCH_CONDITION (P.t >= Q.t) ON P.k = Q.k TOLERANCE 3"
        ),
        ["1,100", "2,101", "3,", "4,", "5,", "6,", "7,"]
    );
    assert_eq!(
        rows(
            &env,
            "SELECT id, px FROM P ASOF JOIN Q ON P.k = Q.k AND NEAREST(P.t, Q.t) TOLERANCE 4"
        ),
        ["1,100", "2,101", "7,100"]
    );
    let api = env
        .from("P")
        .asof_join(
            &env.from("Q"),
            col("k")
                .eq(col("k0"))
                .and(call("NEAREST", [col("t"), col("t0")])),
            JoinKind::Inner,
            Some(Tolerance::Number(4)),
        )
        .select([col("id"), col("px")]);
    assert_eq!(
        api.execute().unwrap().rows_as_text(),
        ["1,100", "2,101", "7,100"]
    );

    // An INTERVAL on timestamps.
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    };
    let trades = path(
        "t.csv",
        "id,ts\n1,2024-01-01 10:00:05\n2,2024-01-01 10:00:30\n",
    );
    let quotes = path(
        "q.csv",
        "px,qts\n7,2024-01-01 10:00:00\n8,2024-01-01 10:00:20\n",
    );
    let env = super::env(2);
    env.execute_sql(&format!(
        "CREATE TABLE T (id INT, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '{trades}', 'format' = 'csv');
         CREATE TABLE R (px INT, qts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '{quotes}', 'format' = 'csv');"
    ))
    .unwrap();
    assert_eq!(
        rows(
            &env,
            "SELECT id, px FROM T ASOF LEFT JOIN R MATCH_CONDITION (T.ts >= R.qts) TOLERANCE INTERVAL '5' SECOND"
        ),
        ["1,7", "2,"]
    );
    // A TIMESTAMP and an INT cannot be compared.
    let Err(error) = env.sql_query("SELECT * FROM T ASOF JOIN R MATCH_CONDITION (T.ts >= R.px)")
    else {
        panic!("a TIMESTAMP compared with an INT")
    };
    assert_eq!(
        error.to_string(),
        "SQL validation error at line 1, column 17: AsofJoin: the match condition compares 'ts' (TIMESTAMP(3)) with 'px' (INT), which cannot be compared"
    );
}

/// A filter on the build side is applied before the match is chosen: without 103 the row at
/// 30 matches 102, whether the filter is a subquery's or a build-only condition in ON.
#[test]
fn build_side_filter_before_the_match() {
    let (env, _dir) = tables(2, P, Q);
    let expected = ["1,100", "2,101", "3,102", "7,100"];
    assert_eq!(
        rows(
            &env,
            "SELECT id, px FROM P ASOF JOIN (SELECT * FROM Q WHERE px <> 103) AS q MATCH_CONDITION (P.t >= q.t) ON P.k = q.k"
        ),
        expected
    );
    assert_eq!(
        rows(
            &env,
            "SELECT id, px FROM P ASOF JOIN Q MATCH_CONDITION (P.t >= Q.t) ON P.k = Q.k AND Q.px <> 103"
        ),
        expected
    );
}

/// A build row arriving after the probe rows were joined (each CSV record is its own system
/// time) retracts and re-emits exactly the probe rows whose match it changes: A 19 is the new
/// match of the row at 20 only (the row at 30 keeps 25, the row at 14 keeps 10).
#[test]
fn a_late_build_row_changes_only_the_matches_it_changes() {
    let late = format!("{Q}\n\n\n\n\n\n\n\nA,19,150\n");
    for workers in [1, 2] {
        let (env, _dir) = tables(workers, P, &late);
        let result = last_rows(
            &env,
            "SELECT id, px FROM P ASOF JOIN Q MATCH_CONDITION (P.t >= Q.t) ON P.k = Q.k",
        );
        let last_time = result.changelog().iter().map(|(t, _)| *t).max().unwrap();
        let late_changes: Vec<String> = super::changelog_text(&result)
            .into_iter()
            .zip(result.changelog())
            .filter(|(_, (t, _))| *t == last_time)
            .map(|(line, _)| line)
            .collect();
        assert_eq!(late_changes, ["-D,2,101", "+I,2,150"], "{workers} workers");
        assert_eq!(result.rows_as_text(), ["1,100", "2,150", "3,103", "7,100"]);
    }
}

/// Refusals name the column or the condition.
#[test]
fn bad_input_is_refused_with_a_reason() {
    let (env, _dir) = tables(1, P, Q);
    let error = |sql: &str| match env.sql_query(sql) {
        Err(e) => e.to_string(),
        Ok(table) => table.execute().unwrap_err().to_string(),
    };
    assert!(
        error("SELECT * FROM P ASOF JOIN Q MATCH_CONDITION (P.k >= Q.k)").contains(
            "the match condition's column 'k' is of type STRING, which an ASOF join cannot order by"
        ),
    );
    assert!(error("SELECT * FROM P ASOF JOIN Q ON P.k = Q.k")
        .contains("an ASOF join needs a match condition"));
    assert!(
        error("SELECT * FROM P ASOF JOIN Q ON P.t >= Q.t AND P.t <= Q.t")
            .contains("an ASOF join takes one match condition")
    );
    assert!(
        error("SELECT * FROM P ASOF JOIN Q MATCH_CONDITION (P.t >= Q.t) ON P.id > 2")
            .contains("is not an equality of a probe and a build column")
    );
    assert!(error(
        "SELECT * FROM P ASOF JOIN Q MATCH_CONDITION (P.t >= Q.t) TOLERANCE INTERVAL '1' SECOND"
    )
    .contains("an integer column takes a number"));
}

/// The ASOF forms sqlparser does not read are rewritten on its tokens, keeping their positions:
/// an ASOF join in a subquery next to a comma join parses, and an error after the join still
/// names the column the user wrote.
#[test]
fn rewritten_syntax_keeps_positions() {
    let (env, _dir) = tables(1, P, Q);
    let nested = "SELECT x.id, Q.px FROM (SELECT id, px FROM P ASOF LEFT OUTER JOIN Q ON P.k = Q.k AND P.t >= Q.t TOLERANCE 2) AS x, Q WHERE x.px = Q.px";
    assert_eq!(rows(&env, nested), ["1,100", "2,101"]);
    let sql = "SELECT * FROM P ASOF LEFT JOIN Q ON P.k = Q.k AND P.t >= Q.t WHERE nope > 1";
    let Err(error) = env.sql_query(sql) else {
        panic!("an unknown column")
    };
    let column = sql.find("nope").unwrap() + 1;
    let prefix = format!("SQL validation error at line 1, column {column}:");
    assert!(error.to_string().starts_with(&prefix), "{error}");
}
