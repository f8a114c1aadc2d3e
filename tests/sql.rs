//! Flink SQL (issue 10): the seed pages' SQL run verbatim but for the `WITH` options (files
//! under `tests/sql_seed/`), the cases B09 and B13 as SQL, and SQL against the Table API (the
//! same plan for each golden query), through `TableEnv::execute_sql` / `sql_query`.

use differential_temporal::expr::{call, col};
use differential_temporal::plan::{DedupOrder, JoinKind, Keep};
use differential_temporal::sql::StatementResult;
use differential_temporal::table::{TableEnv, TableResult};

const SEED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sql_seed");

/// An environment on `workers` threads where every CSV record is its own epoch (the changelog
/// shows every intermediate update).
fn env(workers: usize) -> TableEnv {
    TableEnv::new().with_workers(workers).with_block_bytes(1)
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
            "SELECT *, ROW_NUMBER() OVER (PARTITION BY currency ORDER BY update_time) AS rn FROM currency_rates QUALIFY rn <= 3",
            "SQL validation error at line 1, column 11: ROW_NUMBER() is supported as Flink's deduplication only: the outer query must filter WHERE rn = 1 (Top-N is not supported)",
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
    // Window table-valued functions parse (named or positional arguments, `TABLE t`); the
    // windows themselves are not supported yet.
    assert_eq!(
        env.execute_sql("SELECT * FROM TABLE(TUMBLE(DATA => TABLE orders, TIMECOL => DESCRIPTOR(order_time), SIZE => INTERVAL '10' MINUTES))")
            .err()
            .unwrap()
            .to_string(),
        "SQL validation error at line 1, column 21: the window table-valued function TUMBLE is not supported yet"
    );
}

const B_ORDERS: &str = "op,order_id,currency,currency_no,amount,order_time
+I,1,Euro,no1,12,2020-08-15 00:01:00
+I,2,US Dollar,no1,1,2020-08-15 00:02:00
+I,3,RMB,no1,40,2020-08-15 00:03:00
+I,4,Euro,no1,14,2020-08-16 00:04:00
-U,2,US Dollar,no1,1,2020-08-16 00:03:00
+U,2,US Dollar,no1,18,2020-08-16 00:03:00
+I,5,RMB,no1,40,2020-08-16 00:03:00
+I,6,RMB,no1,40,2020-08-16 00:04:00
-D,6,RMB,no1,40,2020-08-16 00:04:00
";

const B_ORDERS_DDL: &str = "CREATE TABLE orders_rowtime (order_id BIGINT, currency STRING,
    currency_no STRING, amount BIGINT, order_time TIMESTAMP(3),
    PRIMARY KEY (order_id) NOT ENFORCED, WATERMARK FOR order_time AS order_time)
  WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv');";

const B_JOIN: &str =
    "SELECT o.order_id, o.currency, o.amount, o.order_time, r.rate, r.currency_time
FROM orders_rowtime AS o {kind} JOIN {build}
  FOR SYSTEM_TIME AS OF o.order_time AS r
  ON o.currency = r.currency";

fn b_join(kind: &str, build: &str) -> String {
    B_JOIN.replace("{kind}", kind).replace("{build}", build)
}

/// The table an upsert sink with primary key `order_id` (the first column) holds after the
/// changelog, as the cases compare it: a `-U` or `-D` removes its key's row (the probe's `-U`
/// of order 2 carries a new order time, so it retracts by key, not by content).
fn upsert_sink(env: &TableEnv, sql: &str) -> Vec<String> {
    let result = last_rows(env, sql);
    // Within one system time the changes are one consolidated update: retractions first.
    let mut lines: Vec<(u64, bool, String)> = result
        .changelog()
        .iter()
        .zip(changelog_text(&result))
        .map(|((time, change), line)| (*time, change.kind.is_accumulate(), line))
        .collect();
    lines.sort_by_key(|(time, insert, _)| (*time, *insert));
    let mut table = std::collections::BTreeMap::new();
    for (_, insert, line) in lines {
        let row = line.split_once(',').unwrap().1;
        let key: i64 = row.split(',').next().unwrap().parse().unwrap();
        if insert {
            table.insert(key, row.to_string());
        } else {
            table.remove(&key);
        }
    }
    table.into_values().collect()
}

/// Case B09: a changelog probe against a CDC versioned table, INNER and LEFT.
#[test]
fn case_b09_cdc_versioned_table() {
    let dir = tempfile::tempdir().unwrap();
    let orders = dir.path().join("orders.csv");
    let currency = dir.path().join("currency.csv");
    std::fs::write(&orders, B_ORDERS).unwrap();
    std::fs::write(
        &currency,
        "op,currency,currency_no,rate,currency_time
+I,Euro,no1,114,2020-08-15 00:00:01
+I,US Dollar,no1,102,2020-08-15 00:00:02
+I,Yen,no1,1,2020-08-15 00:00:03
+I,RMB,no1,702,2020-08-15 00:00:04
-U,Euro,no1,114,2020-08-16 00:01:00
+U,Euro,no1,118,2020-08-16 00:01:00
-U,US Dollar,no1,102,2020-08-16 00:02:00
+U,US Dollar,no1,106,2020-08-16 00:02:00
-D,RMB,no1,702,2020-08-16 00:02:00
",
    )
    .unwrap();
    let ddl = format!(
        "{};
        CREATE TABLE versioned_currency_with_single_key (currency STRING, currency_no STRING,
            rate BIGINT, currency_time TIMESTAMP(3), PRIMARY KEY (currency) NOT ENFORCED,
            WATERMARK FOR currency_time AS currency_time - INTERVAL '10' SECOND)
          WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');",
        B_ORDERS_DDL.replace("{orders}", orders.to_str().unwrap()),
        currency.to_str().unwrap()
    );
    let inner = [
        "1,Euro,12,2020-08-15 00:01:00.000,114,2020-08-15 00:00:01.000",
        "2,US Dollar,18,2020-08-16 00:03:00.000,106,2020-08-16 00:02:00.000",
        "3,RMB,40,2020-08-15 00:03:00.000,702,2020-08-15 00:00:04.000",
        "4,Euro,14,2020-08-16 00:04:00.000,118,2020-08-16 00:01:00.000",
    ];
    for workers in [1, 2] {
        let env = env(workers);
        env.execute_sql(&ddl).unwrap();
        let build = "versioned_currency_with_single_key";
        assert_eq!(upsert_sink(&env, &b_join("", build)), inner);
        let mut left: Vec<String> = inner.iter().map(|s| s.to_string()).collect();
        left.push("5,RMB,40,2020-08-16 00:03:00.000,,".into());
        assert_eq!(upsert_sink(&env, &b_join("LEFT", build)), left);
    }
}

/// Case B13: temporal joins against keep-first and keep-last deduplication views.
#[test]
fn case_b13_dedup_views() {
    let dir = tempfile::tempdir().unwrap();
    let orders = dir.path().join("orders.csv");
    let history = dir.path().join("history.csv");
    std::fs::write(&orders, B_ORDERS).unwrap();
    std::fs::write(
        &history,
        "currency,currency_no,rate,currency_time
Euro,no1,114,2020-08-15 00:00:01
US Dollar,no1,102,2020-08-15 00:00:02
Yen,no1,1,2020-08-15 00:00:03
RMB,no1,702,2020-08-15 00:00:04
Euro,no1,118,2020-08-16 00:01:00
US Dollar,no1,102,2020-08-16 00:02:00
US Dollar,no1,106,2020-08-16 00:02:00
",
    )
    .unwrap();
    let ddl = format!(
        "{};
        CREATE TABLE currency_history (currency STRING, currency_no STRING, rate BIGINT,
            currency_time TIMESTAMP(3),
            WATERMARK FOR currency_time AS currency_time - INTERVAL '0.001' SECOND)
          WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
        CREATE VIEW currency_deduplicated_first_row AS
        SELECT currency, currency_no, rate, currency_time FROM
          (SELECT *, ROW_NUMBER() OVER (PARTITION BY currency ORDER BY currency_time) AS rowNum
           FROM currency_history) T
        WHERE rowNum = 1;
        CREATE VIEW currency_deduplicated_last_row AS
        SELECT currency, currency_no, rate, currency_time FROM
          (SELECT *, ROW_NUMBER() OVER (PARTITION BY currency ORDER BY currency_time DESC) AS rowNum
           FROM currency_history) T
        WHERE rowNum = 1;",
        B_ORDERS_DDL.replace("{orders}", orders.to_str().unwrap()),
        history.to_str().unwrap()
    );
    for workers in [1, 2] {
        let env = env(workers);
        env.execute_sql(&ddl).unwrap();
        assert_eq!(
            upsert_sink(&env, &b_join("LEFT", "currency_deduplicated_first_row")),
            vec![
                "1,Euro,12,2020-08-15 00:01:00.000,114,2020-08-15 00:00:01.000",
                "2,US Dollar,18,2020-08-16 00:03:00.000,102,2020-08-15 00:00:02.000",
                "3,RMB,40,2020-08-15 00:03:00.000,702,2020-08-15 00:00:04.000",
                "4,Euro,14,2020-08-16 00:04:00.000,114,2020-08-15 00:00:01.000",
                "5,RMB,40,2020-08-16 00:03:00.000,702,2020-08-15 00:00:04.000",
            ]
        );
        assert_eq!(
            upsert_sink(&env, &b_join("", "currency_deduplicated_last_row")),
            vec![
                "1,Euro,12,2020-08-15 00:01:00.000,114,2020-08-15 00:00:01.000",
                "2,US Dollar,18,2020-08-16 00:03:00.000,106,2020-08-16 00:02:00.000",
                "3,RMB,40,2020-08-15 00:03:00.000,702,2020-08-15 00:00:04.000",
                "4,Euro,14,2020-08-16 00:04:00.000,118,2020-08-16 00:01:00.000",
                "5,RMB,40,2020-08-16 00:03:00.000,702,2020-08-15 00:00:04.000",
            ]
        );
    }
}

/// `INSERT INTO` a filesystem table writes its CSV; `EXPLAIN` gives the plan.
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

/// Case B15: temporal table functions over a filtered history, and two nested in one query.
#[test]
fn case_b15_temporal_table_functions() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    };
    let ms = |m: u32| format!("1970-01-01 00:00:00.00{m}");
    let orders = file(
        "orders.csv",
        &format!(
            "amount,currency,rowtime\n2,Euro,{}\n1,US Dollar,{}\n50,Yen,{}\n3,Euro,{}\n",
            ms(2),
            ms(3),
            ms(4),
            ms(5)
        ),
    );
    let rates = file(
        "rates.csv",
        &format!(
            "currency,rate,rowtime\nUS Dollar,102,{}\nEuro,114,{}\nYen,1,{}\nEuro,116,{}\nEuro,119,{}\n",
            ms(1), ms(1), ms(1), ms(5), ms(7)
        ),
    );
    let orders2 = file(
        "orders2.csv",
        &format!(
            "orderId,productId,amount,rowtime\n1,A1,2,{}\n2,A2,1,{}\n3,A4,50,{}\n4,A1,3,{}\n",
            ms(2),
            ms(3),
            ms(4),
            ms(5)
        ),
    );
    let prices = file(
        "prices.csv",
        &format!(
            "productId,currency,price,rowtime\nA2,US Dollar,10.2,{}\nA1,Euro,11.4,{}\nA4,Yen,1.0,{}\nA1,Euro,11.6,{}\nA1,Euro,11.9,{}\n",
            ms(1), ms(1), ms(1), ms(5), ms(7)
        ),
    );
    let with = |path: &str| {
        format!("WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')")
    };
    let ddl = format!(
        "CREATE TABLE Orders (amount INT, currency STRING, rowtime TIMESTAMP(3), WATERMARK FOR rowtime AS rowtime - INTERVAL '10' SECOND) {};
         CREATE TABLE RatesHistory (currency STRING, rate INT, rowtime TIMESTAMP(3), WATERMARK FOR rowtime AS rowtime - INTERVAL '10' SECOND) {};
         CREATE TABLE Orders2 (orderId INT, productId STRING, amount INT, rowtime TIMESTAMP(3), WATERMARK FOR rowtime AS rowtime - INTERVAL '10' SECOND) {};
         CREATE TABLE PricesHistory (productId STRING, currency STRING, price DOUBLE, rowtime TIMESTAMP(3), WATERMARK FOR rowtime AS rowtime - INTERVAL '10' SECOND) {};
         CREATE VIEW FilteredRatesHistory AS SELECT * FROM RatesHistory WHERE rate > 110;
         CREATE TEMPORAL TABLE FUNCTION FilteredRates FOR FilteredRatesHistory TIME rowtime KEY currency;
         CREATE TEMPORAL TABLE FUNCTION Rates FOR RatesHistory TIME rowtime KEY currency;
         CREATE TEMPORAL TABLE FUNCTION Prices FOR PricesHistory TIME rowtime KEY productId;",
        with(&orders), with(&rates), with(&orders2), with(&prices)
    );
    for workers in [1, 2] {
        let env = env(workers);
        env.execute_sql(&ddl).unwrap();
        let filtered = last_rows(
            &env,
            "SELECT o.amount * r.rate AS amount
             FROM Orders AS o, LATERAL TABLE (FilteredRates(o.rowtime)) AS r
             WHERE r.currency = o.currency",
        );
        assert_eq!(filtered.rows_as_text(), vec!["228", "348"]);
        let nested = last_rows(
            &env,
            "SELECT o.orderId, (o.amount * p.price * r.rate) AS total_price
             FROM Orders2 AS o, LATERAL TABLE (Prices(o.rowtime)) AS p, LATERAL TABLE (Rates(o.rowtime)) AS r
             WHERE o.productId = p.productId AND r.currency = p.currency",
        );
        assert_eq!(
            nested.rows_as_text(),
            vec![
                "1,2599.2000000000003",
                "2,1040.3999999999999",
                "3,50.0",
                "4,4036.7999999999997"
            ]
        );
    }
}

/// Cases B01 and B06 as SQL over files: the temporal join's version choice with `-U/+U` at one
/// time, a `-D` as a version (a probe at the delete's time sees no row), and the equal-time
/// boundary; the final tables of INNER and LEFT (the watermark-driven emission times of the
/// cases are the operator tests' concern).
#[test]
fn cases_b01_b06_as_sql() {
    let ts = |ms: u32| format!("1970-01-01 00:00:00.{ms:03}");
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, header: &str, rows: &[(&str, u32, &str, &str)]| {
        let path = dir.path().join(name);
        let mut text = format!("{header}\n");
        for (op, time, key, val) in rows {
            let op = if op.is_empty() {
                String::new()
            } else {
                format!("{op},")
            };
            text.push_str(&format!("{op}{},{key},{val}\n", ts(*time)));
        }
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let ddl = |l: &str, r: &str| {
        format!(
            "CREATE TABLE L (`time` TIMESTAMP(3), key STRING, val STRING, WATERMARK FOR `time` AS `time`)
               WITH ('connector' = 'filesystem', 'path' = '{l}', 'format' = 'csv');
             CREATE TABLE R (`time` TIMESTAMP(3), key STRING, val STRING, PRIMARY KEY (key) NOT ENFORCED,
               WATERMARK FOR `time` AS `time`)
               WITH ('connector' = 'filesystem', 'path' = '{r}', 'format' = 'csv');"
        )
    };
    let join = |kind: &str| {
        format!("SELECT * FROM L {kind} JOIN R FOR SYSTEM_TIME AS OF L.`time` ON L.key = R.key")
    };
    let b01 = ddl(
        &write(
            "b01_l.csv",
            "time,key,val",
            &[
                ("", 1, "k1", "1a1"),
                ("", 3, "k1", "1a3"),
                ("", 6, "k2", "2a3"),
                ("", 9, "k2", "5a11"),
                ("", 11, "k2", "5a12"),
            ],
        ),
        &write(
            "b01_r.csv",
            "op,time,key,val",
            &[
                ("+I", 2, "k1", "1a2"),
                ("+I", 4, "k2", "2a4"),
                ("-U", 7, "k2", "2a4"),
                ("+U", 7, "k2", "2a5"),
                ("-D", 9, "k2", "2a5"),
                ("+I", 10, "k2", "2a6"),
            ],
        ),
    );
    let b06 = ddl(
        &write(
            "b06_l.csv",
            "time,key,val",
            &[("", 2, "k1", "1a2"), ("", 4, "k1", "1a4")],
        ),
        &write(
            "b06_r.csv",
            "op,time,key,val",
            &[("+I", 2, "k1", "2a2"), ("-D", 4, "k1", "2a2")],
        ),
    );
    for workers in [1, 2] {
        // A fresh environment per query: each script creates L and R.
        let final_rows = |ddl: &str, kind: &str| {
            last_rows(&env(workers), &format!("{ddl}{}", join(kind))).rows_as_text()
        };
        assert_eq!(
            final_rows(&b01, ""),
            vec![
                format!("{},k1,1a3,{},k1,1a2", ts(3), ts(2)),
                format!("{},k2,2a3,{},k2,2a4", ts(6), ts(4)),
                format!("{},k2,5a12,{},k2,2a6", ts(11), ts(10)),
            ]
        );
        assert_eq!(
            final_rows(&b01, "LEFT"),
            vec![
                format!("{},k1,1a1,,,", ts(1)),
                format!("{},k1,1a3,{},k1,1a2", ts(3), ts(2)),
                format!("{},k2,2a3,{},k2,2a4", ts(6), ts(4)),
                format!("{},k2,5a11,,,", ts(9)),
                format!("{},k2,5a12,{},k2,2a6", ts(11), ts(10)),
            ]
        );
        assert_eq!(
            final_rows(&b06, ""),
            vec![format!("{},k1,1a2,{},k1,2a2", ts(2), ts(2))]
        );
        assert_eq!(
            final_rows(&b06, "LEFT"),
            vec![
                format!("{},k1,1a2,{},k1,2a2", ts(2), ts(2)),
                format!("{},k1,1a4,,,", ts(4)),
            ]
        );
    }
}

/// Case A03 as SQL, as the case states it: `INSERT INTO` a sink of the keep-last deduplication
/// on rowtime, ties at one rowtime won by the later arrival; the sink's file is the case's raw
/// changelog (rows arrive one per epoch, so its order is the arrival order).
#[test]
fn case_a03_insert_into_dedup_sink() {
    let dir = tempfile::tempdir().unwrap();
    let (input, sink) = (dir.path().join("t.csv"), dir.path().join("sink.csv"));
    let rows = [
        (1, 1, "Hi", 1),
        (1, 3, "Hello", 3),
        (1, 2, "Hello world", 2),
        (2, 3, "I am fine.", 3),
        (2, 6, "Comment#1", 6),
        (3, 5, "Comment#2", 5),
        (3, 4, "Comment#2", 4),
        (4, 4, "Comment#3", 4),
    ];
    let mut text = String::from("a,b,c,rowtime\n");
    for (a, b, c, ms) in rows {
        text.push_str(&format!("{a},{b},{c},1970-01-01 00:00:00.{ms:03}\n"));
    }
    std::fs::write(&input, text).unwrap();
    for workers in [1, 2] {
        let env = env(workers);
        env.execute_sql(&format!(
            "CREATE TABLE T (a INT, b INT, c STRING, rowtime TIMESTAMP(3), WATERMARK FOR rowtime AS rowtime)
               WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
             CREATE TABLE rowtime_sink (a INT, b INT, c STRING, rowtime TIMESTAMP(3))
               WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
             INSERT INTO rowtime_sink
             SELECT a, b, c, rowtime FROM (
               SELECT *, ROW_NUMBER() OVER (PARTITION BY b ORDER BY rowtime DESC) AS rowNum FROM T)
             WHERE rowNum = 1",
            input.display(),
            sink.display()
        ))
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&sink).unwrap(),
            "op,a,b,c,rowtime
+I,1,1,Hi,1970-01-01 00:00:00.001
+I,1,3,Hello,1970-01-01 00:00:00.003
+I,1,2,Hello world,1970-01-01 00:00:00.002
-U,1,3,Hello,1970-01-01 00:00:00.003
+U,2,3,I am fine.,1970-01-01 00:00:00.003
+I,2,6,Comment#1,1970-01-01 00:00:00.006
+I,3,5,Comment#2,1970-01-01 00:00:00.005
+I,3,4,Comment#2,1970-01-01 00:00:00.004
-U,3,4,Comment#2,1970-01-01 00:00:00.004
+U,4,4,Comment#3,1970-01-01 00:00:00.004
",
            "{workers} worker(s)"
        );
    }
}
