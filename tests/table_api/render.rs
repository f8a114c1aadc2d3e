//! `Table::render` inside the caller's own dataflow, over a collection the caller packs
//! (`register_collection`): rows that do not fit the table's schema are refused with their
//! `seq`, never read as the schema's types (a NULL in a NOT NULL integer group key used to
//! reach the GROUP BY's integer key and panic).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use differential_dataflow::input::InputSession;
use differential_temporal::expr::col;
use differential_temporal::operators::{Change, RowKind, SysTime};
use differential_temporal::render::{ExecutionMode, RenderContext};
use differential_temporal::repr::{DataType, Datum, Row, Schema};
use differential_temporal::table::TableEnv;

#[test]
fn rows_that_do_not_fit_the_schema_are_refused() {
    let rows = vec![
        Change::new(
            1,
            RowKind::Insert,
            Row::pack([Datum::Int(1), Datum::Int(5)]),
        ),
        Change::new(2, RowKind::Insert, Row::pack([Datum::Null, Datum::Int(1)])),
        Change::new(
            3,
            RowKind::Insert,
            Row::pack([Datum::Str("a"), Datum::Int(1)]),
        ),
        Change::new(
            4,
            RowKind::Insert,
            Row::pack([Datum::Int(1), Datum::Int(1 << 40)]),
        ),
        Change::new(5, RowKind::Insert, Row::pack([Datum::Int(2)])),
        Change::new(
            6,
            RowKind::Delete,
            Row::pack([Datum::Int(1), Datum::Int(5)]),
        ),
        Change::new(
            7,
            RowKind::Insert,
            Row::pack([Datum::Int(1), Datum::Int(2)]),
        ),
    ];
    let (output, refused) = timely::execute_directly(move |worker| {
        // The environment and the table live on the worker (they are not `Send`).
        let env = TableEnv::new();
        let schema = Schema::builder()
            .column("k", DataType::BigInt.not_null())
            .column("v", DataType::Int.nullable())
            .build()
            .unwrap();
        env.register_collection("Events", schema, false).unwrap();
        let counts = env
            .from("Events")
            .group_by([col("k")])
            .select([col("k"), col("v").sum().alias("total")]);
        let mut input = InputSession::<SysTime, Change<Row>, isize>::new();
        let output = Rc::new(RefCell::new(Vec::new()));
        let refused = Rc::new(RefCell::new(Vec::new()));
        worker.dataflow::<SysTime, _, _>(|scope| {
            let sources = BTreeMap::from([("Events".to_string(), input.to_collection(scope))]);
            let mut ctx = RenderContext::new(scope, sources, ExecutionMode::Incremental);
            let table = counts.render(&mut ctx).unwrap().into_table();
            let sink = Rc::clone(&output);
            table.inspect(move |(row, _, diff)| sink.borrow_mut().push((row.clone(), *diff)));
            let sink = Rc::clone(&refused);
            differential_dataflow::collection::concatenate(scope, ctx.refused)
                .inspect(move |(r, _, _)| sink.borrow_mut().push((r.seq, r.reason.to_string())));
        });
        for row in rows.clone() {
            input.insert(row);
        }
        input.close();
        while worker.step() {}
        (output.take(), refused.take())
    });
    let mut live: BTreeMap<Row, isize> = BTreeMap::new();
    for (row, diff) in output {
        *live.entry(row).or_default() += diff;
    }
    live.retain(|_, d| *d != 0);
    let table: Vec<Row> = live.into_keys().collect();
    assert_eq!(
        table,
        [Row::pack([Datum::Int(1), Datum::Int(7)])],
        "only the fitting rows are summed"
    );
    let mut refused = refused;
    refused.sort();
    let fits = "a row of 'Events' does not fit its schema";
    assert_eq!(
        refused,
        [
            (
                2,
                format!("{fits}: column 'k' of type BIGINT NOT NULL holds NULL")
            ),
            (
                3,
                format!("{fits}: column 'k' of type BIGINT NOT NULL holds a string")
            ),
            (
                4,
                format!("{fits}: column 'v' of type INT holds the integer 1099511627776")
            ),
            (5, format!("{fits}: the row has 1 columns, the schema 2")),
            (
                6,
                format!("{fits}: a -D row in a table declared append-only")
            ),
        ]
    );
}
