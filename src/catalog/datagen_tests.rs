//! Option validation of `'connector' = 'datagen'`: each refusal with its message and the
//! position of the option it names.

use crate::table::TableEnv;

/// The error of `CREATE TABLE t (<columns>) WITH ('connector' = 'datagen', <options>)`.
fn error(columns: &str, options: &str) -> String {
    let sql = format!("CREATE TABLE t ({columns}) WITH ('connector' = 'datagen'{options})");
    TableEnv::new()
        .execute_sql(&sql)
        .expect_err(&sql)
        .to_string()
}

/// The 1-based column of `needle` in the statement `error` builds.
fn column_of(columns: &str, options: &str, needle: &str) -> usize {
    let sql = format!("CREATE TABLE t ({columns}) WITH ('connector' = 'datagen'{options})");
    sql.find(needle).expect(needle) + 1
}

fn at(columns: &str, options: &str, needle: &str, message: &str) {
    assert_eq!(
        error(columns, options),
        format!(
            "SQL validation error at line 1, column {}: {message}",
            column_of(columns, options, needle)
        )
    );
}

#[test]
fn accepted_options_register_a_source() {
    let env = TableEnv::new();
    env.execute_sql(
        "CREATE TABLE t (id BIGINT NOT NULL, name STRING, v VARCHAR(10), c CHAR(3), ok BOOLEAN,
            price DECIMAL(10, 2), x DOUBLE, f FLOAT, d DATE, tm TIME, ts TIMESTAMP(3),
            lt TIMESTAMP_LTZ(3), tiny TINYINT, cost AS price * 2,
            WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
         WITH ('connector' = 'datagen', 'number-of-rows' = '10', 'rows-per-second' = '100000',
            'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100',
            'fields.name.length' = '5', 'fields.name.null-rate' = '0.5',
            'fields.v.var-len' = 'true', 'fields.price.min' = '1', 'fields.price.max' = '9.5',
            'fields.ts.max-past' = '5 min', 'fields.d.max-past' = '3 d',
            'fields.tiny.kind' = 'random', 'fields.tiny.min' = '-1', 'fields.tiny.max' = '1')",
    )
    .unwrap();
    let names: Vec<String> = env
        .from("t")
        .schema()
        .unwrap()
        .names()
        .map(String::from)
        .collect();
    assert_eq!(names.len(), 14);
    assert_eq!(names[13], "cost");
}

/// A table without `number-of-rows` (or a sequence) is unbounded, as Flink's: it can be
/// declared, and a batch query over it is refused with the option to add.
#[test]
fn an_unbounded_table_is_declared_and_a_batch_query_over_it_refused() {
    let env = TableEnv::new();
    env.execute_sql("CREATE TABLE t (a INT) WITH ('connector' = 'datagen')")
        .unwrap();
    let err = env
        .sql_query("SELECT a FROM t")
        .unwrap()
        .execute()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "table 't' is unbounded (the connector 'datagen' without 'number-of-rows' makes rows forever), so a batch query over it never ends: read it from a CONTINUOUS materialized table, or add 'number-of-rows' = '<n>' to its WITH options"
    );
}

#[test]
fn unknown_options_and_fields() {
    at(
        "a INT",
        ", 'number-of-row' = '5'",
        "'number-of-row'",
        "Unsupported option 'number-of-row' for connector 'datagen' (did you mean 'number-of-rows'?); supported options: connector, number-of-rows, rows-per-second, fields.a.kind, fields.a.start, fields.a.end, fields.a.min, fields.a.max, fields.a.length, fields.a.var-len, fields.a.max-past, fields.a.null-rate",
    );
    at(
        "a INT, b AS a + 1",
        ", 'number-of-rows' = '5', 'fields.b.kind' = 'random'",
        "'fields.b.kind'",
        "Unsupported option 'fields.b.kind' for connector 'datagen': the table has no physical column 'b'; its columns are a",
    );
    at(
        "a BOOLEAN",
        ", 'number-of-rows' = '5', 'fields.a.min' = '1'",
        "'fields.a.min'",
        "Unsupported option 'fields.a.min' for connector 'datagen': a random BOOLEAN field takes fields.a.kind, fields.a.null-rate",
    );
    at(
        "a INT",
        ", 'fields.a.kind' = 'sequence', 'fields.a.start' = '1', 'fields.a.end' = '2', 'fields.a.null-rate' = '0.1'",
        "'fields.a.null-rate'",
        "Unsupported option 'fields.a.null-rate' for connector 'datagen': a sequence INT field takes fields.a.kind, fields.a.start, fields.a.end",
    );
    at(
        "a INT",
        ", 'fields.a.kind' = 'serial'",
        "'fields.a.kind'",
        "Unsupported generator kind: serial ('fields.a.kind'); the kinds are 'random' and 'sequence'",
    );
    at(
        "a INT METADATA",
        ", 'number-of-rows' = '5'",
        "a INT",
        "the connector 'datagen' provides no metadata, but 'a' is a METADATA column",
    );
    let kafka = TableEnv::new()
        .execute_sql("CREATE TABLE t (a INT) WITH ('connector' = 'kafka')")
        .unwrap_err();
    assert_eq!(
        kafka.to_string(),
        "SQL validation error at line 1, column 30: Could not find any factory for identifier 'kafka' ('connector'); the available ones are 'datagen', 'filesystem', 'nexmark', 'postgres-cdc'"
    );
}

#[test]
fn sequences() {
    for ty in ["BOOLEAN", "DATE", "TIMESTAMP(3)"] {
        at(
            &format!("a {ty}"),
            ", 'fields.a.kind' = 'sequence', 'fields.a.start' = '1', 'fields.a.end' = '2'",
            "'fields.a.kind'",
            &format!("a sequence generator makes numbers or their text, not {ty} (field 'a'); use 'random'"),
        );
    }
    at(
        "a INT",
        ", 'fields.a.kind' = 'sequence', 'fields.a.start' = '1'",
        "'fields.a.kind'",
        "Could not find required property 'fields.a.end' for sequence generator.",
    );
    at(
        "a INT",
        ", 'fields.a.kind' = 'sequence', 'fields.a.end' = '1'",
        "'fields.a.kind'",
        "Could not find required property 'fields.a.start' for sequence generator.",
    );
    at(
        "a INT",
        ", 'fields.a.kind' = 'sequence', 'fields.a.start' = '9', 'fields.a.end' = '1'",
        "'fields.a.kind'",
        "field 'a': The start value (9) cannot be greater than the end value (1).",
    );
    at(
        "a DOUBLE",
        ", 'fields.a.kind' = 'sequence', 'fields.a.start' = '1.5', 'fields.a.end' = '3'",
        "'fields.a.start'",
        "Could not parse value '1.5' for key 'fields.a.start'.",
    );
    at(
        "a TINYINT",
        ", 'fields.a.kind' = 'sequence', 'fields.a.start' = '0', 'fields.a.end' = '300'",
        "'fields.a.kind'",
        "field 'a': the values [0, 300] do not fit its type TINYINT ([-128, 127])",
    );
}

#[test]
fn random_values() {
    at(
        "a INT",
        ", 'number-of-rows' = '5', 'fields.a.min' = '10', 'fields.a.max' = '1'",
        "'fields.a.min'",
        "field 'a': lower bound (10) must not be greater than upper bound (1)",
    );
    at(
        "a DOUBLE",
        ", 'number-of-rows' = '5', 'fields.a.max' = '-1'",
        "'fields.a.max'",
        "field 'a': lower bound (5e-324) must not be greater than upper bound (-1.0)",
    );
    at(
        "a STRING",
        ", 'number-of-rows' = '5', 'fields.a.null-rate' = '1.5'",
        "'fields.a.null-rate'",
        "'fields.a.null-rate' is 1.5, not a rate in [0, 1]",
    );
    at(
        "a INT NOT NULL",
        ", 'number-of-rows' = '5', 'fields.a.null-rate' = '0.5'",
        "'fields.a.null-rate'",
        "field 'a': a NOT NULL column cannot have a null rate",
    );
    at(
        "a VARCHAR(4)",
        ", 'number-of-rows' = '5', 'fields.a.length' = '10'",
        "'fields.a.length'",
        "'fields.a.length' is 10, longer than the column's type VARCHAR(4)",
    );
    at(
        "a TIMESTAMP(3)",
        ", 'number-of-rows' = '5', 'fields.a.max-past' = 'soon'",
        "'fields.a.max-past'",
        "Could not parse value 'soon' for key 'fields.a.max-past': 'soon' is not a duration (e.g. '10 ms', '5 s', '1 min')",
    );
    at(
        "a INT",
        ", 'number-of-rows' = 'many'",
        "'number-of-rows'",
        "Could not parse value 'many' for key 'number-of-rows'.",
    );
    at(
        "a INT",
        ", 'number-of-rows' = '5', 'rows-per-second' = '0'",
        "'rows-per-second'",
        "'rows-per-second' must be positive",
    );
    at(
        "a BYTES",
        ", 'number-of-rows' = '5'",
        "t (",
        "Unsupported type: BYTES (field 'a' of a datagen table)",
    );
}
