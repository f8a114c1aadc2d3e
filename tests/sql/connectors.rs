//! The filesystem connector: `'path'` naming a directory (every file under it, in path order,
//! hidden files skipped) and `'format' = 'debezium-json'`.

use differential_temporal::session::StatementResult;

use super::{changelog_text, env, last_rows, seed_script};

/// The seed's temporal table function query over `orders_parts/` (the seed orders in two
/// files, and a hidden `.crc` file that is not CSV) gives the seed's answer.
#[test]
fn a_directory_of_orders() {
    let script =
        seed_script("temporal_table_function.sql").replace("/orders.csv'", "/orders_parts'");
    for workers in [1, 2] {
        let result = last_rows(&env(workers), &script);
        assert_eq!(
            result.rows_as_text(),
            vec!["1238.000000"],
            "{workers} workers"
        );
    }
}

/// The files under the directory (a nested one included; `.` and `_` names skipped) are read
/// side by side; records on equal lines arrive in the files' path order, so keep-last by
/// arrival keeps the later file's row. A bad cell is a row error naming its file and line.
#[test]
fn directory_files_in_path_order_with_their_own_row_errors() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t");
    std::fs::create_dir(&table).unwrap();
    std::fs::write(table.join("b.csv"), "k,v\nx,2\ny,oops\n").unwrap();
    std::fs::write(table.join("a.csv"), "k,v\nx,1\ny,3\n").unwrap();
    std::fs::write(table.join(".b.csv.crc"), "\u{0}\u{1}").unwrap();
    std::fs::write(table.join("_SUCCESS"), "").unwrap();
    std::fs::create_dir(table.join("c")).unwrap();
    std::fs::write(table.join("c").join("z.csv"), "k,v\nz,9\n").unwrap();
    let ddl = format!(
        "CREATE TABLE t (k STRING, v INT, pt AS PROCTIME())
           WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');",
        table.display()
    );
    for workers in [1, 2] {
        let env = env(workers);
        env.execute_sql(&ddl).unwrap();
        let last = last_rows(
            &env,
            "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt DESC) AS rn
             FROM t) WHERE rn = 1",
        );
        assert_eq!(
            last.rows_as_text(),
            vec!["x,2", "y,3", "z,9"],
            "{workers} workers"
        );
        let errors: Vec<String> = last.malformed().iter().map(|e| e.to_string()).collect();
        assert_eq!(
            errors,
            [format!(
                "{}:3:2: column \"v\": cannot parse \"oops\" as INT: not an integer",
                table.join("b.csv").display()
            )]
        );
    }
}

/// `'format' = 'debezium-json'` (`tests/sql_seed/debezium_products.sql`): Debezium's events
/// decoded as Flink decodes them (`r`/`c` -> `+I`, `u` -> `-U +U`, `d` -> `-D`; a blank line is
/// no event), plain and with the `schema`/`payload` wrapper.
#[test]
fn debezium_json_changelogs() {
    for workers in [1, 2] {
        let results = env(workers)
            .execute_sql(&seed_script("debezium_products.sql"))
            .unwrap();
        let [StatementResult::Ok, StatementResult::Ok, StatementResult::Rows(plain), StatementResult::Rows(totals)] =
            &results[..]
        else {
            panic!("{results:?}")
        };
        assert_eq!(
            changelog_text(plain),
            [
                "+I,101,scooter,3.14",
                "+I,102,car battery,8.10",
                "-U,101,scooter,3.14",
                "+U,101,scooter,5.15",
                "-D,102,car battery,8.10",
                "+I,103,12-pack drill bits,0.80",
            ],
            "{workers} workers"
        );
        assert_eq!(totals.rows_as_text(), vec!["2,5.95"], "{workers} workers");
    }
}

/// `INSERT INTO` a `debezium-json` table writes Flink's events (`+I`/`+U` as `c`, `-U`/`-D` as
/// `d`), which read back as the same changelog but for the update's kinds.
#[test]
fn debezium_json_sink_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let with = format!(
        "WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'debezium-json')",
        out.display()
    );
    let script = format!(
        "{}
         CREATE TABLE copy (id BIGINT, name STRING, weight DECIMAL(10, 2)) {with};
         INSERT INTO copy SELECT id, name, weight FROM topic_products;",
        seed_script("debezium_products.sql")
            .split("SELECT id")
            .next()
            .unwrap()
    );
    env(1).execute_sql(&script).unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        r#"{"before":null,"after":{"id":101,"name":"scooter","weight":3.14},"op":"c"}
{"before":null,"after":{"id":102,"name":"car battery","weight":8.10},"op":"c"}
{"before":{"id":101,"name":"scooter","weight":3.14},"after":null,"op":"d"}
{"before":null,"after":{"id":101,"name":"scooter","weight":5.15},"op":"c"}
{"before":{"id":102,"name":"car battery","weight":8.10},"after":null,"op":"d"}
{"before":null,"after":{"id":103,"name":"12-pack drill bits","weight":0.80},"op":"c"}
"#
    );
    let back = last_rows(
        &env(1),
        &format!("CREATE TABLE back (id BIGINT, name STRING, weight DECIMAL(10, 2)) {with}; SELECT * FROM back"),
    );
    assert_eq!(
        changelog_text(&back),
        [
            "+I,101,scooter,3.14",
            "+I,102,car battery,8.10",
            "-D,101,scooter,3.14",
            "+I,101,scooter,5.15",
            "-D,102,car battery,8.10",
            "+I,103,12-pack drill bits,0.80",
        ]
    );
}

/// The seed's `products` DDL verbatim, its `METADATA FROM 'value.source.timestamp'` column
/// included, over Debezium events (`products_debezium_seed.json`: the seed's changelog as
/// MySQL's connector writes it): the seed's answers as of 10:00 and 13:00.
#[test]
fn seed_products_from_debezium_events() {
    let script = seed_script("products.sql").replace(
        "/products.csv', 'format' = 'csv'",
        "/products_debezium_seed.json', 'format' = 'debezium-json'",
    );
    for workers in [1, 2] {
        let result = last_rows(&env(workers), &script);
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
    }
}
