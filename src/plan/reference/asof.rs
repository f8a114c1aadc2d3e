//! The reference of the ASOF join: at every system time, each accumulated probe change joined
//! with the closest candidate of the accumulated build table, found by a scan of the table (no
//! position encoding, no seek: the operator's rules stated directly).

use std::cmp::Reverse;
use std::collections::BTreeMap;

use crate::plan::{joined_row, order_value, AsofJoin, AsofMatch, JoinKind};
use crate::repr::{DatumVec, Row};
use differential_temporal_operators::Seq;

use super::{consolidate, diff_counts_into, has_null, project, times, Stream};

/// A build row that can match: its key, ordering value, `seq` (0 on an updating build side)
/// and the row.
struct Candidate {
    key: Row,
    value: i128,
    seq: Seq,
    row: Row,
}

/// The ASOF join of the `probe` and `build` streams (see [`AsofJoin`]).
pub(super) fn asof_join(join: &AsofJoin, probe: &Stream, build: &Stream) -> Stream {
    let by_arrival = join.build.mode.is_append_only();
    let widths = (join.probe.schema.len(), join.build.schema.len());
    let mut datums = DatumVec::new();
    let mut out = Vec::new();
    let mut previous = Vec::new();
    for at in times(probe.iter().chain(build).map(|(t, _)| *t)) {
        // The build table at `at`: (seq, row) with positive multiplicity.
        let mut table: BTreeMap<(Seq, Row), isize> = BTreeMap::new();
        for (_, change) in build.iter().filter(|(t, _)| *t <= at) {
            let seq = if by_arrival { change.seq } else { 0 };
            *table.entry((seq, change.row.clone())).or_insert(0) += change.kind.sign();
        }
        let candidates: Vec<Candidate> = table
            .into_iter()
            .filter(|(_, count)| *count > 0)
            .filter_map(|((seq, row), _)| {
                let key = project(&row, &join.build_key, &mut datums);
                let value = order_value(row.get(join.order.build)?)?;
                (!has_null(&key)).then_some(Candidate {
                    key,
                    value,
                    seq,
                    row,
                })
            })
            .collect();
        let mut now = Vec::new();
        for (_, change) in probe.iter().filter(|(t, _)| *t <= at) {
            let key = project(&change.row, &join.probe_key, &mut datums);
            let value = change.row.get(join.order.probe).and_then(order_value);
            let matched = match value {
                Some(value) if !has_null(&key) => {
                    let of_key = candidates.iter().filter(|c| c.key == key);
                    best(join.order.condition, value, of_key)
                        .filter(|c| join.within(value, c.value))
                }
                _ => None,
            };
            if matched.is_none() && join.kind == JoinKind::Inner {
                continue;
            }
            let row = joined_row(Some(&change.row), matched.map(|c| &c.row), widths);
            now.push((row, change.kind.sign()));
        }
        let now = consolidate(now);
        diff_counts_into(&mut out, at, &previous, &now);
        previous = now;
    }
    out
}

/// The candidate `condition` picks for a probe at ordering value `probe`: the closest in its
/// direction; at one value the greatest `seq`, then the smallest row; for NEAREST the closer of
/// the backward and the forward match, the backward one at equal distance.
fn best<'c>(
    condition: AsofMatch,
    probe: i128,
    candidates: impl Iterator<Item = &'c Candidate> + Clone,
) -> Option<&'c Candidate> {
    let backward = |strict: bool| {
        candidates
            .clone()
            .filter(|c| c.value < probe || (!strict && c.value == probe))
            .max_by_key(|c| (c.value, c.seq, Reverse(&c.row)))
    };
    let forward = |strict: bool| {
        candidates
            .clone()
            .filter(|c| c.value > probe || (!strict && c.value == probe))
            .max_by_key(|c| (Reverse(c.value), c.seq, Reverse(&c.row)))
    };
    match condition {
        AsofMatch::Ge => backward(false),
        AsofMatch::Gt => backward(true),
        AsofMatch::Le => forward(false),
        AsofMatch::Lt => forward(true),
        AsofMatch::Nearest => match (backward(false), forward(false)) {
            (Some(b), Some(f)) if f.value - probe < probe - b.value => Some(f),
            (Some(b), _) => Some(b),
            (None, f) => f,
        },
    }
}
