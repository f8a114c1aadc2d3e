//! The worked cases of issue 13 through SQL and the Table API, each with its exact expected
//! output on 1 and 2 workers (every CSV record, and every blank line, its own system time): E01
//! (set operations, multiset semantics) and E04 (the NULL-padded row of a LEFT JOIN retracted
//! when the first partner arrives and re-emitted when the last leaves, as `-D`/`+I`); then the four join kinds with NULL keys and a residual in the ON clause,
//! and the refusals (no equality predicate, set operations over different columns).

use differential_temporal::expr::{col, lit};
use differential_temporal::repr::{DataType, Schema};
use differential_temporal::table::{Table, TableEnv, TableResult};

use super::{changelog_text, env, last_rows};

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// The changelog as `after_step,op,cells..` lines (system time `t` is step `t + 1`).
fn steps(result: &TableResult) -> Vec<String> {
    let times = result.changelog().iter().map(|(time, _)| time + 1);
    times
        .zip(changelog_text(result))
        .map(|(step, line)| format!("{step},{line}"))
        .collect()
}

const T1: &str = "s\nc\na\nb\nb\nc\n";
const T2: &str = "s\nd\ne\na\nb\nb\n";

/// E01: each operation's rows, in both forms, as the case lists them (sorted: order is
/// insignificant, multiplicities matter).
#[test]
fn e01_set_operations() {
    let dir = tempfile::tempdir().unwrap();
    let (t1, t2) = (write(&dir, "t1.csv", T1), write(&dir, "t2.csv", T2));
    let expected: [(&str, fn(&Table, &Table) -> Table, &str); 6] = [
        ("UNION", |a, b| a.union(b), "c;a;b;d;e"),
        ("UNION ALL", |a, b| a.union_all(b), "c;a;b;b;c;d;e;a;b;b"),
        ("INTERSECT", |a, b| a.intersect(b), "a;b"),
        ("INTERSECT ALL", |a, b| a.intersect_all(b), "a;b;b"),
        ("EXCEPT", |a, b| a.minus(b), "c"),
        ("EXCEPT ALL", |a, b| a.minus_all(b), "c;c"),
    ];
    for workers in [1, 2] {
        let env = env(workers);
        let ddl = format!(
            "CREATE TABLE t1 (s STRING) WITH ('connector' = 'filesystem', 'path' = '{t1}', 'format' = 'csv');
             CREATE TABLE t2 (s STRING) WITH ('connector' = 'filesystem', 'path' = '{t2}', 'format' = 'csv');"
        );
        env.execute_sql(&ddl).unwrap();
        for (operation, api, rows) in expected {
            let mut want: Vec<&str> = rows.split(';').collect();
            want.sort_unstable();
            let query = format!("(SELECT s FROM t1) {operation} (SELECT s FROM t2)");
            let sql = last_rows(&env, &query);
            assert_eq!(sql.rows_as_text(), want, "{query}, {workers} workers");
            assert_eq!(sql.schema().names().collect::<Vec<_>>(), ["s"]);
            let table = api(&env.from("t1"), &env.from("t2"));
            assert_eq!(table.execute().unwrap().rows_as_text(), want, "{operation}");
        }
    }
}

/// E04's event script, one step per system time (a blank line is an empty step): L holds step
/// 1 and 6, R steps 2 to 5 and 7.
const L: &str = "op,k,v\n+I,1,a\n\n\n\n\n-D,1,a\n";
const R: &str = "op,k,v\n\n+I,1,x\n+I,1,y\n-D,1,x\n-D,1,y\n\n+I,2,z\n";

fn kv() -> Schema {
    Schema::builder()
        .column("k", DataType::BigInt.nullable())
        .column("v", DataType::STRING.nullable())
        .build()
        .unwrap()
}

/// E04: `SELECT L.k, L.v, R.k, R.v FROM L LEFT JOIN R ON L.k = R.k`, the changelog in order.
#[test]
fn e04_left_outer_join_retractions() {
    let dir = tempfile::tempdir().unwrap();
    let (l, r) = (write(&dir, "l.csv", L), write(&dir, "r.csv", R));
    let expected = [
        "1,+I,1,a,,",
        "2,-D,1,a,,",
        "2,+I,1,a,1,x",
        "3,+I,1,a,1,y",
        "4,-D,1,a,1,x",
        "5,-D,1,a,1,y",
        "5,+I,1,a,,",
        "6,-D,1,a,,",
    ];
    for workers in [1, 2] {
        let env = env(workers);
        let ddl = format!(
            "CREATE TABLE L (k BIGINT, v STRING) WITH ('connector' = 'filesystem', 'path' = '{l}', 'format' = 'csv');
             CREATE TABLE R (k BIGINT, v STRING) WITH ('connector' = 'filesystem', 'path' = '{r}', 'format' = 'csv');"
        );
        env.execute_sql(&ddl).unwrap();
        let sql = last_rows(
            &env,
            "SELECT L.k, L.v, R.k, R.v FROM L LEFT JOIN R ON L.k = R.k",
        );
        assert_eq!(steps(&sql), expected, "SQL, {workers} workers");
        assert_eq!(
            sql.schema().names().collect::<Vec<_>>(),
            ["k", "v", "k0", "v0"]
        );

        let env = super::env(workers);
        env.register_csv("L", &l, Some(kv())).unwrap();
        env.register_csv("R", &r, Some(kv())).unwrap();
        let joined = env
            .from("L")
            .left_outer_join(&env.from("R"), col("k").eq(col("k0")));
        assert_eq!(steps(&joined.execute().unwrap()), expected, "Table API");
    }
}

/// The four join kinds over tables with NULL keys (which match nothing, NULL included) and a
/// residual in the ON clause (a row whose partners all fail it is padded, as `(1, w)` on the
/// right): SQL and the Table API give the same rows.
#[test]
fn join_kinds_with_null_keys_and_a_residual() {
    let dir = tempfile::tempdir().unwrap();
    let l = write(&dir, "l.csv", "k,v\n1,a\n,b\n2,c\n");
    let r = write(&dir, "r.csv", "k,v\n1,x\n,y\n3,z\n1,w\n");
    let cases: [(
        &str,
        fn(&Table, &Table, differential_temporal::expr::Expr) -> Table,
        &[&str],
    ); 4] = [
        ("INNER", |a, b, p| a.join(b, p), &["1,a,1,x"]),
        (
            "LEFT",
            |a, b, p| a.left_outer_join(b, p),
            &[",b,,", "1,a,1,x", "2,c,,"],
        ),
        (
            "RIGHT",
            |a, b, p| a.right_outer_join(b, p),
            &[",,,y", ",,1,w", ",,3,z", "1,a,1,x"],
        ),
        (
            "FULL OUTER",
            |a, b, p| a.full_outer_join(b, p),
            &[",,,y", ",,1,w", ",,3,z", ",b,,", "1,a,1,x", "2,c,,"],
        ),
    ];
    for workers in [1, 2] {
        let env = env(workers);
        env.register_csv("L", &l, Some(kv())).unwrap();
        env.register_csv("R", &r, Some(kv())).unwrap();
        for (kind, api, want) in cases {
            let query = format!("SELECT * FROM L {kind} JOIN R ON L.k = R.k AND R.v <> 'w'");
            let sql = env.sql_query(&query).unwrap().execute().unwrap();
            assert_eq!(sql.rows_as_text(), want, "{query}, {workers} workers");
            if kind == "INNER" {
                // The comma join: the WHERE conjuncts over both tables are its condition.
                let comma = "SELECT * FROM L, R WHERE L.k = R.k AND R.v <> 'w'";
                let rows = env.sql_query(comma).unwrap().execute().unwrap();
                assert_eq!(rows.rows_as_text(), want, "{comma}");
            }
            let predicate = col("k").eq(col("k0")).and(col("v0").ne(lit("w")));
            let table = api(&env.from("L"), &env.from("R"), predicate);
            assert_eq!(table.execute().unwrap().rows_as_text(), want, "{kind}");
            let explain = table.explain().unwrap();
            assert!(
                explain.starts_with(&format!(
                    "Join(kind={}, keys=[k=k0], residual=[v0 <> 'w'])",
                    kind.split(' ').next().unwrap()
                )),
                "{explain}"
            );
        }
    }
}

/// What is refused, with messages that say why: a join without an equality predicate (Flink's
/// words; `ON`, `CROSS JOIN` or a comma join's WHERE), a column both sides have left unqualified, a set operation over different columns
/// (naming both sides), a temporal join that is RIGHT or FULL.
#[test]
fn refusals_name_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let l = write(&dir, "l.csv", "k,v\n1,a\n");
    let env = TableEnv::new();
    env.register_csv("L", &l, Some(kv())).unwrap();
    env.register_csv("R", &l, Some(kv())).unwrap();
    let error = |query: &str| env.sql_query(query).err().unwrap().to_string();
    assert_eq!(
        error("SELECT * FROM L JOIN R ON L.k > R.k"),
        "SQL validation error at line 1, column 27: Join: Invalid join condition: L.k > R.k. At least one equi-join predicate is required."
    );
    assert_eq!(
        error("SELECT * FROM L CROSS JOIN R"),
        "SQL validation error at line 1, column 28: Join: Invalid join condition: TRUE. At least one equi-join predicate is required."
    );
    assert_eq!(
        error("SELECT * FROM L, R WHERE L.v = 'a' AND L.k < R.k"),
        "SQL validation error at line 1, column 26: Join: Invalid join condition: L.v = 'a' AND L.k < R.k. At least one equi-join predicate is required."
    );
    assert_eq!(
        error("SELECT k FROM L JOIN R ON L.k = R.k"),
        "SQL validation error at line 1, column 8: Column 'k' is ambiguous: it is a column of L and R; qualify it"
    );
    assert_eq!(
        error("SELECT k FROM L UNION SELECT k, v FROM R"),
        "SQL validation error at line 1, column 1: SetOp: UNION: the inputs have 1 and 2 columns, a set operation needs as many on each side; the left side is [k BIGINT], the right side is [k BIGINT, v STRING]"
    );
    assert_eq!(
        error("SELECT k FROM L EXCEPT ALL SELECT v FROM R"),
        "SQL validation error at line 1, column 1: SetOp: EXCEPT ALL: column 1 has type BIGINT on the left ('k') and STRING on the right ('v'); the left side is [k BIGINT], the right side is [v STRING]"
    );
    let api = env
        .from("L")
        .join(&env.from("R"), col("k").lt(col("k0")))
        .execute()
        .unwrap_err();
    assert_eq!(
        api.to_string(),
        "join: Join: Invalid join condition: k < k0. At least one equi-join predicate is required."
    );
    let api = env
        .from("L")
        .union(&env.from("R").select([col("v")]))
        .execute();
    assert!(api
        .unwrap_err()
        .to_string()
        .starts_with("union: SetOp: UNION: the inputs have 2 and 1 columns"));
}

/// An interval condition (`BETWEEN r.rt - INTERVAL .. AND r.rt + INTERVAL ..`, or `>=`/`<=`)
/// runs today as a regular join with the bounds as its residual: exact at every system time,
/// INNER and outer, but without the interval join's state freed by the watermark (issue 13).
#[test]
fn interval_conditions_run_as_a_regular_join() {
    let dir = tempfile::tempdir().unwrap();
    let l = write(
        &dir,
        "l.csv",
        "id,k,rt\n1,a,2024-01-01 10:00:00\n2,a,2024-01-01 10:05:00\n3,b,2024-01-01 10:00:00\n",
    );
    let r = write(
        &dir,
        "r.csv",
        "id,k,rt\n10,a,2024-01-01 10:00:30\n11,a,2024-01-01 10:02:00\n12,b,2024-01-01 10:03:00\n",
    );
    let env = env(2);
    env.execute_sql(&format!(
        "CREATE TABLE L (id INT, k STRING, rt TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '{l}', 'format' = 'csv');
         CREATE TABLE R (id INT, k STRING, rt TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '{r}', 'format' = 'csv');"
    ))
    .unwrap();
    let between = "L.rt BETWEEN R.rt - INTERVAL '1' MINUTE AND R.rt + INTERVAL '1' MINUTE";
    let rows = |sql: String| last_rows(&env, &sql).rows_as_text();
    assert_eq!(
        rows(format!(
            "SELECT L.id, R.id FROM L JOIN R ON L.k = R.k AND {between}"
        )),
        ["1,10"]
    );
    assert_eq!(
        rows(format!(
            "SELECT L.id, R.id FROM L LEFT JOIN R ON L.k = R.k AND {between}"
        )),
        ["1,10", "2,", "3,"]
    );
    let bounds = "L.rt >= R.rt - INTERVAL '2' MINUTE AND L.rt <= R.rt + INTERVAL '3' MINUTE";
    assert_eq!(
        rows(format!(
            "SELECT L.id, R.id FROM L JOIN R ON L.k = R.k AND {bounds}"
        )),
        ["1,10", "1,11", "2,11"]
    );
}
