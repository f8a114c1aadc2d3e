//! The reference of the merge-engine node: the writes folded one by one, in source order.
//!
//! What is checked here is the node's plumbing (writes keyed by their primary key, applied per
//! key in `(system time, seq)` order whatever the epochs and workers, NULL a key value like
//! any other, every change and refusal kept); the engines' rules themselves are checked
//! against their own model, [`crate::merge_engine::reference`], which recomputes each key's
//! row from its whole history.

use std::collections::BTreeMap;

use crate::merge_engine::{KeyState, MergeEngine};
use crate::operators::keyed_merge::MergeRule;
use crate::repr::{DatumVec, Row};
use differential_temporal_operators::Change;

use super::rows::{project, refuse};
use super::{Refused, Stream};

/// The table `engine` makes of `writes` (sorted by `(system time, seq)`), keyed by `key`, as
/// its changelog: each change at its write's system time with its write's `seq`. Refused
/// writes (and writes applied and reported) go to `refused`.
pub(super) fn merge(
    mut writes: Stream,
    key: &[usize],
    engine: &MergeEngine,
    refused: &mut Vec<Refused>,
) -> Stream {
    writes.sort_by_key(|(time, write)| (*time, write.seq));
    let mut datums = DatumVec::new();
    let mut states: BTreeMap<Row, Option<KeyState>> = BTreeMap::new();
    let (mut out, mut emitted) = (Vec::new(), Vec::new());
    for (time, write) in writes {
        let state = states
            .entry(project(&write.row, key, &mut datums))
            .or_default();
        match engine.merge(state, write.kind, &write.row, &mut emitted) {
            Ok(None) => {}
            Ok(Some(r)) | Err(r) => refused.push(refuse(time, write.seq, r.reason)),
        }
        out.extend(
            emitted
                .drain(..)
                .map(|(kind, row)| (time, Change::new(write.seq, kind, row))),
        );
    }
    out
}
