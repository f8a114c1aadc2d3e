//! Each engine against its sequential reference model ([`reference`](super::super::reference))
//! over random writes (ties, NULLs, unparsable orders, retractions), random epoch cuts and 1, 2
//! and 4 workers.

use proptest::prelude::*;

use super::*;

/// Random writes over 3 keys: `[key, value, order]` cells with many ties, NULLs, an occasional
/// unparsable order, and about one retraction in five; plus random epoch cuts.
fn random_writes() -> impl Strategy<Value = (Vec<(u8, Change<Row>)>, Vec<usize>)> {
    let cell = prop_oneof![
        3 => (0i64..4).prop_map(|v| Some(v.to_string())),
        1 => Just(None),
    ];
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
    let write = (0u8..3, kind, cell.clone(), cell, order);
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
                    let r = vec![Some(k.to_string()), a, b, o];
                    (k, Change::new(seq as u64, kind, r))
                })
                .collect();
            (ws, cuts)
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

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
    fn aggregation_matches_reference((ws, cuts) in random_writes(), f1 in 0usize..8, f2 in 0usize..8, seq in any::<bool>()) {
        use AggFunction::*;
        let fs = [Sum, Count, Max, Min, LastValue, LastNonNullValue, FirstValue, FirstNonNullValue];
        let field_agg = |name: &str, f: AggFunction| {
            let mut a = agg(name, f);
            a.as_mut().unwrap().ignore_retract = !f.supports_retract();
            a
        };
        let sequence = if seq { vec![field(3, "s", OrderType::Int)] } else { vec![] };
        let fields = vec![None, field_agg("a", fs[f1]), field_agg("b", fs[f2]), field_agg("s", LastValue)];
        check(&MergeEngine::Aggregation(Aggregation { fields, sequence }), &ws, &cuts)?;
    }
}
