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
use differential_temporal_operators::group_aggregate;
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
                out.extend(overdrawing(changes).map(|seq| (seq, 1)));
            },
        )
        .map(move |(_, seq)| not_held(seq, node))
}

/// How many times [`held`] outputs a row its input holds `n > 0` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::render) enum Held {
    /// Once (`DISTINCT`).
    Once,
    /// `n` times (the input of `EXCEPT ALL` / `INTERSECT ALL`).
    Counted,
}

/// The rows `positions` (as [`overdrawn`]'s) holds, each once or as often as held (`times`),
/// and the refusal of each retraction of a row not held, as [`overdrawn`]'s, from one
/// arrangement. A row retracted more often than inserted is not held: it is not output (where
/// differential's `distinct` would output it once, a row never inserted).
///
/// # Examples
///
/// `SELECT DISTINCT k` over a changelog `+I (a)` at line 2, `-D (b)` at line 3: the rows are
/// `a` alone, and the `-D` is refused at `seq` 3.
pub(in crate::render) fn held<'s, K>(
    positions: VecCollection<'s, SysTime, (K, Seq)>,
    node: &'static str,
    times: Held,
) -> (
    VecCollection<'s, SysTime, K>,
    VecCollection<'s, SysTime, Rejected>,
)
where
    K: ExchangeData + Hashable,
{
    let reduced = positions.reduce_named(
        "Held",
        move |_row: &K, changes: &[(&Seq, isize)], out: &mut Vec<(Option<Seq>, isize)>| {
            let count: isize = changes.iter().map(|(_, n)| n).sum();
            if count > 0 {
                out.push((None, if times == Held::Once { 1 } else { count }));
            }
            out.extend(overdrawing(changes).map(|seq| (Some(seq), 1)));
        },
    );
    crate::render::split_map(reduced, move |(row, overdrawn)| match overdrawn {
        None => Ok(row),
        Some(seq) => Err(not_held(seq, node)),
    })
}

/// The positions of the retractions in `changes` (one row's, in `seq` order) that take the
/// row's count below zero.
fn overdrawing<'a>(changes: &'a [(&Seq, isize)]) -> impl Iterator<Item = Seq> + 'a {
    changes
        .iter()
        .scan(0, |held, (seq, n)| {
            *held += n;
            Some((*n < 0 && *held < 0).then_some(**seq))
        })
        .flatten()
}

/// The refusal of a retraction at `seq` of a row the operator `node` does not hold.
fn not_held(seq: Seq, node: &str) -> Rejected {
    Rejected::invalid(seq, group_aggregate::not_held(node))
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
