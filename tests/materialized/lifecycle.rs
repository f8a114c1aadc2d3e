//! D04 parts 2 and 3 (manual refresh of a partition, invalid partition specs) and D06 (the
//! SUSPEND / RESUME / DROP state machine) through SQL on a warehouse.

use differential_temporal::materialized::{
    check_drop, resume, suspend, RefreshMode, RefreshStatus,
};
use differential_temporal::table::tempfile_dir::Dir;
use differential_temporal::table::TableEnv;

use super::{message, rows, text};

const T: &str = "`default_catalog`.`default_database`.`my_materialized_table`";

/// D04's source and materialized table. The case's table is CONTINUOUS; this slice runs it in
/// FULL mode, whose `REFRESH` gives the content the continuous job had.
fn d04_env(dir: &Dir) -> (TableEnv, String) {
    let source = dir.write(
        "my_source.csv",
        "order_id,user_id,shop_id,order_created_at\n1,1,1,2024-01-01\n2,2,2,2024-01-02\n3,3,3,2024-01-02\n",
    );
    let env = TableEnv::new().with_warehouse(dir.path("wh")).unwrap();
    env.execute_sql(&format!(
        "CREATE TABLE my_source (order_id BIGINT, user_id BIGINT, shop_id BIGINT, order_created_at STRING)
           WITH ('connector' = 'filesystem', 'path' = '{source}', 'format' = 'csv');
         CREATE MATERIALIZED TABLE my_materialized_table
           PARTITIONED BY (ds)
           WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd', 'format' = 'debezium-json')
           FRESHNESS = INTERVAL '30' SECOND
           REFRESH_MODE = FULL
           AS SELECT user_id, shop_id, ds, COUNT(order_id) AS order_cnt
              FROM (SELECT user_id, shop_id, order_created_at AS ds, order_id FROM my_source) AS tmp
              GROUP BY (user_id, shop_id, ds);"
    ))
    .unwrap();
    (env, source)
}

#[test]
fn d04_refresh_partition_overwrites_only_that_partition() {
    let dir = Dir::new();
    let (env, source) = d04_env(&dir);
    assert_eq!(
        rows(&env, "SELECT * FROM my_materialized_table"),
        Vec::<String>::new()
    );
    assert_eq!(
        text(
            &env,
            "ALTER MATERIALIZED TABLE my_materialized_table REFRESH"
        ),
        format!("refreshed {T}: 3 row(s), snapshot 1\n")
    );
    assert_eq!(
        rows(&env, "SELECT * FROM my_materialized_table"),
        ["1,1,2024-01-01,1", "2,2,2024-01-02,1", "3,3,2024-01-02,1"]
    );
    std::fs::write(
        &source,
        "order_id,user_id,shop_id,order_created_at\n1,1,1,2024-01-01\n2,2,2,2024-01-02\n",
    )
    .unwrap();
    assert_eq!(
        text(
            &env,
            "ALTER MATERIALIZED TABLE my_materialized_table REFRESH PARTITION (ds = '2024-01-02')"
        ),
        format!("refreshed {T}: 1 row(s), snapshot 2\n")
    );
    assert_eq!(
        rows(&env, "SELECT * FROM my_materialized_table"),
        ["1,1,2024-01-01,1", "2,2,2024-01-02,1"]
    );
}

#[test]
fn d04_invalid_partition_specs() {
    let dir = Dir::new();
    let source = dir.write("s.csv", "user_id,shop_id,ds1,ds2\n1,1,a,5\n");
    let env = TableEnv::new().with_warehouse(dir.path("wh")).unwrap();
    env.execute_sql(&format!(
        "CREATE TABLE s (user_id BIGINT, shop_id BIGINT, ds1 STRING, ds2 BIGINT)
           WITH ('connector' = 'filesystem', 'path' = '{source}', 'format' = 'csv');
         CREATE MATERIALIZED TABLE users_shops PARTITIONED BY (ds1, ds2) FRESHNESS = INTERVAL '1' HOUR
           AS SELECT * FROM s;"
    ))
    .unwrap();
    let cases = [
        ("ALTER MATERIALIZED TABLE users_shops REFRESH PARTITION (ds3 = '2024-01-01')", "The partition spec contains unknown partition keys:\n\nds3\n\nAll known partition keys are:\n\nds2\nds1"),
        ("ALTER MATERIALIZED TABLE users_shops REFRESH PARTITION (ds2 = 5)", "Currently, refreshing materialized table only supports referring to char, varchar and string type partition keys. All specified partition keys in partition specs with unsupported types are:\n\nds2"),
    ];
    for (sql, expected) in cases {
        assert_eq!(
            message(env.execute_sql(sql).unwrap_err()),
            expected,
            "{sql}"
        );
    }
}

fn status(env: &TableEnv, name: &str) -> String {
    let described = text(env, &format!("DESCRIBE {name}"));
    described
        .lines()
        .find_map(|l| l.strip_prefix("refresh status: "))
        .unwrap()
        .to_string()
}

#[test]
fn d06_full_table_transitions() {
    let dir = Dir::new();
    let (env, _) = d04_env(&dir);
    let t = "my_materialized_table";
    assert_eq!(status(&env, t), "ACTIVATED");
    let err = env
        .execute_sql(&format!("ALTER MATERIALIZED TABLE {t} RESUME"))
        .unwrap_err();
    assert_eq!(
        message(err),
        format!("Materialized table {T} refresh workflow has been resumed.")
    );
    env.execute_sql(&format!("ALTER MATERIALIZED TABLE {t} SUSPEND"))
        .unwrap();
    assert_eq!(status(&env, t), "SUSPENDED");
    let err = env
        .execute_sql(&format!("ALTER MATERIALIZED TABLE {t} SUSPEND"))
        .unwrap_err();
    assert_eq!(
        message(err),
        format!("Materialized table {T} refresh workflow has been suspended.")
    );
    // A manual refresh runs whatever the status, and leaves it.
    text(&env, &format!("ALTER MATERIALIZED TABLE {t} REFRESH"));
    assert_eq!(status(&env, t), "SUSPENDED");
    let err = env
        .execute_sql(&format!(
            "ALTER MATERIALIZED TABLE {t} RESUME WITH ('k' = 'v')"
        ))
        .unwrap_err();
    assert_eq!(
        message(err),
        "RESUME WITH option 'k' is not supported: a FULL refresh takes no dynamic options yet"
    );
    env.execute_sql(&format!("ALTER MATERIALIZED TABLE {t} RESUME"))
        .unwrap();
    assert_eq!(status(&env, t), "ACTIVATED");
    env.execute_sql(&format!(
        "ALTER MATERIALIZED TABLE {t} SUSPEND; DROP MATERIALIZED TABLE {t}"
    ))
    .unwrap();
    assert_eq!(text(&env, "SHOW MATERIALIZED TABLES"), "");
    assert!(!std::path::Path::new(&dir.path("wh/data/my_materialized_table")).exists());
    let err = env
        .execute_sql(&format!("DROP MATERIALIZED TABLE {t}"))
        .unwrap_err();
    assert_eq!(
        message(err),
        format!("Materialized table with identifier {T} does not exist.")
    );
    env.execute_sql(&format!("DROP MATERIALIZED TABLE IF EXISTS {t}"))
        .unwrap();
    let err = env.execute_sql(&format!("SELECT * FROM {t}")).unwrap_err();
    assert_eq!(
        message(err),
        format!("table '{t}' not found; registered tables: my_source")
    );
}

#[test]
fn d06_initializing_refuses_everything() {
    let t = "`t`";
    let initializing = RefreshStatus::Initializing;
    assert_eq!(
        suspend(initializing, RefreshMode::Full, t).unwrap_err(),
        "Materialized table `t` is being initialized and does not support suspend operation."
    );
    assert_eq!(
        resume(initializing, RefreshMode::Full, t).unwrap_err(),
        "Materialized table `t` is being initialized and does not support resume operation."
    );
    assert_eq!(check_drop(initializing, t).unwrap_err(), "Current refresh status of materialized table `t` is initializing, skip the drop operation.");
    assert_eq!(check_drop(RefreshStatus::Suspended, t), Ok(()));
    assert_eq!(check_drop(RefreshStatus::Activated, t), Ok(()));
}

#[test]
fn d06_full_needs_a_scheduler() {
    let dir = Dir::new();
    let path = dir.write("s.csv", "a\n1\n");
    let env = TableEnv::new();
    env.execute_sql(&format!("CREATE TABLE s (a INT) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')")).unwrap();
    let err = env
        .execute_sql("CREATE MATERIALIZED TABLE t FRESHNESS = INTERVAL '1' HOUR AS SELECT a FROM s")
        .unwrap_err();
    assert_eq!(message(err), "The workflow scheduler must be configured when creating materialized table in full refresh mode. (Open a warehouse, which holds the scheduler's state: TableEnv::with_warehouse(dir) or dtemporal sql --warehouse DIR.)");
    let err = env.execute_sql("DROP MATERIALIZED TABLE t").unwrap_err();
    assert_eq!(message(err), "Materialized table with identifier `default_catalog`.`default_database`.`t` does not exist.");
}

#[test]
fn alter_as_takes_a_new_definition_with_the_same_columns() {
    let dir = Dir::new();
    let (env, _) = d04_env(&dir);
    let t = "my_materialized_table";
    env.execute_sql(&format!(
        "ALTER MATERIALIZED TABLE {t} AS SELECT user_id, shop_id, ds, COUNT(order_id) AS order_cnt
           FROM (SELECT user_id, shop_id, order_created_at AS ds, order_id FROM my_source) AS tmp
           WHERE user_id > 1 GROUP BY user_id, shop_id, ds"
    ))
    .unwrap();
    text(&env, &format!("ALTER MATERIALIZED TABLE {t} REFRESH"));
    assert_eq!(
        rows(&env, &format!("SELECT * FROM {t}")),
        ["2,2,2024-01-02,1", "3,3,2024-01-02,1"]
    );
    let described = text(&env, &format!("DESCRIBE {t}"));
    assert!(described.contains("\ndefinition: SELECT user_id, shop_id, ds, COUNT(order_id) AS order_cnt\n           FROM (SELECT user_id, shop_id, order_created_at AS ds, order_id FROM my_source) AS tmp\n           WHERE user_id > 1 GROUP BY user_id, shop_id, ds\n"), "{described}");
    let err = env
        .execute_sql(&format!(
            "ALTER MATERIALIZED TABLE {t} AS SELECT user_id FROM my_source"
        ))
        .unwrap_err();
    assert_eq!(
        message(err),
        format!("the new definition of {T} gives the columns (\n  `user_id` BIGINT\n) instead of the table's (\n  `user_id` BIGINT,\n  `shop_id` BIGINT,\n  `ds` STRING,\n  `order_cnt` BIGINT NOT NULL\n): changing a materialized table's columns is not supported yet")
    );
    let err = env
        .execute_sql(&format!(
            "CREATE MATERIALIZED TABLE {t} REFRESH_MODE = FULL AS SELECT * FROM my_source"
        ))
        .unwrap_err();
    assert_eq!(
        message(err),
        format!("Table (or view) {T} already exists in Catalog default_catalog.")
    );
    let err = env
        .execute_sql(&format!("CREATE OR ALTER MATERIALIZED TABLE {t} REFRESH_MODE = FULL AS SELECT user_id, shop_id, order_created_at AS ds, COUNT(order_id) AS order_cnt FROM my_source GROUP BY user_id, shop_id, order_created_at"))
        .unwrap_err();
    assert_eq!(message(err), format!("CREATE OR ALTER of {T} changes more than its query (its keys, options, freshness, refresh mode or comment), which is not supported yet"));
    env.execute_sql(&format!(
        "CREATE OR ALTER MATERIALIZED TABLE {t} PARTITIONED BY (ds)
           WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd', 'format' = 'debezium-json')
           FRESHNESS = INTERVAL '30' SECOND REFRESH_MODE = FULL AS
           SELECT user_id, shop_id, order_created_at AS ds, COUNT(order_id) AS order_cnt FROM my_source
           GROUP BY user_id, shop_id, order_created_at"
    ))
    .unwrap();
    text(&env, &format!("ALTER MATERIALIZED TABLE {t} REFRESH"));
    assert_eq!(
        rows(&env, &format!("SELECT * FROM {t}")),
        ["1,1,2024-01-01,1", "2,2,2024-01-02,1", "3,3,2024-01-02,1"]
    );
}
