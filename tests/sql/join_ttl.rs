//! Regular joins with a state TTL (issue 13, Flink's `table.exec.state.ttl`), through SQL's
//! `SET` and the Table API's `with_state_ttl`, with their exact changelogs on 1 and 2 workers
//! (every CSV record, and every blank line, its own system time): a row expires from the join's
//! state after the TTL in system times without any output; a late partner no longer matches it
//! while a fresh row's partner does; a LEFT join's row stays joined (not padded) when its
//! partner expires; `'0'` turns the TTL off.

use differential_temporal::expr::col;
use differential_temporal::session::StatementResult;
use differential_temporal::table::{TableEnv, TableResult};

use super::{changelog_text, env, last_rows};

/// `1,a` at system time 0 and `2,b` at 3.
const L: &str = "k,v\n1,a\n\n\n2,b\n";
/// `1,x` at 1, the late `1,y` at 4 and `2,z` at 5.
const R: &str = "k,w\n\n1,x\n\n\n1,y\n2,z\n";

/// The changelog as `after_step,op,cells..` lines (system time `t` is step `t + 1`).
fn steps(result: &TableResult) -> Vec<String> {
    let times = result.changelog().iter().map(|(time, _)| time + 1);
    times
        .zip(changelog_text(result))
        .map(|(step, line)| format!("{step},{line}"))
        .collect()
}

/// Runs `join` (`JOIN` or `LEFT JOIN`) of L and R with `SET 'table.exec.state.ttl' = 'ttl'`
/// through SQL and the Table API on 1 and 2 workers, and checks both give `expected`.
fn check(join: &str, ttl: u64, expected: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let (l, r) = (dir.path().join("l.csv"), dir.path().join("r.csv"));
    std::fs::write(&l, L).unwrap();
    std::fs::write(&r, R).unwrap();
    let (l, r) = (l.to_string_lossy(), r.to_string_lossy());
    for workers in [1, 2] {
        let env = env(workers);
        let script = format!(
            "CREATE TABLE L (k BIGINT, v STRING) WITH ('connector' = 'filesystem', 'path' = '{l}', 'format' = 'csv');
             CREATE TABLE R (k BIGINT, w STRING) WITH ('connector' = 'filesystem', 'path' = '{r}', 'format' = 'csv');
             SET 'table.exec.state.ttl' = '{ttl}';
             SELECT * FROM L {join} R ON L.k = R.k"
        );
        let sql = last_rows(&env, &script);
        assert_eq!(
            steps(&sql),
            expected,
            "SQL {join}, TTL {ttl}, {workers} workers"
        );

        let env = env_with(workers, ttl);
        env.execute_sql(&script.replace(&format!("SET 'table.exec.state.ttl' = '{ttl}';"), ""))
            .unwrap();
        let (left, right) = (env.from("L"), env.from("R"));
        let on = col("k").eq(col("k0"));
        let joined = match join {
            "JOIN" => left.join(&right, on),
            _ => left.left_outer_join(&right, on),
        };
        let api = joined.execute().unwrap();
        assert_eq!(steps(&api), expected, "Table API {join}, TTL {ttl}");
    }
}

fn env_with(workers: usize, ttl: u64) -> TableEnv {
    env(workers).with_state_ttl(ttl)
}

/// INNER, TTL 3: `1,a` (written at 0) is gone at 3, so the late `1,y` at 4 finds no partner;
/// `2,b` (written at 3) still joins `2,z` at 5. `1,a,1,x` stays in the output.
#[test]
fn inner_join_late_partner_no_longer_matches() {
    check("JOIN", 3, &["2,+I,1,a,1,x", "6,+I,2,b,2,z"]);
}

/// LEFT, TTL 3: `1,a` is padded at 0; `1,x` joins it at 1 (retracting the padded row and
/// writing `1,a` again, as Flink's association count update does), so `1,a` is gone at 4 and
/// the late `1,y` matches nothing. When `1,x` expires (at 4) nothing is emitted: `1,a` stays
/// joined, not padded. The fresh `2,b` is padded at 3, then joined by `2,z` at 5.
#[test]
fn left_join_keeps_rows_joined_when_partners_expire() {
    check(
        "LEFT JOIN",
        3,
        &[
            "1,+I,1,a,,",
            "2,-D,1,a,,",
            "2,+I,1,a,1,x",
            "4,+I,2,b,,",
            "6,-D,2,b,,",
            "6,+I,2,b,2,z",
        ],
    );
}

/// EXPLAIN shows the TTL a join was planned with.
#[test]
fn explain_shows_the_state_ttl() {
    let dir = tempfile::tempdir().unwrap();
    let (l, r) = (dir.path().join("l.csv"), dir.path().join("r.csv"));
    std::fs::write(&l, L).unwrap();
    std::fs::write(&r, R).unwrap();
    let (l, r) = (l.to_string_lossy(), r.to_string_lossy());
    let script = format!(
        "CREATE TABLE L (k BIGINT, v STRING) WITH ('connector' = 'filesystem', 'path' = '{l}', 'format' = 'csv');
         CREATE TABLE R (k BIGINT, w STRING) WITH ('connector' = 'filesystem', 'path' = '{r}', 'format' = 'csv');
         SET 'table.exec.state.ttl' = '3';
         EXPLAIN SELECT * FROM L LEFT JOIN R ON L.k = R.k"
    );
    let env = TableEnv::new();
    let Some(StatementResult::Explain(plan)) = env.execute_sql(&script).unwrap().pop() else {
        panic!("EXPLAIN gives a plan");
    };
    // Under the projection of `SELECT *`.
    let join = plan.lines().nth(1).unwrap().trim_start();
    assert_eq!(
        join,
        "Join(kind=LEFT, keys=[k=k0], stateTtl=3 system times) -> [k BIGINT, v STRING, k0 BIGINT, w STRING] updating"
    );
}

/// `'0'` is off (Flink's default): the late `1,y` matches `1,a`.
#[test]
fn zero_is_no_ttl() {
    check("JOIN", 0, &["2,+I,1,a,1,x", "5,+I,1,a,1,y", "6,+I,2,b,2,z"]);
}

/// The option takes a whole number of system times; a duration or anything else is refused
/// with the rule, naming the value.
#[test]
fn bad_values_are_refused() {
    for value in ["1 h", "-1", "soon"] {
        let error = TableEnv::new()
            .execute_sql(&format!("SET 'table.exec.state.ttl' = '{value}'"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            format!("SQL validation error at line 1, column 1: 'table.exec.state.ttl' takes a whole number of system times (this engine's processing-time clock: one input block each, not wall-clock time), e.g. '3', or '0' for no TTL; not '{value}'"),
        );
    }
}
