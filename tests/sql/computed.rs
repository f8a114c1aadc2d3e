//! Computed columns of `CREATE TABLE` (`c AS expr`, a computed rowtime) and the `PROCTIME()`
//! attribute: a lookup join and case A07's deduplications by arrival, as SQL.

use differential_temporal::session::StatementResult;

use super::{changelog_text, env, last_rows, seed_script};

/// Computed columns in declared order, and a computed rowtime used by a temporal join.
#[test]
fn computed_columns_and_a_computed_rowtime() {
    let dir = tempfile::tempdir().unwrap();
    let orders = dir.path().join("orders.csv");
    let rates = dir.path().join("rates.csv");
    std::fs::write(
        &orders,
        "price,qty,cur,s\n3,2,EUR,2024-01-01 10:15:00\n5,4,EUR,2024-01-01 11:00:00\n7,1,USD,2024-01-01 10:30:00\n",
    )
    .unwrap();
    std::fs::write(
        &rates,
        "cur,rate,t\nEUR,114,2024-01-01 09:00:00\nUSD,102,2024-01-01 09:00:00\nEUR,116,2024-01-01 10:45:00\n",
    )
    .unwrap();
    let ddl = format!(
        "CREATE TABLE orders (price INT, qty INT, cost AS price * qty, cur STRING, s STRING,
            ts AS TO_TIMESTAMP(s), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
          WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
         CREATE TABLE rates (cur STRING, rate INT, t TIMESTAMP(3), PRIMARY KEY (cur) NOT ENFORCED,
            WATERMARK FOR t AS t)
          WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');",
        orders.display(),
        rates.display()
    );
    for workers in [1, 2] {
        let env = env(workers);
        env.execute_sql(&ddl).unwrap();
        let all = last_rows(&env, "SELECT * FROM orders");
        assert_eq!(
            all.rows_as_text(),
            vec![
                "3,2,6,EUR,2024-01-01 10:15:00,2024-01-01 10:15:00.000",
                "5,4,20,EUR,2024-01-01 11:00:00,2024-01-01 11:00:00.000",
                "7,1,7,USD,2024-01-01 10:30:00,2024-01-01 10:30:00.000",
            ]
        );
        let schema = all.schema();
        assert_eq!(
            schema.names().collect::<Vec<_>>(),
            ["price", "qty", "cost", "cur", "s", "ts"]
        );
        let rowtime = schema.rowtime.clone().unwrap();
        assert_eq!((rowtime.column, rowtime.delay_ms), (5, 5000));
        let joined = last_rows(
            &env,
            "SELECT o.cost, r.rate, o.ts FROM orders AS o
             JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur",
        );
        assert_eq!(
            joined.rows_as_text(),
            vec![
                "6,114,2024-01-01 10:15:00.000",
                "7,102,2024-01-01 10:30:00.000",
                "20,116,2024-01-01 11:00:00.000",
            ],
            "{workers} workers"
        );
    }
    let env = env(1);
    env.execute_sql(&ddl).unwrap();
    let StatementResult::Explain(plan) = env
        .execute_sql("EXPLAIN SELECT cost FROM orders")
        .unwrap()
        .remove(0)
    else {
        panic!()
    };
    assert_eq!(
        plan.trim_end(),
        "Project(columns=[cost]) -> [cost INT] append-only
  Project(columns=[price, qty, cost, cur, s, ts]) -> [price INT, qty INT, cost INT, cur STRING, s STRING, ts TIMESTAMP(3)] append-only rowtime=ts
    Map(exprs=[price * qty AS cost, TO_TIMESTAMP(s) AS ts]) -> [price INT, qty INT, cur STRING, s STRING, cost INT, ts TIMESTAMP(3)] append-only
      Scan(table=[orders]) -> [price INT, qty INT, cur STRING, s STRING] append-only"
    );
}

/// `FOR SYSTEM_TIME AS OF o.pt` with `pt AS PROCTIME()`: a lookup join, each order joined with
/// the rate current when it arrives (every record is its own epoch; rates line `n` arrives with
/// orders line `n`).
#[test]
fn proctime_lookup_join() {
    let dir = tempfile::tempdir().unwrap();
    let orders = dir.path().join("orders.csv");
    let rates = dir.path().join("rates.csv");
    std::fs::write(&orders, "id,cur\n1,EUR\n2,EUR\n3,USD\n4,EUR\n").unwrap();
    std::fs::write(&rates, "cur,rate\nEUR,114\nUSD,102\nEUR,116\n").unwrap();
    let script = format!(
        "CREATE TABLE orders (id INT, cur STRING, pt AS PROCTIME())
          WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
         CREATE TABLE rates (cur STRING, rate INT, PRIMARY KEY (cur) NOT ENFORCED)
          WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
         SELECT o.id, r.rate FROM orders AS o
         LEFT JOIN rates FOR SYSTEM_TIME AS OF o.pt AS r ON o.cur = r.cur",
        orders.display(),
        rates.display()
    );
    let result = last_rows(&env(1), &script);
    assert_eq!(
        result.rows_as_text(),
        vec!["1,114", "2,114", "3,102", "4,116"]
    );
}

/// Case A07 as SQL (`tests/sql_seed/a07_dedup_proctime.sql`), verbatim but for the `WITH`
/// options: `ROW_NUMBER() OVER (PARTITION BY b ORDER BY proctime)` keeps the first arrival per
/// key, insert-only; `ORDER BY proctime DESC` the last, with update-before.
#[test]
fn case_a07_dedup_on_proctime() {
    for workers in [1, 2] {
        let results = env(workers)
            .execute_sql(&seed_script("a07_dedup_proctime.sql"))
            .unwrap();
        let [StatementResult::Ok, StatementResult::Rows(first), StatementResult::Rows(last)] =
            &results[..]
        else {
            panic!("{results:?}")
        };
        assert_eq!(
            first.rows_as_text(),
            vec![
                "1,1,Hi",
                "2,2,Hello",
                "4,3,Hello world, how are you?",
                "7,4,Comment#1",
                "11,5,Comment#5",
                "16,6,Comment#10",
            ],
            "{workers} workers"
        );
        assert!(changelog_text(first).iter().all(|l| l.starts_with("+I,")));
        assert_eq!(
            last.rows_as_text(),
            vec![
                "1,1,Hi",
                "3,2,Hello world",
                "6,3,Luke Skywalker",
                "10,4,Comment#4",
                "15,5,Comment#9",
                "21,6,Comment#15",
            ],
            "{workers} workers"
        );
        let b2: Vec<String> = changelog_text(last)
            .into_iter()
            .filter(|l| l.split(',').nth(2) == Some("2"))
            .collect();
        assert_eq!(b2, ["+I,2,2,Hello", "-U,2,2,Hello", "+U,3,2,Hello world"]);
    }
}
