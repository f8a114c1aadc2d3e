//! The worked cases C01, C02, C05, C07, C08, C11 with their exact rows, and each engine against
//! its sequential reference model over random writes, batchings and worker counts.

use super::*;
use crate::operators::testing::{batch, run_unary};
use crate::repr::DataType;
use crate::row::{csv_row, TextCells};

/// How a refusal of kind `Ignored` displays (`Rejected`'s `Display`): the tests compare text.
const IGNORED: &str = "ignored: ";

mod deletes;
mod partial_aggregates;
mod props;
mod typed;

/// Writes keyed by the first cell, with sequence numbers in input order.
fn writes(rows: &[(RowKind, &str)]) -> Vec<(String, Change<Row>)> {
    rows.iter()
        .enumerate()
        .map(|(seq, (kind, cells))| {
            let r = csv_row(cells);
            (
                r.cell(0).unwrap_or_default().to_string(),
                Change::new(seq as u64, *kind, r),
            )
        })
        .collect()
}

fn inserts(rows: &[&str]) -> Vec<(String, Change<Row>)> {
    let kinds: Vec<_> = rows.iter().map(|r| (RowKind::Insert, *r)).collect();
    writes(&kinds)
}

type Run = (Vec<(String, Change<Row>)>, Vec<(String, u64, String)>);

/// The refused writes `(key, seq)` of `engine` that lost to a higher stored order (ignored).
fn below(engine: &str, writes: &[(&str, u64)]) -> Vec<(String, u64, String)> {
    let reason =
        format!("{IGNORED}a write ordered below the stored row on the {engine} merge engine");
    (writes.iter())
        .map(|(k, seq)| (k.to_string(), *seq, reason.clone()))
        .collect()
}

/// Runs the engine on `workers` threads with the writes cut into epochs at `cuts`.
fn run<K: ExchangeData + Hash + Sync + Ord>(
    engine: &MergeEngine,
    ws: &[(K, Change<Row>)],
    workers: usize,
    cuts: &[usize],
) -> (Vec<(K, Change<Row>)>, Vec<(K, u64, String)>) {
    let e = engine.clone();
    let out = run_unary(workers, batch(ws, cuts), move |c| {
        let merged = merge_engine(c, e.clone());
        let refused = merged
            .rejected
            .map(|(k, r)| (k, Err((r.seq, r.to_string()))));
        merged.changelog.map(|(k, c)| (k, Ok(c))).concat(refused)
    });
    let (mut log, mut refused) = (Vec::new(), Vec::new());
    for ((k, outcome), _time, diff) in out {
        assert_eq!(diff, 1);
        match outcome {
            Ok(change) => log.push((k, change)),
            Err((seq, reason)) => refused.push((k, seq, reason)),
        }
    }
    log.sort();
    refused.sort();
    (log, refused)
}

fn run2(engine: &MergeEngine, ws: &[(String, Change<Row>)]) -> Run {
    run(engine, ws, 2, &[1, 3])
}

/// The changelog as `(kind, row)` in emission order.
fn log_rows(log: &[(String, Change<Row>)]) -> Vec<(RowKind, Row)> {
    let mut changes: Vec<_> = log.iter().map(|(_, c)| c.clone()).collect();
    changes.sort();
    changes.into_iter().map(|c| (c.kind, c.row)).collect()
}

/// The table after the changelog (sorted rows).
fn table(log: &[(String, Change<Row>)]) -> Vec<Row> {
    let mut rows: Vec<(Row, isize)> = log
        .iter()
        .map(|(_, c)| (c.row.clone(), if c.kind.is_accumulate() { 1 } else { -1 }))
        .collect();
    differential_dataflow::consolidation::consolidate(&mut rows);
    assert!(rows.iter().all(|(_, d)| *d == 1), "{rows:?}");
    rows.into_iter().map(|(r, _)| r).collect()
}

fn field(column: usize, name: &str, ty: OrderType) -> OrderField {
    OrderField {
        column,
        name: name.to_string(),
        ty,
    }
}

fn versioned(column: usize, ty: OrderType, deletes: Deletes) -> MergeEngine {
    MergeEngine::Versioned(Versioned {
        version: field(column, "v", ty),
        deletes,
    })
}

#[test]
fn c01_fluss_versioned_doc_example() {
    let engine = versioned(2, OrderType::BigInt, Deletes::Ignore);
    let ws = inserts(&["1,v1,1000", "1,v2,999", "1,v3,2000", "1,v4,"]);
    let expected_states = ["1,v1,1000", "1,v1,1000", "1,v3,2000", "1,v3,2000"];
    for (step, expected) in expected_states.iter().enumerate() {
        let (log, refused) = run2(&engine, &ws[..=step]);
        assert_eq!(
            table(&log),
            vec![csv_row(expected)],
            "after step {}",
            step + 1
        );
        // v2 (999 < 1000) and v4 (NULL, the smallest version) lose and are counted.
        let lost: Vec<_> = [("1", 1), ("1", 3)]
            .into_iter()
            .filter(|w| w.1 <= step as u64)
            .collect();
        assert_eq!(refused, below("versioned", &lost));
    }
    let (log, _) = run2(&engine, &ws);
    assert_eq!(
        log_rows(&log),
        vec![
            (RowKind::Insert, csv_row("1,v1,1000")),
            (RowKind::UpdateBefore, csv_row("1,v1,1000")),
            (RowKind::UpdateAfter, csv_row("1,v3,2000")),
        ]
    );
}

#[test]
fn c02_fluss_versioned_comparison_per_type() {
    let cases = [
        ("INT", "1", "2", "new"),
        ("INT", "2", "1", "old"),
        ("INT", "1", "1", "new"),
        ("BIGINT", "1", "2", "new"),
        ("BIGINT", "2", "1", "old"),
        ("BIGINT", "1", "1", "new"),
        (
            "TIMESTAMP(3)",
            "2025-01-10T12:00:00.123",
            "2025-01-10T12:00:10.123",
            "new",
        ),
        (
            "TIMESTAMP(3)",
            "2025-01-10T12:00:00.123",
            "2025-01-10T12:00:00.122",
            "old",
        ),
        (
            "TIMESTAMP(3)",
            "2025-01-10T12:00:00.123",
            "2025-01-10T12:00:00.123",
            "new",
        ),
        (
            "TIMESTAMP(9)",
            "2025-01-10T12:00:00.123456789",
            "2025-01-10T12:00:10.123456789",
            "new",
        ),
        (
            "TIMESTAMP(9)",
            "2025-01-10T12:00:00.123456789",
            "2025-01-10T12:00:00.123456788",
            "old",
        ),
        (
            "TIMESTAMP(9)",
            "2025-01-10T12:00:00.123456789",
            "2025-01-10T12:00:00.123456789",
            "new",
        ),
        (
            "TIMESTAMP_LTZ(3)",
            "2025-01-10T12:00:00.123Z",
            "2025-01-10T12:00:10.123Z",
            "new",
        ),
        (
            "TIMESTAMP_LTZ(3)",
            "2025-01-10T12:00:00.123Z",
            "2025-01-10T12:00:00.122Z",
            "old",
        ),
        (
            "TIMESTAMP_LTZ(3)",
            "2025-01-10T12:00:00.123Z",
            "2025-01-10T12:00:00.123Z",
            "new",
        ),
        (
            "TIMESTAMP_LTZ(9)",
            "2025-01-10T12:00:00.123456789Z",
            "2025-01-10T12:00:10.123456789Z",
            "new",
        ),
        (
            "TIMESTAMP_LTZ(9)",
            "2025-01-10T12:00:00.123456789Z",
            "2025-01-10T12:00:00.123456788Z",
            "old",
        ),
        (
            "TIMESTAMP_LTZ(9)",
            "2025-01-10T12:00:00.123456789Z",
            "2025-01-10T12:00:00.123456789Z",
            "new",
        ),
        ("INT", "<no row>", "42", "new"),
        ("INT", "11", "2", "old"),
        ("INT", "11", "20", "new"),
        ("BIGINT", "1000", "", "old"),
        ("BIGINT", "", "5", "new"),
        ("BIGINT", "", "", "new"),
        ("BIGINT", "<no row>", "", "new"),
        ("BIGINT", "-9223372036854775808", "", "new"),
    ];
    for (ty, old, new, kept) in cases {
        let engine = versioned(0, ty.parse().unwrap(), Deletes::Reject("disabled".into()));
        let mut ws = vec![(
            1u8,
            Change::new(0, RowKind::Insert, csv_row(&format!("{old},old"))),
        )];
        if old == "<no row>" {
            ws.clear();
        }
        ws.push((
            1,
            Change::new(1, RowKind::Insert, csv_row(&format!("{new},new"))),
        ));
        let (log, refused) = run(&engine, &ws, 1, &[]);
        let lost = below("versioned", &[("1", 1)]);
        let lost: Vec<_> = (lost.into_iter())
            .filter(|_| kept == "old")
            .map(|(_, seq, reason)| (1u8, seq, reason))
            .collect();
        assert_eq!(refused, lost, "{ty} {old} {new}");
        let last = log.iter().map(|(_, c)| c).max().unwrap();
        assert_eq!(last.row.cell(1), Some(kept), "{ty} old {old} new {new}");
    }
}

#[test]
fn versioned_refuses_unparsable_versions_and_reports_ignored_deletes() {
    let engine = versioned(2, OrderType::Int, Deletes::Ignore);
    let ws = writes(&[
        (RowKind::Insert, "1,a,5"),
        (RowKind::Insert, "1,b,five"),
        (RowKind::Delete, "1,a,9"),
        (RowKind::Insert, "1,c,99999999999"),
    ]);
    let (log, refused) = run2(&engine, &ws);
    assert_eq!(table(&log), vec![csv_row("1,a,5")]);
    let k = "1".to_string();
    assert_eq!(
        refused,
        vec![
            (
                k.clone(),
                1,
                "version column 'v': cannot parse \"five\" as INT".into()
            ),
            (
                k.clone(),
                2,
                "ignored: -D write on the versioned merge engine".into()
            ),
            (
                k,
                3,
                "version column 'v': cannot parse \"99999999999\" as INT".into()
            ),
        ]
    );
}

#[test]
fn versioned_honouring_deletes_goes_beyond_fluss() {
    let engine = versioned(2, OrderType::BigInt, Deletes::Apply);
    let ws = writes(&[
        (RowKind::Insert, "1,a,5"),
        (RowKind::Delete, "1,a,4"),
        (RowKind::Delete, "1,a,6"),
        (RowKind::Insert, "1,b,5"),
        (RowKind::Insert, "1,c,7"),
    ]);
    let (log, refused) = run2(&engine, &ws);
    assert_eq!(refused, below("versioned", &[("1", 1), ("1", 3)]));
    assert_eq!(
        log_rows(&log),
        vec![
            (RowKind::Insert, csv_row("1,a,5")),
            (RowKind::Delete, csv_row("1,a,5")),
            (RowKind::Insert, csv_row("1,c,7")),
        ]
    );
}

#[test]
fn c05_first_row() {
    let engine = MergeEngine::FirstRow(FirstRow {
        deletes: Deletes::Ignore,
    });
    let (log, refused) = run2(&engine, &inserts(&["1,2.0,t1", "1,3.0,t2"]));
    assert_eq!(table(&log), vec![csv_row("1,2.0,t1")]);
    assert_eq!(refused.len(), 1);
    let mut rows = Vec::new();
    for a in 0..5 {
        for v in 0..10 {
            rows.push(format!("{a},value_{v}"));
        }
    }
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let (log, refused) = run(&engine, &inserts(&rows), 4, &[7, 23, 31]);
    let expected: Vec<_> = (0..5)
        .map(|a| (RowKind::Insert, csv_row(&format!("{a},value_0"))))
        .collect();
    assert_eq!(log_rows(&log), expected);
    assert_eq!(refused.len(), 45);
    assert!(refused.iter().all(|(_, _, r)| r.starts_with(IGNORED)));
}

fn c07_writes() -> Vec<(String, Change<Row>)> {
    use RowKind::*;
    writes(&[
        (Insert, "1,a,10"),
        (Insert, "1,b,5"),
        (Insert, "1,c,10"),
        (Delete, "1,x,7"),
        (Insert, "2,p,"),
        (Insert, "2,q,3"),
        (Insert, "3,m,1"),
        (Delete, "3,m,2"),
        (Insert, "3,n,1"),
    ])
}

#[test]
fn c07_deduplicate_with_sequence_field() {
    let dedup = |sequence: Vec<OrderField>, deletes| {
        MergeEngine::Deduplicate(Deduplicate { sequence, deletes })
    };
    let ts = vec![field(2, "ts", OrderType::Int)];
    let (log, refused) = run2(&dedup(ts.clone(), Deletes::Apply), &c07_writes());
    assert_eq!(table(&log), vec![csv_row("1,c,10"), csv_row("2,q,3")]);
    // b@5 and the delete at 7 lose to a@10; n@1 loses to the delete at 2, which keeps its order.
    let lost = below("deduplicate", &[("1", 1), ("1", 3), ("3", 8)]);
    assert_eq!(refused, lost);
    let (log, refused) = run2(&dedup(ts, Deletes::Ignore), &c07_writes());
    assert_eq!(
        table(&log),
        vec![csv_row("1,c,10"), csv_row("2,q,3"), csv_row("3,n,1")]
    );
    assert_eq!(
        refused.iter().map(|r| r.1).collect::<Vec<_>>(),
        vec![1, 3, 7]
    );
    let (log, refused) = run2(&dedup(Vec::new(), Deletes::Apply), &c07_writes());
    assert_eq!(refused, Vec::new());
    assert_eq!(table(&log), vec![csv_row("2,q,3"), csv_row("3,n,1")]);
}

#[test]
fn c08_partial_update() {
    let pu = |width, deletes| {
        MergeEngine::PartialUpdate(PartialUpdate::new(width, vec![0], vec![], deletes))
    };
    let part1 = inserts(&["1,23.0,10,", "1,,,This is a book", "1,25.2,,"]);
    let (log, _) = run2(&pu(4, PartialDeletes::Reject), &part1);
    assert_eq!(table(&log), vec![csv_row("1,25.2,10,This is a book")]);
    let part2 = inserts(&["1,1,1,1,1,1,1", "1,2,2,2,2,2,"]);
    let (log, _) = run2(&pu(7, PartialDeletes::Reject), &part2);
    assert_eq!(table(&log), vec![csv_row("1,2,2,2,2,2,1")]);
    let part3 = writes(&[(RowKind::Insert, "1,3,5,7"), (RowKind::Delete, "1,2,2,")]);
    let (log, _) = run2(&pu(4, PartialDeletes::RemoveRecordOnDelete), &part3);
    assert_eq!(
        log_rows(&log),
        vec![
            (RowKind::Insert, csv_row("1,3,5,7")),
            (RowKind::Delete, csv_row("1,3,5,7"))
        ]
    );
    let (log, refused) = run2(&pu(4, PartialDeletes::Reject), &part3);
    assert_eq!(table(&log), vec![csv_row("1,3,5,7")]);
    assert_eq!(
        refused,
        vec![(
            "1".into(),
            1,
            partial_update::PARTIAL_UPDATE_DELETE_ERROR.into()
        )]
    );
    assert!(refused[0]
        .2
        .starts_with("By default, Partial update can not accept delete records"));
    let (log, refused) = run2(&pu(4, PartialDeletes::Ignore), &part3);
    assert_eq!(table(&log), vec![csv_row("1,3,5,7")]);
    assert!(refused[0].2.starts_with(IGNORED));
    let (log, refused) = run2(&pu(4, PartialDeletes::Reject), &inserts(&["1,a"]));
    assert!(log.is_empty());
    let width = "write has 2 columns, the table 4".to_string();
    assert_eq!(refused, vec![("1".into(), 0, width)]);
}

#[test]
fn partial_update_sequence_groups() {
    // k, a, b, g1 (sequence of a,b), c, g2 (sequence of c; retraction removes the row)
    let group = |seq: usize, fields: Vec<usize>, remove| SequenceGroup {
        sequence: vec![field(seq, "g", OrderType::Int)],
        fields,
        remove_record_on_retract: remove,
    };
    let groups = vec![group(3, vec![1, 2], false), group(5, vec![4], true)];
    let engine = MergeEngine::PartialUpdate(PartialUpdate::new(
        6,
        vec![0],
        groups,
        PartialDeletes::Reject,
    ));
    let ws = writes(&[
        (RowKind::Insert, "1,a1,b1,1,c1,1"),
        (RowKind::Insert, "1,a2,,2,c0,0"),
        (RowKind::Insert, "1,a0,b0,0,,"),
        (RowKind::UpdateBefore, "1,,,3,,"),
        (RowKind::Delete, "1,,,,,2"),
    ]);
    let (log, refused) = run2(&engine, &ws);
    assert!(refused.is_empty());
    assert_eq!(
        log_rows(&log),
        vec![
            (RowKind::Insert, csv_row("1,a1,b1,1,c1,1")),
            (RowKind::UpdateBefore, csv_row("1,a1,b1,1,c1,1")),
            (RowKind::UpdateAfter, csv_row("1,a2,,2,c1,1")),
            (RowKind::UpdateBefore, csv_row("1,a2,,2,c1,1")),
            (RowKind::UpdateAfter, csv_row("1,a2,,2,c1,1")),
            (RowKind::UpdateBefore, csv_row("1,a2,,2,c1,1")),
            (RowKind::UpdateAfter, csv_row("1,,,3,c1,1")),
            (RowKind::Delete, csv_row("1,,,3,c1,1")),
        ]
    );
}

fn agg(name: &str, function: AggFunction) -> Option<FieldAgg> {
    Some(FieldAgg::new(name, function, DataType::STRING))
}

#[test]
fn c11_aggregation() {
    use AggFunction::*;
    let part1 = Aggregation {
        fields: vec![None, agg("price", Max), agg("sales", Sum)],
        sequence: vec![],
        deletes: AggDeletes::Retract,
    };
    let (log, _) = run2(
        &MergeEngine::Aggregation(part1),
        &inserts(&["1,23.0,15", "1,30.2,20"]),
    );
    assert_eq!(table(&log), vec![csv_row("1,30.2,35")]);

    let f = FirstNonNullValue;
    let part2 = Aggregation {
        fields: vec![None, agg("a", f), agg("b", Sum), agg("c", f), agg("d", f)],
        sequence: vec![],
        deletes: AggDeletes::Retract,
    };
    let ws = inserts(&["1,,1,1,1", "1,2,,2,2", "1,3,3,,3", "1,4,4,4,", "1,5,5,5,5"]);
    let (log, _) = run2(&MergeEngine::Aggregation(part2), &ws);
    assert_eq!(table(&log), vec![csv_row("1,2,13,1,1")]);

    let part3 = Aggregation {
        fields: vec![
            None,
            agg("v", LastNonNullValue),
            agg("s0", LastValue),
            agg("s1", LastValue),
        ],
        sequence: vec![
            field(2, "s0", OrderType::Int),
            field(3, "s1", OrderType::Int),
        ],
        deletes: AggDeletes::Retract,
    };
    let engine = MergeEngine::Aggregation(part3);
    let ws = inserts(&["1,A1,,1", "1,A2,1,", "1,A3,1,0"]);
    assert_eq!(table(&run2(&engine, &ws[..2]).0), vec![csv_row("1,A2,1,")]);
    assert_eq!(table(&run2(&engine, &ws).0), vec![csv_row("1,A3,1,0")]);
    // Out of order: the lower sequence arriving last changes nothing.
    let late = inserts(&["1,A3,1,0", "1,A2,1,", "1,A1,,1"]);
    assert_eq!(table(&run2(&engine, &late).0), vec![csv_row("1,A3,1,0")]);
}

#[test]
fn aggregation_other_functions_retraction_and_errors() {
    use AggFunction::*;
    let mut list = agg("l", ListAgg);
    list.as_mut().unwrap().delimiter = ";".into();
    let mut ignored = agg("mx", Max);
    ignored.as_mut().unwrap().ignore_retract = true;
    let a = Aggregation {
        fields: vec![
            None,
            agg("p", Product),
            agg("n", Count),
            list,
            agg("and", BoolAnd),
            agg("or", BoolOr),
            ignored,
            agg("fv", FirstValue),
            agg("mn", Min),
        ],
        sequence: vec![],
        deletes: AggDeletes::Retract,
    };
    let engine = MergeEngine::Aggregation(a);
    let ws = writes(&[
        (RowKind::Insert, "1,2,x,a,true,false,5,,9"),
        (RowKind::Insert, "1,3.5,,b,false,TRUE,7,f,10"),
        (RowKind::Insert, "1,,y,,,,6,g,8"),
        (RowKind::Delete, "1,2,,,,,7,,"),
    ]);
    let (log, refused) = run2(&engine, &ws);
    assert_eq!(table(&log), vec![csv_row("1,7.0,2,a;b,false,true,7,,8")]);
    let k = "1".to_string();
    assert_eq!(
        refused,
        vec![(k, 3, "column 'n': aggregate function 'count' does not support retraction (-U/-D); set 'fields.n.ignore-retract' = 'true' to ignore retractions of this column".into())]
    );
    let sums = Aggregation {
        fields: vec![None, agg("s", Sum)],
        sequence: vec![],
        deletes: AggDeletes::Retract,
    };
    let ws = writes(&[
        (RowKind::Insert, "1,9223372036854775807"),
        (RowKind::Insert, "1,1"),
        (RowKind::UpdateBefore, "1,7"),
    ]);
    let (log, refused) = run2(&MergeEngine::Aggregation(sums), &ws);
    assert_eq!(table(&log), vec![csv_row("1,9223372036854775800")]);
    assert_eq!(
        refused,
        vec![("1".into(), 1, "column 's': integer overflow".into())]
    );
}

#[test]
fn aggregation_max_and_min_do_not_depend_on_arrival_order() {
    use AggFunction::*;
    let engine = MergeEngine::Aggregation(Aggregation {
        fields: vec![None, agg("mx", Max), agg("mn", Min)],
        sequence: vec![],
        deletes: AggDeletes::Retract,
    });
    // Numbers by value before text; `10` and `10.0` are equal values, ordered by text.
    let cells = ["10", "9", "10a", "10.0", "-1e3"];
    let mut orders = vec![cells.to_vec()];
    for _ in 0..4 {
        let mut next = orders.last().unwrap().clone();
        next.rotate_left(1);
        next.swap(0, 2);
        orders.push(next);
    }
    for order in orders {
        let lines: Vec<String> = order.iter().map(|c| format!("1,{c},{c}")).collect();
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (log, refused) = run2(&engine, &inserts(&lines));
        assert_eq!(table(&log), vec![csv_row("1,10a,-1e3")], "{order:?}");
        assert!(refused.is_empty());
    }
}
