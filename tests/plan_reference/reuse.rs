//! Sub-plan reuse (issue 12, for Nexmark q5): a subtree that occurs twice in a plan is rendered
//! once, and the plan still equals the reference interpreter, refused rows included (a refusal
//! listed once per occurrence, as the reference evaluates each occurrence).

use std::collections::BTreeMap;

use differential_dataflow::input::InputSession;
use differential_dataflow::VecCollection;
use differential_temporal::expr::{col, lit};
use differential_temporal::operators::{Change, RowKind, Seq, SysTime};
use differential_temporal::plan::reference::Inputs;
use differential_temporal::plan::{JoinType, RelExpr, SetOpKind};
use differential_temporal::render::{ExecutionMode, RenderContext};
use differential_temporal::repr::Row;

use super::inputs::{schema_a, RowSpec};
use super::{aggs, bind, check_plan, scan_a};

/// `A2`: a second table like A.
fn scan_a2() -> RelExpr {
    RelExpr::scan("A2", schema_a(), false)
}

/// A Map over `scan` whose `q = 100 / v` refuses the rows with `v = 0`.
fn refusing(scan: RelExpr) -> RelExpr {
    let q = bind(&scan, lit(100i64).div(col("v")));
    scan.map(vec![(q, "q".to_string())]).unwrap()
}

/// `left UNION ALL right`.
fn union(left: RelExpr, right: RelExpr) -> RelExpr {
    left.set_op(right, SetOpKind::Union, true).unwrap()
}

/// q5's shape: `left` joined with the maximum `q` per `s` of `right`, on `s` and `q = max`.
fn joined_to_max(left: RelExpr, right: RelExpr) -> RelExpr {
    let (s, q) = (
        right.schema.index_of("s").unwrap(),
        right.schema.index_of("q").unwrap(),
    );
    let max = right
        .clone()
        .reduce(vec![s], aggs(&right, vec![col("q").max()]))
        .unwrap();
    left.join(max, vec![s, q], vec![0, 1], JoinType::Inner, None)
        .unwrap()
}

/// How many operators rendering `plan` (over empty tables A and A2) adds to a dataflow.
fn operators(plan: &RelExpr) -> usize {
    let plan = plan.clone();
    timely::execute_directly(move |worker| {
        let mut inputs: Vec<InputSession<SysTime, Change<Row>, isize>> =
            vec![InputSession::new(), InputSession::new()];
        worker.dataflow::<SysTime, _, _>(|scope| {
            let sources: BTreeMap<String, VecCollection<'_, SysTime, Change<Row>>> = ["A", "A2"]
                .into_iter()
                .zip(inputs.iter_mut())
                .map(|(name, input)| (name.to_string(), input.to_collection(scope)))
                .collect();
            let mut ctx = RenderContext::new(scope, sources, ExecutionMode::Incremental);
            let before = scope.worker().peek_identifier();
            ctx.render(&plan).unwrap();
            scope.worker().peek_identifier() - before
        })
    })
}

/// A's rows `(k, s, v)` at system times 0, 1, 2...; [`refusing`] refuses those with `v = 0`.
fn inputs() -> Inputs {
    let rows = [
        (1, "a", 2),
        (2, "b", 0),
        (1, "a", 5),
        (3, "b", 0),
        (4, "b", 4),
    ];
    let stream = rows
        .iter()
        .enumerate()
        .map(|(i, &(k, s, v))| {
            let row = RowSpec {
                k: Some(k),
                s: Some(s),
                v: Some(v),
                d: Some(100),
                ts: Some(i as i64),
            }
            .row();
            (i as SysTime, Change::new(i as Seq, RowKind::Insert, row))
        })
        .collect();
    BTreeMap::from([("A".to_string(), stream)])
}

/// Each plan whose two occurrences of the subtree are the same has exactly one subtree's
/// operators fewer than its twin over two different (equally shaped) subtrees.
#[test]
fn a_repeated_subtree_is_rendered_once() {
    let (sub, other) = (refusing(scan_a()), refusing(scan_a2()));
    let once = operators(&sub);
    assert!(once > 0);
    assert_eq!(
        operators(&union(sub.clone(), sub.clone())),
        operators(&union(sub.clone(), other.clone())) - once
    );
    assert_eq!(
        operators(&joined_to_max(sub.clone(), sub.clone())),
        operators(&joined_to_max(sub, other)) - once
    );
}

#[test]
fn a_repeated_subtree_equals_the_reference_and_refuses_once_per_occurrence() {
    let inputs = inputs();
    let sub = refusing(scan_a());
    for plan in [
        union(sub.clone(), sub.clone()),
        joined_to_max(sub.clone(), sub.clone()),
    ] {
        let expected = differential_temporal::plan::reference::evaluate(&plan, &inputs).unwrap();
        // The two rows with v = 0, refused by each of the subtree's two occurrences.
        let mut refused: Vec<Seq> = expected.refused.iter().map(|r| r.seq).collect();
        refused.sort_unstable();
        assert_eq!(refused, vec![1, 1, 3, 3]);
        check_plan(&plan, &inputs, "a repeated subtree").unwrap();
    }
}
