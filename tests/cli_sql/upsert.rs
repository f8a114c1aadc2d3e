//! Tables with a primary key read from changelog files (issue 46, items 2 and 3): the final
//! table of a keyed result is kept by its key, as Flink's sink materializer keeps it; an
//! upsert changelog (`+U` without its `-U`) is normalized by its key wherever it is read but
//! as a temporal join's versions, as Flink's ChangelogNormalize.

use differential_temporal::table::tempfile_dir::Dir;

use super::{dtemporal_in, in_dir};

/// `DESC t` of the table `t (id BIGINT, v BIGINT, PRIMARY KEY (id))` read in changelog `mode`.
fn desc_of_t(mode: &str) -> String {
    format!(
        "+------+--------+-------+---------+--------+-----------+\n\
        | name |   type |  null |     key | extras | watermark |\n\
        +------+--------+-------+---------+--------+-----------+\n\
        |   id | BIGINT | FALSE | PRI(id) |        |           |\n\
        |    v | BIGINT |  TRUE |         |        |           |\n\
        +------+--------+-------+---------+--------+-----------+\n\
        2 rows in set\n\
        changelog mode: {mode}\n"
    )
}

/// The rates changelog of Flink's `TemporalJoinITCase` (`currencyData2` shape): each `-U`
/// carries the new row's event time, and RMB's `-D` a rate its live row does not hold. By key
/// (as Flink's `SinkUpsertMaterializer` matches a retraction by the upsert key) every `-U`/`-D`
/// retracts its key's row: one row per currency, RMB deleted. Folded by whole row the final
/// table kept Euro 114 beside Euro 118 and US Dollar 102 beside 106, and RMB 702. A `-D` of a
/// key that holds no row (GBP, line 11) is reported with its line, not applied.
#[test]
fn final_table_of_a_keyed_changelog_is_kept_by_key() {
    let dir = Dir::new();
    dir.write(
        "rates.csv",
        "op,currency,currency_no,rate,rate_time\n\
         +I,Euro,no1,114,2020-08-15 00:00:00\n\
         +I,US Dollar,no1,102,2020-08-15 00:00:00\n\
         +I,Yen,no1,1,2020-08-15 00:00:00\n\
         +I,RMB,no1,702,2020-08-15 00:00:00\n\
         -U,Euro,no1,114,2020-08-16 00:01:00\n\
         +U,Euro,no1,118,2020-08-16 00:01:00\n\
         -U,US Dollar,no1,102,2020-08-16 00:02:00\n\
         +U,US Dollar,no1,106,2020-08-16 00:02:00\n\
         -D,RMB,no1,708,2020-08-16 00:02:00\n\
         -D,GBP,no1,1,2020-08-16 00:03:00\n",
    );
    let script = "CREATE TABLE rates (currency STRING, currency_no STRING, rate BIGINT,
            rate_time TIMESTAMP(3), PRIMARY KEY (currency) NOT ENFORCED)
            WITH ('connector' = 'filesystem', 'path' = 'rates.csv', 'format' = 'csv');
        SELECT currency, rate, rate_time FROM rates;";
    for workers in ["1", "2"] {
        for block in ["1", "65536"] {
            let args = [
                "sql",
                "-e",
                script,
                "--emit",
                "final",
                "-w",
                workers,
                "--epoch-bytes",
                block,
            ];
            let run = dtemporal_in(&in_dir(&dir), &args);
            let expected = "currency,rate,rate_time\n\
                 Euro,118,2020-08-16 00:01:00.000\n\
                 US Dollar,106,2020-08-16 00:02:00.000\n\
                 Yen,1,2020-08-15 00:00:00.000\n";
            let errors = "row 11: a -D of key (currency=GBP) that holds no row: not applied \
                 (an upsert table is kept by its key)\n\
                 dtemporal: 1 row(s) rejected (reported to standard error); --max-errors 0: failing\n";
            assert_eq!(
                run,
                (1, expected.into(), errors.into()),
                "-w {workers} --epoch-bytes {block}"
            );
        }
    }
}

/// An upsert changelog (`+U` without its `-U`) read as a retract one: `COUNT(*)` counted key 1
/// twice (`+I,2`) and a filter kept key 1's stale row (`+I,1,10` never retracted). Normalized
/// by the key (rule A12) the count is 1 and the filter retracts the row when its `+U` no longer
/// passes; the `-D` of key 3, which holds no row, is counted as ignored (once per query that
/// reads the table), in ChangelogNormalize's words naming the table and its key (they were
/// the deduplicate merge engine's). EXPLAIN and DESC say the table is read as an upsert
/// changelog.
#[test]
fn upsert_changelog_is_normalized_by_key() {
    let dir = Dir::new();
    dir.write(
        "t.csv",
        "op,id,v\n+I,1,10\n+I,2,20\n+U,1,11\n-D,2,20\n-D,3,30\n",
    );
    let script = "CREATE TABLE t (id BIGINT, v BIGINT, PRIMARY KEY (id) NOT ENFORCED)
            WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');
        SELECT COUNT(*) AS n FROM t;
        SELECT id, v FROM t WHERE v < 11;
        EXPLAIN SELECT id, v FROM t WHERE v < 11;
        DESC t;";
    let expected = "op,n\n+I,1\nop,id,v\n+I,1,10\n-U,1,10\n\
        Project(columns=[id, v]) -> [id BIGINT NOT NULL, v BIGINT] updating(key=[id])\n  \
        Filter(condition=[v < 11]) -> [id BIGINT NOT NULL, v BIGINT] updating(key=[id])\n    \
        ChangelogNormalize(key=[id]) -> [id BIGINT NOT NULL, v BIGINT] updating(key=[id])\n      \
        Scan(table=[t]) -> [id BIGINT NOT NULL, v BIGINT] updating(key=[id])\n\n"
        .to_string()
        + &desc_of_t(
            "upsert (+I, +U, -D by primary key; normalized by it, as Flink's ChangelogNormalize)",
        );
    let errors =
        "dtemporal: 2 row(s) ignored: a -D of a key without a row in the upsert table 't' \
        (normalized by its key (id), as Flink's ChangelogNormalize): not applied\n";
    for workers in ["1", "2"] {
        let run = dtemporal_in(&in_dir(&dir), &["sql", "-e", script, "-w", workers]);
        assert_eq!(run, (0, expected.clone(), errors.into()), "-w {workers}");
    }
}

/// A retract changelog (each `+U` right after its key's `-U`) is read as it is, not
/// normalized, as Flink normalizes upsert sources only.
#[test]
fn retract_changelog_is_read_as_it_is() {
    let dir = Dir::new();
    dir.write("t.csv", "op,id,v\n+I,1,10\n-U,1,10\n+U,1,11\n");
    let script = "CREATE TABLE t (id BIGINT, v BIGINT, PRIMARY KEY (id) NOT ENFORCED)
            WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');
        EXPLAIN SELECT id, v FROM t;
        DESC t;";
    let expected =
        "Project(columns=[id, v]) -> [id BIGINT NOT NULL, v BIGINT] updating(key=[id])\n  \
        Scan(table=[t]) -> [id BIGINT NOT NULL, v BIGINT] updating(key=[id])\n\n"
            .to_string()
            + &desc_of_t("retract (+I, -U, +U, -D)");
    for workers in ["1", "2"] {
        let run = dtemporal_in(&in_dir(&dir), &["sql", "-e", script, "-w", workers]);
        assert_eq!(run, (0, expected.clone(), String::new()), "-w {workers}");
    }
}

/// The build side of an event-time temporal join reads an upsert changelog's rows as its
/// versions, not normalized (Flink inserts no ChangelogNormalize there): the `-D` at 11:00 is
/// a delete version at its own time, so the 11:15 order finds no rate, and a `+U` is the
/// version it is.
#[test]
fn temporal_join_reads_an_upsert_build_side_as_versions() {
    let dir = Dir::new();
    dir.write(
        "r.csv",
        "op,currency,rate,rate_time\n\
         +I,Euro,114,2024-01-01 10:00:00\n\
         +U,Euro,116,2024-01-01 10:30:00\n\
         -D,Euro,116,2024-01-01 11:00:00\n",
    );
    dir.write(
        "o.csv",
        "order_id,currency,order_time\n\
         1,Euro,2024-01-01 10:15:00\n\
         2,Euro,2024-01-01 10:45:00\n\
         3,Euro,2024-01-01 11:15:00\n",
    );
    let script = "CREATE TABLE rates (currency STRING, rate BIGINT, rate_time TIMESTAMP(3),
            WATERMARK FOR rate_time AS rate_time, PRIMARY KEY (currency) NOT ENFORCED)
            WITH ('connector' = 'filesystem', 'path' = 'r.csv', 'format' = 'csv');
        CREATE TABLE orders (order_id BIGINT, currency STRING, order_time TIMESTAMP(3),
            WATERMARK FOR order_time AS order_time)
            WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv');
        SELECT o.order_id, r.rate FROM orders AS o
            JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency;";
    for workers in ["1", "2"] {
        let run = dtemporal_in(&in_dir(&dir), &["sql", "-e", script, "-w", workers]);
        let expected = "op,order_id,rate\n+I,1,114\n+I,2,116\n";
        assert_eq!(run, (0, expected.into(), String::new()), "-w {workers}");
    }
}
