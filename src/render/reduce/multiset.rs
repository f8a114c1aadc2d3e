//! A group's rows as a multiset, for the operators that recompute a group from its consolidated
//! rows (the `Reduce` recomputation and session windows in incremental mode).
//!
//! Such an operator reads its updating input as a multiset: `+I`/`+U` add a row, `-U`/`-D`
//! remove it, and a row's retraction cancels its insertion whatever their positions. A
//! consistent changelog never removes a row it does not hold; an inconsistent one (a changelog
//! file whose `-D` has no earlier `+I`) leaves a row with a negative count, which no group can
//! hold. The group is computed from the rows it holds ([`aggregated_row`]), and [`overdrawn`]
//! reports each retraction of a row not held as a refused row at its position, so that nothing
//! is dropped silently.

use differential_dataflow::{ExchangeData, Hashable, VecCollection};
use differential_temporal_operators::keyed_merge::Rejected;
use differential_temporal_operators::{Seq, SysTime};

use crate::expr::AggregateExpr;
use crate::repr::{Datum, Row};

/// The retractions in `positions` (each row with the position, `seq`, of one of its changes,
/// and the change's signed count: negative for a retraction) of a row that the row's earlier
/// changes, in `seq` order, do not hold: each refused at its `seq`, once, whatever later
/// changes do (as `dtemporal validate` finds a retraction of an absent row). `node` names the
/// operator in the reason (e.g. `group aggregation`).
///
/// # Examples
///
/// A changelog `+I (a, x)` at line 2, `-D (a, y)` at line 3, `+I (a, y)` at line 4 aggregated
/// by `LISTAGG` per key: the `-D` is refused at `seq` 3, as `a retraction of a row the group
/// aggregation does not hold (no earlier change of its input inserted it)`, and the group `a`
/// holds `x` alone (the `+I` cancels the retraction).
pub(in crate::render) fn overdrawn<'s, K>(
    positions: VecCollection<'s, SysTime, (K, Seq)>,
    node: &'static str,
) -> VecCollection<'s, SysTime, Rejected>
where
    K: ExchangeData + Hashable,
{
    positions
        .reduce_named(
            "Overdrawn",
            |_row: &K, changes: &[(&Seq, isize)], out: &mut Vec<(Seq, isize)>| {
                // The changes come in `seq` order.
                let mut held = 0;
                for (seq, n) in changes {
                    held += n;
                    if *n < 0 && held < 0 {
                        out.push((**seq, 1));
                    }
                }
            },
        )
        .map(move |(_, seq)| {
            Rejected::invalid(
                seq,
                format!(
                    "a retraction of a row the {node} does not hold (no earlier change of its input inserted it)"
                ),
            )
        })
}

/// The row `prefix` followed by the aggregates over `members` (rows with their counts, in the
/// order the aggregates see them), or the first aggregate's error. A member retracted more
/// often than inserted (a negative count, reported by [`overdrawn`]) is not held: it counts
/// zero times.
pub(in crate::render) fn aggregated_row(
    prefix: &Row,
    aggregates: &[AggregateExpr],
    members: &[(&Row, isize)],
) -> Result<Row, String> {
    let held: Vec<(Vec<Datum>, usize)> = (members.iter())
        .filter_map(|(row, count)| Some((row.iter().collect(), usize::try_from(*count).ok()?)))
        .collect();
    let mut row = Row::new();
    let failed = {
        let mut packer = row.packer();
        packer.extend_by_row(prefix.as_row_ref());
        aggregates.iter().find_map(|agg| {
            let group = held.iter().map(|(d, count)| (d.as_slice(), *count));
            agg.eval_group(group, &mut packer).err()
        })
    };
    match failed {
        Some(e) => Err(e.to_string()),
        None => Ok(row),
    }
}
