//! Each engine against its sequential reference model ([`reference`](super::super::reference))
//! over random writes (ties, NULLs, unparsable orders, retractions), random epoch cuts and 1, 2
//! and 4 workers.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use super::*;
use crate::row::pack_cells;

type Cell = Option<String>;

/// An integer cell in `0..4` or NULL.
fn small_int() -> BoxedStrategy<Cell> {
    prop_oneof![
        3 => (0i64..4).prop_map(|v| Some(v.to_string())),
        1 => Just(None),
    ]
    .boxed()
}

/// Random writes over 3 keys: `[key, a, b, order]` rows, `a` and `b` drawn from the given
/// cells, the order with many ties, NULLs and an occasional unparsable one, and about one
/// retraction in five; plus random epoch cuts.
fn writes_of(
    a: BoxedStrategy<Cell>,
    b: BoxedStrategy<Cell>,
) -> impl Strategy<Value = (Vec<(u8, Change<Row>)>, Vec<usize>)> {
    let order = prop_oneof![
        6 => (0i64..4).prop_map(|v| Some(v.to_string())),
        2 => Just(None),
        1 => Just(Some("bad".to_string())),
    ];
    let kind = prop_oneof![
        5 => Just(RowKind::Insert),
        1 => Just(RowKind::UpdateBefore),
        1 => Just(RowKind::Delete),
        1 => Just(RowKind::UpdateAfter),
    ];
    let write = (0u8..3, kind, a, b, order);
    (
        prop::collection::vec(write, 0..30),
        prop::collection::vec(0usize..30, 0..4),
    )
        .prop_map(|(ws, mut cuts)| {
            cuts.sort();
            let ws = ws
                .into_iter()
                .enumerate()
                .map(|(seq, (k, kind, a, b, o))| {
                    let k_text = k.to_string();
                    let r = pack_cells([
                        Some(k_text.as_str()),
                        a.as_deref(),
                        b.as_deref(),
                        o.as_deref(),
                    ]);
                    (k, Change::new(seq as u64, kind, r))
                })
                .collect();
            (ws, cuts)
        })
}

/// [`writes_of`] with small integers in both value columns.
fn random_writes() -> impl Strategy<Value = (Vec<(u8, Change<Row>)>, Vec<usize>)> {
    writes_of(small_int(), small_int())
}

/// Cells an aggregate function reads: mostly its own kind (integers, possibly negative ones for
/// the arithmetic, booleans in any case, text), NULLs, and an occasional cell it cannot read.
fn cells_for(f: AggFunction) -> BoxedStrategy<Cell> {
    use AggFunction::*;
    let texts = |options: &'static [&'static str]| {
        prop::sample::select(options).prop_map(|t| Some(t.to_string()))
    };
    match f {
        Sum | Product => prop_oneof![
            6 => (-2i64..4).prop_map(|v| Some(v.to_string())),
            2 => Just(None),
            1 => Just(Some("x".to_string())),
        ]
        .boxed(),
        BoolAnd | BoolOr => prop_oneof![
            6 => texts(&["true", "false", "TRUE", "False"]),
            2 => Just(None),
            1 => Just(Some("yes".to_string())),
        ]
        .boxed(),
        ListAgg => prop_oneof![3 => texts(&["a", "b", "c", "7"]), 1 => Just(None)].boxed(),
        _ => prop_oneof![4 => small_int(), 1 => texts(&["x"])].boxed(),
    }
}

/// An aggregated column: a function, whether it ignores retractions, and a listagg delimiter.
fn field_agg() -> impl Strategy<Value = FieldAgg> {
    let delimiter = prop::sample::select(vec![",", ";", " | "]);
    (
        prop::sample::select(AggFunction::ALL.to_vec()),
        any::<bool>(),
        delimiter,
    )
        .prop_map(|((name, function), ignore_retract, delimiter)| FieldAgg {
            name: name.to_string(),
            function,
            ignore_retract,
            delimiter: delimiter.to_string(),
        })
}

/// Two aggregated columns and writes with cells for their functions.
fn aggregation_writes(
) -> impl Strategy<Value = ([FieldAgg; 2], (Vec<(u8, Change<Row>)>, Vec<usize>))> {
    (field_agg(), field_agg()).prop_flat_map(|(a, b)| {
        let ws = writes_of(cells_for(a.function), cells_for(b.function));
        (Just([a, b]), ws)
    })
}

fn check(
    engine: &MergeEngine,
    ws: &[(u8, Change<Row>)],
    cuts: &[usize],
) -> Result<(), TestCaseError> {
    let expected = reference::run(engine, ws);
    for workers in [1, 2, 4] {
        let (log, refused) = run(engine, ws, workers, cuts);
        let refused: Vec<_> = refused
            .into_iter()
            .map(|(k, s, r)| (k, s, r.starts_with(IGNORED)))
            .collect();
        prop_assert_eq!(&(log, refused), &expected, "workers {}", workers);
    }
    Ok(())
}

fn deletes() -> impl Strategy<Value = Deletes> {
    prop_oneof![
        Just(Deletes::Apply),
        Just(Deletes::Ignore),
        Just(Deletes::Reject("no".into()))
    ]
}

/// Paimon's and Fluss's delete handling of `aggregation`.
fn agg_deletes() -> impl Strategy<Value = AggDeletes> {
    prop_oneof![
        2 => Just(AggDeletes::Retract),
        2 => Just(AggDeletes::RemoveRecordOnDelete),
        1 => deletes().prop_map(AggDeletes::Fluss),
    ]
}

proptest! {
    // Failure seeds are kept beside this file (`props.proptest-regressions`), as the
    // integration tests' are, not in a crate-level `proptest-regressions/` folder.
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions"
        ))),
        ..ProptestConfig::with_cases(32)
    })]

    #[test]
    fn versioned_matches_reference((ws, cuts) in random_writes(), deletes in deletes()) {
        check(&versioned(3, OrderType::Int, deletes), &ws, &cuts)?;
    }

    #[test]
    fn first_row_matches_reference((ws, cuts) in random_writes(), deletes in deletes()) {
        check(&MergeEngine::FirstRow(FirstRow { deletes }), &ws, &cuts)?;
    }

    #[test]
    fn deduplicate_matches_reference((ws, cuts) in random_writes(), deletes in deletes(), seq in any::<bool>()) {
        let sequence = if seq { vec![field(3, "s", OrderType::BigInt), field(2, "b", OrderType::Int)] } else { vec![] };
        check(&MergeEngine::Deduplicate(Deduplicate { sequence, deletes }), &ws, &cuts)?;
    }

    #[test]
    fn partial_update_matches_reference((ws, cuts) in random_writes(), mode in 0usize..4) {
        let group = SequenceGroup { sequence: vec![field(3, "s", OrderType::Int)], fields: vec![2], remove_record_on_retract: false };
        let (groups, deletes) = match mode {
            0 => (vec![], PartialDeletes::Reject),
            1 => (vec![], PartialDeletes::Ignore),
            2 => (vec![], PartialDeletes::RemoveRecordOnDelete),
            _ => (vec![group], PartialDeletes::Reject),
        };
        check(&MergeEngine::PartialUpdate(PartialUpdate::new(4, vec![0], groups, deletes)), &ws, &cuts)?;
    }

    #[test]
    fn partial_update_with_aggregates_matches_reference(([fa, fb], (ws, cuts)) in aggregation_writes(), deletes in 0usize..3) {
        let group = SequenceGroup { sequence: vec![field(3, "s", OrderType::Int)], fields: vec![2], remove_record_on_retract: false };
        let deletes = [PartialDeletes::Reject, PartialDeletes::Ignore, PartialDeletes::RemoveRecordOnDelete][deletes];
        let engine = PartialUpdate::new(4, vec![0], vec![group], deletes).with_aggregates(vec![None, Some(fa), Some(fb), None]);
        check(&MergeEngine::PartialUpdate(engine), &ws, &cuts)?;
    }

    #[test]
    fn aggregation_matches_reference(([fa, fb], (ws, cuts)) in aggregation_writes(), seq in any::<bool>(), deletes in agg_deletes()) {
        let sequence = if seq { vec![field(3, "s", OrderType::Int)] } else { vec![] };
        let fields = vec![None, Some(fa), Some(fb), agg("s", AggFunction::LastValue)];
        check(&MergeEngine::Aggregation(Aggregation { fields, sequence, deletes }), &ws, &cuts)?;
    }
}
