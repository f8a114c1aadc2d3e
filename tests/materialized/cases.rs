//! D01 (refresh mode inference), D02 (freshness to cron), D03 (periodic refresh partition),
//! D04 part 1 (refresh statement) and D05 (schema inference and validation), row by row.

use std::time::Duration;

use differential_temporal::materialized::{
    period_partition, refresh_statement, IntervalFreshness, LogicalRefreshMode,
    MaterializedTableConfig, RefreshMode, TimeUnit,
};
use differential_temporal::table::tempfile_dir::Dir;
use differential_temporal::table::TableEnv;

use super::{message, text};

fn freshness(interval: &str, unit: &str) -> Result<IntervalFreshness, String> {
    IntervalFreshness::of(interval, TimeUnit::parse(unit)?)
}

/// What a CONTINUOUS table's pipeline is, or a FULL table's cron.
#[derive(Debug, PartialEq)]
enum Pipeline {
    Checkpoint(Duration),
    Cron(&'static str),
}

#[test]
fn d01_refresh_mode_inference() {
    use Pipeline::*;
    use RefreshMode::*;
    let s = Duration::from_secs;
    // (freshness clause, REFRESH_MODE, final freshness, final mode and pipeline | error)
    let cases: &[(Option<(&str, &str)>, Option<RefreshMode>, Result<(&str, RefreshMode, Pipeline), &str>)] = &[
        (Some(("1", "SECOND")), None, Ok(("INTERVAL '1' SECOND", Continuous, Checkpoint(s(1))))),
        (Some(("1", "MINUTE")), None, Ok(("INTERVAL '1' MINUTE", Continuous, Checkpoint(s(60))))),
        (Some(("1", "HOUR")), None, Ok(("INTERVAL '1' HOUR", Full, Cron("0 0 0/1 * * ? *")))),
        (Some(("1", "DAY")), None, Ok(("INTERVAL '1' DAY", Full, Cron("0 0 0 * * ? *")))),
        (Some(("1", "HOUR")), Some(Continuous), Ok(("INTERVAL '1' HOUR", Continuous, Checkpoint(s(3600))))),
        (Some(("10", "MINUTE")), Some(Full), Ok(("INTERVAL '10' MINUTE", Full, Cron("0 0/10 * * * ? *")))),
        (None, None, Ok(("INTERVAL '3' MINUTE", Continuous, Checkpoint(s(180))))),
        (None, Some(Full), Ok(("INTERVAL '1' HOUR", Full, Cron("0 0 0/1 * * ? *")))),
        (None, Some(Continuous), Ok(("INTERVAL '3' MINUTE", Continuous, Checkpoint(s(180))))),
        (Some(("10", "SECOND")), None, Ok(("INTERVAL '10' SECOND", Continuous, Checkpoint(s(10))))),
        (Some(("29", "MINUTE")), None, Ok(("INTERVAL '29' MINUTE", Continuous, Checkpoint(s(29 * 60))))),
        (Some(("30", "MINUTE")), None, Ok(("INTERVAL '30' MINUTE", Full, Cron("0 0/30 * * * ? *")))),
        (Some(("45", "MINUTE")), None, Err("In full refresh mode, only freshness that are factors of 60 are currently supported when the time unit is MINUTE.")),
        (Some(("45", "MINUTE")), Some(Continuous), Ok(("INTERVAL '45' MINUTE", Continuous, Checkpoint(s(45 * 60))))),
        (Some(("2", "DAY")), None, Err("In full refresh mode, freshness must be 1 when the time unit is DAY.")),
        (Some(("2", "DAY")), Some(Continuous), Ok(("INTERVAL '2' DAY", Continuous, Checkpoint(s(2 * 86_400))))),
        (Some(("60", "SECOND")), Some(Full), Err("In full refresh mode, freshness must be less than 60 when the time unit is SECOND.")),
        (Some(("5", "HOUR")), Some(Full), Err("In full refresh mode, only freshness that are factors of 24 are currently supported when the time unit is HOUR.")),
        (Some(("0", "SECOND")), None, Err("The freshness interval currently only supports positive integer type values. But was: 0")),
        (Some(("-1", "SECOND")), None, Err("The freshness interval currently only supports positive integer type values. But was: -1")),
        (Some(("1", "MONTH")), None, Err("Materialized table freshness only support SECOND, MINUTE, HOUR, DAY as the time unit.")),
    ];
    let config = MaterializedTableConfig::default();
    for (clause, mode, expected) in cases {
        let got = clause
            .map(|(n, unit)| freshness(n, unit))
            .transpose()
            .and_then(|f| config.resolve(f, *mode))
            .map(|r| {
                let pipeline = match r.mode {
                    Continuous => Checkpoint(r.freshness.duration()),
                    Full => Cron(Box::leak(r.freshness.to_cron().unwrap().into_boxed_str())),
                };
                (r.freshness.to_string(), r.mode, pipeline)
            });
        let expected = expected
            .as_ref()
            .map(|(f, m, p)| {
                (
                    f.to_string(),
                    *m,
                    match p {
                        Checkpoint(d) => Checkpoint(*d),
                        Cron(c) => Cron(c),
                    },
                )
            })
            .map_err(|e| e.to_string());
        assert_eq!(got, expected, "{clause:?} {mode:?}");
    }
}

#[test]
fn d01_threshold_is_strict_and_settable() {
    let env = TableEnv::new();
    let thirty = freshness("30", "MINUTE").unwrap();
    assert_eq!(
        env.materialized_config()
            .resolve(Some(thirty), None)
            .unwrap()
            .mode,
        RefreshMode::Full
    );
    env.execute_sql("SET 'materialized-table.refresh-mode.freshness-threshold' = '31 min'")
        .unwrap();
    let resolved = env
        .materialized_config()
        .resolve(Some(thirty), None)
        .unwrap();
    assert_eq!(
        (resolved.mode, resolved.logical),
        (RefreshMode::Continuous, LogicalRefreshMode::Automatic)
    );
    let err = env
        .execute_sql("SET 'materialized-table.default-freshness.full' = 'soon'")
        .unwrap_err();
    assert_eq!(
        message(err),
        "'materialized-table.default-freshness.full' takes a positive duration, not 'soon'"
    );
}

#[test]
fn d02_freshness_to_cron() {
    let cases = [
        ("SECOND", "30", Ok("0/30 * * * * ? *")),
        ("SECOND", "5", Ok("0/5 * * * * ? *")),
        ("SECOND", "90", Err("In full refresh mode, freshness must be less than 60 when the time unit is SECOND.")),
        ("SECOND", "32", Err("In full refresh mode, only freshness that are factors of 60 are currently supported when the time unit is SECOND.")),
        ("MINUTE", "30", Ok("0 0/30 * * * ? *")),
        ("MINUTE", "5", Ok("0 0/5 * * * ? *")),
        ("MINUTE", "1", Ok("0 0/1 * * * ? *")),
        ("MINUTE", "90", Err("In full refresh mode, freshness must be less than 60 when the time unit is MINUTE.")),
        ("MINUTE", "32", Err("In full refresh mode, only freshness that are factors of 60 are currently supported when the time unit is MINUTE.")),
        ("HOUR", "12", Ok("0 0 0/12 * * ? *")),
        ("HOUR", "4", Ok("0 0 0/4 * * ? *")),
        ("HOUR", "1", Ok("0 0 0/1 * * ? *")),
        ("HOUR", "24", Err("In full refresh mode, freshness must be less than 24 when the time unit is HOUR.")),
        ("HOUR", "14", Err("In full refresh mode, only freshness that are factors of 24 are currently supported when the time unit is HOUR.")),
        ("DAY", "1", Ok("0 0 0 * * ? *")),
        ("DAY", "2", Err("In full refresh mode, freshness must be 1 when the time unit is DAY.")),
    ];
    for (unit, n, expected) in cases {
        let got = freshness(n, unit).unwrap().to_cron();
        assert_eq!(
            got,
            expected.map(str::to_string).map_err(str::to_string),
            "{n} {unit}"
        );
    }
    for input in ["2efedd", "2.5", "-2", "0", "12345678901234567890"] {
        assert_eq!(
            IntervalFreshness::of(input, TimeUnit::Minute).unwrap_err(),
            format!("The freshness interval currently only supports positive integer type values. But was: {input}")
        );
    }
    for (secs, expected) in [
        (20, "INTERVAL '20' SECOND"),
        (180, "INTERVAL '3' MINUTE"),
        (3600, "INTERVAL '1' HOUR"),
        (2 * 86_400, "INTERVAL '2' DAY"),
    ] {
        let f = IntervalFreshness::from_duration(Duration::from_secs(secs)).unwrap();
        assert_eq!(
            (f.to_string(), f.duration().as_secs()),
            (expected.to_string(), secs)
        );
    }
}

fn formatters(text: &str) -> Vec<(String, String)> {
    text.split(';')
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect()
}

#[test]
fn d03_periodic_refresh_partition() {
    let cases = "2024-01-01 00:00:00,1 DAY,day=yyyy-MM-dd,day=2023-12-31
2024-01-02 00:00:00,1 DAY,day=yyyy-MM-dd,day=2024-01-01
2024-01-02 00:00:00,1 HOUR,day=yyyy-MM-dd;hour=HH,day=2024-01-01;hour=23
2024-01-02 01:00:00,1 HOUR,day=yyyy-MM-dd;hour=HH,day=2024-01-02;hour=00
2024-01-01 00:00:00,2 HOUR,day=yyyy-MM-dd;hour=HH,day=2023-12-31;hour=22
2024-01-01 00:00:00,4 HOUR,day=yyyy-MM-dd;hour=HH,day=2023-12-31;hour=20
2024-01-01 00:00:00,8 HOUR,day=yyyy-MM-dd;hour=HH,day=2023-12-31;hour=16
2024-01-01 00:00:00,12 HOUR,day=yyyy-MM-dd;hour=HH,day=2023-12-31;hour=12
2024-01-01 12:00:00,12 HOUR,day=yyyy-MM-dd;hour=HH,day=2024-01-01;hour=00
2024-01-01 00:00:00,1 MINUTE,day=yyyy-MM-dd;hour=HH;minute=mm,day=2023-12-31;hour=23;minute=59
2024-01-01 00:00:00,2 MINUTE,day=yyyy-MM-dd;hour=HH;minute=mm,day=2023-12-31;hour=23;minute=58
2024-01-01 00:00:00,4 MINUTE,day=yyyy-MM-dd;hour=HH;minute=mm,day=2023-12-31;hour=23;minute=56
2024-01-01 00:00:00,5 MINUTE,day=yyyy-MM-dd;hour=HH;minute=mm,day=2023-12-31;hour=23;minute=55
2024-01-01 00:00:00,6 MINUTE,day=yyyy-MM-dd;hour=HH;minute=mm,day=2023-12-31;hour=23;minute=54
2024-01-01 00:00:00,10 MINUTE,day=yyyy-MM-dd;hour=HH;minute=mm,day=2023-12-31;hour=23;minute=50
2024-01-01 00:00:00,12 MINUTE,day=yyyy-MM-dd;hour=HH;minute=mm,day=2023-12-31;hour=23;minute=48
2024-01-01 00:00:00,15 MINUTE,day=yyyy-MM-dd;hour=HH;minute=mm,day=2023-12-31;hour=23;minute=45
2024-01-01 00:00:00,30 MINUTE,day=yyyy-MM-dd;hour=HH;minute=mm,day=2023-12-31;hour=23;minute=30
2024-01-01 00:30:00,30 MINUTE,day=yyyy-MM-dd;hour=HH;minute=mm,day=2024-01-01;hour=00;minute=00
2024-01-01 00:00:00,1 DAY,day=yyyy-MM-dd;hour=HH,day=2023-12-31;hour=00
2024-01-01 00:00:00,1 DAY,day=yyyy-MM-dd;hour=HH;minute=mm,day=2023-12-31;hour=00;minute=00
2024-01-01 00:00:00,1 HOUR,day=yyyy-MM-dd;hour=HH;minute=mm,day=2023-12-31;hour=23;minute=00
2024-01-01 01:00:00,1 HOUR,day=yyyy-MM-dd;hour=HH;minute=mm,day=2024-01-01;hour=00;minute=00
2024-01-01 00:00:00,1 HOUR,day=yyyy-MM-dd,day=2023-12-31
2024-01-01 01:00:00,1 HOUR,day=yyyy-MM-dd,day=2024-01-01
2024-01-01 00:00:00,2 HOUR,day=yyyy-MM-dd,day=2023-12-31
2024-01-01 02:00:00,2 HOUR,day=yyyy-MM-dd,day=2024-01-01
2024-01-01 00:00:00,4 HOUR,day=yyyy-MM-dd,day=2023-12-31
2024-01-01 04:00:00,4 HOUR,day=yyyy-MM-dd,day=2024-01-01
2024-01-01 00:00:00,1 MINUTE,day=yyyy-MM-dd;hour=HH,day=2023-12-31;hour=23
2024-01-01 00:00:00,2 MINUTE,day=yyyy-MM-dd;hour=HH,day=2023-12-31;hour=23
2024-01-01 00:00:00,4 MINUTE,day=yyyy-MM-dd;hour=HH,day=2023-12-31;hour=23
2024-01-01 00:00:00,15 MINUTE,day=yyyy-MM-dd;hour=HH,day=2023-12-31;hour=23
2024-01-01 00:00:00,1 MINUTE,day=yyyy-MM-dd,day=2023-12-31
2024-01-01 00:01:00,1 MINUTE,day=yyyy-MM-dd,day=2024-01-01";
    let table = "`catalog`.`database`.`table`";
    for line in cases.lines() {
        let cells: Vec<&str> = line.split(',').collect();
        let (n, unit) = cells[1].split_once(' ').unwrap();
        let got = period_partition(
            table,
            Some(cells[0]),
            freshness(n, unit).unwrap(),
            &formatters(cells[2]),
        )
        .unwrap();
        assert_eq!(got, formatters(cells[3]), "{line}");
    }
    let day = freshness("1", "DAY").unwrap();
    let f = formatters("day=yyyy-MM-dd;hour=HH");
    assert_eq!(
        period_partition(table, None, day, &f).unwrap_err(),
        "The scheduler time must not be null during the periodic refresh of the materialized table `catalog`.`database`.`table`."
    );
    assert_eq!(
        period_partition(table, Some("2024-01-01"), day, &f).unwrap_err(),
        "Failed to parse a valid partition value for the field 'day' in materialized table `catalog`.`database`.`table` using the scheduler time '2024-01-01' based on the date format 'yyyy-MM-dd HH:mm:ss'."
    );
}

#[test]
fn d04_refresh_statements() {
    assert_eq!(
        refresh_statement(
            "my_materialized_table",
            "SELECT * FROM my_source_table",
            &[]
        ),
        "INSERT OVERWRITE my_materialized_table\n  SELECT * FROM (SELECT * FROM my_source_table)"
    );
    assert_eq!(
        refresh_statement("my_materialized_table", "SELECT * FROM my_source_table", &formatters("k1=v1;k2=v2")),
        "INSERT OVERWRITE my_materialized_table\n  SELECT * FROM (SELECT * FROM my_source_table)\n  WHERE k1 = 'v1' AND k2 = 'v2'"
    );
}

/// D05's source (the `datagen` table's columns; its rows from a CSV file, as the case's
/// `datagen` table has no `number-of-rows`, unbounded, which is refused until CONTINUOUS tables
/// exist: `tests/sql/datagen.rs` runs it with a row count), in a warehouse.
fn d05_env(dir: &Dir) -> TableEnv {
    let path = dir.write(
        "orders.csv",
        "order_id,order_number,user_id,shop_id,product_id,status,order_type,order_created_at,payment_amount_cents
1,n1,1,1,1,0,0,2024-01-01 10:00:00,100
2,n2,1,1,1,0,0,2024-01-01 11:00:00,50
3,n3,2,1,1,0,0,2024-01-02 09:00:00,70
",
    );
    let env = TableEnv::new().with_warehouse(dir.path("wh")).unwrap();
    env.execute_sql(&format!(
        "CREATE TABLE datagenSource (order_id BIGINT, order_number VARCHAR(20), user_id BIGINT, shop_id BIGINT,
           product_id BIGINT, status BIGINT, order_type BIGINT, order_created_at TIMESTAMP, payment_amount_cents BIGINT)
         WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')"
    ))
    .unwrap();
    env
}

const D05_QUERY: &str = "AS SELECT user_id, shop_id, ds, SUM(payment_amount_cents) AS payed_buy_fee_sum, SUM(1) AS pv
     FROM (SELECT user_id, shop_id, DATE_FORMAT(order_created_at, 'yyyy-MM-dd') AS ds, payment_amount_cents
           FROM datagenSource) AS tmp
     GROUP BY (user_id, shop_id, ds)";

#[test]
fn d05_schema_inferred_from_the_query() {
    let dir = Dir::new();
    let env = d05_env(&dir);
    // The case's table resolves to CONTINUOUS (30 s < 30 min); its FULL twin shows the
    // inferred schema.
    let config = MaterializedTableConfig::default();
    let resolved = config
        .resolve(Some(freshness("30", "SECOND").unwrap()), None)
        .unwrap();
    assert_eq!(
        (
            resolved.freshness.duration(),
            resolved.logical,
            resolved.mode
        ),
        (
            Duration::from_secs(30),
            LogicalRefreshMode::Automatic,
            RefreshMode::Continuous
        )
    );
    env.execute_sql(&format!("CREATE MATERIALIZED TABLE users_shops PARTITIONED BY (ds) WITH ('format' = 'debezium-json') FRESHNESS = INTERVAL '30' SECOND {D05_QUERY}")).unwrap();
    let catalog = env.warehouse().unwrap().catalog().unwrap();
    assert_eq!(
        catalog.materialized["users_shops"].refresh_mode,
        RefreshMode::Continuous
    );
    env.execute_sql("DROP MATERIALIZED TABLE users_shops")
        .unwrap();
    // A grouped SUM of a NOT NULL argument is NOT NULL (Calcite's AGG_SUM, as in Flink), so
    // the case's `pv` is `INT NOT NULL` and accepted as a primary key.
    env.execute_sql(&format!("CREATE MATERIALIZED TABLE users_shops (PRIMARY KEY (pv) NOT ENFORCED) PARTITIONED BY (ds) FRESHNESS = INTERVAL '30' SECOND REFRESH_MODE = FULL {D05_QUERY}"))
        .unwrap();
    env.execute_sql("DROP MATERIALIZED TABLE users_shops")
        .unwrap();
    env.execute_sql(&format!("CREATE MATERIALIZED TABLE users_shops PARTITIONED BY (ds) WITH ('format' = 'debezium-json') FRESHNESS = INTERVAL '30' SECOND REFRESH_MODE = FULL {D05_QUERY}")).unwrap();
    let described = text(&env, "DESCRIBE users_shops");
    let head: Vec<&str> = described.lines().take(13).collect();
    assert_eq!(
        head,
        [
            "+-------------------+--------+-------+-----+--------+-----------+",
            "|              name |   type |  null | key | extras | watermark |",
            "+-------------------+--------+-------+-----+--------+-----------+",
            "|           user_id | BIGINT |  TRUE |     |        |           |",
            "|           shop_id | BIGINT |  TRUE |     |        |           |",
            "|                ds | STRING |  TRUE |     |        |           |",
            "| payed_buy_fee_sum | BIGINT |  TRUE |     |        |           |",
            "|                pv |    INT | FALSE |     |        |           |",
            "+-------------------+--------+-------+-----+--------+-----------+",
            "5 rows in set",
            "partitioned by: ds",
            "freshness: INTERVAL '30' SECOND",
            "refresh mode: FULL (declared FULL)",
        ]
    );
}

#[test]
fn d05_validation_errors() {
    let dir = Dir::new();
    let env = d05_env(&dir);
    let cases = [
        ("(PRIMARY KEY (user_id) NOT ENFORCED) PARTITIONED BY (ds)", "Could not create a PRIMARY KEY with nullable column 'user_id'.\nA PRIMARY KEY column must be declared on non-nullable physical columns."),
        ("(PRIMARY KEY (foo) NOT ENFORCED) PARTITIONED BY (ds)", "Primary key column 'foo' not defined in the query schema. Available columns: ['user_id', 'shop_id', 'ds', 'payed_buy_fee_sum', 'pv']."),
        ("PARTITIONED BY (dt)", "Partition column 'dt' not defined in the query schema. Available columns: ['user_id', 'shop_id', 'ds', 'payed_buy_fee_sum', 'pv']."),
        ("PARTITIONED BY (ds) WITH ('partition.fields.shop_id.date-formatter'='yyyy')", "Column 'shop_id' referenced by materialized table option 'partition.fields.shop_id.date-formatter' isn't a partition column. Available partition columns: ['ds']."),
        ("PARTITIONED BY (ds, pv) WITH ('partition.fields.pv.date-formatter'='yyyy')", "Materialized table option 'partition.fields.pv.date-formatter' only supports referring to char, varchar and string type partition column. Column pv type is INT NOT NULL."),
    ];
    for (ddl, expected) in cases {
        let sql = format!("CREATE MATERIALIZED TABLE users_shops {ddl} FRESHNESS = INTERVAL '30' SECOND {D05_QUERY}");
        assert_eq!(
            message(env.execute_sql(&sql).unwrap_err()),
            expected,
            "{ddl}"
        );
    }
    assert_eq!(text(&env, "SHOW MATERIALIZED TABLES"), "");
}

#[test]
fn freshness_errors_name_the_clause() {
    let dir = Dir::new();
    let env = d05_env(&dir);
    let err = env
        .execute_sql("CREATE MATERIALIZED TABLE t\n  FRESHNESS = INTERVAL '1' MONTH AS SELECT user_id FROM datagenSource")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "SQL validation error at line 2, column 15: Materialized table freshness only support SECOND, MINUTE, HOUR, DAY as the time unit."
    );
    let err = env
        .execute_sql("CREATE MATERIALIZED TABLE t FRESHNESS = 3 AS SELECT 1 AS a")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "SQL syntax error at line 1, column 41: Expected: INTERVAL, found: 3"
    );
    let err = env
        .execute_sql("ALTER MATERIALIZED TABLE t STOP")
        .unwrap_err();
    assert_eq!(err.to_string(), "SQL syntax error at line 1, column 28: Expected: SUSPEND, RESUME, REFRESH or AS after ALTER MATERIALIZED TABLE name, found: STOP");
}
