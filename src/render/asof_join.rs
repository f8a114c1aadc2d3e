//! Rendering of the ASOF join ([`AsofJoin`]) onto the incremental temporal join and its
//! versions arrangement.
//!
//! A one-sided ASOF search *is* the temporal join's seek: "the build row with the greatest
//! position at or below the probe's, ties by the greatest `seq`" over a versions arrangement
//! (key, then newest first). Each build row becomes a version of its key at its *position*, each
//! probe row is arranged at its own ([`Seek`]: the ordering value for a backward search, its
//! negation for a forward one, one unit less for a strict one), and `temporal_join` does the
//! rest: a probe row costs one seek (O(log n)), and a build row arriving or leaving re-joins
//! only the probe rows between it and the next present build position of its key, emitting
//! for those whose match it changes. The tolerance is the join's residual: it is checked on the
//! match only, so a LEFT join pads (an INNER drops) a row whose match is too far.
//!
//! NEAREST is the backward and the forward search (two LEFT joins, two arrangements of the
//! build side) and a `reduce` per probe change that keeps the closer match (the backward one at
//! equal distance); the tolerance is checked on that.
//!
//! Build rows are versions with diffs: a retraction removes the version it inserted. An
//! append-only build side keeps each row's `seq` (the latest arrival wins a tie); an updating
//! one gives every row `seq` 0 (a retraction's `seq` is not its insertion's), so a tie goes to
//! the smallest row, the same for any batching. Rows with a NULL key column or a NULL ordering
//! value never match: a probe row with one bypasses the operator (LEFT pads it), a build row
//! with one is never stored. Nothing is refused.
//!
//! In [`Final`](super::ExecutionMode::Final) mode the ASOF join runs as in incremental mode:
//! its output is exact at every system time and a late build row retracts and re-emits rows
//! (the output is updating); it does not wait for watermarks, so no row is late.

use differential_dataflow::{AsCollection, VecCollection};
use timely::dataflow::operators::vec::Map;

use crate::plan::{
    joined_row, order_value, within, AsofJoin, AsofMatch, JoinKind, PlanError, Seek,
};
use crate::repr::{DatumVec, Row};
use differential_temporal_operators::temporal_join::{arrange_probe, temporal_join, JoinConfig};
use differential_temporal_operators::{arrange_versions, Change, Seq, SysTime, Version};

use super::nodes::render as render_node;
use super::{split_map, Collection, RenderContext};

/// A change keyed by its key columns.
type Keyed<'s> = VecCollection<'s, SysTime, (Row, Change<Row>)>;
/// A build row keyed by its key columns, with its ordering value and `seq`.
type Builds<'s> = VecCollection<'s, SysTime, (Row, (i128, Seq, Row))>;
/// Each probe change (keyed) with the build row one search matched (`None`: no match).
type Matched<'s> = VecCollection<'s, SysTime, ((Row, Change<Row>), Option<Row>)>;

/// Renders an `AsofJoin` node (see the [module documentation](self)).
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    join: &AsofJoin,
) -> Result<Collection<'s>, PlanError> {
    let widths = (join.probe.schema.len(), join.build.schema.len());
    let probe = render_node(ctx, &join.probe)?.into_changelog();
    let build = render_node(ctx, &join.build)?.into_changelog();
    let (probe_keyed, unmatchable) = key_probes(probe, join);
    let builds = key_builds(build, join);
    let matched = match join.order.condition {
        AsofMatch::Nearest => nearest(probe_keyed, builds, join),
        condition => {
            let (p_col, b_col) = (join.order.probe, join.order.build);
            let tolerance = join.tolerance;
            let close_enough =
                move |p: &Row, b: &Row| within(tolerance, value_of(p, p_col), value_of(b, b_col));
            let seek = (condition.seeks()[0], p_col);
            search(probe_keyed, builds, seek, join.kind, close_enough)
        }
    };
    let mut out = matched
        .inner
        .flat_map(move |(((_, ch), build), time, diff)| {
            let row = joined_row(Some(&ch.row), build.as_ref(), widths);
            Some((Change::new(ch.seq, ch.kind, row), time, diff))
        })
        .as_collection();
    if join.kind == JoinKind::Left {
        out =
            out.concat(unmatchable.map(move |ch| {
                Change::new(ch.seq, ch.kind, joined_row(Some(&ch.row), None, widths))
            }));
    }
    Ok(Collection::Changelog(out))
}

/// One search of the join: each keyed probe change with the build row `seek` finds for it,
/// kept (`Some`) if `within` holds; a probe change without one is dropped by an INNER `kind`
/// and paired with `None` by a LEFT one.
fn search<'s>(
    probes: Keyed<'s>,
    builds: Builds<'s>,
    (seek, probe_column): (Seek, usize),
    kind: JoinKind,
    within: impl Fn(&Row, &Row) -> bool + 'static,
) -> Matched<'s> {
    let probe = arrange_probe(
        probes,
        move |row: &Row| seek.probe_position(value_of(row, probe_column)),
        "AsofJoin: probe",
    );
    let versions = builds.map(move |(key, (value, seq, row))| {
        (key, Version::row(seek.build_position(value), seq, row))
    });
    let build = arrange_versions(versions, "AsofJoin: build");
    temporal_join(
        probe,
        build,
        JoinConfig::new(kind).residual(within).named("AsofJoin"),
    )
    .map(|(key, ch)| {
        let (probe_row, build_row) = ch.row;
        ((key, Change::new(ch.seq, ch.kind, probe_row)), build_row)
    })
}

/// NEAREST: the backward and the forward search, then per probe change the closer match
/// (backward at equal distance), kept if within the tolerance.
fn nearest<'s>(probes: Keyed<'s>, builds: Builds<'s>, join: &AsofJoin) -> Matched<'s> {
    let p_col = join.order.probe;
    let [backward, forward] = [0u8, 1].map(|side| {
        let seek = (AsofMatch::Nearest.seeks()[usize::from(side)], p_col);
        search(
            probes.clone(),
            builds.clone(),
            seek,
            JoinKind::Left,
            |_: &Row, _: &Row| true,
        )
        .map(move |(probe, build)| (probe, (side, build)))
    });
    let (b_col, kind, tolerance) = (join.order.build, join.kind, join.tolerance);
    backward
        .concat(forward)
        .reduce_named("AsofJoin: nearest", move |(_, probe), sides, output| {
            // `sides` is sorted: the backward match first; each with the probe change's count.
            let count = sides[0].1;
            let p = value_of(&probe.row, p_col);
            let distance = |b: &Row| (p - value_of(b, b_col)).abs();
            let candidates = sides.iter().filter_map(|((_, b), _)| b.as_ref());
            let closest = candidates.min_by_key(|b| distance(b));
            let matched = closest.filter(|b| within(tolerance, p, value_of(b, b_col)));
            if matched.is_some() || kind == JoinKind::Left {
                output.push((matched.cloned(), count));
            }
        })
}

/// Keys the probe changes by their key columns; changes with a NULL key column or a NULL
/// ordering value go to the second collection (they never match). One decode of each row.
fn key_probes<'s>(
    probe: VecCollection<'s, SysTime, Change<Row>>,
    join: &AsofJoin,
) -> (Keyed<'s>, VecCollection<'s, SysTime, Change<Row>>) {
    let (key, order) = (join.probe_key.clone(), join.order.probe);
    let mut datums = DatumVec::new();
    split_map(probe, move |ch: Change<Row>| {
        let keyed = {
            let datums = datums.borrow_with(&ch.row);
            let usable =
                order_value(datums[order]).is_some() && key.iter().all(|&c| !datums[c].is_null());
            usable.then(|| Row::pack(key.iter().map(|&c| datums[c])))
        };
        match keyed {
            Some(k) => Ok((k, ch)),
            None => Err(ch),
        }
    })
}

/// The build rows with a key free of NULLs and an ordering value, keyed, each with its value
/// and `seq` (0 on an updating side), its diff `+1` for `+I`/`+U` and `-1` for `-U`/`-D`.
fn key_builds<'s>(build: VecCollection<'s, SysTime, Change<Row>>, join: &AsofJoin) -> Builds<'s> {
    let (key, order) = (join.build_key.clone(), join.order.build);
    let by_arrival = join.build.mode.is_append_only();
    let mut datums = DatumVec::new();
    build
        .inner
        .flat_map(move |(ch, time, diff)| {
            let (k, value) = {
                let datums = datums.borrow_with(&ch.row);
                if key.iter().any(|&c| datums[c].is_null()) {
                    return None;
                }
                let value = order_value(datums[order])?;
                (Row::pack(key.iter().map(|&c| datums[c])), value)
            };
            let seq = if by_arrival { ch.seq } else { 0 };
            let diff = diff * ch.kind.sign();
            Some(((k, (value, seq, ch.row)), time, diff))
        })
        .as_collection()
}

/// The ordering value in `column` of a row whose value was checked not to be NULL.
fn value_of(row: &Row, column: usize) -> i128 {
    row.get(column).and_then(order_value).unwrap_or_default()
}
