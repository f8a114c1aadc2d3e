//! CONTINUOUS materialized tables over a live postgres-cdc table: a temporal join of a file of
//! orders against rates changed in transactions while the refresh runs equals the same join
//! over a changelog file of the same changes; a refresh stopped and started again, with
//! changes in between, ends equal to the table, nothing lost or applied twice.

use std::sync::atomic::{AtomicBool, Ordering};

use differential_temporal::table::TableEnv;

use super::{fresh_table, server, setup, with_options};

/// A fresh rates table `name` (REPLICA IDENTITY FULL) with Euro, Yen and USD at 09:00, and no
/// slot or publication of that name left from an earlier run.
pub(super) fn fresh_rates(line: &str, name: &str) {
    let columns = "currency text PRIMARY KEY, rate integer, update_time timestamp(3)";
    fresh_table(line, name, columns, true);
    setup(
        line,
        &format!(
            "INSERT INTO {name} VALUES ('Euro', 114, '2024-01-01 09:00:00'),
               ('Yen', 102, '2024-01-01 09:00:00'), ('USD', 1, '2024-01-01 09:00:00');"
        ),
    );
}

/// The seed's orders, and `rates` declared over `with`.
pub(super) fn tables(rates_with: &str) -> String {
    let seed = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sql_seed");
    format!(
        "CREATE TABLE orders (order_time TIMESTAMP(3), amount INT, currency STRING,
           WATERMARK FOR order_time AS order_time)
         WITH ('connector' = 'filesystem', 'path' = '{seed}/orders.csv', 'format' = 'csv');
         CREATE TABLE rates (currency STRING, rate INT, update_time TIMESTAMP(3),
           PRIMARY KEY (currency) NOT ENFORCED, WATERMARK FOR update_time AS update_time)
         WITH ({rates_with});"
    )
}

pub(super) const JOIN: &str = "SELECT o.order_time, o.amount, o.currency, r.rate
                    FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r
                    ON o.currency = r.currency";

/// The rates' changes in order: the snapshot's rows, then each transaction's.
const CHANGES: [&str; 3] = [
    "+I,Euro,114,2024-01-01 09:00:00\n\
     +I,USD,1,2024-01-01 09:00:00\n\
     +I,Yen,102,2024-01-01 09:00:00\n",
    "-U,Euro,114,2024-01-01 09:00:00\n\
     +U,Euro,119,2024-01-01 10:00:00\n",
    "+I,US Dollar,2,2024-01-01 10:00:00\n\
     -D,Yen,102,2024-01-01 09:00:00\n",
];

/// The join over a changelog file of the first `n` entries of [`CHANGES`], sorted.
pub(super) fn join_over_file(n: usize) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rates.csv");
    let text = format!("op,currency,rate,update_time\n{}", CHANGES[..n].concat());
    std::fs::write(&path, text).unwrap();
    let env = TableEnv::new().with_workers(2);
    let file = format!(
        "'connector' = 'filesystem', 'path' = '{}', 'format' = 'csv'",
        path.display()
    );
    env.execute_sql(&tables(&file)).unwrap();
    let mut rows = env
        .sql_query(JOIN)
        .unwrap()
        .execute()
        .unwrap()
        .rows_as_text();
    rows.sort();
    rows
}

/// Runs the CONTINUOUS refresh of `table`: after its `i`-th snapshot the `i`-th of
/// `transactions` runs on the server of `line`, and the snapshot after the last stops it.
/// Returns how many snapshots it published.
fn refresh_through(env: &TableEnv, table: &str, line: &str, transactions: &[&str]) -> usize {
    let stop = AtomicBool::new(false);
    let mut published = 0;
    env.run_continuous_refresh(table, &stop, |_| {
        match transactions.get(published) {
            Some(sql) => setup(line, sql),
            None => stop.store(true, Ordering::SeqCst),
        }
        published += 1;
    })
    .unwrap();
    published
}

/// The rows of `table`, sorted.
fn rows(env: &TableEnv, table: &str) -> Vec<String> {
    let result = env
        .sql_query(&format!("SELECT * FROM {table}"))
        .unwrap()
        .execute()
        .unwrap();
    let mut rows = result.rows_as_text();
    rows.sort();
    rows
}

#[test]
fn a_continuous_join_follows_rates_changed_in_transactions() {
    let Some(line) = server() else { return };
    let name = "pgcdc_live_rates";
    fresh_rates(&line, name);
    let warehouse = tempfile::tempdir().unwrap();
    let env = TableEnv::new()
        .with_workers(2)
        .with_warehouse(warehouse.path())
        .unwrap();
    let with = format!(
        "{}, 'table-name' = '{name}', 'slot.name' = '{name}'",
        with_options(&line)
    );
    env.execute_sql(&tables(&with)).unwrap();
    env.execute_sql(&format!(
        "CREATE MATERIALIZED TABLE joined FRESHNESS = INTERVAL '1' SECOND
           REFRESH_MODE = CONTINUOUS AS {JOIN}"
    ))
    .unwrap();
    // Each published snapshot lets the next transaction happen; the last one stops the run.
    let transactions = [
        // Euro is revised from 10:00 on: the orders at 10:15 and 10:52 see 119.
        "UPDATE pgcdc_live_rates SET rate = 119, update_time = '2024-01-01 10:00:00' WHERE currency = 'Euro'",
        // One transaction: a new rate, and Yen's row deleted (its version ends).
        "BEGIN; INSERT INTO pgcdc_live_rates VALUES ('US Dollar', 2, '2024-01-01 10:00:00');
         DELETE FROM pgcdc_live_rates WHERE currency = 'Yen'; COMMIT;",
    ];
    let published = refresh_through(&env, "joined", &line, &transactions);
    assert_eq!(
        published, 3,
        "the snapshot's round and one round per transaction"
    );
    let live = rows(&env, "joined");
    // The same join over a changelog file of the same changes.
    assert_eq!(live, join_over_file(3));
    assert_eq!(
        live,
        [
            "2024-01-01 10:15:00.000,2,Euro,119",
            "2024-01-01 10:30:00.000,1,US Dollar,2",
            "2024-01-01 10:52:00.000,3,Euro,119",
            "2024-01-01 11:04:00.000,5,US Dollar,2",
        ]
    );
}

#[test]
fn a_refresh_started_again_ends_equal_to_the_table() {
    let Some(line) = server() else { return };
    let name = "pgcdc_restart";
    fresh_rates(&line, name);
    let warehouse = tempfile::tempdir().unwrap();
    let env = TableEnv::new().with_warehouse(warehouse.path()).unwrap();
    let with = format!(
        "{}, 'table-name' = '{name}', 'slot.name' = '{name}'",
        with_options(&line)
    );
    env.execute_sql(&tables(&with)).unwrap();
    env.execute_sql(
        "CREATE MATERIALIZED TABLE copy FRESHNESS = INTERVAL '1' SECOND
           REFRESH_MODE = CONTINUOUS AS SELECT currency, rate, update_time FROM rates",
    )
    .unwrap();
    // First run: the snapshot, then one transaction; stopped after publishing it.
    let euro = format!("UPDATE {name} SET rate = rate + 1 WHERE currency = 'Euro'");
    refresh_through(&env, "copy", &line, &[&euro]);
    // While no refresh runs: more transactions.
    setup(
        &line,
        &format!(
            "BEGIN; UPDATE {name} SET rate = rate + 10; DELETE FROM {name} WHERE currency = 'USD'; COMMIT;
             INSERT INTO {name} VALUES ('Pounds', 108, '2024-01-01 11:49:00');"
        ),
    );
    // Second run: the published rounds replayed from their files, then the slot's changes
    // after them; stopped after its first snapshot.
    refresh_through(&env, "copy", &line, &[]);
    assert_eq!(
        rows(&env, "copy"),
        [
            "Euro,125,2024-01-01 09:00:00.000",
            "Pounds,108,2024-01-01 11:49:00.000",
            "Yen,112,2024-01-01 09:00:00.000",
        ]
    );
}

/// A CONTINUOUS copy of a table of the default replica identity, read as an upsert changelog
/// normalized by its primary key, ends equal to the table after updates and deletes.
#[test]
fn an_upsert_changelog_is_normalized_by_its_key() {
    let Some(line) = server() else { return };
    let name = "pgcdc_upsert_copy";
    let columns = "currency text PRIMARY KEY, rate integer NOT NULL, update_time timestamp(3)";
    fresh_table(&line, name, columns, false);
    setup(
        &line,
        &format!("INSERT INTO {name} VALUES ('Euro', 114, '2024-01-01 09:00:00'), ('Yen', 102, '2024-01-01 09:00:00');"),
    );
    let warehouse = tempfile::tempdir().unwrap();
    let env = TableEnv::new().with_warehouse(warehouse.path()).unwrap();
    env.execute_sql(&format!(
        "CREATE TABLE rates (currency STRING NOT NULL, rate INT NOT NULL, update_time TIMESTAMP(3),
           PRIMARY KEY (currency) NOT ENFORCED)
         WITH ({}, 'table-name' = '{name}', 'slot.name' = '{name}', 'changelog-mode' = 'upsert');
         CREATE MATERIALIZED TABLE copy FRESHNESS = INTERVAL '1' SECOND
           REFRESH_MODE = CONTINUOUS AS SELECT currency, rate FROM rates",
        with_options(&line)
    ))
    .unwrap();
    let changes = format!(
        "UPDATE {name} SET rate = 119 WHERE currency = 'Euro';
         DELETE FROM {name} WHERE currency = 'Yen';
         INSERT INTO {name} VALUES ('USD', 1, NULL);"
    );
    refresh_through(&env, "copy", &line, &[&changes]);
    assert_eq!(rows(&env, "copy"), ["Euro,119", "USD,1"]);
}

/// A text value `''` is not NULL, in the rounds a refresh reads and in those a later run
/// replays from its files (which keep the rows as read).
#[test]
fn an_empty_text_stays_apart_from_null_across_a_restart() {
    let Some(line) = server() else { return };
    let name = "pgcdc_empty_text";
    fresh_table(&line, name, "id integer PRIMARY KEY, note text", true);
    setup(
        &line,
        &format!("INSERT INTO {name} VALUES (1, ''), (2, NULL);"),
    );
    let warehouse = tempfile::tempdir().unwrap();
    let env = TableEnv::new().with_warehouse(warehouse.path()).unwrap();
    env.execute_sql(&format!(
        "CREATE TABLE src (id INT, note STRING, PRIMARY KEY (id) NOT ENFORCED)
         WITH ({}, 'table-name' = '{name}', 'slot.name' = '{name}');
         CREATE MATERIALIZED TABLE nulls FRESHNESS = INTERVAL '1' SECOND
           REFRESH_MODE = CONTINUOUS AS SELECT id, note IS NULL AS missing FROM src",
        with_options(&line)
    ))
    .unwrap();
    let insert = format!("INSERT INTO {name} VALUES (3, ''), (4, NULL);");
    refresh_through(&env, "nulls", &line, &[&insert]);
    assert_eq!(
        rows(&env, "nulls"),
        ["1,false", "2,true", "3,false", "4,true"]
    );
    // Started again after one more change: the published rounds replayed from their files,
    // then the change.
    setup(
        &line,
        &format!("UPDATE {name} SET note = NULL WHERE id = 1;"),
    );
    refresh_through(&env, "nulls", &line, &[]);
    assert_eq!(
        rows(&env, "nulls"),
        ["1,true", "2,true", "3,false", "4,true"]
    );
}

/// The seed's `products` DDL against Postgres: the event time of a version is its commit time
/// (`update_time TIMESTAMP(3) METADATA FROM 'op_ts' VIRTUAL`, Flink CDC's metadata; 0, the
/// epoch, for a snapshot row), so an order of 2000 sees the snapshot's price and one of 2100
/// the price updated since.
#[test]
fn the_commit_time_is_a_versioned_tables_event_time() {
    let Some(line) = server() else { return };
    let name = "pgcdc_products";
    let columns = "product_id text PRIMARY KEY, product_name text, price numeric(32, 2)";
    fresh_table(&line, name, columns, true);
    setup(
        &line,
        &format!("INSERT INTO {name} VALUES ('p1', 'apple', 1.50), ('p2', 'pear', 2.00);"),
    );
    let dir = tempfile::tempdir().unwrap();
    let orders = dir.path().join("orders.csv");
    std::fs::write(
        &orders,
        "order_id,product_id,order_time\n\
         1,p1,2000-01-01 00:00:00\n\
         2,p1,2100-01-01 00:00:00\n\
         3,p2,2100-01-01 00:00:00\n",
    )
    .unwrap();
    let env = TableEnv::new()
        .with_warehouse(dir.path().join("wh"))
        .unwrap();
    env.execute_sql(&format!(
        "CREATE TABLE orders (order_id INT, product_id STRING, order_time TIMESTAMP(3),
           WATERMARK FOR order_time AS order_time)
         WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
         CREATE TABLE products (product_id STRING, product_name STRING, price DECIMAL(32, 2),
           update_time TIMESTAMP(3) METADATA FROM 'op_ts' VIRTUAL,
           PRIMARY KEY (product_id) NOT ENFORCED, WATERMARK FOR update_time AS update_time)
         WITH ({}, 'table-name' = '{name}', 'slot.name' = '{name}');
         CREATE MATERIALIZED TABLE priced FRESHNESS = INTERVAL '1' SECOND
           REFRESH_MODE = CONTINUOUS AS
           SELECT o.order_id, p.product_name, p.price FROM orders AS o
           JOIN products FOR SYSTEM_TIME AS OF o.order_time AS p
           ON o.product_id = p.product_id",
        orders.display(),
        with_options(&line)
    ))
    .unwrap();
    let update = format!("UPDATE {name} SET price = 1.75 WHERE product_id = 'p1'");
    refresh_through(&env, "priced", &line, &[&update]);
    assert_eq!(
        rows(&env, "priced"),
        ["1,apple,1.50", "2,apple,1.75", "3,pear,2.00"]
    );
}
