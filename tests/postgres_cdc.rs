//! The `postgres-cdc` connector (issue 16) against a real PostgreSQL server: the one
//! `scripts/postgres.sh start DIR` starts (CI starts it), named by the connection line it prints
//! in `DTEMPORAL_POSTGRES`. Without one these tests say so on standard error and check nothing,
//! unless `DTEMPORAL_REQUIRE_POSTGRES` is set (as CI sets it): then a missing server fails them.
//!
//! Each test owns its tables (`pgcdc_<test>_...`), created afresh, so the tests run in parallel.
//! The option errors that need no server are in `option_errors_need_no_server`.

use differential_temporal::session::StatementResult;
use differential_temporal::table::{TableEnv, TableResult};

mod common;
use common::{
    postgres_fresh_table as fresh_table, postgres_server as server, postgres_setup as setup,
    postgres_value as value, postgres_with_options as with_options,
};

#[path = "postgres_cdc/continuous.rs"]
mod continuous;
#[path = "postgres_cdc/live_query.rs"]
mod live_query;
#[path = "postgres_cdc/stream.rs"]
mod stream;

/// The result of the script's last statement, a query, on `workers` workers.
fn query(workers: usize, script: &str) -> TableResult {
    let env = TableEnv::new().with_workers(workers).with_block_bytes(1);
    match env.execute_sql(script).unwrap().pop() {
        Some(StatementResult::Rows(rows)) => rows,
        other => panic!("the last statement is not a query: {other:?}"),
    }
}

/// `dtemporal sql -e script` with `args` before it: exit code, standard output, standard error.
fn cli(args: &[&str], script: &str) -> (i32, String, String) {
    let args: Vec<&str> = args.iter().copied().chain(["sql", "-e", script]).collect();
    let run = common::dtemporal(&args);
    (run.code, run.stdout, run.stderr)
}

/// A snapshot reads every supported type as declared (NULLs, a time zone other than UTC,
/// microseconds cut to the declared precision, bytes, text with commas and quotes), the
/// metadata columns too, on 1, 2 and 4 workers, through the library and the command line.
#[test]
fn a_snapshot_reads_every_supported_type_as_declared() {
    let Some(line) = server() else { return };
    setup(
        &line,
        "DROP TABLE IF EXISTS pgcdc_types;
         CREATE TABLE pgcdc_types (
           id integer PRIMARY KEY, small smallint, big bigint, ok boolean, r real,
           d double precision, amount numeric(10, 2), name varchar(20), code char(3), note text,
           day date, at time, ts timestamp(6), tz timestamptz, raw bytea);
         SET TIME ZONE 'Europe/Paris';
         INSERT INTO pgcdc_types VALUES
           (1, -32768, 9223372036854775807, true, 1.5, -2.25, 12345678.91, 'caf\u{e9}', 'ab',
            'a, \"quoted\" note', '2024-02-29', '23:59:59', '2024-01-01 10:00:00.123456',
            '2024-01-01 10:00:00+01', '\\x0a1bff'),
           (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);",
    );
    let ddl = format!(
        "CREATE TABLE t (
           id INT NOT NULL, small SMALLINT, big BIGINT, ok BOOLEAN, r FLOAT, d DOUBLE,
           amount DECIMAL(10, 2), name STRING, code STRING, note STRING, `day` DATE,
           `at` TIME(0), ts TIMESTAMP(3), tz TIMESTAMP_LTZ(3), raw BYTES,
           op_ts TIMESTAMP_LTZ(3) METADATA FROM 'op_ts' VIRTUAL,
           tbl STRING METADATA FROM 'table_name' VIRTUAL,
           PRIMARY KEY (id) NOT ENFORCED
         ) WITH ({}, 'table-name' = 'pgcdc_types', 'scan.startup.mode' = 'snapshot');",
        with_options(&line)
    );
    let script = format!("{ddl} SELECT * FROM t;");
    let (first, second) = (
        "1,-32768,9223372036854775807,true,1.5,-2.25,12345678.91,caf\u{e9},ab ,a, \"quoted\" note,2024-02-29,23:59:59,2024-01-01 10:00:00.123,2024-01-01 09:00:00.000,Chv/,1970-01-01 00:00:00.000,pgcdc_types",
        "2,,,,,,,,,,,,,,,1970-01-01 00:00:00.000,pgcdc_types",
    );
    let expected = [first, second];
    for workers in [1, 2, 4] {
        assert_eq!(
            query(workers, &script).rows_as_text(),
            expected,
            "{workers} workers"
        );
    }
    // The command writes the changelog: the snapshot's rows in primary-key order, each `+I`.
    let (code, stdout, stderr) = cli(&["-w", "2"], &script);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let header = "op,id,small,big,ok,r,d,amount,name,code,note,day,at,ts,tz,raw,op_ts,tbl";
    let quoted = first.replace("a, \"quoted\" note", "\"a, \"\"quoted\"\" note\"");
    assert_eq!(stdout, format!("{header}\n+I,{quoted}\n+I,{second}\n"));
}

/// The example of `docs/sql.md` (the `postgres-cdc` connector): a file of orders joined with a
/// Postgres table of rates as of each order's time gives what the same join over the rates' CSV
/// file gives.
#[test]
fn orders_join_postgres_rates_as_of_order_time() {
    let Some(line) = server() else { return };
    setup(
        &line,
        "DROP TABLE IF EXISTS pgcdc_rates;
         CREATE TABLE pgcdc_rates (currency text, rate integer, update_time timestamp(3),
           PRIMARY KEY (currency, update_time));
         INSERT INTO pgcdc_rates VALUES ('Yen', 102, '2024-01-01 09:00:00'),
           ('Euro', 114, '2024-01-01 09:00:00'), ('USD', 1, '2024-01-01 09:00:00'),
           ('Euro', 119, '2024-01-01 11:15:00'), ('Pounds', 108, '2024-01-01 11:49:00');",
    );
    let seed = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sql_seed");
    let orders = format!(
        "CREATE TABLE orders (order_time TIMESTAMP(3), amount INT, currency STRING,
           WATERMARK FOR order_time AS order_time)
         WITH ('connector' = 'filesystem', 'path' = '{seed}/orders.csv', 'format' = 'csv');"
    );
    let rates = |with: String| {
        format!(
            "CREATE TABLE rates (currency STRING, rate INT, update_time TIMESTAMP(3),
               PRIMARY KEY (currency) NOT ENFORCED, WATERMARK FOR update_time AS update_time)
             WITH ({with});"
        )
    };
    let join = "SELECT o.order_time, o.amount, o.currency, r.rate, o.amount * r.rate AS converted
                FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r
                ON o.currency = r.currency;";
    let postgres = format!(
        "{}, 'table-name' = 'pgcdc_rates', 'scan.startup.mode' = 'snapshot'",
        with_options(&line)
    );
    let file = format!(
        "'connector' = 'filesystem', 'path' = '{seed}/currency_rates.csv', 'format' = 'csv'"
    );
    let sorted = |result: TableResult| {
        let mut rows = result.rows_as_text();
        rows.sort();
        rows
    };
    let from_file = sorted(query(2, &format!("{orders} {} {join}", rates(file))));
    assert_eq!(
        from_file,
        [
            "2024-01-01 10:15:00.000,2,Euro,114,228",
            "2024-01-01 10:32:00.000,50,Yen,102,5100",
            "2024-01-01 10:52:00.000,3,Euro,114,342",
        ]
    );
    for workers in [1, 2, 4] {
        let from_postgres = query(
            workers,
            &format!("{orders} {} {join}", rates(postgres.clone())),
        );
        assert_eq!(sorted(from_postgres), from_file, "{workers} workers");
    }
}

/// What the server refuses or the table does not have is an error naming the table and the
/// cause, exit code 2, no output; a value the declared type cannot hold is a row error naming
/// the snapshot row and column, the other rows read.
#[test]
fn bad_tables_and_values_are_clear_errors() {
    let Some(line) = server() else { return };
    setup(
        &line,
        "DROP TABLE IF EXISTS pgcdc_bad;
         CREATE TABLE pgcdc_bad (id integer PRIMARY KEY, doc jsonb, flag boolean, n bigint);
         INSERT INTO pgcdc_bad VALUES (1, '{}', true, 7), (2, NULL, NULL, 300), (3, NULL, false, 9);",
    );
    let with = with_options(&line);
    let run = |columns: &str, options: &str| {
        cli(
            &[],
            &format!("CREATE TABLE t ({columns}) WITH ({with}, {options}); SELECT * FROM t;"),
        )
    };
    let snapshot = "'table-name' = 'pgcdc_bad', 'scan.startup.mode' = 'snapshot'";
    let failed = |stderr: &str| (2, String::new(), format!("dtemporal: error: {stderr}\n"));
    let database = value(&line, "dbname");
    let wrong_password = with.replace("'password' = '", "'password' = 'not-");
    assert_eq!(
        cli(
            &[],
            &format!("CREATE TABLE t (id INT) WITH ({wrong_password}, {snapshot}); SELECT * FROM t;")
        ),
        failed(&format!(
            "table 't' (postgres-cdc): cannot connect to {}:{} as '{}': password authentication failed for user \"{}\"",
            value(&line, "host"),
            value(&line, "port"),
            value(&line, "user"),
            value(&line, "user")
        ))
    );
    assert_eq!(
        run(
            "id INT",
            "'table-name' = 'pgcdc_missing', 'scan.startup.mode' = 'snapshot'"
        ),
        failed(&format!("table 't' (postgres-cdc): database '{database}' has no table public.pgcdc_missing ('schema-name', 'table-name')"))
    );
    assert_eq!(
        run("id INT, doc STRING", snapshot),
        failed("table 't' (postgres-cdc): column 'doc' is of type jsonb, which the postgres-cdc connector does not read; it reads boolean, smallint, integer, bigint, real, double precision, numeric, text, character varying, character, name, date, time, timestamp, timestamp with time zone, bytea")
    );
    assert_eq!(
        run("id INT, flag INT", snapshot),
        failed("table 't' (postgres-cdc): column 'flag' is of type boolean, which does not read as the declared INT")
    );
    assert_eq!(
        run("id INT, gone INT", snapshot),
        failed("table 't' (postgres-cdc): column 'gone' is not a column of public.pgcdc_bad; its columns are: id, doc, flag, n")
    );
    // The command line runs a query over the change stream live: the stream needs the old
    // rows. A batch query (the Table API's execute) refuses the stream as unbounded.
    let streamed = "'table-name' = 'pgcdc_bad', 'slot.name' = 'pgcdc_bad'";
    assert_eq!(
        run("id INT", streamed),
        failed("table 't' (postgres-cdc): public.pgcdc_bad does not have REPLICA IDENTITY FULL, so its updates and deletes do not carry the old row: ALTER TABLE public.pgcdc_bad REPLICA IDENTITY FULL, or read it as an upsert changelog ('changelog-mode' = 'upsert')")
    );
    let env = TableEnv::new();
    let ddl = format!(
        "CREATE TABLE t (id INT) WITH ({}, {streamed})",
        with_options(&line)
    );
    env.execute_sql(&ddl).unwrap();
    let batch = env
        .sql_query("SELECT * FROM t")
        .unwrap()
        .execute()
        .unwrap_err();
    assert_eq!(
        batch.to_string(),
        "table 't' is unbounded ('scan.startup.mode' = 'initial' or 'latest-offset' follows the table's changes forever), so a batch query over it never ends: declare it with 'scan.startup.mode' = 'snapshot' to read its snapshot"
    );
    // Row 2's n does not fit a TINYINT, row 2's flag is NULL in a NOT NULL column: the first
    // bad value of a row is its error; rows 1 and 3 are read.
    let (code, stdout, stderr) = run("id INT, n TINYINT, flag BOOLEAN NOT NULL", snapshot);
    assert_eq!(code, 1);
    assert_eq!(stdout, "op,id,n,flag\n+I,1,7,true\n+I,3,9,false\n");
    assert_eq!(
        stderr,
        "public.pgcdc_bad:2:2: column \"n\": cannot parse \"300\" as TINYINT: out of range -128..=127\n\
         dtemporal: 1 row(s) rejected (reported to standard error); --max-errors 0: failing\n"
    );
}

/// Options are checked when the table is declared, before any server is contacted: each error
/// at its option (or at the table for a missing one), listing what is valid.
#[test]
fn option_errors_need_no_server() {
    let base = "'connector' = 'postgres-cdc', 'hostname' = 'localhost', 'username' = 'u', 'password' = 'p', 'database-name' = 'd', 'table-name' = 't'";
    let error = |options: &str| {
        let env = TableEnv::new();
        let ddl = format!("CREATE TABLE t (id INT) WITH ({base}{options})");
        env.execute_sql(&ddl).unwrap_err().to_string()
    };
    assert_eq!(
        error(", 'slot.nam' = 's'"),
        "SQL validation error at line 1, column 166: Unsupported option 'slot.nam' for connector 'postgres-cdc' (did you mean 'slot.name'?); supported options: connector, hostname, port, username, password, database-name, schema-name, table-name, slot.name, decoding.plugin.name, scan.startup.mode, changelog-mode"
    );
    assert_eq!(
        error(""),
        "SQL validation error at line 1, column 14: table 't': a 'postgres-cdc' table needs the option 'slot.name'"
    );
    assert_eq!(
        error(", 'scan.startup.mode' = 'earliest-offset'"),
        "SQL validation error at line 1, column 166: Unsupported 'scan.startup.mode' 'earliest-offset'; the supported modes are 'initial', 'latest-offset', 'snapshot'"
    );
    assert_eq!(
        error(", 'slot.name' = 's', 'decoding.plugin.name' = 'decoderbufs'"),
        "SQL validation error at line 1, column 185: Unsupported 'decoding.plugin.name' 'decoderbufs': the connector decodes 'pgoutput', the plugin built into PostgreSQL 10 and later"
    );
    assert_eq!(
        error(", 'slot.name' = 's', 'port' = 'five'"),
        "SQL validation error at line 1, column 185: 'port' must be a port number (1-65535), not 'five'"
    );
    assert_eq!(
        error(", 'slot.name' = 's', 'changelog-mode' = 'retract'"),
        "SQL validation error at line 1, column 185: Unsupported 'changelog-mode' 'retract'; the supported modes are 'all', 'upsert'"
    );
    assert_eq!(
        error(", 'slot.name' = 's', 'changelog-mode' = 'upsert'"),
        "SQL validation error at line 1, column 14: table 't' is read as an upsert changelog ('changelog-mode' = 'upsert'), whose updates and deletes are by key: it needs a PRIMARY KEY"
    );
    let metadata = TableEnv::new()
        .execute_sql(&format!(
            "CREATE TABLE t (id INT, m INT METADATA FROM 'op_ts') WITH ({base}, 'slot.name' = 's')"
        ))
        .unwrap_err()
        .to_string();
    assert_eq!(
        metadata,
        "SQL validation error at line 1, column 25: Invalid metadata key 'op_ts' of type INT in column 'm' of a postgres-cdc table; the available keys are 'op_ts' (TIMESTAMP_LTZ(3)), 'database_name', 'schema_name', 'table_name' (STRING)"
    );
}

/// A FULL refresh is a batch query: it reads a postgres-cdc table's snapshot, and refuses a
/// streaming mode when the materialized table is created; a CONTINUOUS one reads either
/// (`continuous.rs`).
#[test]
fn a_full_refresh_reads_a_snapshot_only() {
    let warehouse = tempfile::tempdir().unwrap();
    let env = TableEnv::new().with_warehouse(warehouse.path()).unwrap();
    let base = "'connector' = 'postgres-cdc', 'hostname' = 'localhost', 'username' = 'u', 'password' = 'p', 'database-name' = 'd', 'table-name' = 't'";
    env.execute_sql(&format!(
        "CREATE TABLE snap (id INT) WITH ({base}, 'scan.startup.mode' = 'snapshot');
         CREATE TABLE live (id INT) WITH ({base}, 'slot.name' = 's');"
    ))
    .unwrap();
    let error = |sql: &str| env.execute_sql(sql).unwrap_err().to_string();
    assert_eq!(
        error("CREATE MATERIALIZED TABLE m FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL AS SELECT * FROM live"),
        "SQL validation error at line 1, column 27: a FULL refresh is a batch query: table 'live' is unbounded ('scan.startup.mode' = 'initial' or 'latest-offset' follows the table's changes forever), so a batch query over it never ends: declare it with 'scan.startup.mode' = 'snapshot' to read its snapshot"
    );
    env.execute_sql("CREATE MATERIALIZED TABLE c FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS AS SELECT * FROM live")
        .unwrap();
}

/// A replication slot has one reader: a second materialized table over the postgres-cdc table
/// of a first (so over its slot) is refused at CREATE and at ALTER .. AS, naming the slot and
/// the table that reads it, whatever the startup mode; one with its own declaration and
/// `slot.name` is created, as is any number over a `'snapshot'` table (which reads no slot).
#[test]
fn two_materialized_tables_never_share_a_replication_slot() {
    let warehouse = tempfile::tempdir().unwrap();
    let env = TableEnv::new().with_warehouse(warehouse.path()).unwrap();
    let base = "'connector' = 'postgres-cdc', 'hostname' = 'localhost', 'username' = 'u', 'password' = 'p', 'database-name' = 'd', 'table-name' = 't'";
    env.execute_sql(&format!(
        "CREATE TABLE live (id INT) WITH ({base}, 'slot.name' = 's');
         CREATE TABLE latest (id INT) WITH ({base}, 'slot.name' = 's', 'scan.startup.mode' = 'latest-offset');
         CREATE TABLE own (id INT) WITH ({base}, 'slot.name' = 'own');
         CREATE TABLE snap (id INT) WITH ({base}, 'slot.name' = 's', 'scan.startup.mode' = 'snapshot');
         CREATE MATERIALIZED TABLE a FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS AS SELECT * FROM live;"
    ))
    .unwrap();
    let error = |sql: &str| env.execute_sql(sql).unwrap_err().to_string();
    let continuous = "FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS AS";
    assert_eq!(
        error(&format!("CREATE MATERIALIZED TABLE b {continuous} SELECT id + 1 AS id FROM live")),
        "SQL validation error at line 1, column 27: replication slot 's' on localhost:5432 (postgres-cdc table 'live') is already read by materialized table `default_catalog`.`default_database`.`a`: a slot has one reader (two split its changes, and with 'initial' the second cannot start); declare the Postgres table again under another name with its own 'slot.name' (as each Flink CDC job needs its own slot)"
    );
    assert_eq!(
        error(&format!("CREATE MATERIALIZED TABLE b {continuous} SELECT * FROM latest")),
        "SQL validation error at line 1, column 27: replication slot 's' on localhost:5432 (postgres-cdc table 'latest') is already read by materialized table `default_catalog`.`default_database`.`a`: a slot has one reader (two split its changes, and with 'initial' the second cannot start); declare the Postgres table again under another name with its own 'slot.name' (as each Flink CDC job needs its own slot)"
    );
    env.execute_sql(&format!(
        "CREATE MATERIALIZED TABLE b {continuous} SELECT * FROM own;
         CREATE MATERIALIZED TABLE c {continuous} SELECT * FROM snap;
         CREATE MATERIALIZED TABLE d {continuous} SELECT * FROM snap;"
    ))
    .unwrap();
    assert_eq!(
        error("ALTER MATERIALIZED TABLE b AS SELECT * FROM live"),
        "SQL validation error at line 1, column 26: replication slot 's' on localhost:5432 (postgres-cdc table 'live') is already read by materialized table `default_catalog`.`default_database`.`a`: a slot has one reader (two split its changes, and with 'initial' the second cannot start); declare the Postgres table again under another name with its own 'slot.name' (as each Flink CDC job needs its own slot)"
    );
    assert_eq!(
        error(&format!("CREATE MATERIALIZED TABLE e {continuous} SELECT * FROM own UNION ALL SELECT * FROM snap")),
        "SQL validation error at line 1, column 27: replication slot 'own' on localhost:5432 (postgres-cdc table 'own') is already read by materialized table `default_catalog`.`default_database`.`b`: a slot has one reader (two split its changes, and with 'initial' the second cannot start); declare the Postgres table again under another name with its own 'slot.name' (as each Flink CDC job needs its own slot)"
    );
}
