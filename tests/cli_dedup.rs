//! `dtemporal dedup` on cases A02, A03, A07 and the seed currency rates (rules A7, A11).

mod common;

use common::{on_input, output_of, same_output};

fn dedup(input: &str, args: &[&str]) -> String {
    output_of(&on_input("dedup", input, args))
}

#[test]
fn a02_versioned_view_by_keep_last() {
    let by_time = ["--key", "currency", "--time", "update_time"];
    let upsert = [&by_time[..], &["--emit", "upsert"]].concat();
    assert_eq!(
        dedup("a02_currency_rates.csv", &upsert),
        "op,update_time,currency,rate\n\
         +I,09:00:00,Yen,102\n\
         +I,09:00:00,Euro,114\n\
         +I,09:00:00,USD,1\n\
         +U,11:15:00,Euro,119\n\
         +I,11:49:00,Pounds,108\n"
    );
    assert_eq!(
        dedup("a02_currency_rates.csv", &by_time),
        "op,update_time,currency,rate\n\
         +I,09:00:00,Yen,102\n\
         +I,09:00:00,Euro,114\n\
         +I,09:00:00,USD,1\n\
         -U,09:00:00,Euro,114\n\
         +U,11:15:00,Euro,119\n\
         +I,11:49:00,Pounds,108\n"
    );
}

#[test]
fn seed_currency_rates_in_upsert_mode() {
    let args = [
        "--key",
        "currency",
        "--time",
        "update_time",
        "--emit",
        "upsert",
    ];
    assert_eq!(
        dedup("seed_currency_rates.csv", &args),
        "op,update_time,currency,rate\n\
         +I,09:00:00,Yen,102\n\
         +I,09:00:00,Euro,114\n\
         +I,09:00:00,USD,1\n\
         +U,11:15:00,Euro,119\n\
         +I,10:45:00,Pounds,107\n\
         +U,11:49:00,Pounds,108\n"
    );
}

#[test]
fn a03_keep_last_on_rowtime_with_ties_and_late_rows() {
    let args = ["--key", "b", "--time", "rowtime_ms", "--keep", "last"];
    assert_eq!(
        dedup("a03_rowtime.csv", &args),
        "op,a,b,c,rowtime_ms\n\
         +I,1,1,Hi,1\n\
         +I,1,3,Hello,3\n\
         +I,1,2,Hello world,2\n\
         -U,1,3,Hello,3\n\
         +U,2,3,I am fine.,3\n\
         +I,2,6,Comment#1,6\n\
         +I,3,5,Comment#2,5\n\
         +I,3,4,Comment#2,4\n\
         -U,3,4,Comment#2,4\n\
         +U,4,4,Comment#3,4\n"
    );
    let fin = [&args[..], &["--emit", "final"]].concat();
    assert_eq!(
        dedup("a03_rowtime.csv", &fin),
        "a,b,c,rowtime_ms\n\
         1,1,Hi,1\n\
         1,2,Hello world,2\n\
         2,3,I am fine.,3\n\
         2,6,Comment#1,6\n\
         3,5,Comment#2,5\n\
         4,4,Comment#3,4\n"
    );
}

#[test]
fn a07_keep_first_and_last_by_arrival() {
    let first = ["--key", "b", "--order", "arrival", "--keep", "first"];
    assert_eq!(
        dedup(
            "a07_proctime.csv",
            &[&first[..], &["--emit", "final"]].concat()
        ),
        "a,b,c\n\
         1,1,Hi\n\
         2,2,Hello\n\
         4,3,\"Hello world, how are you?\"\n\
         7,4,Comment#1\n\
         11,5,Comment#5\n\
         16,6,Comment#10\n"
    );
    // Keep-first is insert-only (A11).
    let changelog = dedup("a07_proctime.csv", &first);
    assert_eq!(changelog.lines().count(), 7);
    assert!(changelog.lines().skip(1).all(|l| l.starts_with("+I,")));

    let last = ["--key", "b", "--order", "arrival", "--keep", "last"];
    assert_eq!(
        dedup(
            "a07_proctime.csv",
            &[&last[..], &["--emit", "final"]].concat()
        ),
        "a,b,c\n\
         1,1,Hi\n\
         3,2,Hello world\n\
         6,3,Luke Skywalker\n\
         10,4,Comment#4\n\
         15,5,Comment#9\n\
         21,6,Comment#15\n"
    );
    // The changelog of key b=2, update-before required.
    let retract = dedup("a07_proctime.csv", &last);
    let b2: Vec<&str> = retract
        .lines()
        .filter(|l| l.split(',').nth(2) == Some("2"))
        .collect();
    assert_eq!(
        b2,
        vec!["+I,2,2,Hello", "-U,2,2,Hello", "+U,3,2,Hello world"]
    );
}

#[test]
fn more_workers_and_smaller_epochs_give_identical_bytes() {
    let args = ["--key", "b", "--order", "arrival", "--keep", "last"];
    same_output(
        &on_input("dedup", "a07_proctime.csv", &args),
        &[
            &["-w", "2"],
            &["-w", "2", "--epoch-bytes", "10"],
            &["-w", "4", "--epoch-bytes", "30"],
        ],
    );
}

/// In `dedup` NULL is a key value like any other (Flink's ROW_NUMBER partitions NULLs together):
/// the rows with an empty key form one group, and are no error.
#[test]
fn null_is_a_key_value() {
    let dir = tempfile::tempdir().unwrap();
    let input = common::fixture(dir.path(), "in.csv", "k,ts,v\na,1,x\n,2,y\n,3,z\na,0,w\n");
    let args = [
        "--input", &input, "--key", "k", "--time", "ts", "--emit", "upsert",
    ];
    assert_eq!(
        output_of(&[&["dedup"][..], &args].concat()),
        "op,k,ts,v\n+I,a,1,x\n+I,,2,y\n+U,,3,z\n"
    );
}

/// A changelog input is normalized as Flink's ChangelogNormalize does over an upsert source:
/// keep-last by arrival, an identical upsert suppressed, `-U`/`-D` a delete by key (key-only
/// cells suffice; the stored row is retracted), a delete of an absent key nothing (counted as
/// ignored); NULL is a key value. The same bytes on 2 workers and with one row per epoch.
#[test]
fn changelog_input_is_normalized() {
    let args = ["--key", "currency", "--keep", "last", "--order", "arrival"];
    for variant in [&[][..], &["-w", "2"], &["--epoch-bytes", "1", "-w", "2"]] {
        let run = common::dtemporal(&on_input(
            "dedup",
            "upsert_rates.csv",
            &[&args[..], variant].concat(),
        ));
        assert_eq!(
            (run.code, run.stdout.as_str(), run.stderr.as_str()),
            (
                0,
                "op,currency,rate\n\
                 +I,Euro,114\n\
                 +I,Yen,1\n\
                 -U,Euro,114\n\
                 +U,Euro,116\n\
                 -D,Yen,1\n\
                 +I,Yen,2\n\
                 -D,Euro,116\n\
                 +I,,7\n\
                 +I,Euro,119\n",
                "dtemporal: 1 row(s) ignored: a -D of a key without a row on the deduplicate merge engine\n"
            ),
            "{variant:?}"
        );
    }
    let upsert = [&args[..], &["--emit", "final"]].concat();
    let run = common::dtemporal(&on_input("dedup", "upsert_rates.csv", &upsert));
    assert_eq!(run.stdout, "currency,rate\n,7\nEuro,119\nYen,2\n");
    // Keep-first (and event-time order) needs an insert-only input (rule A14).
    let run = common::dtemporal(&on_input(
        "dedup",
        "upsert_rates.csv",
        &["--key", "currency", "--order", "arrival", "--keep", "first"],
    ));
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (1, "op,currency,rate\n+I,Euro,114\n+I,,7\n")
    );
    let input = common::data("upsert_rates.csv");
    let mut stderr: String = [
        (3, "+U"),
        (4, "+U"),
        (5, "+U"),
        (6, "-U"),
        (7, "+U"),
        (8, "-D"),
        (9, "-D"),
        (11, "+U"),
    ]
    .iter()
    .map(|(line, kind)| {
        format!("{input}:{line}: {kind} row refused: dedup input must be insert-only (rule A14)\n")
    })
    .collect();
    stderr.push_str(
        "dtemporal: 8 row(s) rejected (reported to standard error); --max-errors 0: failing\n",
    );
    assert_eq!(run.stderr, stderr);
}

/// `--mode final` (rule A9) with `--state-ttl` (rule A13, on the watermark; `--epoch-bytes 1`:
/// one row an epoch, `--lateness 0`: the watermark is the largest time so far). At epoch 2 the
/// watermark is 20: `x` (a at 1) is emitted. With a retention of 5 ms a's flag expires there
/// too (1 + 5 < 20), so `z` (a at 21) is a first row again, emitted at the end of input; with
/// 30 ms (1 + 30 >= 21) it is ignored, as without a retention. `w` (a at 3, epoch 3) is behind
/// the watermark 21: late, reported, whatever the retention.
#[test]
fn final_mode_keep_first_with_state_ttl() {
    let dir = tempfile::tempdir().unwrap();
    let input = common::fixture(
        dir.path(),
        "d.csv",
        "id,t,v\na,1,x\nb,20,y\na,21,z\na,3,w\n",
    );
    let args = |extra: &[&str]| {
        let head = [
            "dedup", "--input", &input, "--key", "id", "--time", "t", "--keep",
        ];
        let mode = [
            "first",
            "--mode",
            "final",
            "--lateness",
            "0",
            "--epoch-bytes",
            "1",
        ];
        let args = [&head[..], &mode[..], extra].concat();
        args.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    let late = format!(
        "{input}:5: late row: event time 3 is behind the watermark 21\n\
         dtemporal: 1 row(s) rejected (reported to standard error); --max-errors 0: failing\n"
    );
    let kept = "op,id,t,v\n+I,a,1,x\n+I,b,20,y\n";
    let expired = "op,id,t,v\n+I,a,1,x\n+I,b,20,y\n+I,a,21,z\n";
    for (extra, stdout) in [
        (&[][..], kept),
        (&["--state-ttl", "0"][..], kept),
        (&["--state-ttl", "30"][..], kept),
        (&["--state-ttl", "5"][..], expired),
        (&["--state-ttl", "5", "-w", "2"][..], expired),
    ] {
        let run = common::dtemporal(&args(extra));
        assert_eq!(
            (run.code, run.stdout.as_str(), run.stderr.as_str()),
            (1, stdout, late.as_str()),
            "{extra:?}"
        );
    }
}

/// The watermark options need the mode that has a watermark, and final mode needs keep-first
/// by event time: every other combination is a usage error (exit 2), nothing is written.
#[test]
fn final_mode_options_are_refused_where_they_mean_nothing() {
    let ttl = "dtemporal: error: --state-ttl needs --mode final: state expires on the watermark\n";
    let lateness =
        "dtemporal: error: --lateness needs --mode final: incremental mode has no watermark\n";
    let keep_first = "dtemporal: error: --mode final needs --keep first --order event-time: only \
                      keep-first by event time waits for the watermark (Flink's insert-only \
                      keep-first row)\n";
    let by_time = ["--key", "currency", "--time", "update_time"];
    for (extra, stderr) in [
        (&["--keep", "first", "--state-ttl", "5"][..], ttl),
        (&["--keep", "first", "--lateness", "5"][..], lateness),
        (&["--mode", "final"][..], keep_first),
        (
            &["--mode", "final", "--keep", "first", "--order", "arrival"][..],
            keep_first,
        ),
    ] {
        let run = common::dtemporal(&on_input(
            "dedup",
            "a02_currency_rates.csv",
            &[&by_time[..], extra].concat(),
        ));
        assert_eq!(
            (run.code, run.stdout.as_str(), run.stderr.as_str()),
            (2, "", stderr),
            "{extra:?}"
        );
    }
}
