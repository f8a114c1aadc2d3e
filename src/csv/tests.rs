use super::*;
use crate::operators::RowKind;
use crate::row::TextCells;

fn spec(key: &[&str], time: Option<&str>) -> InputSpec {
    InputSpec {
        path: "in.csv".into(),
        key: key.iter().map(|s| s.to_string()).collect(),
        nullable_key: false,
        time: time.map(str::to_string),
    }
}

fn schema(header: &str, key: &[&str], time: Option<&str>) -> Schema {
    let header = header.split(',').map(str::to_string).collect();
    Schema::new(&spec(key, time), 0, header).unwrap()
}

/// Parses `body` (the lines after the header, which is line 1) as blocks of `target` bytes.
fn parse_all(schema: &Schema, body: &[u8], target: usize) -> Vec<Result<Record, String>> {
    let mut text = schema.header.join(",").into_bytes();
    text.push(b'\n');
    text.extend_from_slice(body);
    let mut splitter = Splitter::new(text.as_slice(), target);
    splitter.header().unwrap();
    let mut out = Vec::new();
    while let Some(block) = splitter.next_owned(|_| true).unwrap() {
        schema.parse_block(&block, |r| out.push(r.map_err(|e| e.to_string())));
    }
    out
}

fn cells(row: &[&str]) -> crate::row::Row {
    crate::row::pack_cells(row.iter().map(|c| (!c.is_empty()).then_some(*c)))
}

#[test]
fn parses_changelog_rows_with_seq_key_and_time() {
    let s = schema("op,t,id,name", &["id"], Some("t"));
    assert_eq!((s.op, s.key.clone(), s.time), (Some(0), vec![1], Some(0)));
    let got = parse_all(&s, b"+I,00:01:00,p1,scooter\n-D,00:02:00,p1,\n", 1);
    assert_eq!(
        got,
        vec![
            Ok(Record {
                seq: 2,
                kind: RowKind::Insert,
                key: cells(&["p1"]),
                time: Some(60_000),
                row: cells(&["00:01:00", "p1", "scooter"]),
            }),
            Ok(Record {
                seq: 3,
                kind: RowKind::Delete,
                key: cells(&["p1"]),
                time: Some(120_000),
                row: cells(&["00:02:00", "p1", ""]),
            }),
        ]
    );
}

#[test]
fn append_only_rows_are_inserts_and_keep_quoted_text() {
    let s = schema("a,b,c", &["b"], None);
    let got = parse_all(
        &s,
        b"4,3,\"Hello world, how are you?\"\r\n5,3,\"two\nlines\"\n6,3,x",
        1,
    );
    let rows: Vec<_> = got
        .into_iter()
        .map(|r| r.map(|r| (r.seq, r.kind, r.row)))
        .collect();
    assert_eq!(
        rows,
        vec![
            Ok((
                2,
                RowKind::Insert,
                cells(&["4", "3", "Hello world, how are you?"])
            )),
            Ok((3, RowKind::Insert, cells(&["5", "3", "two\nlines"]))),
            Ok((5, RowKind::Insert, cells(&["6", "3", "x"]))),
        ]
    );
}

#[test]
fn malformed_rows_name_line_column_and_reason() {
    let s = schema("op,t,id,v", &["id"], Some("t"));
    let body: &[u8] = b"+I,00:01,a,1\n\
        +X,00:01,a,1\n\
        +I,00:99,a,1\n\
        +I,00:01,,1\n\
        +I,00:01,a\n\
        +I,00:01,a,1,extra\n\
        +I,,a,1\n\
        +I,00:01,a,\xff\n\
        \n\
        +I,00:02,b,\"multi\nline\"\n\
        +I,00:03,c,3\n";
    let got: Vec<Result<u64, String>> = parse_all(&s, body, 1)
        .into_iter()
        .map(|r| r.map(|r| r.seq))
        .collect();
    assert_eq!(
        got,
        vec![
            Ok(2),
            Err("in.csv:3:1: column \"op\": unknown row kind \"+X\": expected one of +I, -U, +U, -D".into()),
            Err("in.csv:4:2: column \"t\": invalid event time \"00:99\": time of day out of range".into()),
            Err("in.csv:5:3: column \"id\": NULL in a primary-key column".into()),
            Err("in.csv:6:4: column \"v\": wrong number of fields: expected 4, found 3".into()),
            Err("in.csv:7:5: wrong number of fields: expected 4, found 5".into()),
            Err("in.csv:8:2: column \"t\": NULL event time".into()),
            Err("in.csv:9:4: column \"v\": invalid UTF-8: invalid utf-8 sequence of 1 bytes from index 0".into()),
            Ok(11),
            Ok(13),
        ]
    );
}

#[test]
fn line_numbers_do_not_depend_on_block_size() {
    let s = schema("a,b", &["a"], None);
    let body = b"1,\"x\ny\"\n\n2,z\n3,\"\"\"q\"\n,4\n5,w";
    let reference = parse_all(&s, body, 1 << 20);
    for target in [1, 2, 5, 9, 13] {
        assert_eq!(parse_all(&s, body, target), reference, "target {target}");
    }
    let seqs: Vec<_> = reference.iter().map(|r| r.clone().map(|r| r.seq)).collect();
    assert_eq!(
        seqs,
        vec![
            Ok(2),
            Ok(5),
            Ok(6),
            Err("in.csv:7:1: column \"a\": NULL in a primary-key column".to_string()),
            Ok(8)
        ]
    );
}

#[test]
fn an_unterminated_quote_is_reported() {
    let s = schema("a,b", &[], None);
    let got = parse_all(&s, b"1,ok\n2,\"never closed\n3,x\n", 1);
    assert_eq!(got.len(), 2);
    assert_eq!(
        got[1],
        Err("in.csv:3: unterminated quoted field (the quote opened on line 3)".into())
    );
}

#[test]
fn header_problems_are_errors_listing_the_columns() {
    let header = |h: &str| h.split(',').map(str::to_string).collect::<Vec<_>>();
    let err = Schema::new(&spec(&["id"], Some("when")), 0, header("op,t,id")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "in.csv: no column \"when\"; the columns are: t, id"
    );
    let err = Schema::new(&spec(&[], None), 0, header("a,a")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "in.csv: column \"a\" appears twice in the header"
    );
}

#[test]
fn output_lines_sort_in_emission_order() {
    use crate::operators::{Change, ChangelogMode};
    let row = cells(&["x"]);
    let before = Change::new(5, RowKind::UpdateBefore, row.clone());
    let after = Change::new(5, RowKind::UpdateAfter, row.clone());
    let insert = Change::new(2, RowKind::Insert, row.clone());
    let mut lines: Vec<_> = [&after, &before, &insert]
        .into_iter()
        .filter_map(|c| OutputLine::change(c.clone(), ChangelogMode::Retract))
        .collect();
    lines.sort();
    let ops: Vec<_> = lines.iter().map(|l| l.record().0.unwrap()).collect();
    assert_eq!(ops, vec!["+I", "-U", "+U"]);
    assert_eq!(OutputLine::change(before, ChangelogMode::Upsert), None);
}

#[test]
fn table_lines_of_one_position_sort_by_their_text() {
    // Packed bytes would put "b" (shorter) before "ab"; lines compare cells as text, NULL
    // first and a prefix first, as the commands always wrote them.
    let texts: [&[&str]; 5] = [&["b"], &["ab"], &["a", "x"], &[""], &["a"]];
    let mut lines: Vec<_> = texts.iter().map(|t| OutputLine::row(0, cells(t))).collect();
    lines.sort();
    let got: Vec<Vec<Option<&str>>> = lines.iter().map(|l| l.cells.cells().collect()).collect();
    let expected: Vec<Vec<Option<&str>>> = vec![
        vec![None],
        vec![Some("a")],
        vec![Some("a"), Some("x")],
        vec![Some("ab")],
        vec![Some("b")],
    ];
    assert_eq!(got, expected);
}

#[test]
fn writes_header_nulls_and_quotes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.csv");
    let header = ["op".to_string(), "a".to_string(), "b".to_string()];
    let rows = [
        (Some("+I"), cells(&["x, y", ""])),
        (Some("-D"), cells(&["two\nlines", "\"q\""])),
    ];
    // The same bytes on one thread and on two.
    for threads in [1, 2] {
        let tail = crate::tail::Tail::new(threads);
        write_csv(path.to_str(), &header, &tail, &rows, |(op, r)| (*op, r)).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "op,a,b\n+I,\"x, y\",\n-D,\"two\nlines\",\"\"\"q\"\"\"\n"
        );
    }
    let tail = crate::tail::Tail::new(1);
    let err = write_csv(
        Some("/nonexistent/dir/out.csv"),
        &header,
        &tail,
        &rows,
        |(op, r)| (*op, r),
    )
    .unwrap_err();
    assert!(err.to_string().starts_with("/nonexistent/dir/out.csv: "));
}

#[test]
fn stamped_rows_lead_with_their_event_time_and_line() {
    use crate::repr::{DataType, Datum, Row, Ts};
    let s = schema("t,$line,v", &[], Some("t")).with_stamps();
    let [time, line] = s.stamp_fields();
    assert_eq!(
        (time.name.as_str(), line.name.as_str()),
        ("$rowtime", "$$line")
    );
    assert_eq!(time.ty, DataType::Timestamp(3).not_null());
    assert_eq!(line.ty, DataType::BigInt.not_null());
    let rows = parse_all(&s, b"2024-01-01 00:00:01,x,\n5,y,z\n", 1);
    let stamped: Vec<Row> = rows.into_iter().map(|r| r.unwrap().row).collect();
    let expected = |millis, line, cells: [Option<&str>; 3]| {
        let stamps = [Datum::Timestamp(Ts::from_millis(millis)), Datum::Int(line)];
        let cells = cells.map(|c| c.map_or(Datum::Null, Datum::Str));
        Row::pack(stamps.into_iter().chain(cells))
    };
    assert_eq!(
        stamped,
        [
            expected(
                1_704_067_201_000,
                2,
                [Some("2024-01-01 00:00:01"), Some("x"), None]
            ),
            expected(5, 3, [Some("5"), Some("y"), Some("z")]),
        ]
    );
}
