//! Malformed rows, usage errors, exit codes and `--help` of `dtemporal`.

mod common;

use common::{data, dtemporal, on_products};

const GOOD_ROWS: &str = "update_time,product_id,product_name,price\n\
    00:05:00,p_005,\"quoted, name\",5.00\n\
    00:07:00,p_001,\"scooter\nwith a two-line name\",13.00\n";

fn report(file: &str) -> String {
    format!(
        "{file}:3:1: column \"op\": unknown row kind \"+X\": expected one of +I, -U, +U, -D\n\
         {file}:4:2: column \"update_time\": invalid event time \"25:00:00\": time of day out of range\n\
         {file}:5:3: column \"product_id\": NULL in a primary-key column\n\
         {file}:6:5: column \"price\": wrong number of fields: expected 5, found 4\n\
         {file}:8:4: column \"product_name\": invalid UTF-8: invalid utf-8 sequence of 1 bytes from index 4\n"
    )
}

fn versioned_malformed(extra: &[&str]) -> common::Run {
    let args = [&["--as-of", "23:00"][..], extra].concat();
    dtemporal(&on_products("versioned", "malformed_products.csv", &args))
}

#[test]
fn malformed_rows_are_reported_and_the_good_rows_processed() {
    let run = versioned_malformed(&[]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, GOOD_ROWS);
    let file = data("malformed_products.csv");
    assert_eq!(
        run.stderr,
        format!(
            "{}dtemporal: 5 row(s) rejected (reported to standard error); --max-errors 0: failing\n",
            report(&file)
        )
    );
}

#[test]
fn max_errors_tolerates_and_errors_goes_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let errors = dir.path().join("errors.txt");
    let errors = errors.to_str().unwrap();
    let run = versioned_malformed(&["--max-errors", "5", "--errors", errors, "-w", "2"]);
    assert_eq!(run.code, 0);
    assert_eq!(run.stdout, GOOD_ROWS);
    assert_eq!(
        std::fs::read_to_string(errors).unwrap(),
        report(&data("malformed_products.csv"))
    );
    assert_eq!(
        run.stderr,
        format!("dtemporal: 5 row(s) rejected (reported to {errors}); --max-errors 5: tolerated\n")
    );
    assert_eq!(versioned_malformed(&["--max-errors", "4"]).code, 1);
}

#[test]
fn usage_and_input_errors_exit_2() {
    let input = data("a01_products.csv");
    let missing = dtemporal(&[
        "versioned",
        "--input",
        &input,
        "--key",
        "id",
        "--time",
        "update_time",
        "--history",
    ]);
    assert_eq!(missing.code, 2);
    assert_eq!(
        missing.stderr,
        format!(
            "dtemporal: error: {input}: no column \"id\"; the columns are: update_time, product_id, product_name, price\n"
        )
    );
    let bad_time = dtemporal(&on_products(
        "versioned",
        "a01_products.csv",
        &["--as-of", "noon"],
    ));
    assert_eq!(bad_time.code, 2);
    assert!(
        bad_time
            .stderr
            .contains("--as-of: invalid event time \"noon\""),
        "{}",
        bad_time.stderr
    );
    let no_file = dtemporal(&[
        "dedup",
        "--input",
        "/nonexistent.csv",
        "--key",
        "a",
        "--order",
        "arrival",
    ]);
    assert_eq!(no_file.code, 2);
    assert!(no_file
        .stderr
        .starts_with("dtemporal: error: /nonexistent.csv: "));
    // Neither --as-of nor --history: a usage error from the parser.
    let neither = dtemporal(&["versioned", "--input", &input, "--key", "a", "--time", "b"]);
    assert_eq!(neither.code, 2);
    // --order event-time (the default) needs --time.
    assert_eq!(
        dtemporal(&["dedup", "--input", &input, "--key", "a"]).code,
        2
    );
}

#[test]
fn help_shows_an_example_and_the_exit_codes() {
    for command in ["dedup", "versioned"] {
        let run = dtemporal(&[command, "--help"]);
        assert_eq!(run.code, 0);
        assert!(
            run.stdout
                .contains(&format!("dtemporal -w 2 {command} --input")),
            "{}",
            run.stdout
        );
        assert!(run.stdout.contains("Exit codes"));
    }
    let top = dtemporal(&["--help"]);
    assert_eq!(top.code, 0);
    assert!(
        top.stdout.contains("-h, --hostfile <HOSTFILE>"),
        "{}",
        top.stdout
    );
    assert!(top
        .stdout
        .contains("1  more rows were rejected than --max-errors allows"));
}

#[test]
fn rows_refused_by_an_operator_are_reported_with_their_line() {
    // Deduplication needs an insert-only input (rule A14): the -U/+U/-D rows of the products
    // changelog are refused, the +I rows deduplicated.
    let input = data("a01_products.csv");
    let run = dtemporal(&on_products(
        "dedup",
        "a01_products.csv",
        &["--max-errors", "5"],
    ));
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout,
        "op,update_time,product_id,product_name,price\n\
         +I,00:01:00,p_001,scooter,11.11\n\
         +I,00:02:00,p_002,basketball,23.11\n"
    );
    let refused = |line: u32, kind: &str| {
        format!("{input}:{line}: {kind} row refused: dedup input must be insert-only (rule A14)\n")
    };
    assert_eq!(
        run.stderr,
        [
            refused(4, "-U"),
            refused(5, "+U"),
            refused(6, "-U"),
            refused(7, "+U"),
            refused(8, "-D"),
            "dtemporal: 5 row(s) rejected (reported to standard error); --max-errors 5: tolerated\n"
                .to_string(),
        ]
        .concat()
    );
}
