//! Exact outputs of the typed source, the sink and the tableau.

use super::*;
use crate::csv::RowError;
use crate::operators::{Change, RowKind};
use crate::repr::{DataType, Datum, Row, Schema};

/// Writes `text` to `name` in a fresh directory and reads it with `schema`, in blocks of
/// `block` bytes: the resolved schema, the rows and the error messages (the path shown as
/// `name`).
fn read(
    name: &str,
    text: &str,
    schema: Option<Schema>,
    block: usize,
) -> (Schema, Vec<Change<Row>>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap();
    let (source, schema) = TypedSource::open(path, schema).unwrap();
    let mut blocks = source.blocks(block).unwrap();
    let (mut rows, mut errors) = (Vec::new(), Vec::new());
    while let Some(b) = blocks.next_owned(|_| true).unwrap() {
        source.parse_block(&b, |r: Result<Change<Row>, RowError>| match r {
            Ok(change) => rows.push(change),
            Err(e) => errors.push(e.to_string().replace(path, name)),
        });
    }
    (schema, rows, errors)
}

/// The rows as the sink writes them.
fn csv(schema: &Schema, rows: &[Change<Row>], changelog: bool) -> String {
    let mut sink = CsvSink::new(Vec::new(), schema, changelog).unwrap();
    for c in rows {
        sink.write_change(c.kind, &c.row).unwrap();
    }
    String::from_utf8(sink.finish().unwrap()).unwrap()
}

fn all_types() -> Schema {
    Schema::builder()
        .column("id", DataType::BigInt.not_null())
        .column("flag", DataType::Boolean.nullable())
        .column("tiny", DataType::TinyInt.nullable())
        .column("small", DataType::SmallInt.nullable())
        .column("int", DataType::Int.nullable())
        .column("f", DataType::Float.nullable())
        .column("d", DataType::Double.nullable())
        .column("code", DataType::Char(3).nullable())
        .column("name", DataType::Varchar(10).nullable())
        .column("note", DataType::STRING.nullable())
        .column("raw", DataType::BYTES.nullable())
        .build()
        .unwrap()
}

const ALL_TYPES: &str = "\
note,id,flag,tiny,small,int,f,d,code,name,raw,extra
\"a, \"\"quoted\"\" note\",1,TRUE,-128,32767,-5,0.1,1e10,EUR,Zoë,AQL/,ignored
,2,,,,,,,,,,
plain,3,no,0,0,0,-0,2.5,,\"multi
line\",,x
";

#[test]
fn reads_every_type_with_nulls_in_schema_order() {
    let (schema, rows, errors) = read("t.csv", ALL_TYPES, Some(all_types()), 1);
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(
        rows.iter().map(|c| c.seq).collect::<Vec<_>>(),
        vec![2, 3, 4]
    );
    assert!(rows.iter().all(|c| c.kind == RowKind::Insert));
    assert_eq!(
        rows[1].row,
        Row::pack([Datum::Int(2)].into_iter().chain([Datum::Null; 10]))
    );
    assert_eq!(
        csv(&schema, &rows, false),
        "\
id,flag,tiny,small,int,f,d,code,name,note,raw
1,true,-128,32767,-5,0.1,1.0E10,EUR,Zoë,\"a, \"\"quoted\"\" note\",AQL/
2,,,,,,,,,,
3,false,0,0,0,-0.0,2.5,,\"multi
line\",plain,
"
    );
}

#[test]
fn without_a_schema_every_column_is_a_nullable_string() {
    let (schema, rows, errors) = read("t.csv", "a,op,b\nx,+I,\n,-D,y\n", None, 4);
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(schema.names().collect::<Vec<_>>(), vec!["a", "b"]);
    assert!(schema.types().all(|t| *t == DataType::STRING.nullable()));
    assert_eq!(csv(&schema, &rows, true), "op,a,b\n+I,x,\n-D,,y\n");
}

#[test]
fn an_op_column_makes_a_changelog() {
    let schema = Schema::builder()
        .column("k", DataType::STRING.not_null())
        .column("v", DataType::Int.nullable())
        .build()
        .unwrap();
    let text = "op,k,v\n+I,a,1\n-U,a,1\n+U,a,2\n-D,a,2\n";
    let (schema, rows, errors) = read("c.csv", text, Some(schema), 1);
    assert_eq!(errors, Vec::<String>::new());
    let kinds: Vec<RowKind> = rows.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, RowKind::ALL.to_vec());
    assert_eq!(csv(&schema, &rows, true), text);
}

#[test]
fn bad_cells_are_row_errors_naming_file_line_and_column() {
    let schema = Schema::builder()
        .column("id", DataType::BigInt.not_null())
        .column("small", DataType::TinyInt.nullable())
        .column("flag", DataType::Boolean.nullable())
        .column("code", DataType::Varchar(2).nullable())
        .build()
        .unwrap();
    let text = "\
id,small,flag,code
x,1,true,ab
,1,true,ab
1,300,true,ab
2,1,maybe,ab
3,1,true,abc
4,1,true
5,1,true,ab
";
    let (_, rows, errors) = read("bad.csv", text, Some(schema), 1);
    assert_eq!(rows.iter().map(|c| c.seq).collect::<Vec<_>>(), vec![8]);
    assert_eq!(
        errors,
        vec![
            "bad.csv:2:1: column \"id\": cannot parse \"x\" as BIGINT: not an integer",
            "bad.csv:3:1: column \"id\": NULL in a NOT NULL column of type BIGINT",
            "bad.csv:4:2: column \"small\": cannot parse \"300\" as TINYINT: out of range -128..=127",
            "bad.csv:5:3: column \"flag\": cannot parse \"maybe\" as BOOLEAN: expected one of true, t, yes, y, 1, false, f, no, n, 0 (in any case)",
            "bad.csv:6:4: column \"code\": cannot parse \"abc\" as VARCHAR(2): 3 characters, longer than the type's 2",
            "bad.csv:7:4: column \"code\": wrong number of fields: expected 4, found 3",
        ]
    );
}

#[test]
fn a_bad_op_is_a_row_error() {
    let (_, rows, errors) = read("c.csv", "k,op\na,+X\nb,+I\n", None, 1);
    assert_eq!(rows.len(), 1);
    assert_eq!(
        errors,
        vec!["c.csv:2:2: column \"op\": unknown row kind \"+X\": expected one of +I, -U, +U, -D"]
    );
}

#[test]
fn a_missing_column_names_the_file_and_its_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.csv");
    std::fs::write(&path, "op,a,b\n").unwrap();
    let path = path.to_str().unwrap();
    let schema = Schema::builder()
        .column("a", DataType::Int.nullable())
        .column("c", DataType::Int.nullable())
        .build()
        .unwrap();
    let error = TypedSource::open(path, Some(schema)).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("{path}: no column \"c\"; the columns are: a, b")
    );
}

#[test]
fn the_sink_quotes_as_the_csv_crate_does() {
    let schema = Schema::builder()
        .column("s", DataType::STRING.nullable())
        .build()
        .unwrap();
    let rows: Vec<Change<Row>> = ["", "a\"b", " x ", "1\r\n2", ";"]
        .iter()
        .map(|s| Change::new(0, RowKind::Insert, Row::pack([Datum::Str(s)])))
        .chain([Change::new(0, RowKind::Insert, Row::pack([Datum::Null]))])
        .collect();
    assert_eq!(
        csv(&schema, &rows, false),
        "s\n\"\"\n\"a\"\"b\"\n x \n\"1\r\n2\"\n;\n\"\"\n"
    );
}

#[test]
fn the_tableau_is_flinks_by_type() {
    let schema = Schema::builder()
        .column("name", DataType::STRING.nullable())
        .column("n", DataType::BigInt.nullable())
        .column("ok", DataType::Boolean.nullable())
        .column("raw", DataType::BYTES.nullable())
        .build()
        .unwrap();
    let rows = [
        (
            RowKind::Insert,
            Row::pack([
                Datum::Str("Zoë"),
                Datum::Int(-1),
                Datum::Bool(true),
                Datum::Bytes(&[1, 255]),
            ]),
        ),
        (
            RowKind::UpdateBefore,
            Row::pack([
                Datum::Str("全角"),
                Datum::Null,
                Datum::Bool(false),
                Datum::Null,
            ]),
        ),
        (
            RowKind::Delete,
            Row::pack([
                Datum::Str("a very long name that does not fit"),
                Datum::Int(1),
                Datum::Null,
                Datum::Null,
            ]),
        ),
    ];
    let mut out = String::new();
    Tableau::table_result(true)
        .print(&schema, rows.iter().map(|(k, r)| (*k, r)), &mut out)
        .unwrap();
    assert_eq!(
        out,
        "\
+----+--------------------------------+----------------------+--------+--------------------------------+
| op |                           name |                    n |     ok |                            raw |
+----+--------------------------------+----------------------+--------+--------------------------------+
| +I |                            Zoë |                   -1 |   TRUE |                        x'01ff' |
| -U |                           全角 |               <NULL> |  FALSE |                         <NULL> |
| -D | a very long name that does ... |                    1 | <NULL> |                         <NULL> |
+----+--------------------------------+----------------------+--------+--------------------------------+
3 rows in set
"
    );
}

#[test]
fn the_tableau_by_content_and_empty() {
    let schema = Schema::builder()
        .column("word", DataType::STRING.nullable())
        .build()
        .unwrap();
    let row = Row::pack([Datum::Str("hi")]);
    let tableau = Tableau {
        widths: Widths::ByContent,
        max_column_width: 30,
        print_row_kind: false,
    };
    let mut out = String::new();
    tableau
        .print(&schema, [(RowKind::Insert, &row)], &mut out)
        .unwrap();
    assert_eq!(
        out,
        "+------+\n| word |\n+------+\n|   hi |\n+------+\n1 row in set\n"
    );
    out.clear();
    tableau.print(&schema, [], &mut out).unwrap();
    assert_eq!(out, "Empty set\n");
}
