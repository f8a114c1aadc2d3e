//! The `datagen` connector (issue 14): generated tables queried in SQL, the same answer on 1 and
//! 2 workers (row `i`'s values depend only on the table's name, the field and `i`).

use differential_temporal::table::TableEnv;

fn rows(env: &TableEnv, query: &str) -> Vec<String> {
    env.sql_query(query)
        .unwrap()
        .execute()
        .unwrap()
        .rows_as_text()
}

/// A sequence id 1..1000: the count, min, max and sum are exact, whatever the workers and the
/// blocks (1024 rows a system time by default; one at `with_block_bytes(1)`).
#[test]
fn sequence_aggregates_are_exact() {
    for (workers, block_bytes) in [(1, 64 << 10), (2, 64 << 10), (2, 1), (3, 700)] {
        let env = TableEnv::new()
            .with_workers(workers)
            .with_block_bytes(block_bytes);
        env.execute_sql(
            "CREATE TABLE t (id BIGINT NOT NULL, v INT) WITH ('connector' = 'datagen',
               'rows-per-second' = '100000000',
               'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000',
               'fields.v.min' = '0', 'fields.v.max' = '9')",
        )
        .unwrap();
        assert_eq!(
            rows(&env, "SELECT COUNT(*), MIN(id), MAX(id), SUM(id) FROM t"),
            vec!["1000,1,1000,500500"],
            "{workers} workers, blocks of {block_bytes} bytes"
        );
    }
}

/// A random key with 'number-of-rows': the groups are the key's range, their counts add up to
/// the rows, and they are the same on 1 and 2 workers and in another run.
#[test]
fn group_by_a_random_column() {
    let mut answers = Vec::new();
    for workers in [1, 2, 2] {
        let env = TableEnv::new().with_workers(workers);
        env.execute_sql(
            "CREATE TABLE clicks (k INT, name STRING, score DOUBLE)
             WITH ('connector' = 'datagen', 'number-of-rows' = '5000',
               'rows-per-second' = '100000000',
               'fields.k.min' = '1', 'fields.k.max' = '5', 'fields.k.null-rate' = '0.1',
               'fields.name.length' = '4', 'fields.score.min' = '0', 'fields.score.max' = '1')",
        )
        .unwrap();
        let groups = rows(
            &env,
            "SELECT k, COUNT(*), MIN(CHAR_LENGTH(name)), MAX(CHAR_LENGTH(name))
             FROM clicks GROUP BY k",
        );
        answers.push(groups);
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(answers[0], answers[2]);
    let groups = &answers[0];
    // The exact answer of the seed "clicks" (FNV-1a of the name), the same on every run.
    assert_eq!(
        groups,
        &[
            ",476,4,4",
            "1,897,4,4",
            "2,919,4,4",
            "3,885,4,4",
            "4,926,4,4",
            "5,897,4,4"
        ]
    );
    let keys: Vec<&str> = groups
        .iter()
        .map(|g| g.split(',').next().unwrap())
        .collect();
    assert_eq!(keys, ["", "1", "2", "3", "4", "5"], "{groups:?}");
    let mut total = 0;
    for g in groups {
        let cells: Vec<&str> = g.split(',').collect();
        let n: i64 = cells[1].parse().unwrap();
        total += n;
        assert_eq!(&cells[2..], ["4", "4"], "{g}");
        if cells[0].is_empty() {
            assert!((400..600).contains(&n), "{n} NULL keys of 5000 at rate 0.1");
        } else {
            assert!((800..1000).contains(&n), "{n} rows of key {}", cells[0]);
        }
    }
    assert_eq!(total, 5000);
}

/// Computed columns and a WATERMARK work as on a filesystem table: the computed column is
/// evaluated per generated row, and a window over a random rowtime (at most 10 minutes back
/// from when CREATE TABLE ran, a watermark 1 hour behind: nothing is late) counts every row.
#[test]
fn computed_columns_and_watermark() {
    for workers in [1, 2] {
        let env = TableEnv::new().with_workers(workers);
        env.execute_sql(
            "CREATE TABLE orders (id INT NOT NULL, price DECIMAL(10, 2), ts TIMESTAMP(3),
               cost AS price * 2, WATERMARK FOR ts AS ts - INTERVAL '1' HOUR)
             WITH ('connector' = 'datagen', 'rows-per-second' = '100000000',
               'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '300',
               'fields.price.min' = '1', 'fields.price.max' = '100',
               'fields.ts.max-past' = '10 min')",
        )
        .unwrap();
        let sums = rows(
            &env,
            "SELECT SUM(price) * 2 = SUM(cost), COUNT(cost) FROM orders",
        );
        assert_eq!(sums, vec!["true,300"], "{workers} workers");
        let windows = rows(
            &env,
            "SELECT COUNT(*) FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' DAY))
             GROUP BY window_start, window_end",
        );
        let total: i64 = windows.iter().map(|n| n.parse::<i64>().unwrap()).sum();
        assert_eq!(total, 300, "{windows:?}");
    }
}

/// A datagen table is a source only (Flink has no datagen sink); without a row count or a
/// sequence it is unbounded, and a batch query over it is refused naming the option to add.
#[test]
fn not_a_sink_and_no_batch_query_over_an_unbounded_one() {
    let env = TableEnv::new();
    env.execute_sql(
        "CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3',
           'rows-per-second' = '1000000')",
    )
    .unwrap();
    let err = env
        .execute_sql("INSERT INTO g SELECT a FROM g")
        .unwrap_err()
        .to_string();
    assert!(err.contains("Table 'g' is not a sink"), "{err}");
    env.execute_sql("CREATE TABLE u (a INT) WITH ('connector' = 'datagen')")
        .unwrap();
    let err = env
        .execute_sql("SELECT COUNT(*) FROM u")
        .unwrap_err()
        .to_string();
    assert!(err.contains("add 'number-of-rows' = '<n>'"), "{err}");
}

/// D05's `datagenSource` DDL with a row count: a FULL materialized table over it refreshes to
/// the generated rows (each order once: `pv` adds up to the rows, the fees to the sequence's
/// sum), 2 users x 3 shops.
#[test]
fn a_full_materialized_table_over_datagen() {
    let dir = tempfile::tempdir().unwrap();
    let env = TableEnv::new()
        .with_workers(2)
        .with_warehouse(dir.path().join("wh"))
        .unwrap();
    env.execute_sql(
        "CREATE TABLE datagenSource (order_id BIGINT, order_number VARCHAR(20), user_id BIGINT, shop_id BIGINT,
           product_id BIGINT, status BIGINT, order_type BIGINT, order_created_at TIMESTAMP, payment_amount_cents BIGINT)
         WITH ('connector' = 'datagen', 'rows-per-second' = '100000000', 'number-of-rows' = '1000',
           'fields.user_id.min' = '1', 'fields.user_id.max' = '2',
           'fields.shop_id.min' = '1', 'fields.shop_id.max' = '3',
           'fields.order_created_at.max-past' = '1 d',
           'fields.payment_amount_cents.kind' = 'sequence',
           'fields.payment_amount_cents.start' = '1', 'fields.payment_amount_cents.end' = '5000')",
    )
    .unwrap();
    env.execute_sql(
        "CREATE MATERIALIZED TABLE users_shops FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL
         AS SELECT user_id, shop_id, SUM(payment_amount_cents) AS fee, SUM(1) AS pv
            FROM datagenSource GROUP BY user_id, shop_id",
    )
    .unwrap();
    env.execute_sql("ALTER MATERIALIZED TABLE users_shops REFRESH")
        .unwrap();
    assert_eq!(
        rows(&env, "SELECT SUM(pv), SUM(fee), COUNT(*) FROM users_shops"),
        vec!["1000,500500,6"]
    );
}
