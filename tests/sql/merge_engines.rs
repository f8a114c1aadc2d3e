//! Merge engines in `CREATE TABLE` (issue 11): Fluss's `'table.merge-engine'` and Paimon's
//! `'merge-engine'` options make a filesystem table its writes merged per primary key, on 1
//! and 2 workers with one write an epoch (every intermediate version in the changelog).

use differential_temporal::operators::keyed_merge::RejectKind;
use differential_temporal::session::StatementResult;
use differential_temporal::table::TableEnv;

use super::{changelog_text, env, last_rows};

/// An environment on `workers` workers with the table `prices` of `columns` over the writes
/// `csv`, with `options` after the connector's (and the directory holding the file).
fn declare(
    workers: usize,
    columns: &str,
    csv: &str,
    options: &str,
) -> (TableEnv, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("writes.csv");
    std::fs::write(&path, csv).unwrap();
    let ddl = format!(
        "CREATE TABLE prices ({columns})
           WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv', {options})",
        path.display()
    );
    let env = env(workers);
    env.execute_sql(&ddl).unwrap();
    (env, dir)
}

/// Fluss's `versioned` engine (case C01 typed): the highest `ts` wins, a lower or NULL version
/// is ignored (reported as such with its line), a tie updates.
#[test]
fn a_versioned_table() {
    let csv =
        "id,price,ts\n1,10.00,1000\n1,9.00,999\n2,5.50,10\n1,11.50,2000\n2,6.00,\n2,7.25,10\n";
    for workers in [1, 2] {
        let (env, _dir) = declare(
            workers,
            "id BIGINT, price DECIMAL(10, 2), ts BIGINT, PRIMARY KEY (id) NOT ENFORCED",
            csv,
            "'table.merge-engine' = 'versioned', 'table.merge-engine.versioned.ver-column' = 'ts'",
        );
        let result = last_rows(&env, "SELECT * FROM prices");
        assert_eq!(
            changelog_text(&result),
            [
                "+I,1,10.00,1000",
                "+I,2,5.50,10",
                "-U,1,10.00,1000",
                "+U,1,11.50,2000",
                "-U,2,5.50,10",
                "+U,2,7.25,10",
            ],
            "{workers} workers"
        );
        let refused: Vec<(u64, RejectKind)> = (result.refused().iter())
            .map(|(_, r)| (r.seq, r.kind))
            .collect();
        assert_eq!(
            refused,
            [(3, RejectKind::Ignored), (6, RejectKind::Ignored)]
        );
        assert_eq!(result.rows_as_text(), ["1,11.50,2000", "2,7.25,10"]);
    }
}

/// Paimon's `aggregation` engine over a changelog: `sum` retracts a `-D` write, as does the
/// default `last_non_null_value` (which then holds NULL); a query aggregates the merged
/// (updating) table.
#[test]
fn an_aggregation_table_read_by_a_query() {
    let csv = "op,shop,amount,note\n+I,a,5,x\n+I,b,2,y\n+I,a,3,z\n-D,a,5,x\n+I,b,,w\n";
    for workers in [1, 2] {
        let (env, _dir) = declare(
            workers,
            "shop STRING, amount BIGINT, note STRING, PRIMARY KEY (shop) NOT ENFORCED",
            csv,
            "'merge-engine' = 'aggregation', 'fields.amount.aggregate-function' = 'sum'",
        );
        let merged = last_rows(&env, "SELECT shop, amount, note FROM prices");
        assert_eq!(
            merged.rows_as_text(),
            ["a,3,", "b,2,w"],
            "{workers} workers"
        );
        let total = last_rows(&env, "SELECT SUM(amount) AS total FROM prices");
        assert_eq!(total.rows_as_text(), ["5"], "{workers} workers");
    }
}

/// `EXPLAIN` shows the engine; a table without a primary key, an unknown engine and an option
/// the engine does not take are errors at the option choosing the engine.
#[test]
fn explain_and_configuration_errors() {
    let (env, _dir) = declare(
        1,
        "id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED",
        "id,v\n1,a\n",
        "'table.merge-engine' = 'first_row'",
    );
    let explained = env.execute_sql("EXPLAIN SELECT v FROM prices").unwrap();
    let [StatementResult::Explain(plan)] = &explained[..] else {
        panic!("{explained:?}")
    };
    assert!(
        plan.contains(
            "MergeEngine(engine=first_row, key=[id]) -> [id BIGINT NOT NULL, v STRING] append-only"
        ),
        "{plan}"
    );
    // Checked whether the table's file exists (a source and a sink) or not (a sink).
    let error = |columns: &str, options: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("w.csv"), "id,v\n1,a\n").unwrap();
        let missing = format!(
            "CREATE TABLE t ({columns}) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv', {options})",
            dir.path().join("w.csv").display()
        )
        .replace("w.csv", "x.csv");
        let sink_only = super::env(1).execute_sql(&missing).unwrap_err().to_string();
        let ddl = format!(
            "CREATE TABLE t ({columns}) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv', {options})",
            dir.path().join("w.csv").display()
        );
        let source = super::env(1).execute_sql(&ddl).unwrap_err().to_string();
        assert_eq!(source, sink_only);
        source
    };
    assert_eq!(
        error("id BIGINT, v STRING", "'merge-engine' = 'deduplicate'"),
        "SQL validation error at line 1, column 124: the merge engine 'deduplicate' of table 't' merges the writes of each primary key: declare PRIMARY KEY (..) NOT ENFORCED"
    );
    assert_eq!(
        error("id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED", "'merge-engine' = 'latest'"),
        "SQL validation error at line 1, column 155: unknown merge engine 'latest' for 'merge-engine'; valid choices: deduplicate, first-row, partial-update, aggregation"
    );
    assert_eq!(
        error(
            "id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED",
            "'merge-engine' = 'deduplicate', 'fields.v.agg' = 'sum'"
        ),
        "SQL validation error at line 1, column 155: unknown option 'fields.v.agg' for the deduplicate merge engine; valid options: table.merge-engine, merge-engine, fields.<column>.type, sequence.field, ignore-delete"
    );
}
