//! The ASOF join templates of the plan reference tests.

use differential_temporal::expr::{col, lit};
use differential_temporal::plan::{JoinKind, RelExpr};

use super::{bind, scan_a, scan_b2, scan_c};

/// The ASOF join templates: each condition (from `threshold`), INNER or LEFT (`flag`), over
/// timestamps with ties and NULLs or integers, with and without keys and a tolerance, on
/// append-only and updating build sides (a build row's retraction changes matches).
pub(super) fn asof(template: u8, flag: bool, threshold: i64) -> RelExpr {
    use differential_temporal::plan::{AsofMatch, AsofOrder, Tolerance};
    let condition = [
        AsofMatch::Nearest,
        AsofMatch::Ge,
        AsofMatch::Gt,
        AsofMatch::Le,
        AsofMatch::Lt,
        AsofMatch::Nearest,
        AsofMatch::Ge,
    ][(threshold + 3) as usize];
    let kind = if flag {
        JoinKind::Left
    } else {
        JoinKind::Inner
    };
    let order = |column, tolerance| AsofOrder {
        probe: column,
        build: column,
        condition,
        tolerance,
    };
    let (probe, build, key, order) = match template {
        // Append-only build side: ties on the time broken by arrival.
        14 => (scan_a(), scan_b2(), vec![0], order(4, None)),
        // A filter on the build side is applied before the match; no keys; a tolerance.
        15 => {
            let b2 = scan_b2();
            let positive = b2
                .clone()
                .filter(bind(&b2, col("v").gt(lit(0i64))))
                .unwrap();
            let tolerance = Tolerance::Interval { millis: 3000 };
            (scan_a(), positive, vec![], order(4, Some(tolerance)))
        }
        // Updating inputs ordered by an integer column.
        16 => {
            let tolerance = (threshold % 2 == 0).then_some(Tolerance::Number(2));
            (scan_c(), scan_c(), vec![0], order(2, tolerance))
        }
        // Two key columns, an updating build side.
        _ => (scan_a(), scan_c(), vec![0, 1], order(4, None)),
    };
    probe
        .asof_join(build, key.clone(), key, order, kind)
        .unwrap()
}
