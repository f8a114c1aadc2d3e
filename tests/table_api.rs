//! The seed pages' Table API programs, run end to end over CSV files with exact outputs
//! (issue 9): the grouped count, the temporal table function conversion (SUM = 1238 as
//! DECIMAL), the versioned products table read as of 10:00 and 13:00, and the versioned rates
//! view's changelog; each on 1 and 2 workers, and in both modes where they differ.

use differential_temporal::expr::{call, col, lit};
use differential_temporal::plan::{DedupOrder, JoinKind, Keep};
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::{DataType, Schema, Ts};
use differential_temporal::table::{ResultForm, TableEnv, TableResult};

#[path = "table_api/counters.rs"]
mod counters;
#[path = "table_api/render.rs"]
mod render;

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// An environment on `workers` threads where every CSV record is its own block, hence its own
/// system time: the changelog then shows every intermediate update.
fn env(workers: usize, mode: ExecutionMode) -> TableEnv {
    TableEnv::new()
        .with_workers(workers)
        .with_mode(mode)
        .with_block_bytes(1)
}

fn changelog_text(result: &TableResult) -> Vec<String> {
    result
        .changelog()
        .iter()
        .map(|(_, change)| {
            let cells: Vec<String> = change
                .row
                .iter()
                .zip(&result.schema().fields)
                .map(|(d, f)| {
                    let mut s = String::new();
                    differential_temporal::repr::cast::format_datum(d, &f.ty.data_type, &mut s)
                        .unwrap();
                    s
                })
                .collect();
            format!("{},{}", change.kind, cells.join(","))
        })
        .collect()
}

const ORDERS: &str = "a,b,c,rowtime
x,1,10,2024-01-01 10:00:00
y,2,20,2024-01-01 10:05:00
x,3,30,2024-01-01 10:10:00
x,,40,2024-01-01 10:15:00
";

fn orders_schema() -> Schema {
    Schema::builder()
        .column("a", DataType::STRING.nullable())
        .column("b", DataType::BigInt.nullable())
        .column("c", DataType::BigInt.nullable())
        .column("rowtime", DataType::Timestamp(3).not_null())
        .rowtime("rowtime", 1000)
        .build()
        .unwrap()
}

/// Flink's Table API overview: `orders.groupBy($("a")).select($("a"), $("b").count().as("cnt"))`.
/// COUNT(b) skips the NULL b; each update of a group is a -U/+U pair of its key.
#[test]
fn seed_group_by_count() {
    let dir = tempfile::tempdir().unwrap();
    let orders = write(&dir, "orders.csv", ORDERS);
    for workers in [1, 2] {
        for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
            let env = env(workers, mode);
            env.register_csv("Orders", &orders, Some(orders_schema()))
                .unwrap();
            let counts = env
                .from("Orders")
                .group_by([col("a")])
                .select([col("a"), col("b").count().alias("cnt")]);
            let result = counts.execute().unwrap();
            assert_eq!(result.rows_as_text(), vec!["x,2", "y,1"]);
            assert_eq!(
                changelog_text(&result),
                vec!["+I,x,1", "+I,y,1", "-U,x,1", "+U,x,2"],
                "{workers} workers, {mode:?}"
            );
            assert_eq!(
                result.to_tableau(),
                "\
+----+--------------------------------+----------------------+
| op |                              a |                  cnt |
+----+--------------------------------+----------------------+
| +I |                              x |                    1 |
| +I |                              y |                    1 |
| -U |                              x |                    1 |
| +U |                              x |                    2 |
+----+--------------------------------+----------------------+
4 rows in set
"
            );
        }
    }
}

/// With [`ResultForm::FinalTable`] worker 0 keeps only the final table (the changelog's
/// updates folded as they arrive): the same rows as the changelog's final table, as `+I`.
#[test]
fn final_table_form_keeps_only_the_final_rows() {
    let dir = tempfile::tempdir().unwrap();
    let orders = write(&dir, "orders.csv", ORDERS);
    for workers in [1, 2] {
        let env = env(workers, ExecutionMode::Incremental);
        env.register_csv("Orders", &orders, Some(orders_schema()))
            .unwrap();
        let counts = env
            .from("Orders")
            .group_by([col("a")])
            .select([col("a"), col("c").sum().alias("total")]);
        let changelog = counts.execute().unwrap();
        assert_eq!(changelog.changelog().len(), 6, "{workers} workers");
        env.set_result_form(ResultForm::FinalTable);
        let table = counts.execute().unwrap();
        assert_eq!(changelog_text(&table), vec!["+I,x,80", "+I,y,20"]);
        assert_eq!(table.rows_as_text(), changelog.rows_as_text());
    }
}

const SEED_ORDERS: &str = "order_time,amount,currency
2024-01-01 10:15:00,2,Euro
2024-01-01 10:30:00,1,US Dollar
2024-01-01 10:32:00,50,Yen
2024-01-01 10:52:00,3,Euro
2024-01-01 11:04:00,5,US Dollar
";

const SEED_RATES: &str = "update_time,currency,conversion_rate
2024-01-01 09:00:00,US Dollar,102
2024-01-01 09:00:00,Euro,114
2024-01-01 09:00:00,Yen,1
2024-01-01 10:45:00,Euro,116
2024-01-01 11:15:00,Euro,119
2024-01-01 11:49:00,Pounds,108
";

/// The seed "Temporal Table Function" page: `SELECT SUM(o.amount * r.rate) FROM orders o,
/// LATERAL TABLE (rates(o.order_time)) r WHERE o.currency = r.currency` = 1238, with DECIMAL
/// amounts and rates.
#[test]
fn seed_temporal_table_function_sum_is_1238() {
    let dir = tempfile::tempdir().unwrap();
    let orders = write(&dir, "orders.csv", SEED_ORDERS);
    let rates = write(&dir, "rates.csv", SEED_RATES);
    let orders_schema = Schema::builder()
        .column("order_time", DataType::Timestamp(3).not_null())
        .column("amount", DataType::decimal(10, 2).unwrap().not_null())
        .column("currency", DataType::STRING.not_null())
        .rowtime("order_time", 0)
        .build()
        .unwrap();
    let rates_schema = Schema::builder()
        .column("update_time", DataType::Timestamp(3).not_null())
        .column("currency", DataType::STRING.not_null())
        .column(
            "conversion_rate",
            DataType::decimal(10, 4).unwrap().not_null(),
        )
        .rowtime("update_time", 0)
        .build()
        .unwrap();
    for workers in [1, 2] {
        for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
            let env = env(workers, mode);
            env.register_csv("orders", &orders, Some(orders_schema.clone()))
                .unwrap();
            env.register_csv("currency_rates", &rates, Some(rates_schema.clone()))
                .unwrap();
            let rates = env
                .from("currency_rates")
                .temporal_table_function(col("update_time"), col("currency"))
                .unwrap();
            env.register_temporal_table_function("rates", rates)
                .unwrap();
            let converted = env
                .from("orders")
                .join_lateral(
                    call("rates", [col("order_time")]),
                    col("currency").eq(col("currency0")),
                )
                .select([col("amount")
                    .mul(col("conversion_rate"))
                    .sum()
                    .alias("amount")]);
            let result = converted.execute().unwrap();
            let schema = result.schema();
            assert_eq!(
                schema.fields[0].ty.data_type,
                DataType::decimal(38, 6).unwrap(),
                "SUM of DECIMAL(10,2) * DECIMAL(10,4) = DECIMAL(21,6) is DECIMAL(38,6)"
            );
            assert_eq!(
                result.rows_as_text(),
                vec!["1238.000000"],
                "{workers} {mode:?}"
            );
        }
    }
}

/// Case E05: a temporal table function joins INNER only, in the Table API
/// (`leftOuterJoinLateral`) and in SQL (`LEFT JOIN LATERAL TABLE`), as in Flink.
#[test]
fn e05_temporal_table_function_left_join_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let orders = write(&dir, "orders.csv", SEED_ORDERS);
    let rates = write(&dir, "rates.csv", SEED_RATES);
    let env = env(1, ExecutionMode::Incremental);
    env.execute_sql(&format!(
        "CREATE TABLE orders (order_time TIMESTAMP(3), amount DECIMAL(10, 2), currency STRING,
            WATERMARK FOR order_time AS order_time)
         WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv');
         CREATE TABLE currency_rates (update_time TIMESTAMP(3), currency STRING,
            conversion_rate DECIMAL(10, 4), WATERMARK FOR update_time AS update_time)
         WITH ('connector' = 'filesystem', 'path' = '{rates}', 'format' = 'csv')"
    ))
    .unwrap();
    let history = env
        .from("currency_rates")
        .temporal_table_function(col("update_time"), col("currency"))
        .unwrap();
    env.register_temporal_table_function("rates", history)
        .unwrap();
    let refusal = "a temporal table function join supports INNER JOIN only (as in Flink)";
    let left = env.from("orders").left_outer_join_lateral(
        call("rates", [col("order_time")]),
        col("currency").eq(col("currency0")),
    );
    let Err(e) = left.plan() else {
        panic!("accepted: left_outer_join_lateral over a temporal table function")
    };
    let e = e.to_string();
    assert!(e.contains(refusal), "{e}");
    let Err(e) = env.sql_query(
        "SELECT * FROM orders AS o LEFT JOIN LATERAL TABLE (rates(o.order_time)) AS r ON TRUE",
    ) else {
        panic!("accepted: LEFT JOIN LATERAL TABLE over a temporal table function")
    };
    let e = e.to_string();
    assert!(e.contains(refusal), "{e}");
    // The INNER form is the seed's, accepted.
    let inner = env.from("orders").join_lateral(
        call("rates", [col("order_time")]),
        col("currency").eq(col("currency0")),
    );
    assert!(inner.plan().is_ok());
}

const PRODUCTS: &str = "op,update_time,product_id,product_name,price
+I,2024-01-01 00:01:00,p_001,scooter,11.11
+I,2024-01-01 00:02:00,p_002,basketball,23.11
-U,2024-01-01 12:00:00,p_001,scooter,11.11
+U,2024-01-01 12:00:00,p_001,scooter,12.99
-U,2024-01-01 12:00:00,p_002,basketball,23.11
+U,2024-01-01 12:00:00,p_002,basketball,19.99
-D,2024-01-01 18:00:00,p_001,scooter,12.99
";

/// The seed "Versioned Tables" page: the `products` changelog (primary key `product_id`, event
/// time `update_time`) read as of 10:00 and 13:00, through a temporal join of probe rows at
/// those times (case A01's form), and directly with `Table::as_of`.
#[test]
fn seed_versioned_products_as_of_10_and_13() {
    let dir = tempfile::tempdir().unwrap();
    let products = write(&dir, "products.csv", PRODUCTS);
    let probes = write(
        &dir,
        "probes.csv",
        "t,product_id
2024-01-01 10:00:00,p_001
2024-01-01 10:00:00,p_002
2024-01-01 13:00:00,p_001
2024-01-01 13:00:00,p_002
2024-01-01 19:00:00,p_001
",
    );
    let products_schema = Schema::builder()
        .column("update_time", DataType::Timestamp(3).not_null())
        .column("product_id", DataType::STRING.not_null())
        .column("product_name", DataType::STRING.nullable())
        .column("price", DataType::decimal(32, 2).unwrap().nullable())
        .primary_key(["product_id"])
        .rowtime("update_time", 0)
        .build()
        .unwrap();
    let probes_schema = Schema::builder()
        .column("t", DataType::Timestamp(3).not_null())
        .column("product_id", DataType::STRING.not_null())
        .rowtime("t", 0)
        .build()
        .unwrap();
    for workers in [1, 2] {
        for mode in [ExecutionMode::Incremental, ExecutionMode::Final] {
            let env = env(workers, mode);
            env.register_csv("products", &products, Some(products_schema.clone()))
                .unwrap();
            env.register_csv("probes", &probes, Some(probes_schema.clone()))
                .unwrap();
            let snapshot = env
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
            let result = snapshot.execute().unwrap();
            assert_eq!(
                result.rows_as_text(),
                vec![
                    "2024-01-01 10:00:00.000,p_001,scooter,11.11",
                    "2024-01-01 10:00:00.000,p_002,basketball,23.11",
                    "2024-01-01 13:00:00.000,p_001,scooter,12.99",
                    "2024-01-01 13:00:00.000,p_002,basketball,19.99",
                    "2024-01-01 19:00:00.000,p_001,,",
                ],
                "{workers} workers, {mode:?}"
            );
            // The same snapshots read directly (`Table::as_of`); at 19:00 p_001 is deleted.
            let as_of = |time: &str| {
                let at = differential_temporal::repr::time::parse_event_time(time).unwrap();
                let rows = env.from("products").as_of(Ts::from_millis(at));
                rows.execute().unwrap().rows_as_text()
            };
            assert_eq!(
                as_of("2024-01-01 10:00:00"),
                [
                    "2024-01-01 00:01:00.000,p_001,scooter,11.11",
                    "2024-01-01 00:02:00.000,p_002,basketball,23.11",
                ]
            );
            assert_eq!(
                as_of("2024-01-01 13:00:00"),
                [
                    "2024-01-01 12:00:00.000,p_001,scooter,12.99",
                    "2024-01-01 12:00:00.000,p_002,basketball,19.99",
                ]
            );
            assert_eq!(
                as_of("2024-01-01 19:00:00"),
                ["2024-01-01 12:00:00.000,p_002,basketball,19.99"]
            );
        }
    }
}

/// The seed's `versioned_rates` view (`ROW_NUMBER() OVER (PARTITION BY currency ORDER BY
/// update_time DESC) = 1`) over the append-only rates: its changelog (case A02).
#[test]
fn seed_versioned_rates_view_changelog() {
    let dir = tempfile::tempdir().unwrap();
    let rates = write(
        &dir,
        "rates.csv",
        "update_time,currency,rate
2024-01-01 09:00:00,Yen,102
2024-01-01 09:00:00,Euro,114
2024-01-01 09:00:00,USD,1
2024-01-01 11:15:00,Euro,119
2024-01-01 11:49:00,Pounds,108
",
    );
    let schema = Schema::builder()
        .column("update_time", DataType::Timestamp(3).not_null())
        .column("currency", DataType::STRING.not_null())
        .column("rate", DataType::decimal(38, 10).unwrap().not_null())
        .rowtime("update_time", 15_000)
        .build()
        .unwrap();
    for workers in [1, 2] {
        let env = env(workers, ExecutionMode::Incremental);
        env.register_csv("currency_rates", &rates, Some(schema.clone()))
            .unwrap();
        let versioned = env
            .from("currency_rates")
            .deduplicate([col("currency")], Keep::Last, DedupOrder::EventTime)
            .select([col("currency"), col("rate"), col("update_time")]);
        let result = versioned.execute().unwrap();
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

/// Bad input is a clear error or a reported row, never a panic or a silent loss.
#[test]
fn bad_input_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let orders = write(&dir, "orders.csv", "a,b\nx,1\ny,oops\nz,0\n");
    let schema = Schema::builder()
        .column("a", DataType::STRING.nullable())
        .column("b", DataType::BigInt.nullable())
        .build()
        .unwrap();
    let env = TableEnv::new().with_workers(2);
    env.register_csv("T", &orders, Some(schema)).unwrap();
    // A cell of the wrong type: the row is reported with its position, the others go on.
    let all = env.from("T").execute().unwrap();
    assert_eq!(all.rows_as_text(), vec!["x,1", "z,0"]);
    assert_eq!(all.malformed().len(), 1);
    let report = all.malformed()[0].to_string();
    assert!(report.contains("orders.csv:3:2: column \"b\""), "{report}");
    // An unknown column.
    let err = env.from("T").select([col("nope")]).execute().unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
    // A type error.
    let err = env
        .from("T")
        .select([col("a").add(lit(1i64))])
        .execute()
        .unwrap_err();
    assert!(
        err.to_string().contains("a + 1") || err.to_string().contains("'+'"),
        "{err}"
    );
    // Integer division by zero: the row is refused with its line, the others are computed.
    let result = env
        .from("T")
        .select([col("a"), lit(10i64).div(col("b")).alias("q")])
        .execute()
        .unwrap();
    assert_eq!(result.rows_as_text(), vec!["x,10"]);
    assert_eq!(result.refused().len(), 1);
    assert_eq!(result.refused()[0].1.seq, 4);
    // An unknown table.
    let err = env.from("Nope").execute().unwrap_err();
    assert_eq!(
        err.to_string(),
        "table 'Nope' not found; registered tables: T"
    );
    // A table fed by the caller's dataflow cannot be executed from files.
    let schema = Schema::builder()
        .column("k", DataType::BigInt.not_null())
        .build()
        .unwrap();
    env.register_collection("Events", schema, false).unwrap();
    let err = env.from("Events").execute().unwrap_err();
    assert_eq!(
        err.to_string(),
        "the plan scans 'Events', whose rows come from the caller's dataflow \
         (register_collection): render it with Table::render"
    );
}

/// `execute_insert` writes an updating table as its CSV changelog (with `op`) and an
/// append-only one as its rows.
#[test]
fn execute_insert_writes_csv() {
    let dir = tempfile::tempdir().unwrap();
    let orders = write(&dir, "orders.csv", ORDERS);
    let env = env(2, ExecutionMode::Incremental);
    env.register_csv("Orders", &orders, Some(orders_schema()))
        .unwrap();
    let counts_path = dir.path().join("counts.csv");
    env.from("Orders")
        .group_by([col("a")])
        .select([col("a"), col("b").sum().alias("total")])
        .execute_insert(counts_path.to_str().unwrap())
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&counts_path).unwrap(),
        "op,a,total\n+I,x,1\n+I,y,2\n-U,x,1\n+U,x,4\n"
    );
    let rows_path = dir.path().join("rows.csv");
    env.from("Orders")
        .filter(col("b").is_not_null())
        .select([col("a"), col("rowtime")])
        .execute_insert(rows_path.to_str().unwrap())
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&rows_path).unwrap(),
        "a,rowtime\nx,2024-01-01 10:00:00.000\nx,2024-01-01 10:10:00.000\ny,2024-01-01 10:05:00.000\n"
    );
}

/// Final mode: a build version behind the combined watermark is stored and used for later probe
/// rows, the rows already emitted are not revised, and it is reported with its line (as the
/// `temporal-join` command does).
#[test]
fn final_mode_reports_late_build_versions() {
    let dir = tempfile::tempdir().unwrap();
    let orders = write(
        &dir,
        "orders.csv",
        "id,t,cur\no1,2024-01-01 10:00:10,E\no2,2024-01-01 10:00:13,E\n",
    );
    let rates = write(
        &dir,
        "rates.csv",
        "t,cur,rate\n2024-01-01 10:00:00,E,1\n2024-01-01 10:00:15,E,2\n2024-01-01 10:00:12,E,3\n",
    );
    let schema = |columns: &[(&str, DataType)], key: Option<&str>| {
        let mut builder = Schema::builder();
        for (name, ty) in columns {
            builder = builder.column(*name, ty.clone().nullable());
        }
        if let Some(key) = key {
            builder = builder.primary_key([key]);
        }
        builder.rowtime("t", 0).build().unwrap()
    };
    for workers in [1, 2] {
        let env = env(workers, ExecutionMode::Final);
        env.register_csv(
            "Orders",
            &orders,
            Some(schema(
                &[
                    ("id", DataType::STRING),
                    ("t", DataType::Timestamp(0)),
                    ("cur", DataType::STRING),
                ],
                None,
            )),
        )
        .unwrap();
        env.register_csv(
            "Rates",
            &rates,
            Some(schema(
                &[
                    ("t", DataType::Timestamp(0)),
                    ("cur", DataType::STRING),
                    ("rate", DataType::BigInt),
                ],
                Some("cur"),
            )),
        )
        .unwrap();
        let joined = env
            .from("Orders")
            .temporal_join(
                &env.from("Rates"),
                col("cur").eq(col("cur0")),
                JoinKind::Inner,
            )
            .select([col("id"), col("rate")])
            .execute()
            .unwrap();
        assert_eq!(
            joined.rows_as_text(),
            vec!["o1,1", "o2,3"],
            "{workers} worker(s)"
        );
        let refused: Vec<(u64, &str)> = joined
            .refused()
            .iter()
            .map(|(_, r)| (r.seq, r.reason.as_ref()))
            .collect();
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert_eq!(refused[0].0, 4);
        assert_eq!(
            refused[0].1,
            "late build version: event time 2024-01-01 10:00:12 is behind the watermark \
             2024-01-01 10:00:13 (kept for later probe rows; earlier results are not revised)"
        );
    }
}
