//! `dtemporal merge` on cases C01 (Fluss versioned), C07 (Paimon deduplicate with
//! `sequence.field`) and an invalid configuration of C02.

mod common;

use common::{data, dtemporal, fixture, on_input, output_of};

/// The standard error line of `n` writes that lost to a higher stored order on `engine`.
fn below(n: usize, engine: &str) -> String {
    format!("dtemporal: {n} row(s) ignored: a write ordered below the stored row on the {engine} merge engine\n")
}

/// Runs `dtemporal`, expects exit code 0, returns (standard output, standard error).
fn out_err(args: &[String]) -> (String, String) {
    let run = dtemporal(args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    (run.stdout, run.stderr)
}

const VERSIONED: [&str; 4] = [
    "--option",
    "'table.merge-engine' = 'versioned'",
    "--option",
    "table.merge-engine.versioned.ver-column=ts",
];

#[test]
fn c01_versioned_changelog() {
    let mut args = on_input("merge", "c01_versioned_writes.csv", &["--key", "a"]);
    args.extend(VERSIONED.map(String::from));
    // v2 (999) and v4 (NULL, the smallest version) lose: counted, not errors.
    let lost = below(2, "versioned");
    assert_eq!(
        out_err(&args),
        (
            "op,a,b,ts\n+I,1,v1,1000\n-U,1,v1,1000\n+U,1,v3,2000\n".into(),
            lost.clone()
        )
    );
    args.extend(["--emit", "final", "-w", "2", "--epoch-bytes", "1"].map(String::from));
    assert_eq!(out_err(&args), ("a,b,ts\n1,v3,2000\n".into(), lost));
}

/// The same table through `dtemporal sql`: a `CREATE TABLE` with the engine's options gives the
/// command's changelog and final table, and counts the same ignored writes (one data path).
#[test]
fn c01_versioned_through_sql_equals_the_command() {
    let ddl = format!(
        "CREATE TABLE t (a STRING, b STRING, ts STRING, PRIMARY KEY (a) NOT ENFORCED)
           WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv',
                 'table.merge-engine' = 'versioned',
                 'table.merge-engine.versioned.ver-column' = 'ts',
                 'fields.ts.type' = 'BIGINT');
         SELECT * FROM t;",
        data("c01_versioned_writes.csv")
    );
    let lost = below(2, "versioned");
    for emit in ["retract", "final"] {
        let sql = out_err(&["sql", "-e", &ddl, "--emit", emit].map(String::from));
        let mut args = on_input("merge", "c01_versioned_writes.csv", &["--key", "a"]);
        args.extend(VERSIONED.map(String::from));
        args.extend(["--emit", emit].map(String::from));
        assert_eq!(sql, out_err(&args), "--emit {emit}");
        assert_eq!(sql.1, lost);
    }
}

#[test]
fn c07_deduplicate_with_sequence_field() {
    let input = data("c07_dedup_writes.csv");
    let args = ["merge", "--input", &input, "--key", "pk", "--emit", "final"];
    let with = |extra: &[&str]| output_of(&[&args[..], extra].concat());
    let seq = ["--option", "sequence.field=ts"];
    let run = dtemporal(&[&args[..], &seq].concat());
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr),
        (0, "pk,v,ts\n1,c,10\n2,q,3\n", below(3, "deduplicate"))
    );
    let ignore_delete = [
        "--option",
        "'sequence.field'='ts'",
        "--option",
        "ignore-delete = true",
        "-w",
        "2",
        "--epoch-bytes",
        "8",
    ];
    let run = dtemporal(&[&args[..], &ignore_delete].concat());
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr),
        (
            0,
            "pk,v,ts\n1,c,10\n2,q,3\n3,n,1\n",
            format!(
                "dtemporal: 2 row(s) ignored: -D write on the deduplicate merge engine\n{}",
                below(1, "deduplicate")
            )
        )
    );
    assert_eq!(with(&[]), "pk,v,ts\n2,q,3\n3,n,1\n");
}

#[test]
fn c02_invalid_configuration_exits_2() {
    let with_option = |option: &str| {
        dtemporal(&on_input(
            "merge",
            "c01_versioned_writes.csv",
            &["--key", "a", "--option", option],
        ))
    };
    let run = with_option("'table.merge-engine'='versioned'");
    assert_eq!((run.code, run.stdout.as_str()), (2, ""));
    assert!(
        run.stderr.contains(
            "'table.merge-engine.versioned.ver-column' must be set for versioned merge engine."
        ),
        "{}",
        run.stderr
    );
    let run = with_option("merge-engine=nope");
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("valid choices"), "{}", run.stderr);
}

#[test]
fn ignored_writes_are_counted_not_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture(
        dir.path(),
        "writes.csv",
        "op,a,b,ts\n+I,1,v1,1000\n-D,1,v1,1000\n",
    );
    let mut args = vec!["merge", "--input", &input, "--key", "a"];
    args.extend_from_slice(&VERSIONED);
    let run = dtemporal(&args);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            0,
            "op,a,b,ts\n+I,1,v1,1000\n",
            "dtemporal: 1 row(s) ignored: -D write on the versioned merge engine\n"
        )
    );
}

/// An identical upsert of the stored row changes nothing and writes nothing (ChangelogNormalize).
#[test]
fn an_identical_upsert_is_suppressed() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture(
        dir.path(),
        "w.csv",
        "a,b,ts\n1,v1,1000\n1,v1,1000\n1,v2,1000\n",
    );
    let mut args = vec!["merge", "--input", &input, "--key", "a"];
    args.extend_from_slice(&VERSIONED);
    assert_eq!(
        output_of(&args),
        "op,a,b,ts\n+I,1,v1,1000\n-U,1,v1,1000\n+U,1,v2,1000\n"
    );
}

/// Runs `merge --emit final` over a changelog `text` with key `k` and `options`; returns (exit
/// code, standard output, standard error).
fn merge_final(text: &str, options: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture(dir.path(), "w.csv", text);
    let mut args = vec!["merge", "--input", &input, "--key", "k", "--emit", "final"];
    for o in options {
        args.extend(["--option", o]);
    }
    let run = dtemporal(&args);
    let stderr = run.stderr.replace(&input, "w.csv");
    (run.code, run.stdout, stderr)
}

/// The standard error line of `n` rejected rows with `--max-errors 0`.
fn failing(n: usize) -> String {
    format!(
        "dtemporal: {n} row(s) rejected (reported to standard error); --max-errors 0: failing\n"
    )
}

/// Fluss `aggregation` never retracts from an aggregate; `'table.delete.behavior'` says what a
/// `-U`/`-D` does (Fluss: ignore by default, disable, allow).
#[test]
fn fluss_aggregation_delete_behavior() {
    let text = "op,k,s\n+I,1,5\n-U,1,5\n+U,1,7\n-D,1,7\n+I,2,1\n";
    let with = |behavior: &str| {
        let b = format!("table.delete.behavior={behavior}");
        merge_final(
            text,
            &["table.merge-engine=aggregation", "fields.s.agg=sum", &b],
        )
    };
    let ignored = |kind: &str| {
        format!("dtemporal: 1 row(s) ignored: {kind} write on the Fluss aggregation merge engine ('table.delete.behavior' = 'ignore')\n")
    };
    assert_eq!(
        with("ignore"),
        (0, "k,s\n1,12\n2,1\n".into(), ignored("-D") + &ignored("-U"))
    );
    assert_eq!(
        with("allow"),
        (0, "k,s\n2,1\n".into(), "dtemporal: 1 row(s) ignored: -U write on the Fluss aggregation merge engine ('table.delete.behavior' = 'allow' applies -D only)\n".into())
    );
    let disabled =
        "deletion is disabled for this aggregation table ('table.delete.behavior' = 'disable')";
    assert_eq!(
        with("disable"),
        (
            1,
            "k,s\n1,12\n2,1\n".into(),
            format!("w.csv:3: {disabled}\nw.csv:5: {disabled}\n{}", failing(2))
        )
    );
}

/// Paimon `aggregation`: a retraction of a key without a row is applied as Paimon applies it and
/// reported with its line; `aggregation.remove-record-on-delete` makes a `-D` remove the row.
#[test]
fn paimon_aggregation_retractions_and_remove_record_on_delete() {
    let text = "op,k,s\n-U,1,5\n+I,1,2\n+I,2,4\n-D,2,4\n";
    let sum = [
        "merge-engine=aggregation",
        "fields.s.aggregate-function=sum",
    ];
    assert_eq!(
        merge_final(text, &sum),
        (
            1,
            "k,s\n1,-3\n2,0\n".into(),
            "w.csv:2: retraction of a key without a row: applied to an empty row, as Paimon does (the changelog retracts what was never inserted)\n".to_string() + &failing(1)
        )
    );
    let remove = [&sum[..], &["aggregation.remove-record-on-delete=true"]].concat();
    let (code, stdout, _) = merge_final(text, &remove);
    assert_eq!((code, stdout.as_str()), (1, "k,s\n1,-3\n"));
}

/// `partial-update.remove-record-on-delete`: a lone `-U` removes the row as a `-D` does.
#[test]
fn partial_update_lone_update_before_removes_the_row() {
    let text = "op,k,a,b\n+I,1,x,y\n-U,1,x,y\n+I,2,p,\n-D,3,,\n";
    let options = [
        "merge-engine=partial-update",
        "partial-update.remove-record-on-delete=true",
    ];
    assert_eq!(
        merge_final(text, &options),
        (
            0,
            "k,a,b\n2,p,\n".into(),
            "dtemporal: 1 row(s) ignored: -D write on a key without a row\n".into()
        )
    );
}

/// `partial-update` with aggregate functions in sequence groups: Paimon's documentation example.
#[test]
fn partial_update_with_aggregate_functions() {
    let text = "k,a,b,c,d\n1,1,1,,\n1,,,1,1\n1,2,2,,\n1,,,2,2\n";
    let options = [
        "merge-engine=partial-update",
        "fields.a.sequence-group=b",
        "'fields.b.aggregate-function' = 'first_value'",
        "fields.c.sequence-group=d",
        "fields.d.aggregate-function=sum",
    ];
    assert_eq!(
        merge_final(text, &options),
        (0, "k,a,b,c,d\n1,2,1,2,3\n".into(), String::new())
    );
}
