//! `dtemporal merge --schema`: typed columns parsed once at ingest, engines computing as the
//! types, output written as Flink writes the types (issue 11).

mod common;

use common::{dtemporal, fixture};

/// Runs `merge --emit final --key k --schema SCHEMA` over `text` with `options`; returns (exit
/// code, standard output, standard error with the file's path shortened to `w.csv`).
fn merge_typed(text: &str, schema: &str, options: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture(dir.path(), "w.csv", text);
    let mut args = vec![
        "merge", "--input", &input, "--key", "k", "--emit", "final", "--schema", schema,
    ];
    for o in options {
        args.extend(["--option", o]);
    }
    let run = dtemporal(&args);
    (run.code, run.stdout, run.stderr.replace(&input, "w.csv"))
}

const FAILING: &str =
    "dtemporal: 1 row(s) rejected (reported to standard error); --max-errors 0: failing\n";

/// The case: `max` over the text cells `10, 9, 10a` gave `10a` or `9` by arrival order.
/// Typed BIGINT, `10a` is a row error naming its line and column, and the maximum is 10 in
/// every order; the DECIMAL(10, 2) sum keeps scale 2.
#[test]
fn typed_aggregation_refuses_a_bad_cell_and_compares_numbers() {
    let rows = ["1,10,1.5", "1,9,2.25", "1,10a,0.1"];
    let orders = [[0, 1, 2], [2, 1, 0], [1, 2, 0], [2, 0, 1]];
    for order in orders {
        let body: String = order.iter().map(|&i| format!("{}\n", rows[i])).collect();
        let bad_line = 2 + order.iter().position(|&i| i == 2).unwrap();
        let run = merge_typed(
            &format!("k,v,d\n{body}"),
            "k BIGINT, v BIGINT, d DECIMAL(10, 2)",
            &[
                "merge-engine=aggregation",
                "fields.v.aggregate-function=max",
                "fields.d.aggregate-function=sum",
            ],
        );
        let error = format!(
            "w.csv:{bad_line}:2: column \"v\": cannot parse \"10a\" as BIGINT: not an integer\n"
        );
        assert_eq!(
            run,
            (1, "k,v,d\n1,10,3.75\n".into(), format!("{error}{FAILING}"))
        );
    }
}

/// A TIMESTAMP(3) version column: compared as instants, written as Flink writes TIMESTAMP(3).
#[test]
fn typed_versioned_timestamp_version_column() {
    let text =
        "k,b,ts\n1,a,2024-01-01T10:00:00.5\n1,b,2024-01-01 09:59:59\n1,c,2024-01-01 10:00:01\n";
    let run = merge_typed(
        text,
        "ts TIMESTAMP(3)",
        &[
            "table.merge-engine=versioned",
            "table.merge-engine.versioned.ver-column=ts",
        ],
    );
    assert_eq!(
        run,
        (
            0,
            "k,b,ts\n1,c,2024-01-01 10:00:01.000\n".into(),
            "dtemporal: 1 row(s) ignored: a write ordered below the stored row on the versioned merge engine\n".into()
        )
    );
}

/// A partial-update sequence group over a typed INT sequence; a DECIMAL written at its scale.
#[test]
fn typed_partial_update_sequence_group() {
    let text = "k,g,a,b\n1,9,x,1.5\n1,10,y,2\n1,2,z,3\n";
    let run = merge_typed(
        text,
        "k INT NOT NULL, g INT, b DECIMAL(5, 1)",
        &["merge-engine=partial-update", "fields.g.sequence-group=a,b"],
    );
    assert_eq!(run, (0, "k,g,a,b\n1,10,y,2.0\n".into(), String::new()));
}

/// Schema errors: a bad column list, an undeclared column, a function that cannot take the
/// type, a `fields.<f>.type` on a typed column. Exit code 2, nothing written.
#[test]
fn typed_configuration_errors() {
    let text = "k,v\n1,2\n";
    let agg = [
        "merge-engine=aggregation",
        "fields.v.aggregate-function=listagg",
    ];
    let cases: [(&str, &[&str], &str); 4] = [
        ("k BIGINT,", &[], "dtemporal: error: --schema: invalid column list \"k BIGINT,\": sql parser error: Expected: identifier, found: EOF\n"),
        ("x INT", &[], "dtemporal: error: w.csv: the schema declares \"x\", which is not a column; the columns are: k, v\n"),
        ("v INT", &agg, "dtemporal: error: invalid merge-engine options: aggregate function 'listagg' of column 'v' does not take its type INT; it takes string types\n"),
        ("v INT", &["sequence.field=v", "fields.v.type=BIGINT"], "dtemporal: error: invalid merge-engine options: 'fields.v.type': column 'v' has the type INT in the table's schema; 'fields.<f>.type' declares the type of a STRING column\n"),
    ];
    for (schema, options, error) in cases {
        assert_eq!(
            merge_typed(text, schema, options),
            (2, String::new(), error.to_string()),
            "{schema}"
        );
    }
}
