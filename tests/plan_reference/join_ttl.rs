//! Regular joins with a state TTL (issue 13, Flink's `table.exec.state.ttl`) against the
//! reference interpreter: `C <kind> JOIN D ON keys [AND residual]` over two updating inputs
//! (inserts, deletes, updates of live rows; NULL keys), random batching into system times and a
//! small random TTL (1 to 6 system times), so rows expire between and under their partners; 1,
//! 2 and 4 workers; exact tables at every system time. A TTL longer than the input is the
//! regular join.

use std::collections::BTreeMap;

use proptest::prelude::*;

use differential_temporal::expr::{bind_scalar, col, FunctionRegistry};
use differential_temporal::operators::{Change, SysTime};
use differential_temporal::plan::reference::{evaluate, snapshot, Inputs};
use differential_temporal::plan::{equi_join_schema, JoinType, RelExpr};
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::Row;

use super::{changelog, check_against, schema_c};

type Stream = Vec<(SysTime, Change<Row>)>;

/// The join of `C` and `D` (both updating, the columns of `A`) on `k` (and `s` with `two_keys`),
/// with the residual `v <= v0` or none.
fn join(join_type: JoinType, two_keys: bool, residual: bool) -> RelExpr {
    let (left, right) = (
        RelExpr::scan("C", schema_c(), true),
        RelExpr::scan("D", schema_c(), true),
    );
    let joined = equi_join_schema(&left.schema, &right.schema, join_type);
    let residual = residual
        .then(|| bind_scalar(&col("v").le(col("v0")), &joined, &FunctionRegistry::new()).unwrap());
    let key = if two_keys { vec![0, 1] } else { vec![0] };
    left.join(right, key.clone(), key, join_type, residual)
        .unwrap()
}

fn check(plan: RelExpr, ttl: SysTime, c: Stream, d: Stream) -> Result<(), TestCaseError> {
    let inputs: Inputs = BTreeMap::from([("C".to_string(), c), ("D".to_string(), d)]);
    let last = inputs
        .values()
        .flatten()
        .map(|(t, _)| *t)
        .max()
        .unwrap_or(0);
    // A TTL no row outlives is the regular join (the model's rules without expiry).
    let forever = plan.clone().with_state_ttl(last + 1).unwrap();
    prop_assert_eq!(
        snapshot(&evaluate(&forever, &inputs).unwrap().stream, SysTime::MAX),
        snapshot(&evaluate(&plan, &inputs).unwrap().stream, SysTime::MAX),
        "a TTL beyond the input is the regular join\n{}",
        forever.explain()
    );
    let plan = plan.with_state_ttl(ttl).unwrap();
    let expected = evaluate(&plan, &inputs).unwrap();
    let label = format!("state TTL {ttl}");
    check_against(
        &plan,
        &inputs,
        ExecutionMode::Incremental,
        &expected,
        0..=last,
        &label,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn joins_with_a_state_ttl_equal_the_reference(
        join_type in prop::sample::select(vec![JoinType::Inner, JoinType::Left, JoinType::Right, JoinType::Full]),
        two_keys in prop::bool::weighted(0.25),
        residual in any::<bool>(),
        ttl in 1u64..7,
        c in changelog(12),
        d in changelog(12),
    ) {
        check(join(join_type, two_keys, residual), ttl, c, d)?;
    }
}
