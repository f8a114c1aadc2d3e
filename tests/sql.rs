//! Flink SQL (issue 10): the seed pages' SQL run verbatim but for the `WITH` options (files
//! under `tests/sql_seed/`), SQL against the Table API (the same plan for each golden query),
//! the query forms, through `TableEnv::execute_sql` / `sql_query`; the cases of
//! `../shared/cases` as SQL are in `sql/cases.rs`, those of regular joins and set operations
//! (issue 13, SQL beside the Table API) in `sql/joins.rs`, regular joins with a state TTL in `sql/join_ttl.rs`, ordering (E05) in `sql/ordering.rs`, merge engines (issue 11) in `sql/merge_engines.rs`, deduplication by rowtime in both modes in `sql/dedup.rs`, windows (issue 12, E03) in `sql/windows.rs`, a window TVF's rows and window Top-N over them in `sql/window_tvf.rs`,
//! the Nexmark queries over the `nexmark` connector (issue 12) in `sql/nexmark.rs`.

use differential_temporal::expr::{call, col};
use differential_temporal::plan::{DedupOrder, JoinKind, Keep};
use differential_temporal::render::ExecutionMode;
use differential_temporal::session::StatementResult;
use differential_temporal::table::{TableEnv, TableResult};

#[path = "sql/asof.rs"]
mod asof;
#[path = "sql/cases.rs"]
mod cases;
#[path = "sql/computed.rs"]
mod computed;
#[path = "sql/connectors.rs"]
mod connectors;
#[path = "sql/count_windows.rs"]
mod count_windows;
#[path = "sql/datagen.rs"]
mod datagen;
#[path = "sql/dedup.rs"]
mod dedup;
#[path = "sql/functions.rs"]
mod functions;
#[path = "sql/inputs.rs"]
mod inputs;
#[path = "sql/interval.rs"]
mod interval;
#[path = "sql/join_ttl.rs"]
mod join_ttl;
#[path = "sql/joins.rs"]
mod joins;
#[path = "sql/merge_engines.rs"]
mod merge_engines;
#[path = "sql/nexmark.rs"]
mod nexmark;
#[path = "sql/ordering.rs"]
mod ordering;
#[path = "sql/over.rs"]
mod over;
#[path = "sql/proctime_windows.rs"]
mod proctime_windows;
#[path = "sql/top_n.rs"]
mod top_n;
#[path = "sql/window_tvf.rs"]
mod window_tvf;
#[path = "sql/windows.rs"]
mod windows;

const SEED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sql_seed");

/// An environment on `workers` threads where every CSV record is its own epoch (the changelog
/// shows every intermediate update).
fn env(workers: usize) -> TableEnv {
    TableEnv::new().with_workers(workers).with_block_bytes(1)
}

/// Orders (`table_api_orders.csv`): `x,1,10` at 10:00, `y,2,20` at 10:05, `x,3,30` at 10:10,
/// `x,NULL,40` at 10:15 as `(a, b, c, rowtime)`, one row an epoch, the watermark 1 s behind the
/// rowtime; queries run in `mode`.
fn orders_env(workers: usize, mode: ExecutionMode) -> TableEnv {
    let env = env(workers).with_mode(mode);
    let ddl = format!(
        "CREATE TABLE Orders (a STRING, b BIGINT, c BIGINT, rowtime TIMESTAMP(3),
           WATERMARK FOR rowtime AS rowtime - INTERVAL '1' SECOND)
         WITH ('connector' = 'filesystem', 'path' = '{SEED}/table_api_orders.csv', 'format' = 'csv')"
    );
    env.execute_sql(&ddl).unwrap();
    env
}

/// The seed script `name`, its `'path'` options pointing into `tests/sql_seed/`.
fn seed_script(name: &str) -> String {
    std::fs::read_to_string(format!("{SEED}/{name}"))
        .unwrap()
        .replace("'path' = '", &format!("'path' = '{SEED}/"))
}

/// The result of the script's last statement, which must be a query.
fn last_rows(env: &TableEnv, script: &str) -> TableResult {
    match env.execute_sql(script).unwrap().pop() {
        Some(StatementResult::Rows(rows)) => rows,
        other => panic!("the last statement is not a query: {other:?}"),
    }
}

fn changelog_text(result: &TableResult) -> Vec<String> {
    result
        .changelog()
        .iter()
        .map(|(_, change)| {
            let mut line = change.kind.to_string();
            for (d, f) in change.row.iter().zip(&result.schema().fields) {
                line.push(',');
                differential_temporal::repr::cast::format_datum(d, &f.ty.data_type, &mut line)
                    .unwrap();
            }
            line
        })
        .collect()
}

#[test]
fn seed_products_as_of_10_and_13() {
    for workers in [1, 2] {
        let result = last_rows(&env(workers), &seed_script("products.sql"));
        assert_eq!(
            result.rows_as_text(),
            vec![
                "2024-01-01 10:00:00.000,p_001,scooter,11.11",
                "2024-01-01 10:00:00.000,p_002,basketball,23.11",
                "2024-01-01 13:00:00.000,p_001,scooter,12.99",
                "2024-01-01 13:00:00.000,p_002,basketball,19.99",
            ],
            "{workers} workers"
        );
        let names: Vec<&str> = result.schema().names().collect();
        assert_eq!(names, ["t", "product_id", "product_name", "price"]);
    }
}

#[test]
fn seed_versioned_rates_view_changelog() {
    for workers in [1, 2] {
        let result = last_rows(&env(workers), &seed_script("versioned_rates.sql"));
        assert_eq!(
            changelog_text(&result),
            vec![
                "+I,Yen,102.0000000000,2024-01-01 09:00:00.000",
                "+I,Euro,114.0000000000,2024-01-01 09:00:00.000",
                "+I,USD,1.0000000000,2024-01-01 09:00:00.000",
                "-U,Euro,114.0000000000,2024-01-01 09:00:00.000",
                "+U,Euro,119.0000000000,2024-01-01 11:15:00.000",
                "+I,Pounds,108.0000000000,2024-01-01 11:49:00.000",
            ],
            "{workers} workers"
        );
        assert_eq!(result.schema().primary_key, Some(vec![0]));
    }
}

#[test]
fn seed_temporal_table_function_sum_is_1238() {
    for workers in [1, 2] {
        let result = last_rows(&env(workers), &seed_script("temporal_table_function.sql"));
        assert_eq!(
            result.rows_as_text(),
            vec!["1238.000000"],
            "{workers} workers"
        );
        assert_eq!(result.schema().names().collect::<Vec<_>>(), ["amount"]);
    }
}

/// The Table API overview's grouped count, as SQL, gives the Table API's changelog.
#[test]
fn seed_table_api_group_by_in_sql() {
    let env = env(2);
    let result = last_rows(&env, &seed_script("table_api_group_by.sql"));
    assert_eq!(result.rows_as_text(), vec!["x,2", "y,1"]);
    assert_eq!(
        changelog_text(&result),
        vec!["+I,x,1", "+I,y,1", "-U,x,1", "+U,x,2"]
    );
}

/// The Table API program and the SQL text of each golden query bind to the same plan.
#[test]
fn sql_and_table_api_build_the_same_plan() {
    let env = env(1);
    env.execute_sql(&seed_script("temporal_table_function.sql"))
        .unwrap();
    env.execute_sql(
        &seed_script("products.sql").replace("SELECT q.t", "CREATE VIEW snapshot AS SELECT q.t"),
    )
    .unwrap();
    // The temporal table function conversion.
    let sql = env
        .sql_query("SELECT SUM(amount * rate) AS amount FROM orders, LATERAL TABLE (rates(order_time)) WHERE rates.currency = orders.currency")
        .unwrap();
    let api = env
        .from("orders")
        .join_lateral(
            call("rates", [col("order_time")]),
            col("currency").eq(col("currency0")),
        )
        .select([col("amount").mul(col("rate")).sum().alias("amount")]);
    assert_eq!(sql.plan().unwrap(), api.plan().unwrap());
    // The versioned products table read through a temporal join.
    let api = env
        .from("probes")
        .temporal_join(
            &env.from("products"),
            col("product_id").eq(col("product_id0")),
            JoinKind::Left,
        )
        .select([
            col("t"),
            col("product_id"),
            col("product_name"),
            col("price"),
        ]);
    assert_eq!(env.from("snapshot").plan().unwrap(), api.plan().unwrap());
    // A grouped count.
    let sql = env
        .sql_query("SELECT currency, COUNT(amount) AS cnt FROM orders GROUP BY currency")
        .unwrap();
    let api = env
        .from("orders")
        .group_by([col("currency")])
        .select([col("currency"), col("amount").count().alias("cnt")]);
    assert_eq!(sql.plan().unwrap(), api.plan().unwrap());
    // The keep-last deduplication (the versioned view): the same rows (the SQL plan also
    // computes the ROW_NUMBER column, the constant 1, which the outer query drops).
    let sql = env
        .sql_query("SELECT currency, rate, update_time FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY currency ORDER BY update_time DESC) AS rn FROM currency_rates) WHERE rn = 1")
        .unwrap();
    let api = env
        .from("currency_rates")
        .deduplicate([col("currency")], Keep::Last, DedupOrder::EventTime)
        .select([col("currency"), col("rate"), col("update_time")]);
    assert_eq!(
        sql.execute().unwrap().rows_as_text(),
        api.execute().unwrap().rows_as_text()
    );
    assert_eq!(sql.schema().unwrap(), api.schema().unwrap());
    // The same deduplication with QUALIFY, the ROW_NUMBER call inline or as a select item:
    // the rows and schema of the subquery form (whose plan has one more identity projection).
    let subquery = env
        .sql_query("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY currency ORDER BY update_time DESC) AS rn FROM currency_rates WHERE rate > 100) WHERE rn = 1")
        .unwrap();
    let qualify = env
        .sql_query("SELECT *, ROW_NUMBER() OVER (PARTITION BY currency ORDER BY update_time DESC) AS rn FROM currency_rates WHERE rate > 100 QUALIFY rn = 1")
        .unwrap();
    let rows = qualify.execute().unwrap().rows_as_text();
    assert_eq!(
        rows,
        vec![
            "2024-01-01 09:00:00.000,US Dollar,102.0000,1",
            "2024-01-01 11:15:00.000,Euro,119.0000,1",
            "2024-01-01 11:49:00.000,Pounds,108.0000,1",
        ]
    );
    assert_eq!(rows, subquery.execute().unwrap().rows_as_text());
    assert_eq!(qualify.schema().unwrap(), subquery.schema().unwrap());
    let inline = env
        .sql_query("SELECT currency, rate, update_time FROM currency_rates QUALIFY ROW_NUMBER() OVER (PARTITION BY currency ORDER BY update_time DESC) = 1")
        .unwrap();
    assert_eq!(
        inline.execute().unwrap().rows_as_text(),
        api.execute().unwrap().rows_as_text()
    );
    for (query, error) in [
        (
            "SELECT * FROM currency_rates QUALIFY rate > 1",
            "SQL validation error at line 1, column 38: QUALIFY is supported as Flink's deduplication only: QUALIFY ROW_NUMBER() OVER (PARTITION BY key ORDER BY time_attribute) = 1",
        ),
        (
            "SELECT *, ROW_NUMBER() OVER (PARTITION BY currency ORDER BY update_time) AS rn FROM currency_rates QUALIFY rn = 1 AND rate > 1",
            "SQL validation error at line 1, column 119: QUALIFY takes the deduplication filter only (ROW_NUMBER() .. = 1); move 'rate > 1' to WHERE or an outer query",
        ),
        (
            "SELECT *, ROW_NUMBER() OVER (PARTITION BY currency ORDER BY update_time) AS rn FROM currency_rates QUALIFY rn > 3",
            "SQL validation error at line 1, column 11: ROW_NUMBER() is supported in Flink's Top-N and deduplication patterns: the outer query must filter WHERE rn <= N (or rn < N, rn = 1)",
        ),
    ] {
        assert_eq!(env.sql_query(query).err().unwrap().to_string(), error, "{query}");
    }
}

/// SQL and the Table API mix: a SQL query continued in the Table API.
#[test]
fn sql_query_continues_in_the_table_api() {
    let env = env(2);
    env.execute_sql(&seed_script("temporal_table_function.sql"))
        .unwrap();
    let euro = env
        .sql_query("SELECT amount, currency FROM orders WHERE currency = 'Euro'")
        .unwrap()
        .select([col("amount").mul(col("amount")).alias("sq")]);
    assert_eq!(
        euro.execute().unwrap().rows_as_text(),
        vec!["4.0000", "9.0000"]
    );
}

/// HAVING, DISTINCT, CASE and CAST, each with exact rows.
#[test]
fn select_forms() {
    let env = env(1);
    env.execute_sql(&seed_script("temporal_table_function.sql"))
        .unwrap();
    let rows = |sql: &str| last_rows(&env, sql).rows_as_text();
    assert_eq!(
        rows("SELECT currency, SUM(amount) AS total FROM orders GROUP BY currency HAVING COUNT(*) > 1"),
        vec!["Euro,5.00", "US Dollar,6.00"]
    );
    assert_eq!(
        rows("SELECT DISTINCT currency FROM orders WHERE amount < 10"),
        vec!["Euro", "US Dollar"]
    );
    assert_eq!(
        rows("SELECT CASE WHEN amount > 2 THEN 'big' ELSE 'small' END AS size, CAST(amount AS INT) AS n FROM orders WHERE currency <> 'Yen'"),
        vec!["big,3", "big,5", "small,1", "small,2"]
    );
    // GROUP BY expressions: the items may repeat them, and use them inside other expressions.
    assert_eq!(
        rows("SELECT UPPER(currency) AS c, amount > 2 AS big, COUNT(*) AS n FROM orders GROUP BY UPPER(currency), amount > 2"),
        vec!["EURO,false,1", "EURO,true,1", "US DOLLAR,false,1", "US DOLLAR,true,1", "YEN,true,1"]
    );
    assert_eq!(
        rows("SELECT CHAR_LENGTH(UPPER(currency)) AS len, SUM(amount) AS total FROM orders GROUP BY UPPER(currency) HAVING SUM(amount) > 5"),
        vec!["3,50.00", "9,6.00"]
    );
    assert_eq!(
        env.execute_sql("SELECT currency, COUNT(*) AS n FROM orders GROUP BY UPPER(currency)")
            .err()
            .unwrap()
            .to_string(),
        "SQL validation error at line 1, column 8: Reduce: expression 'currency' is neither in the group_by keys nor inside an aggregate function"
    );
    // TIMESTAMP_LTZ literals (Flink's session time zone is UTC here).
    assert_eq!(
        rows("SELECT currency, TIMESTAMP_LTZ '2024-01-01 10:00:00' AS t FROM orders WHERE amount > 10"),
        vec!["Yen,2024-01-01 10:00:00.000000"]
    );
    // Window table-valued functions parse (named or positional arguments, `TABLE t`); they
    // bind as window aggregations under GROUP BY (issue 12, `sql/windows.rs`), else as the
    // TVF's rows (`sql/window_tvf.rs`).
    let tvf = last_rows(&env, "SELECT * FROM TABLE(TUMBLE(DATA => TABLE orders, TIMECOL => DESCRIPTOR(order_time), SIZE => INTERVAL '10' MINUTES))");
    assert_eq!(
        tvf.schema().names().collect::<Vec<_>>(),
        [
            "order_time",
            "amount",
            "currency",
            "window_start",
            "window_end",
            "window_time"
        ]
    );
}

/// `INSERT INTO` a filesystem table writes its CSV; `EXPLAIN` gives the plan.
/// GROUP BY columns in any order of the row: consecutive ones (`a, b`) are read as one span of
/// each row, others (`c, a`, reversed and apart) column by column; both give each group once,
/// with its key in the order the query names it, on 2 workers over one row an epoch.
#[test]
fn group_by_columns_in_any_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(
        &path,
        "a,b,c\nx,1,10\ny,1,10\nx,1,10\nx,2,20\n,1,10\ny,1,20\n,,10\n",
    )
    .unwrap();
    let env = env(2);
    env.execute_sql(&format!(
        "CREATE TABLE t (a STRING, b INT, c INT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv')",
        path.display()
    ))
    .unwrap();
    let rows = |sql: &str| {
        let mut rows = last_rows(&env, sql).rows_as_text();
        rows.sort();
        rows
    };
    assert_eq!(
        rows("SELECT c, a, COUNT(*) AS n, SUM(b) AS s FROM t GROUP BY c, a"),
        ["10,,2,1", "10,x,2,2", "10,y,1,1", "20,x,1,2", "20,y,1,1"]
    );
    assert_eq!(
        rows("SELECT a, b, COUNT(*) AS n, MAX(c) AS m FROM t GROUP BY a, b"),
        [",,1,10", ",1,1,10", "x,1,2,10", "x,2,1,20", "y,1,2,20"]
    );
    assert_eq!(
        rows("SELECT c, COUNT(*) AS n FROM t GROUP BY c, a HAVING COUNT(*) > 1"),
        ["10,2", "10,2"]
    );
    let plan = env
        .sql_query("SELECT c, a, COUNT(*) AS n FROM t GROUP BY c, a")
        .unwrap()
        .explain()
        .unwrap();
    let lines: Vec<&str> = plan.lines().map(str::trim).collect();
    assert!(
        lines[1].starts_with("Reduce(group=[c, a]") && lines[2].starts_with("Scan(table=[t])"),
        "the aggregation reads the scan's rows: {plan}"
    );
}

#[test]
fn insert_into_and_explain() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("totals.csv");
    let env = env(1);
    env.execute_sql(&seed_script("temporal_table_function.sql"))
        .unwrap();
    let results = env
        .execute_sql(&format!(
            "CREATE TABLE totals (currency STRING, total DECIMAL(38, 2))
               WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
             INSERT INTO totals SELECT currency, SUM(amount) FROM orders GROUP BY currency;
             EXPLAIN SELECT currency FROM orders WHERE amount > 2;",
            out.display()
        ))
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "op,currency,total\n+I,Euro,2.00\n+I,US Dollar,1.00\n+I,Yen,50.00\n-U,Euro,2.00\n+U,Euro,5.00\n-U,US Dollar,1.00\n+U,US Dollar,6.00\n"
    );
    let StatementResult::Explain(plan) = &results[2] else {
        panic!("{:?}", results[2]);
    };
    assert!(plan.contains("Filter"), "{plan}");
}
