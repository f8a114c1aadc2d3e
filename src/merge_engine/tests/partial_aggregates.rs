//! `partial-update` with aggregate functions: the examples of Paimon's partial-update
//! documentation ("Aggregation For Partial Update") with their exact rows, and retractions.

use super::*;

fn group(seq: &[(usize, &str)], fields: Vec<usize>) -> SequenceGroup {
    SequenceGroup {
        sequence: seq
            .iter()
            .map(|(c, n)| field(*c, n, OrderType::Int))
            .collect(),
        fields,
        remove_record_on_retract: false,
    }
}

/// `k, a, b, c, d`: groups `a -> b` and `c -> d`, with the given functions of `b` and `d`.
fn doc_table(b: AggFunction, d: AggFunction) -> MergeEngine {
    let groups = vec![group(&[(1, "a")], vec![2]), group(&[(3, "c")], vec![4])];
    let aggs = vec![None, None, agg("b", b), None, agg("d", d)];
    let engine = PartialUpdate::new(5, vec![0], groups, PartialDeletes::Reject);
    MergeEngine::PartialUpdate(engine.with_aggregates(aggs))
}

fn doc_writes() -> Vec<(String, Change<Row>)> {
    inserts(&["1,1,1,,", "1,,,1,1", "1,2,2,,", "1,,,2,2"])
}

#[test]
fn paimon_doc_aggregation_in_sequence_groups() {
    use AggFunction::*;
    let (log, refused) = run2(&doc_table(FirstValue, Sum), &doc_writes());
    assert_eq!((table(&log), refused), (vec![csv_row("1,2,1,2,3")], vec![]));
    // 'fields.default-aggregate-function' = 'last_non_null_value', 'fields.d...' = 'sum'.
    let (log, _) = run2(&doc_table(LastNonNullValue, Sum), &doc_writes());
    assert_eq!(table(&log), vec![csv_row("1,2,2,2,3")]);
}

#[test]
fn paimon_doc_aggregation_in_a_multi_field_sequence_group() {
    // k, a (sum, group g_1,g_3), b (plain), g_1, c (group g_2), g_2, g_3
    let groups = vec![
        group(&[(3, "g_1"), (6, "g_3")], vec![1]),
        group(&[(5, "g_2")], vec![4]),
    ];
    let aggs = vec![
        None,
        agg("a", AggFunction::Sum),
        None,
        None,
        None,
        None,
        None,
    ];
    let engine = PartialUpdate::new(7, vec![0], groups, PartialDeletes::Reject);
    let engine = MergeEngine::PartialUpdate(engine.with_aggregates(aggs));
    let ws = inserts(&["1,1,1,1,1,1,1", "1,2,2,2,2,,2", "1,3,3,2,3,3,1"]);
    assert_eq!(
        table(&run2(&engine, &ws[..2]).0),
        vec![csv_row("1,3,2,2,1,1,2")]
    );
    assert_eq!(table(&run2(&engine, &ws).0), vec![csv_row("1,6,3,2,3,3,2")]);
}

#[test]
fn aggregated_group_fields_are_retracted_by_their_function() {
    use AggFunction::*;
    use RowKind::*;
    let ws = writes(&[
        (Insert, "1,5,7,1,4"),
        (UpdateBefore, "1,3,7,,"),
        (Delete, "1,,,2,4"),
        (Delete, "1,4,1,,"),
    ]);
    let (log, refused) = run2(&doc_table(LastValue, Sum), &ws);
    // -U at a=3 (older than 5): b's last_value is retracted (NULL); -D at c=2: d = 4 - 4;
    // -D at a=4: a retraction of NULL from last_value keeps NULL.
    assert_eq!(
        log_rows(&log),
        vec![
            (Insert, csv_row("1,5,7,1,4")),
            (UpdateBefore, csv_row("1,5,7,1,4")),
            (UpdateAfter, csv_row("1,5,,1,4")),
            (UpdateBefore, csv_row("1,5,,1,4")),
            (UpdateAfter, csv_row("1,5,,2,0")),
            (UpdateBefore, csv_row("1,5,,2,0")),
            (UpdateAfter, csv_row("1,5,,2,0")),
        ]
    );
    assert!(refused.is_empty());
    let (log, refused) = run2(&doc_table(FirstValue, Sum), &ws[..2]);
    assert_eq!(table(&log), vec![csv_row("1,5,7,1,4")]);
    let reason = "column 'b': aggregate function 'first_value' does not support retraction (-U/-D); set 'fields.b.ignore-retract' = 'true' to ignore retractions of this column";
    assert_eq!(refused, vec![("1".to_string(), 1, reason.to_string())]);
}
