//! Option parsing: one test per error kind (C02's invalid configurations with Fluss's messages),
//! and valid configurations run end to end on the worked cases.

use super::*;
use crate::merge_engine::{merge_engine, Row};
use crate::operators::testing::{batch, run_unary};
use crate::operators::{Change, RowKind};
use crate::row::{csv_row, TextCells};

fn header(cols: &str) -> Vec<String> {
    cols.split(',').map(String::from).collect()
}

fn build(cols: &str, key: &str, options: &[&str]) -> Result<MergeEngine> {
    let options = options
        .iter()
        .map(|o| parse_option(o))
        .collect::<Result<Vec<_>>>()?;
    merge_engine_from_options(
        &options,
        &Schema::strings(&header(cols)),
        &[key.to_string()],
    )
}

fn error(cols: &str, options: &[&str]) -> String {
    build(cols, "a", options).unwrap_err().to_string()
}

#[test]
fn parse_option_accepts_quoted_and_plain_forms() {
    let kv = |k: &str, v: &str| Ok((k.to_string(), v.to_string()));
    assert_eq!(
        parse_option("'merge-engine' = 'partial-update'"),
        kv("merge-engine", "partial-update")
    );
    assert_eq!(
        parse_option("sequence.field=ts"),
        kv("sequence.field", "ts")
    );
    assert_eq!(
        parse_option("fields.l.list-agg-delimiter=;"),
        kv("fields.l.list-agg-delimiter", ";")
    );
    assert_eq!(
        parse_option("x"),
        Err(MergeOptionsError::Malformed("x".into()))
    );
}

#[test]
fn c02_invalid_configurations() {
    let cols = "a,b,ts";
    let cases: [(&[&str], &str); 4] = [
        (
            &["table.merge-engine=versioned"],
            "'table.merge-engine.versioned.ver-column' must be set for versioned merge engine.",
        ),
        (
            &["table.merge-engine=versioned", "table.merge-engine.versioned.ver-column=non-existed"],
            "The version column 'non-existed' for versioned merge engine doesn't exist in schema.",
        ),
        (
            &["table.merge-engine=versioned", "table.merge-engine.versioned.ver-column=b", "fields.b.type=STRING"],
            "for versioned merge engine must be one type of [INT, BIGINT, TIMESTAMP, TIMESTAMP_LTZ]",
        ),
        (
            &["table.merge-engine=versioned", "table.merge-engine.versioned.ver-column=ts", "table.delete.behavior=allow"],
            "does not support delete operations",
        ),
    ];
    for (options, contains) in cases {
        let message = error(cols, options);
        assert!(
            message.contains(contains),
            "{message:?} should contain {contains:?}"
        );
    }
    assert_eq!(
        error(cols, &["table.merge-engine=versioned", "table.merge-engine.versioned.ver-column=b", "fields.b.type=STRING"]),
        "The version column 'b' for versioned merge engine must be one type of [INT, BIGINT, TIMESTAMP, TIMESTAMP_LTZ], but got STRING."
    );
}

#[test]
fn each_error_kind_lists_the_choices() {
    let cols = "a,b,ts";
    assert_eq!(
        error(cols, &["ignore-delete=true", "ignore-delete=false"]),
        "option 'ignore-delete' is given more than once"
    );
    assert_eq!(
        error(
            cols,
            &["table.merge-engine=first_row", "merge-engine=first-row"]
        ),
        "both 'table.merge-engine' and 'merge-engine' are set: use one of them"
    );
    assert_eq!(
        error(cols, &["table.merge-engine=deduplicate"]),
        "unknown merge engine 'deduplicate' for 'table.merge-engine'; valid choices: first_row, versioned, aggregation"
    );
    assert_eq!(
        error(cols, &["merge-engine=versioned"]),
        "unknown merge engine 'versioned' for 'merge-engine'; valid choices: deduplicate, first-row, partial-update, aggregation"
    );
    assert_eq!(
        error(cols, &["sequence.feild=ts"]),
        "unknown option 'sequence.feild' for the deduplicate merge engine; valid options: table.merge-engine, merge-engine, fields.<column>.type, sequence.field, ignore-delete"
    );
    assert_eq!(
        error(cols, &["merge-engine=first-row", "fields.b.aggregate-function=sum"]),
        "unknown option 'fields.b.aggregate-function' for the first_row merge engine; valid options: table.merge-engine, merge-engine, fields.<column>.type, ignore-delete, dtemporal.honor-deletes"
    );
    assert_eq!(
        error(cols, &["ignore-delete=yes"]),
        "invalid value 'yes' for option 'ignore-delete'; valid choices: true, false"
    );
    assert_eq!(
        error(
            cols,
            &["table.merge-engine=first_row", "table.delete.behavior=drop"]
        ),
        "invalid value 'drop' for option 'table.delete.behavior'; valid choices: ignore, disable"
    );
    assert_eq!(
        error(cols, &["merge-engine=aggregation", "fields.b.aggregate-function=avg"]),
        "invalid value 'avg' for option 'fields.b.aggregate-function'; valid choices: sum, product, count, max, min, last_value, last_non_null_value, first_value, first_non_null_value, listagg, bool_and, bool_or"
    );
    assert!(error(cols, &["fields.ts.type=TIMESTAMP(12)"]).starts_with(
        "invalid value 'TIMESTAMP(12)' for option 'fields.ts.type'; valid choices: INT, INTEGER"
    ));
    assert_eq!(
        error(cols, &["sequence.field=ts,c"]),
        "column 'c' named by 'sequence.field' doesn't exist; columns: a, b, ts"
    );
    assert_eq!(
        build(cols, "k", &[]).unwrap_err().to_string(),
        "column 'k' named by 'primary key' doesn't exist; columns: a, b, ts"
    );
    assert_eq!(
        error(cols, &["sequence.field=b", "fields.b.type=DOUBLE"]),
        "sequence column 'b' must be one type of [INT, BIGINT, TIMESTAMP, TIMESTAMP_LTZ], but got DOUBLE"
    );
    assert_eq!(
        error(cols, &["merge-engine=aggregation", "fields.a.aggregate-function=sum"]),
        "'fields.a.aggregate-function': column 'a' is a primary-key column and cannot be aggregated"
    );
    assert_eq!(
        error(cols, &["merge-engine=partial-update", "fields.ts.sequence-group=b", "fields.b.sequence-group=ts"]),
        "column 'ts' (in 'fields.ts.sequence-group') is a primary-key column or already in another sequence group"
    );
    assert_eq!(
        error(cols, &["merge-engine=partial-update", "fields.ts.sequence-group=b", "partial-update.remove-record-on-sequence-group=b"]),
        "invalid value 'b' for option 'partial-update.remove-record-on-sequence-group'; valid choices: ts"
    );
}

/// Runs an engine built from options over `(kind, cells)` writes keyed by the first column; the
/// final table, sorted.
fn final_table(cols: &str, options: &[&str], rows: &[(RowKind, &str)]) -> Vec<Row> {
    let engine = build(cols, cols.split(',').next().unwrap(), options).unwrap();
    let writes: Vec<(String, Change<Row>)> = rows
        .iter()
        .enumerate()
        .map(|(seq, (kind, cells))| {
            let row = csv_row(cells);
            (
                row.cell(0).unwrap().to_string(),
                Change::new(seq as u64, *kind, row),
            )
        })
        .collect();
    let out = run_unary(2, batch(&writes, &[2]), move |c| {
        merge_engine(c, engine.clone()).changelog
    });
    let mut rows: Vec<(Row, isize)> = out
        .into_iter()
        .map(|((_, c), _, _)| (c.row, if c.kind.is_accumulate() { 1 } else { -1 }))
        .collect();
    differential_dataflow::consolidation::consolidate(&mut rows);
    rows.into_iter().map(|(r, _)| r).collect()
}

fn rows(cells: &[&str]) -> Vec<Row> {
    cells.iter().map(|r| csv_row(r)).collect()
}

#[test]
fn options_end_to_end_on_the_cases() {
    use RowKind::*;
    let versioned = [
        "'table.merge-engine' = 'versioned'",
        "'table.merge-engine.versioned.ver-column' = 'ts'",
        "'fields.ts.type' = 'TIMESTAMP_LTZ(9)'",
    ];
    let ws = [
        (Insert, "1,v1,2025-01-10T12:00:00.123456789Z"),
        (Insert, "1,v2,2025-01-10T12:00:00.123456788Z"),
        (Insert, "1,v3,"),
    ];
    assert_eq!(
        final_table("a,b,ts", &versioned, &ws),
        rows(&["1,v1,2025-01-10T12:00:00.123456789Z"])
    );

    let c07 = [
        (Insert, "1,a,10"),
        (Insert, "1,b,5"),
        (Insert, "1,c,10"),
        (Delete, "1,x,7"),
        (Insert, "3,m,1"),
        (Delete, "3,m,2"),
        (Insert, "3,n,1"),
    ];
    assert_eq!(
        final_table(
            "pk,v,ts",
            &["'sequence.field' = 'ts'", "'fields.ts.type' = 'INT'"],
            &c07
        ),
        rows(&["1,c,10"])
    );
    assert_eq!(
        final_table(
            "pk,v,ts",
            &["sequence.field=ts", "ignore-delete=true"],
            &c07
        ),
        rows(&["1,c,10", "3,n,1"])
    );

    let c11 = [
        "merge-engine=aggregation",
        "fields.default-aggregate-function=first_non_null_value",
        "fields.b.aggregate-function=sum",
    ];
    let ws = [
        (Insert, "1,,1,1,1"),
        (Insert, "1,2,,2,2"),
        (Insert, "1,3,3,,3"),
        (Insert, "1,4,4,4,"),
        (Insert, "1,5,5,5,5"),
    ];
    assert_eq!(final_table("k,a,b,c,d", &c11, &ws), rows(&["1,2,13,1,1"]));
    let c11_3 = [
        "merge-engine=aggregation",
        "sequence.field=s0,s1",
        "fields.s0.type=INT",
    ];
    let ws = [
        (Insert, "1,A1,,1"),
        (Insert, "1,A2,1,"),
        (Insert, "1,A3,1,0"),
    ];
    assert_eq!(final_table("pk,v,s0,s1", &c11_3, &ws), rows(&["1,A3,1,0"]));
    let fluss_agg = [
        "table.merge-engine=aggregation",
        "fields.l.agg=string_agg",
        "fields.l.listagg.delimiter=|",
    ];
    assert_eq!(
        final_table("k,l", &fluss_agg, &[(Insert, "1,x"), (Insert, "1,y")]),
        rows(&["1,x|y"])
    );

    let pu = [
        "merge-engine=partial-update",
        "fields.g.sequence-group=a,b",
        "partial-update.remove-record-on-sequence-group=g",
    ];
    let ws = [
        (Insert, "1,a1,b1,2,c"),
        (Insert, "1,a0,b0,1,"),
        (Delete, "1,,,3,"),
    ];
    assert_eq!(
        final_table("k,a,b,g,c", &pu, &ws[..2]),
        rows(&["1,a1,b1,2,c"])
    );
    assert_eq!(final_table("k,a,b,g,c", &pu, &ws), Vec::<Row>::new());

    let first = [
        "table.merge-engine=first_row",
        "dtemporal.honor-deletes=true",
    ];
    let ws = [
        (Insert, "1,a"),
        (Delete, "1,a"),
        (Insert, "1,b"),
        (Insert, "1,c"),
    ];
    assert_eq!(final_table("k,v", &first, &ws), rows(&["1,b"]));
}

#[test]
fn delete_options_of_the_aggregation_engines() {
    use crate::merge_engine::AggDeletes;
    let deletes = |options: &[&str]| match build("a,b", "a", options).unwrap() {
        MergeEngine::Aggregation(agg) => agg.deletes,
        other => panic!("not aggregation: {other:?}"),
    };
    let fluss = "table.merge-engine=aggregation";
    assert_eq!(deletes(&[fluss]), AggDeletes::Fluss(Deletes::Ignore));
    let allow = [fluss, "'table.delete.behavior' = 'allow'"];
    assert_eq!(deletes(&allow), AggDeletes::Fluss(Deletes::Apply));
    assert_eq!(
        deletes(&[fluss, "table.delete.behavior=disable"]),
        AggDeletes::Fluss(Deletes::Reject(
            "deletion is disabled for this aggregation table ('table.delete.behavior' = 'disable')"
                .into()
        ))
    );
    assert_eq!(
        error("a,b", &[fluss, "table.delete.behavior=drop"]),
        "invalid value 'drop' for option 'table.delete.behavior'; valid choices: ignore, disable, allow"
    );
    let fluss_retract = error("a,b", &[fluss, "fields.b.ignore-retract=true"]);
    assert_eq!(
        fluss_retract,
        "unknown option 'fields.b.ignore-retract' for the aggregation merge engine; valid options: table.merge-engine, merge-engine, fields.<column>.type, sequence.field, fields.default-aggregate-function, fields.<column>.aggregate-function, fields.<column>.agg, fields.<column>.list-agg-delimiter, fields.<column>.listagg.delimiter, table.delete.behavior"
    );
    let paimon = "merge-engine=aggregation";
    assert_eq!(deletes(&[paimon]), AggDeletes::Retract);
    let remove = [paimon, "aggregation.remove-record-on-delete=true"];
    assert_eq!(deletes(&remove), AggDeletes::RemoveRecordOnDelete);
    assert_eq!(
        error("a,b", &[paimon, "table.delete.behavior=allow"]),
        "unknown option 'table.delete.behavior' for the aggregation merge engine; valid options: table.merge-engine, merge-engine, fields.<column>.type, sequence.field, fields.default-aggregate-function, fields.<column>.aggregate-function, fields.<column>.agg, fields.<column>.list-agg-delimiter, fields.<column>.listagg.delimiter, fields.<column>.ignore-retract, aggregation.remove-record-on-delete"
    );
}

#[test]
fn partial_update_aggregate_functions() {
    use RowKind::*;
    // Paimon's partial-update documentation, "Aggregation For Partial Update".
    let doc = [
        "merge-engine=partial-update",
        "fields.a.sequence-group=b",
        "fields.b.aggregate-function=first_value",
        "fields.c.sequence-group=d",
        "fields.d.aggregate-function=sum",
    ];
    let ws = [
        (Insert, "1,1,1,,"),
        (Insert, "1,,,1,1"),
        (Insert, "1,2,2,,"),
        (Insert, "1,,,2,2"),
    ];
    assert_eq!(final_table("k,a,b,c,d", &doc, &ws), rows(&["1,2,1,2,3"]));
    let default = [
        "merge-engine=partial-update",
        "fields.a.sequence-group=b",
        "fields.c.sequence-group=d",
        "fields.default-aggregate-function=last_non_null_value",
        "fields.d.aggregate-function=sum",
    ];
    assert_eq!(
        final_table("k,a,b,c,d", &default, &ws),
        rows(&["1,2,2,2,3"])
    );
    let cols = "a,b,g";
    let pu = "merge-engine=partial-update";
    assert_eq!(
        error(cols, &[pu, "fields.b.aggregate-function=sum"]),
        "Must use sequence group for aggregation functions."
    );
    let grouped = [pu, "fields.g.sequence-group=b"];
    assert_eq!(
        error(cols, &[&grouped[..], &["fields.g.aggregate-function=sum"]].concat()),
        "'fields.g.aggregate-function': column 'g' is a sequence-group's sequence field and cannot be aggregated"
    );
    assert_eq!(
        error(
            cols,
            &[&grouped[..], &["fields.b.ignore-retract=true"]].concat()
        ),
        "'fields.b.ignore-retract': column 'b' has no aggregate function"
    );
}
