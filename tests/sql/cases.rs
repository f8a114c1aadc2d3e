//! The worked cases as SQL over files: A01, A03, B01, B02, B06, B09, B13 and B15, each with exact rows on
//! 1 and 2 workers.

use differential_temporal::table::TableEnv;

use super::{changelog_text, env, last_rows, seed_script};

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

/// Cases B01, B02 and B06 as SQL over files: the temporal join's version choice with `-U/+U`
/// at one time, a `-D` as a version (a probe at the delete's time sees no row), an upsert probe
/// (`+U` without `-U`) against a build side without `-U` (B02: the same tables as B01, its
/// `+U` probe row forwarded as `+U`), and the equal-time boundary; the final tables of INNER and
/// LEFT (the watermark-driven emission times of the cases are the operator tests' concern).
#[test]
fn cases_b01_b02_b06_as_sql() {
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
    let b02 = ddl(
        &write(
            "b02_l.csv",
            "op,time,key,val",
            &[
                ("+I", 1, "k1", "1a1"),
                ("+U", 3, "k1", "1a3"),
                ("+I", 6, "k2", "2a3"),
                ("+I", 9, "k2", "5a11"),
                ("+I", 11, "k2", "5a12"),
            ],
        ),
        &write(
            "b02_r.csv",
            "op,time,key,val",
            &[
                ("+I", 2, "k1", "1a2"),
                ("+I", 4, "k2", "2a4"),
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
        for tables in [&b01, &b02] {
            assert_eq!(
                final_rows(tables, ""),
                vec![
                    format!("{},k1,1a3,{},k1,1a2", ts(3), ts(2)),
                    format!("{},k2,2a3,{},k2,2a4", ts(6), ts(4)),
                    format!("{},k2,5a12,{},k2,2a6", ts(11), ts(10)),
                ]
            );
            assert_eq!(
                final_rows(tables, "LEFT"),
                vec![
                    format!("{},k1,1a1,,,", ts(1)),
                    format!("{},k1,1a3,{},k1,1a2", ts(3), ts(2)),
                    format!("{},k2,2a3,{},k2,2a4", ts(6), ts(4)),
                    format!("{},k2,5a11,,,", ts(9)),
                    format!("{},k2,5a12,{},k2,2a6", ts(11), ts(10)),
                ]
            );
        }
        // B02's changelogs, as the case lists them: the probe's `+U` is forwarded.
        let b02_changelog =
            |kind: &str| changelog_text(&last_rows(&env(workers), &format!("{b02}{}", join(kind))));
        let (k1, k2) = (
            format!("{},k1,1a3,{},k1,1a2", ts(3), ts(2)),
            format!("{},k2,2a3,{},k2,2a4", ts(6), ts(4)),
        );
        let k2_last = format!("{},k2,5a12,{},k2,2a6", ts(11), ts(10));
        assert_eq!(
            b02_changelog(""),
            [
                format!("+U,{k1}"),
                format!("+I,{k2}"),
                format!("+I,{k2_last}")
            ]
        );
        assert_eq!(
            b02_changelog("LEFT"),
            [
                format!("+I,{},k1,1a1,,,", ts(1)),
                format!("+U,{k1}"),
                format!("+I,{k2}"),
                format!("+I,{},k2,5a11,,,", ts(9)),
                format!("+I,{k2_last}"),
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
        // INSERT INTO appends: each run writes a new sink file.
        let _ = std::fs::remove_file(&sink);
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

/// Case A01 as SQL (`tests/sql_seed/a01_versioned_table_as_of.sql`, the case's data in
/// `tests/data/`): every probe of the products' versioned table, the case's expected table
/// with `t` printed as the TIMESTAMP(3) it is (the case writes times of day on one day).
#[test]
fn case_a01_versioned_table_as_of() {
    let expected: Vec<String> = [
        "00:00:59,p_001,,,",
        "00:01:00,p_001,scooter,11.11,00:01:00",
        "00:01:00,p_002,,,",
        "10:00:00,p_001,scooter,11.11,00:01:00",
        "10:00:00,p_002,basketball,23.11,00:02:00",
        "11:59:59,p_001,scooter,11.11,00:01:00",
        "12:00:00,p_001,scooter,12.99,12:00:00",
        "12:00:00,p_002,basketball,19.99,12:00:00",
        "13:00:00,p_001,scooter,12.99,12:00:00",
        "13:00:00,p_002,basketball,19.99,12:00:00",
        "18:00:00,p_001,,,",
        "18:00:00,p_002,basketball,19.99,12:00:00",
        "19:00:00,p_001,,,",
    ]
    .iter()
    .map(|row| {
        let (t, rest) = row.split_once(',').unwrap();
        format!("1970-01-01 {t}.000,{rest}")
    })
    .collect();
    for workers in [1, 2] {
        let result = last_rows(&env(workers), &seed_script("a01_versioned_table_as_of.sql"));
        assert_eq!(result.rows_as_text(), expected, "{workers} workers");
    }
}
