//! Each engine against its sequential reference model ([`reference`](super::super::reference))
//! over random writes (ties, NULLs, unparsable orders, retractions), random epoch cuts and 1, 2
//! and 4 workers; and the engines over typed BIGINT rows against the same model over the rows
//! as text.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use super::*;
use crate::repr::{DataType, Datum};
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

/// An order cell: many ties, NULLs and an occasional unparsable one.
fn order_cell() -> BoxedStrategy<Cell> {
    prop_oneof![
        6 => (0i64..4).prop_map(|v| Some(v.to_string())),
        2 => Just(None),
        1 => Just(Some("bad".to_string())),
    ]
    .boxed()
}

/// Random writes over 3 keys: `[key, a, b, order]` rows, `a`, `b` and the order drawn from the
/// given cells, and about one retraction in five; plus random epoch cuts.
fn writes_of(
    a: BoxedStrategy<Cell>,
    b: BoxedStrategy<Cell>,
    order: BoxedStrategy<Cell>,
) -> impl Strategy<Value = (Vec<(u8, Change<Row>)>, Vec<usize>)> {
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
    writes_of(small_int(), small_int(), order_cell())
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
            ignore_retract,
            delimiter: delimiter.to_string(),
            ..FieldAgg::new(name, function, DataType::STRING)
        })
}

/// Two aggregated columns and writes with cells for their functions.
fn aggregation_writes(
) -> impl Strategy<Value = ([FieldAgg; 2], (Vec<(u8, Change<Row>)>, Vec<usize>))> {
    (field_agg(), field_agg()).prop_flat_map(|(a, b)| {
        let ws = writes_of(cells_for(a.function), cells_for(b.function), order_cell());
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

/// Integer writes (`-2..4` or NULL in every column) and two columns aggregated by functions
/// that take BIGINT, as text and as typed BIGINT columns.
fn integer_writes() -> impl Strategy<Value = ([FieldAgg; 2], (Vec<(u8, Change<Row>)>, Vec<usize>))>
{
    use AggFunction::*;
    let numeric = [
        Sum,
        Product,
        Count,
        Max,
        Min,
        LastValue,
        LastNonNullValue,
        FirstValue,
        FirstNonNullValue,
    ];
    let agg =
        (prop::sample::select(numeric.to_vec()), any::<bool>()).prop_map(|(f, ignore)| FieldAgg {
            ignore_retract: ignore,
            ..FieldAgg::new("v", f, DataType::STRING)
        });
    let int =
        || prop_oneof![4 => (-2i64..4).prop_map(|v| Some(v.to_string())), 1 => Just(None)].boxed();
    (agg.clone(), agg, writes_of(int(), int(), small_int())).prop_map(|(a, b, ws)| ([a, b], ws))
}

/// The engine over typed BIGINT rows against the model of `text` (the same engine over text
/// cells) over the rows as text: the same changelog, written as text, and the same refusals.
fn check_typed(
    text: &MergeEngine,
    typed: &MergeEngine,
    ws: &[(u8, Change<Row>)],
    cuts: &[usize],
) -> Result<(), TestCaseError> {
    let expected = reference::run(text, ws);
    let bigint = |t: &str| Datum::Int(t.parse().unwrap());
    let typed_ws: Vec<_> = (ws.iter())
        .map(|(k, c)| {
            let row = Row::pack(c.row.cells().map(|cell| cell.map_or(Datum::Null, bigint)));
            (*k, Change::new(c.seq, c.kind, row))
        })
        .collect();
    for workers in [1, 2] {
        let (log, refused) = run(typed, &typed_ws, workers, cuts);
        let as_text = |row: &Row| -> Vec<Option<String>> {
            row.iter()
                .map(|d| match d {
                    Datum::Int(i) => Some(i.to_string()),
                    _ => None,
                })
                .collect()
        };
        let log: Vec<_> = (log.into_iter())
            .map(|(k, c)| {
                let cells = as_text(&c.row);
                let row = pack_cells(cells.iter().map(Option::as_deref));
                (k, Change::new(c.seq, c.kind, row))
            })
            .collect();
        let refused: Vec<_> = (refused.into_iter())
            .map(|(k, s, r)| (k, s, r.starts_with(IGNORED)))
            .collect();
        let mut log = log;
        log.sort();
        prop_assert_eq!(&(log, refused), &expected, "workers {}", workers);
    }
    Ok(())
}

/// The aggregated columns `fields`, typed BIGINT.
fn bigint_aggregates(fields: &[Option<FieldAgg>]) -> Vec<Option<FieldAgg>> {
    (fields.iter())
        .map(|f| {
            f.clone().map(|f| FieldAgg {
                ty: DataType::BigInt,
                ..f
            })
        })
        .collect()
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

    #[test]
    fn typed_versioned_and_deduplicate_match_reference((_, (ws, cuts)) in integer_writes(), deletes in deletes()) {
        let engine = versioned(3, OrderType::BigInt, deletes.clone());
        check_typed(&engine, &engine, &ws, &cuts)?;
        let sequence = vec![field(3, "s", OrderType::BigInt), field(2, "b", OrderType::BigInt)];
        let engine = MergeEngine::Deduplicate(Deduplicate { sequence, deletes });
        check_typed(&engine, &engine, &ws, &cuts)?;
    }

    #[test]
    fn typed_aggregation_matches_reference(([fa, fb], (ws, cuts)) in integer_writes(), seq in any::<bool>(), deletes in agg_deletes()) {
        let sequence = if seq { vec![field(3, "s", OrderType::BigInt)] } else { vec![] };
        let fields = vec![None, Some(fa), Some(fb), agg("s", AggFunction::LastValue)];
        let text = MergeEngine::Aggregation(Aggregation { fields: fields.clone(), sequence: sequence.clone(), deletes: deletes.clone() });
        let fields = bigint_aggregates(&fields);
        let typed = MergeEngine::Aggregation(Aggregation { fields, sequence, deletes });
        check_typed(&text, &typed, &ws, &cuts)?;
    }
}
