//! Flink SQL written by others (the Flink documentation's pages, the Nexmark queries, the Flink
//! SQL cookbook, Flink's own planner tests), run through `dtemporal sql` at one and two workers
//! (issue 46): type names and their defaults, quoted identifiers, the keys and the checks of
//! temporal and lookup joins, the common type of set operations' columns, aggregate types.

mod common;

use common::{dtemporal, fixture, join_run, Run};

/// `dtemporal sql -e sql -w workers`.
fn sql(sql: &str, workers: &str) -> Run {
    dtemporal(&["sql", "-e", sql, "-w", workers])
}

/// The standard output of `sql`, the same at one and two workers; exit code 0, nothing on
/// standard error.
fn output(script: &str) -> String {
    let one = sql(script, "1");
    assert_eq!((one.code, one.stderr.as_str()), (0, ""), "{script}");
    let two = sql(script, "2");
    assert_eq!(two, one, "two workers: {script}");
    one.stdout
}

/// The standard error of `sql`, which must fail with exit code 2 and write nothing on standard
/// output, the same at one and two workers.
fn refusal(script: &str) -> String {
    let one = sql(script, "1");
    assert_eq!((one.code, one.stdout.as_str()), (2, ""), "{script}");
    assert_eq!(sql(script, "2"), one, "two workers: {script}");
    one.stderr
}

/// `CREATE TABLE name (columns) WITH` a CSV file `name.csv` holding `csv` in `dir`.
fn table(dir: &std::path::Path, name: &str, columns: &str, csv: &str) -> String {
    let path = fixture(dir, &format!("{name}.csv"), csv);
    format!(
        "CREATE TABLE {name} ({columns}) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv');\n"
    )
}

/// A bare `VARCHAR` is `STRING` (Flink's DDL; it was `VARCHAR(1)`, which cut every value of a
/// Nexmark sink's `extra VARCHAR` to one character), and `INSERT INTO` writes a value whole
/// into a column of a shorter declared length (Flink's default
/// `table.exec.sink.type-length-enforcer` IGNORE). Reading the bare `VARCHAR` column back
/// keeps the values.
#[test]
fn a_bare_varchar_is_string_and_a_sink_writes_values_whole() {
    let dir = tempfile::tempdir().unwrap();
    let bids = table(
        dir.path(),
        "bids",
        "auction BIGINT, extra STRING",
        "auction,extra\n1,a long extra\n2,xy\n",
    );
    let sink = dir.path().join("nexmark_q0.csv");
    let sink_ddl = format!(
        "CREATE TABLE nexmark_q0 (auction BIGINT, extra VARCHAR, short VARCHAR(2), fixed CHAR(3))
           WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n",
        sink.display()
    );
    for workers in ["1", "2"] {
        let insert = format!(
            "{bids}{sink_ddl}INSERT INTO nexmark_q0 SELECT auction, extra, extra, extra FROM bids"
        );
        let _ = std::fs::remove_file(&sink);
        let run = sql(&insert, workers);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(
            std::fs::read_to_string(&sink).unwrap(),
            "auction,extra,short,fixed\n1,a long extra,a long extra,a long extra\n2,xy,xy,xy\n"
        );
    }
    let read_back = format!(
        "CREATE TABLE back (auction BIGINT, extra VARCHAR)
           WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
         SELECT extra FROM back WHERE auction = 1",
        dir.path().join("back.csv").display()
    );
    fixture(dir.path(), "back.csv", "auction,extra\n1,a long extra\n");
    assert_eq!(output(&read_back), "op,extra\n+I,a long extra\n");
}

/// `` CREATE TABLE `customers` `` then `` FROM `customers` ``, a quoted qualifier, a quoted
/// view, and `TABLE `customers`` in a window TVF: identifiers are compared after unquoting,
/// case-sensitively (as Flink compares them).
#[test]
fn quoted_identifiers_name_the_unquoted_objects() {
    let dir = tempfile::tempdir().unwrap();
    let customers = table(
        dir.path(),
        "`customers`",
        "id INT, `name` STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts",
        "id,name,ts\n1,ann,2024-01-01 10:00:00\n2,bob,2024-01-01 10:30:00\n3,cid,2024-01-01 11:10:00\n",
    );
    let script = format!(
        "{customers}CREATE VIEW `named` AS SELECT `customers`.`name` FROM `customers` WHERE id > 1;
         SELECT * FROM `named`;
         SELECT window_start, COUNT(*) AS n
           FROM TABLE(TUMBLE(TABLE `customers`, DESCRIPTOR(ts), INTERVAL '1' HOUR))
           GROUP BY window_start, window_end"
    );
    assert_eq!(
        output(&script),
        "op,name\n+I,bob\n+I,cid\nop,window_start,n\n+I,2024-01-01 10:00:00.000,2\n+I,2024-01-01 11:00:00.000,1\n"
    );
    let other_case = format!("{customers}SELECT id FROM `Customers`");
    assert!(
        refusal(&other_case).contains("table 'Customers' not found; registered tables: customers"),
        "{other_case}"
    );
}

/// Orders and a versioned table of rates keyed by `currency` only: Flink's planner test
/// `testEventTimeTemporalJoinToSinkWithPk`'s shape.
fn orders_and_rates(dir: &std::path::Path) -> String {
    let orders = table(
        dir,
        "orders",
        "order_id BIGINT, currency STRING, currency_no STRING, amount BIGINT, order_time TIMESTAMP(3),
         WATERMARK FOR order_time AS order_time",
        "order_id,currency,currency_no,amount,order_time
1,Euro,1,2,2024-01-01 10:00:00
2,Euro,1,3,2024-01-01 11:00:00
3,Euro,2,1,2024-01-01 11:00:00
",
    );
    let rates = table(
        dir,
        "rates",
        "currency STRING, currency_no STRING, rate BIGINT, currency_time TIMESTAMP(3),
         WATERMARK FOR currency_time AS currency_time, PRIMARY KEY (currency) NOT ENFORCED",
        "currency,currency_no,rate,currency_time
Euro,1,114,2024-01-01 09:00:00
Euro,1,116,2024-01-01 10:30:00
",
    );
    orders + &rates
}

/// Equality keys that contain the primary key: the key is a subset of them (Flink's
/// `TemporalJoinRewriteWithUniqueKeyRule`), the others are join keys too; without the key
/// the join is refused with Flink's message.
#[test]
fn temporal_join_keys_that_contain_the_primary_key() {
    let dir = tempfile::tempdir().unwrap();
    let tables = orders_and_rates(dir.path());
    let join = "SELECT o.order_id, r.rate FROM orders AS o
        JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r";
    let both =
        format!("{tables}{join} ON o.currency = r.currency AND o.currency_no = r.currency_no");
    assert_eq!(output(&both), "op,order_id,rate\n+I,1,114\n+I,2,116\n");
    let without_key = format!("{tables}{join} ON o.amount = r.rate");
    assert!(refusal(&without_key).ends_with(
        "TemporalJoin: Temporal table's primary key [currency] must be included in the equivalence condition of temporal join, but current temporal join condition is [amount=rate].\n"
    ));
}

/// What Flink refuses in an event-time temporal join: a TIMESTAMP_LTZ probe time against a
/// TIMESTAMP versioned table (`StreamPhysicalTemporalJoin`), and a filter between the build
/// side's source and the join (`EventTimeTemporalJoinRewriteRule`: it drops versions, so an
/// earlier version would stay valid where none is). A condition on the build side in `ON` is
/// checked on the chosen version and stays valid.
#[test]
fn temporal_join_refusals_as_flink() {
    let dir = tempfile::tempdir().unwrap();
    let tables = orders_and_rates(dir.path());
    let ltz = table(
        dir.path(),
        "orders_ltz",
        "amount INT, currency STRING, rowtime TIMESTAMP_LTZ(3), WATERMARK FOR rowtime AS rowtime",
        "amount,currency,rowtime\n2,Euro,2024-01-01 10:00:00\n",
    );
    let script = format!(
        "{tables}{ltz}SELECT * FROM orders_ltz AS o
           JOIN rates FOR SYSTEM_TIME AS OF o.rowtime AS r ON o.currency = r.currency"
    );
    assert!(refusal(&script).ends_with(
        "TemporalJoin: Event-Time Temporal Table Join requires same rowtime type in left table and versioned table, but the rowtime types are TIMESTAMP_LTZ(3) *ROWTIME* and TIMESTAMP(3) *ROWTIME*.\n"
    ));
    let filtered = format!(
        "{tables}CREATE VIEW v AS SELECT * FROM rates WHERE rate > 115;
         SELECT o.order_id, r.rate FROM orders AS o
           JOIN v FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency"
    );
    assert!(refusal(&filtered).ends_with(
        "TemporalJoin: Filter is not allowed for right changelog input of event time temporal join, it will corrupt the versioning of data. Please consider removing the filter before joining.\n"
    ));
    let on_version = format!(
        "{tables}SELECT o.order_id, r.rate FROM orders AS o
           LEFT JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r
           ON o.currency = r.currency AND r.rate > 115"
    );
    assert_eq!(
        output(&on_version),
        "op,order_id,rate\n+I,1,\n+I,2,116\n+I,3,116\n"
    );
}

/// A probe key computed from the probe row (Nexmark's `ON mod(b.auction, 10000) = s.key`) and
/// a constant lookup key (`ON s.key = 3`) in a lookup join; a computed probe key in an
/// event-time temporal join.
#[test]
fn computed_and_constant_join_keys() {
    let dir = tempfile::tempdir().unwrap();
    let lookup = table(
        dir.path(),
        "bid",
        "auction BIGINT, price BIGINT, p AS PROCTIME()",
        "auction,price\n10001,5\n20003,7\n5,1\n",
    ) + &table(
        dir.path(),
        "side_input",
        "key BIGINT, name STRING, PRIMARY KEY (key) NOT ENFORCED",
        "key,name\n1,one\n3,three\n",
    );
    let script = format!(
        "{lookup}SELECT b.auction, s.name FROM bid AS b
           JOIN side_input FOR SYSTEM_TIME AS OF b.p AS s ON mod(b.auction, 10000) = s.key;
         SELECT b.auction, s.name FROM bid AS b
           LEFT JOIN side_input FOR SYSTEM_TIME AS OF b.p AS s ON s.key = 3"
    );
    assert_eq!(
        output(&script),
        "op,auction,name\n+I,10001,one\n+I,20003,three\nop,auction,name\n+I,10001,three\n+I,20003,three\n+I,5,three\n"
    );
    let tables = orders_and_rates(dir.path());
    let upper = format!(
        "{tables}SELECT o.order_id, r.rate FROM orders AS o
           JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r
           ON CONCAT(o.currency, '') = r.currency"
    );
    assert_eq!(
        output(&upper),
        "op,order_id,rate\n+I,1,114\n+I,2,116\n+I,3,116\n"
    );
}

/// `dtemporal lookup-join --on "kind='spot'"`: a constant key alone (every probe row looks up
/// the constant's row), as Flink's lookup join takes `ON r.kind = 'spot'`.
#[test]
fn lookup_join_command_with_a_constant_key_alone() {
    let dir = tempfile::tempdir().unwrap();
    let sides = ("id,cur\n1,EUR\n2,USD\n", "kind,rate\nspot,7\nfwd,8\n");
    for workers in ["1", "2"] {
        let args = ["--on", "kind='spot'", "-w", workers];
        let run = join_run(dir.path(), "lookup-join", sides, &args);
        let joined = "op,id,cur,kind,rate\n+I,1,EUR,spot,7\n+I,2,USD,spot,7\n";
        assert_eq!(
            (run.code, run.stdout.as_str(), run.stderr.as_str()),
            (0, joined, "")
        );
    }
}

/// The columns of a set operation are cast to their common type (Flink's
/// `LogicalTypeMerging.findCommonType`): `''` (CHAR(0)) and a STRING are a STRING, INT and
/// BIGINT a BIGINT; CASE, COALESCE and IN lists take the common type of their operands.
#[test]
fn set_operations_case_coalesce_and_in_widen_to_the_common_type() {
    let dir = tempfile::tempdir().unwrap();
    let u = table(
        dir.path(),
        "u",
        "s STRING, i INT, b BIGINT",
        "s,i,b\nxyz,1,5\n",
    );
    let script = format!(
        "{u}SELECT '' AS c, i FROM u UNION ALL SELECT s, b FROM u;
         SELECT s FROM u INTERSECT SELECT 'xyz' FROM u;
         SELECT s FROM u EXCEPT SELECT '' FROM u;
         SELECT CASE WHEN i = 1 THEN '' ELSE s END AS c FROM u;
         SELECT COALESCE(s, '') AS c, COALESCE(i, b) AS d FROM u;
         SELECT s IN ('', 'xyz') AS a, i IN (1, b) AS e FROM u"
    );
    assert_eq!(
        output(&script),
        "op,c,i\n+I,,1\n+I,xyz,5\nop,s\n+I,xyz\nop,s\n+I,xyz\nop,c\n+I,\nop,c,d\n+I,xyz,1\nop,a,e\n+I,true,true\n"
    );
}

/// A STRING version column of a Fluss `versioned` table: Fluss refuses the table (its message);
/// it was read as BIGINT.
#[test]
fn a_string_version_column_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(dir.path(), "t.csv", "a,b,ts\nk,v1,1000\nk,v2,999\n");
    let script = format!(
        "CREATE TABLE t (a STRING, b STRING, ts STRING, PRIMARY KEY (a) NOT ENFORCED)
           WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv',
                 'table.merge-engine' = 'versioned', 'table.merge-engine.versioned.ver-column' = 'ts');
         SELECT * FROM t"
    );
    assert!(refusal(&script).ends_with(
        "The version column 'ts' for versioned merge engine must be one type of [INT, BIGINT, TIMESTAMP, TIMESTAMP_LTZ], but got STRING.\n"
    ));
}

/// `SUM(1)` grouped by a key is `INT NOT NULL` (Calcite's `AGG_SUM`: nullable only without a
/// group or with FILTER), so a materialized table may take its `pv` as the primary key where
/// it is a grouping key (it was typed nullable and refused).
#[test]
fn a_grouped_sum_of_a_not_null_argument_is_not_null() {
    let dir = tempfile::tempdir().unwrap();
    let pay = table(
        dir.path(),
        "pay",
        "user_id BIGINT, payment_amount_cents BIGINT, ds STRING",
        "user_id,payment_amount_cents,ds\n1,100,2024-01-01\n1,50,2024-01-01\n2,70,2024-01-02\n",
    );
    let script = format!(
        "{pay}CREATE MATERIALIZED TABLE pv_counts (PRIMARY KEY (pv) NOT ENFORCED)
           FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL
           AS SELECT pv, COUNT(*) AS users
              FROM (SELECT user_id, SUM(1) AS pv FROM pay GROUP BY user_id) GROUP BY pv"
    );
    for workers in ["1", "2"] {
        let warehouse = dir.path().join(format!("warehouse{workers}"));
        let run = dtemporal(&[
            "sql",
            "--warehouse",
            warehouse.to_str().unwrap(),
            "-e",
            &script,
            "-w",
            workers,
        ]);
        assert_eq!(
            (run.code, run.stderr.as_str()),
            (0, ""),
            "{workers} worker(s)"
        );
    }
}
