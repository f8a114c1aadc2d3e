//! Tables with a primary key read from changelog files (issue 46, items 2 and 3): the final
//! table of a keyed result is kept by its key, as Flink's sink materializer keeps it.

use differential_temporal::table::tempfile_dir::Dir;

use super::dtemporal_in;

fn in_dir(dir: &Dir) -> std::path::PathBuf {
    std::path::Path::new(&dir.path("")).to_path_buf()
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
