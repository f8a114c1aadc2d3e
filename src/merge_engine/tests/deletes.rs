//! Delete and retraction semantics with exact rows: Fluss `'table.delete.behavior'` on
//! `aggregation`, Paimon `'aggregation.remove-record-on-delete'` and a retraction of a key
//! without a row, Paimon `'partial-update.remove-record-on-delete'` with a lone `-U`.

use super::*;

/// `k, s (sum), m (max)`.
fn sum_max(deletes: AggDeletes) -> MergeEngine {
    MergeEngine::Aggregation(Aggregation {
        fields: vec![None, agg("s", AggFunction::Sum), agg("m", AggFunction::Max)],
        sequence: vec![],
        deletes,
    })
}

fn refusals(rows: &[(&str, u64, &str)]) -> Vec<(String, u64, String)> {
    (rows.iter())
        .map(|(k, seq, r)| (k.to_string(), *seq, r.to_string()))
        .collect()
}

fn fluss_writes() -> Vec<(String, Change<Row>)> {
    use RowKind::*;
    writes(&[
        (Insert, "1,5,3"),
        (UpdateBefore, "1,5,3"),
        (UpdateAfter, "1,7,2"),
        (Delete, "1,7,2"),
        (Insert, "1,1,1"),
        (Delete, "2,1,1"),
    ])
}

#[test]
fn fluss_aggregation_never_retracts_and_ignores_deletes_by_default() {
    let (log, refused) = run2(
        &sum_max(AggDeletes::Fluss(Deletes::Ignore)),
        &fluss_writes(),
    );
    assert_eq!(table(&log), vec![csv_row("1,13,3")]);
    let u = "ignored: -U write on the Fluss aggregation merge engine ('table.delete.behavior' = 'ignore')";
    let d = "ignored: -D write on the Fluss aggregation merge engine ('table.delete.behavior' = 'ignore')";
    assert_eq!(refused, refusals(&[("1", 1, u), ("1", 3, d), ("2", 5, d)]));
}

#[test]
fn fluss_aggregation_refuses_deletes_when_disabled() {
    let engine = sum_max(AggDeletes::Fluss(Deletes::Reject("disabled".into())));
    let (log, refused) = run2(&engine, &fluss_writes());
    assert_eq!(table(&log), vec![csv_row("1,13,3")]);
    let no = "disabled";
    assert_eq!(
        refused,
        refusals(&[("1", 1, no), ("1", 3, no), ("2", 5, no)])
    );
}

#[test]
fn fluss_aggregation_allow_removes_the_record_on_delete() {
    let (log, refused) = run2(&sum_max(AggDeletes::Fluss(Deletes::Apply)), &fluss_writes());
    assert_eq!(
        log_rows(&log),
        vec![
            (RowKind::Insert, csv_row("1,5,3")),
            (RowKind::UpdateBefore, csv_row("1,5,3")),
            (RowKind::UpdateAfter, csv_row("1,12,3")),
            (RowKind::Delete, csv_row("1,12,3")),
            (RowKind::Insert, csv_row("1,1,1")),
        ]
    );
    let u = "ignored: -U write on the Fluss aggregation merge engine ('table.delete.behavior' = 'allow' applies -D only)";
    let absent = "ignored: -D of a key without a row on the aggregation merge engine";
    assert_eq!(refused, refusals(&[("1", 1, u), ("2", 5, absent)]));
}

/// `k, s (sum), v (last_non_null_value)`.
fn sum_last(deletes: AggDeletes) -> MergeEngine {
    let last = agg("v", AggFunction::LastNonNullValue);
    MergeEngine::Aggregation(Aggregation {
        fields: vec![None, agg("s", AggFunction::Sum), last],
        sequence: vec![],
        deletes,
    })
}

const RETRACTED_ABSENT: &str = "retraction of a key without a row: applied to an empty row, as Paimon does (the changelog retracts what was never inserted)";

#[test]
fn paimon_aggregation_applies_and_reports_a_retraction_of_an_absent_key() {
    use RowKind::*;
    let ws = writes(&[
        (UpdateBefore, "1,5,x"),
        (Insert, "1,2,y"),
        (Delete, "2,4,z"),
    ]);
    let (log, refused) = run2(&sum_last(AggDeletes::Retract), &ws);
    assert_eq!(
        log_rows(&log),
        vec![
            (Insert, csv_row("1,-5,")),
            (UpdateBefore, csv_row("1,-5,")),
            (UpdateAfter, csv_row("1,-3,y")),
            (Insert, csv_row("2,-4,")),
        ]
    );
    let reported = refusals(&[("1", 0, RETRACTED_ABSENT), ("2", 2, RETRACTED_ABSENT)]);
    assert_eq!(refused, reported);
}

#[test]
fn paimon_aggregation_remove_record_on_delete() {
    use RowKind::*;
    let ws = writes(&[
        (Insert, "1,5,x"),
        (UpdateBefore, "1,5,x"),
        (Delete, "1,0,"),
        (Insert, "1,2,y"),
        (Delete, "2,1,z"),
        (UpdateBefore, "3,1,z"),
    ]);
    let (log, refused) = run2(&sum_last(AggDeletes::RemoveRecordOnDelete), &ws);
    assert_eq!(
        log_rows(&log),
        vec![
            (Insert, csv_row("1,5,x")),
            (UpdateBefore, csv_row("1,5,x")),
            (UpdateAfter, csv_row("1,0,")),
            (Delete, csv_row("1,0,")),
            (Insert, csv_row("1,2,y")),
            (Insert, csv_row("3,-1,")),
        ]
    );
    let absent = "ignored: -D of a key without a row on the aggregation merge engine";
    let reported = refusals(&[("2", 4, absent), ("3", 5, RETRACTED_ABSENT)]);
    assert_eq!(refused, reported);
}

#[test]
fn partial_update_remove_record_on_delete_removes_on_a_lone_update_before() {
    use RowKind::*;
    let engine = MergeEngine::PartialUpdate(PartialUpdate::new(
        4,
        vec![0],
        vec![],
        PartialDeletes::RemoveRecordOnDelete,
    ));
    let ws = writes(&[
        (Insert, "1,a,b,c"),
        (UpdateBefore, "1,a,b,c"),
        (UpdateBefore, "2,,,"),
        (UpdateAfter, "1,,x,"),
    ]);
    let (log, refused) = run2(&engine, &ws);
    assert_eq!(
        log_rows(&log),
        vec![
            (Insert, csv_row("1,a,b,c")),
            (Delete, csv_row("1,a,b,c")),
            (Insert, csv_row("1,,x,")),
        ]
    );
    let absent = "ignored: -U write on a key without a row";
    assert_eq!(refused, refusals(&[("2", 2, absent)]));
}
