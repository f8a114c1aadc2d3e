//! Cascading window aggregation (issue 46, item 7): a window aggregation over an earlier one's
//! `window_time` (Flink's window-aggregation page, "Cascading Window Aggregation", in its
//! Flink 1.20 form, where the inner window's bounds are renamed so that they do not clash with
//! the outer TVF's), and over `TUMBLE_ROWTIME` of the legacy group windows, through
//! `dtemporal sql` on 1 and 2 workers, in incremental mode (every record its own epoch, so the
//! inner windows' rows are revised as their rows arrive) and in final mode.

use differential_temporal::table::tempfile_dir::Dir;

use super::dtemporal_in;

/// The page's `Bid` table (its `SELECT * FROM Bid`).
const BID: &str = "bidtime,price,item,supplier_id
2020-04-15 08:05:00,4.00,C,supplier1
2020-04-15 08:07:00,2.00,A,supplier1
2020-04-15 08:09:00,5.00,D,supplier2
2020-04-15 08:11:00,3.00,B,supplier2
2020-04-15 08:13:00,1.00,E,supplier1
2020-04-15 08:17:00,6.00,F,supplier2
";

const DDL: &str = "CREATE TABLE Bid (bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING,
    supplier_id STRING, WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = 'bid.csv', 'format' = 'csv');";

/// The page's cascade: 5-minute windows per supplier, then 10-minute windows over their
/// `window_time`.
const CASCADE: &str = "
CREATE VIEW window1 AS
SELECT window_start AS window_5mintumble_start, window_end AS window_5mintumble_end,
       window_time AS rowtime, SUM(price) AS partial_price
  FROM TABLE(
    TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))
  GROUP BY supplier_id, window_start, window_end, window_time;
SELECT window_start, window_end, SUM(partial_price) AS total_price
  FROM TABLE(
      TUMBLE(TABLE window1, DESCRIPTOR(rowtime), INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end;";

/// The same cascade in the legacy group-window syntax, over `TUMBLE_ROWTIME`.
const LEGACY: &str = "
SELECT TUMBLE_START(rowtime, INTERVAL '10' MINUTE) AS window_start,
       TUMBLE_END(rowtime, INTERVAL '10' MINUTE) AS window_end,
       SUM(partial_price) AS total_price
  FROM (SELECT TUMBLE_ROWTIME(bidtime, INTERVAL '5' MINUTE) AS rowtime,
               SUM(price) AS partial_price
          FROM Bid GROUP BY TUMBLE(bidtime, INTERVAL '5' MINUTE), supplier_id)
  GROUP BY TUMBLE(rowtime, INTERVAL '10' MINUTE);";

/// The page's tumbling 10-minute sums of the same bids (its first example's printed result),
/// which the cascade must give.
const TOTALS: &str = "window_start,window_end,total_price
2020-04-15 08:00:00.000,2020-04-15 08:10:00.000,11.00
2020-04-15 08:10:00.000,2020-04-15 08:20:00.000,10.00
";

#[test]
fn cascading_window_aggregation_of_the_docs() {
    let dir = Dir::new();
    dir.write("bid.csv", BID);
    let at = std::path::Path::new(&dir.path("")).to_path_buf();
    for outer in [CASCADE, LEGACY] {
        let script = format!("{DDL}{outer}");
        for workers in ["1", "2"] {
            for mode in [
                &["--mode", "incremental", "--epoch-bytes", "1"][..],
                &["--mode", "final"][..],
            ] {
                let args = [
                    &["sql", "-e", &script, "--emit", "final", "-w", workers],
                    mode,
                ];
                let run = dtemporal_in(&at, &args.concat());
                assert_eq!(
                    run,
                    (0, TOTALS.into(), String::new()),
                    "{outer} {mode:?} -w {workers}"
                );
            }
        }
    }
}

/// Incremental mode with every record its own epoch: the inner window's row of supplier1's
/// 08:05 window is emitted at 4.00, then revised to 6.00 by the 08:07 bid; the outer window
/// folds the revision in (its `-U`/`+U`), so its changelog ends at the page's totals.
#[test]
fn the_outer_window_folds_in_the_inner_windows_revisions() {
    let dir = Dir::new();
    dir.write("bid.csv", BID);
    let at = std::path::Path::new(&dir.path("")).to_path_buf();
    let script = format!("{DDL}{CASCADE}");
    for workers in ["1", "2"] {
        let args = ["sql", "-e", &script, "--epoch-bytes", "1", "-w", workers];
        let run = dtemporal_in(&at, &args);
        let expected = "op,window_start,window_end,total_price
+I,2020-04-15 08:00:00.000,2020-04-15 08:10:00.000,4.00
-U,2020-04-15 08:00:00.000,2020-04-15 08:10:00.000,4.00
+U,2020-04-15 08:00:00.000,2020-04-15 08:10:00.000,6.00
-U,2020-04-15 08:00:00.000,2020-04-15 08:10:00.000,6.00
+U,2020-04-15 08:00:00.000,2020-04-15 08:10:00.000,11.00
+I,2020-04-15 08:10:00.000,2020-04-15 08:20:00.000,3.00
-U,2020-04-15 08:10:00.000,2020-04-15 08:20:00.000,3.00
+U,2020-04-15 08:10:00.000,2020-04-15 08:20:00.000,4.00
-U,2020-04-15 08:10:00.000,2020-04-15 08:20:00.000,4.00
+U,2020-04-15 08:10:00.000,2020-04-15 08:20:00.000,10.00
";
        assert_eq!(run, (0, expected.into(), String::new()), "-w {workers}");
    }
}
