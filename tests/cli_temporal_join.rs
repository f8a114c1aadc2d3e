//! `dtemporal temporal-join` and `lookup-join` on cases B09 (changelog probe, CDC build side)
//! and B15 (temporal table function over an append-only history).

mod common;

use common::{data, dtemporal, fixture, join_run, output_of};

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
            "{probe}:4: late probe row: event time 5 is behind the watermark 15\n"
        )),
        "{}",
        run.stderr
    );
}

/// Orders and rates for the `--where` tests: `(id, cur, amount, t)` and `(cur, rate, t)`.
fn where_join(condition: &str, extra: &[&str]) -> common::Run {
    let dir = tempfile::tempdir().unwrap();
    let (probe, build) = (dir.path().join("o.csv"), dir.path().join("r.csv"));
    std::fs::write(
        &probe,
        "id,cur,amount,t\n1,E,5,10\n2,E,50,20\n3,Y,7,20\n4,E,,20\n",
    )
    .unwrap();
    std::fs::write(&build, "cur,rate,t\nE,9.5,0\nE,120,15\nY,,0\n").unwrap();
    let (probe, build) = (probe.to_str().unwrap(), build.to_str().unwrap());
    let mut args = vec![
        "temporal-join",
        "--probe",
        probe,
        "--build",
        build,
        "--on",
        "cur=cur",
        "--probe-time",
        "t",
        "--build-time",
        "t",
        "--where",
        condition,
    ];
    args.extend_from_slice(extra);
    dtemporal(&args)
}

const WHERE_HEADER: &str = "op,id,cur,amount,t,cur0,rate,t0\n";

#[test]
fn where_checks_the_chosen_version_only() {
    // Rule B5: order 1 (t 10) gets rate 9.5 (fails rate > 100); it is not joined with the later
    // rate 120 even though that one would pass. Orders 2 and 4 get 120; order 4's NULL amount
    // fails "amount < 100"; order 3's NULL rate fails any comparison.
    for extra in [
        &[][..],
        &["--mode", "final"],
        &["-w", "2", "--epoch-bytes", "1"],
    ] {
        let run = where_join("rate > 100 AND amount < 100", extra);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(
            run.stdout,
            format!("{WHERE_HEADER}+I,2,E,50,20,E,120,15\n"),
            "{extra:?}"
        );
    }
    // LEFT pads the rows that fail; numbers compare as numbers (120 >= 50, as text it would
    // not be), text as text.
    let run = where_join("rate >= amount AND cur0 != 'Y'", &["--left"]);
    assert_eq!(
        run.stdout,
        format!(
            "{WHERE_HEADER}+I,1,E,5,10,E,9.5,0\n+I,2,E,50,20,E,120,15\n+I,3,Y,7,20,,,\n\
             +I,4,E,,20,,,\n"
        )
    );
    let run = where_join("\"t0\" >= 15 OR cur = 'E'", &[]);
    assert_eq!((run.code, run.stdout.as_str()), (2, ""));
}

#[test]
fn where_parse_errors_name_the_position_and_the_columns() {
    let run = where_join("rate >", &[]);
    assert_eq!((run.code, run.stdout.as_str()), (2, ""));
    assert!(
        run.stderr
            .contains("--where: at character 7: expected a column or a literal, found the end"),
        "{}",
        run.stderr
    );
    let run = where_join("price > 1", &[]);
    assert!(
        run.stderr.contains(
            "--where: at character 1: no column \"price\"; the columns are id, cur, amount, t, \
             cur0, rate, t0"
        ),
        "{}",
        run.stderr
    );
}

/// A NULL join key matches nothing, not even a NULL build key (SQL's rule; Flink's temporal join
/// differs): INNER drops the probe row, LEFT pads it, and neither is an error.
#[test]
fn null_join_keys_never_match_and_are_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let probe = fixture(dir.path(), "p.csv", "id,k,ts\n1,a,10\n2,,10\n");
    let build = fixture(dir.path(), "b.csv", "bid,k,ts,v\n1,a,5,x\n2,,5,y\n");
    let header = "op,id,k,ts,bid,k0,ts0,v\n";
    let (matched, padded) = ("+I,1,a,10,1,a,5,x\n", "+I,2,,10,,,,\n");
    let join = |command: &str, extra: &[&str]| {
        let mut args = vec![command, "--probe", &probe, "--build", &build, "--on", "k=k"];
        args.extend_from_slice(&["--build-time", "ts", "--build-append-only"]);
        if command == "temporal-join" {
            args.extend_from_slice(&["--probe-time", "ts"]);
        }
        args.extend_from_slice(extra);
        output_of(&args)
    };
    // In final mode the padded row, which no version can match, is emitted when it arrives,
    // the matched one when the watermark passes it: a changelog in emission order.
    for (extra, left_lines) in [
        (&[][..], [matched, padded]),
        (&["--mode", "final"], [padded, matched]),
        (&["--mode", "final", "--lateness", "0"], [padded, matched]),
    ] {
        let left = join("temporal-join", &[extra, &["--left", "-w", "2"]].concat());
        assert_eq!(
            left,
            format!("{header}{}", left_lines.concat()),
            "{extra:?}"
        );
        assert_eq!(join("temporal-join", extra), format!("{header}{matched}"));
    }
    let left = join("lookup-join", &["--left"]);
    assert_eq!(left, format!("{header}{matched}{padded}"));
    assert_eq!(join("lookup-join", &[]), format!("{header}{matched}"));
}

/// A build version behind the combined watermark is kept (a later probe row joins it) and
/// reported with its line, key, time and the watermark; the rows already written stay.
#[test]
fn final_mode_reports_late_build_versions_and_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let probe = fixture(dir.path(), "o.csv", "id,cur,t\n1,E,10\n2,E,13\n");
    let build = fixture(dir.path(), "r.csv", "cur,rate,t\nE,1,0\nE,2,15\nE,3,25\n");
    let late = fixture(
        dir.path(),
        "late.csv",
        "cur,rate,t\nE,1,0\nE,2,15\nE,3,12\n",
    );
    let run = |build: &str| {
        let mut args = vec!["temporal-join", "--probe", &probe, "--build", build, "--on"];
        args.extend_from_slice(&["cur=cur", "--probe-time", "t", "--build-time", "t"]);
        args.extend_from_slice(&["--mode", "final", "--lateness", "0", "--epoch-bytes", "1"]);
        dtemporal(&args)
    };
    let on_time = run(&build);
    assert_eq!((on_time.code, on_time.stderr.as_str()), (0, ""));
    assert_eq!(
        on_time.stdout,
        "op,id,cur,t,cur0,rate,t0\n+I,1,E,10,E,1,0\n+I,2,E,13,E,1,0\n"
    );
    // Epoch 2: the version at 12 is behind min(probe 13, build 15) = 13. Probe row 1 fired at
    // epoch 2 with the versions of epochs 0 and 1; row 2 fires at the end and joins it.
    let out = run(&late);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stdout,
        "op,id,cur,t,cur0,rate,t0\n+I,1,E,10,E,1,0\n+I,2,E,13,E,3,12\n"
    );
    assert!(
        out.stderr.starts_with(&format!(
            "{late}:4: key E: late build version: event time 12 is behind the watermark 13 \
             (kept for later probe rows; earlier results are not revised)\n"
        )),
        "{}",
        out.stderr
    );
}

/// `--on` with a constant key (rule B18: the build key column `kind` must equal `'spot'`) and a
/// `--where` residual, in the lookup join and the temporal join alike: the residual is checked
/// against the one version chosen (current, resp. valid at the order's time), INNER drops and
/// LEFT pads the rows that fail it.
#[test]
fn constant_keys_and_where_in_both_joins() {
    let dir = tempfile::tempdir().unwrap();
    let probe = fixture(
        dir.path(),
        "o.csv",
        "id,cur,amount,t\n1,E,5,10\n2,E,50,10\n3,Y,7,10\n4,U,1,10\n",
    );
    let build = fixture(
        dir.path(),
        "r.csv",
        "cur,kind,rate,t\nE,spot,120,1\nE,fwd,90,1\nY,spot,,1\nU,fwd,3,1\n",
    );
    let header = "op,id,cur,amount,t,cur0,kind,rate,t0\n";
    let join = |command: &str, extra: &[&str]| {
        let mut args = vec![command, "--probe", &probe, "--build", &build];
        args.extend_from_slice(&["--on", "cur=cur, kind='spot'", "--build-time", "t"]);
        if command == "temporal-join" {
            args.extend_from_slice(&["--probe-time", "t"]);
        }
        args.extend_from_slice(extra);
        output_of(&args)
    };
    let (one, two) = ("+I,1,E,5,10,E,spot,120,1\n", "+I,2,E,50,10,E,spot,120,1\n");
    let three = "+I,3,Y,7,10,Y,spot,,1\n";
    let (pad2, pad3, pad4) = (
        "+I,2,E,50,10,,,,\n",
        "+I,3,Y,7,10,,,,\n",
        "+I,4,U,1,10,,,,\n",
    );
    let condition = "rate > 100 AND amount < 10";
    for command in ["lookup-join", "temporal-join"] {
        for workers in ["1", "2"] {
            let w = ["-w", workers];
            assert_eq!(
                join(command, &[&w[..], &["--left"]].concat()),
                format!("{header}{one}{two}{three}{pad4}"),
                "{command} -w {workers}"
            );
            assert_eq!(
                join(command, &w),
                format!("{header}{one}{two}{three}"),
                "{command} -w {workers}"
            );
            assert_eq!(
                join(
                    command,
                    &[&w[..], &["--where", condition, "--left"]].concat()
                ),
                format!("{header}{one}{pad2}{pad3}{pad4}"),
                "{command} -w {workers}"
            );
            assert_eq!(
                join(command, &[&w[..], &["--where", condition]].concat()),
                format!("{header}{one}"),
                "{command} -w {workers}"
            );
        }
    }
}

/// The lookup join's `--where` is checked against the version current at arrival: a later
/// version that would pass does not revise the result (rules B5, B18).
#[test]
fn lookup_join_where_checks_the_current_version_only() {
    let dir = tempfile::tempdir().unwrap();
    let sides = ("id,cur\n1,E\n2,E\n", "cur,rate\nE,90\nE,120\n");
    let args = [
        "--on",
        "cur=cur",
        "--where",
        "rate > 100",
        "--left",
        "--epoch-bytes",
        "1",
    ];
    let run = join_run(dir.path(), "lookup-join", sides, &args);
    // One row per block: order 1 arrives with rate 90 current, order 2 with 120.
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    assert_eq!(run.stdout, "op,id,cur,cur0,rate\n+I,1,E,,\n+I,2,E,E,120\n");
}

/// `--state-ttl` (rule B13, on the combined watermark, `--epoch-bytes 1`: one row an epoch).
/// At epoch 2 the watermark is min(30, 30) = 30: order 1 (A at 2) fires with r1, then key A
/// expires (2 + 10 < 30) and r1 is forgotten. Order 3 (A at 31) finds no version valid at 31
/// (r2 at 32 arrived after the expiry) and is padded; order 4 (A at 33) joins r2. Key B (access
/// 30, expiry 40) keeps x. Without a retention order 3 joins r1. Incremental mode refuses it.
#[test]
fn state_ttl_forgets_an_idle_key_in_final_mode() {
    let dir = tempfile::tempdir().unwrap();
    let probe = fixture(
        dir.path(),
        "o.csv",
        "id,cur,t\n1,A,2\n2,B,30\n3,A,31\n4,A,33\n",
    );
    let build = fixture(
        dir.path(),
        "r.csv",
        "cur,rate,t\nA,r1,1\nB,x,30\nA,r2,32\nB,y,41\n",
    );
    let args = |extra: &[&'static str]| {
        let mut args = vec![
            "temporal-join",
            "--probe",
            &probe,
            "--build",
            &build,
            "--on",
        ];
        args.extend_from_slice(&[
            "cur=cur",
            "--probe-time",
            "t",
            "--build-time",
            "t",
            "--left",
        ]);
        args.extend_from_slice(&["--mode", "final", "--lateness", "0", "--epoch-bytes", "1"]);
        args.extend_from_slice(extra);
        args.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    let header = "op,id,cur,t,cur0,rate,t0\n+I,1,A,2,A,r1,1\n+I,2,B,30,B,x,30\n";
    let expired = format!("{header}+I,3,A,31,,,\n+I,4,A,33,A,r2,32\n");
    for workers in ["1", "2"] {
        assert_eq!(
            output_of(&args(&["--state-ttl", "10", "-w", workers])),
            expired
        );
    }
    let kept = format!("{header}+I,3,A,31,A,r1,1\n+I,4,A,33,A,r2,32\n");
    assert_eq!(output_of(&args(&[])), kept);
    assert_eq!(output_of(&args(&["--state-ttl", "0"])), kept);
    assert_eq!(output_of(&args(&["--state-ttl", "100"])), kept);
    let mut incremental = args(&["--state-ttl", "10"]);
    incremental.retain(|a| a != "final");
    incremental.retain(|a| a != "--mode");
    let run = dtemporal(&incremental);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            2,
            "",
            "dtemporal: error: --state-ttl needs --mode final: state expires on the watermark\n"
        )
    );
}

/// `lookup-join --state-ttl EPOCHS` (rule B17, in epochs: `--epoch-bytes 1` puts row `i` of each
/// file at epoch `i`). Key A is touched at epochs 0 (r1, order 1) and 1 (order 2); with a
/// retention of 2 epochs it expires at epoch 3, so order 4 (epoch 3) finds no version and is
/// padded; order 5 (epoch 4) joins r2, which arrived at epoch 4. With 3 epochs A lives until
/// epoch 4 and order 4 joins r1. B is touched at epoch 1 (x) and 2 (order 3).
#[test]
fn lookup_join_state_ttl_counts_epochs() {
    let dir = tempfile::tempdir().unwrap();
    let probe = fixture(dir.path(), "o.csv", "id,cur\n1,A\n2,A\n3,B\n4,A\n5,A\n");
    let build = fixture(dir.path(), "r.csv", "cur,rate\nA,r1\nB,x\nC,z\nD,w\nA,r2\n");
    let args = |extra: &[&str]| {
        let head = [
            "lookup-join",
            "--probe",
            &probe,
            "--build",
            &build,
            "--on",
            "cur=cur",
        ];
        let args = [&head[..], &["--left", "--epoch-bytes", "1"], extra].concat();
        args.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    let head = "op,id,cur,cur0,rate\n+I,1,A,A,r1\n+I,2,A,A,r1\n+I,3,B,B,x\n";
    let expired = format!("{head}+I,4,A,,\n+I,5,A,A,r2\n");
    let kept = format!("{head}+I,4,A,A,r1\n+I,5,A,A,r2\n");
    for workers in ["1", "2"] {
        assert_eq!(
            output_of(&args(&["--state-ttl", "2", "-w", workers])),
            expired
        );
    }
    assert_eq!(output_of(&args(&["--state-ttl", "3"])), kept);
    assert_eq!(output_of(&args(&["--state-ttl", "0"])), kept);
    assert_eq!(output_of(&args(&[])), kept);
}
