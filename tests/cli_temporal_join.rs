//! `dtemporal temporal-join` and `lookup-join` on cases B09 (changelog probe, CDC build side)
//! and B15 (temporal table function over an append-only history).

mod common;

use common::{data, dtemporal, fixture, output_of};

const B09_HEADER: &str = "op,order_id,currency,currency_no,amount,order_time,\
currency0,currency_no0,rate,currency_time\n";

/// The B09 raw LEFT join changelog (DERIVED in the case), in probe order.
const B09_LEFT: [&str; 9] = [
    "+I,1,Euro,no1,12,2020-08-15T00:01:00,Euro,no1,114,2020-08-15T00:00:01\n",
    "+I,2,US Dollar,no1,1,2020-08-15T00:02:00,US Dollar,no1,102,2020-08-15T00:00:02\n",
    "+I,3,RMB,no1,40,2020-08-15T00:03:00,RMB,no1,702,2020-08-15T00:00:04\n",
    "+I,4,Euro,no1,14,2020-08-16T00:04:00,Euro,no1,118,2020-08-16T00:01:00\n",
    "-U,2,US Dollar,no1,1,2020-08-16T00:03:00,US Dollar,no1,106,2020-08-16T00:02:00\n",
    "+U,2,US Dollar,no1,18,2020-08-16T00:03:00,US Dollar,no1,106,2020-08-16T00:02:00\n",
    "+I,5,RMB,no1,40,2020-08-16T00:03:00,,,,\n",
    "+I,6,RMB,no1,40,2020-08-16T00:04:00,,,,\n",
    "-D,6,RMB,no1,40,2020-08-16T00:04:00,,,,\n",
];

fn b09(extra: &[&str]) -> String {
    let (probe, build) = (data("b09_orders.csv"), data("b09_currency.csv"));
    let mut args = vec![
        "temporal-join",
        "--probe",
        &probe,
        "--build",
        &build,
        "--on",
        "currency=currency",
        "--probe-time",
        "order_time",
        "--build-time",
        "currency_time",
    ];
    args.extend_from_slice(extra);
    output_of(&args)
}

#[test]
fn b09_left_and_inner_changelogs() {
    let left = format!("{B09_HEADER}{}", B09_LEFT.concat());
    assert_eq!(b09(&["--left"]), left);
    let inner: String = B09_LEFT
        .iter()
        .filter(|l| !l.ends_with(",,,,\n"))
        .copied()
        .collect();
    assert_eq!(b09(&[]), format!("{B09_HEADER}{inner}"));
}

#[test]
fn b09_final_mode_equals_incremental_for_any_worker_count() {
    let left = format!("{B09_HEADER}{}", B09_LEFT.concat());
    for extra in [
        &["--left", "--mode", "final"][..],
        &["--left", "--mode", "final", "-w", "2", "--epoch-bytes", "1"],
        &["--left", "-w", "2", "--epoch-bytes", "1"],
        &["--left", "--mode", "final", "--lateness", "86400000000"],
    ] {
        assert_eq!(b09(extra), left, "{extra:?}");
    }
}

#[test]
fn b15_temporal_table_function_over_append_only_history() {
    let (probe, build) = (data("b15_orders.csv"), data("b15_filtered_rates.csv"));
    let out = output_of(&[
        "temporal-join",
        "--probe",
        &probe,
        "--build",
        &build,
        "--on",
        "currency=currency",
        "--probe-time",
        "rowtime_ms",
        "--build-time",
        "rowtime_ms",
        "--build-append-only",
    ]);
    assert_eq!(
        out,
        "op,amount,currency,rowtime_ms,currency0,rate,rowtime_ms0\n\
         +I,2,Euro,2,Euro,114,1\n\
         +I,3,Euro,5,Euro,116,5\n"
    );
}

#[test]
fn lookup_join_sees_the_build_side_current_at_arrival() {
    // Everything arrives in one block: each order sees the last version of its currency.
    let (probe, build) = (data("b15_orders.csv"), data("b15_filtered_rates.csv"));
    let out = output_of(&[
        "lookup-join",
        "--probe",
        &probe,
        "--build",
        &build,
        "--on",
        "currency=currency",
        "--build-time",
        "rowtime_ms",
        "--left",
    ]);
    assert_eq!(
        out,
        "op,amount,currency,rowtime_ms,currency0,rate,rowtime_ms0\n\
         +I,2,Euro,2,Euro,119,7\n\
         +I,1,US Dollar,3,,,\n\
         +I,50,Yen,4,,,\n\
         +I,3,Euro,5,Euro,119,7\n"
    );
}

#[test]
fn a_bad_on_column_exits_2_listing_the_columns() {
    let (probe, build) = (data("b09_orders.csv"), data("b09_currency.csv"));
    let run = dtemporal(&[
        "temporal-join",
        "--probe",
        &probe,
        "--build",
        &build,
        "--on",
        "currency=nope",
        "--probe-time",
        "order_time",
        "--build-time",
        "currency_time",
    ]);
    assert_eq!((run.code, run.stdout.as_str()), (2, ""));
    assert!(
        run.stderr.contains(
            "no column \"nope\"; the columns are: currency, currency_no, rate, currency_time"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn final_mode_reports_late_probe_rows_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let probe = fixture(dir.path(), "o.csv", "id,cur,t\n1,E,10\n2,E,20\n3,E,5\n");
    let build = fixture(dir.path(), "r.csv", "cur,rate,t\nE,1,0\nE,2,15\nE,3,30\n");
    let run = dtemporal(&[
        "temporal-join",
        "--probe",
        &probe,
        "--build",
        &build,
        "--on",
        "cur=cur",
        "--probe-time",
        "t",
        "--build-time",
        "t",
        "--mode",
        "final",
        "--lateness",
        "0",
        "--epoch-bytes",
        "1",
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "op,id,cur,t,cur0,rate,t0\n+I,1,E,10,E,1,0\n+I,2,E,20,E,2,15\n"
    );
    assert!(
        run.stderr.starts_with(&format!(
            "{probe}:4: late probe row: event time 5 is behind the watermark At(15)\n"
        )),
        "{}",
        run.stderr
    );
}
