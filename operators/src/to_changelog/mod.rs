//! From a collection back to a changelog: per key and per system time, the collection's changes
//! become `+I`, `-U`/`+U` and `-D` rows.
//!
//! This is the adapter a sink needs to print a differential collection the way Flink prints a
//! dynamic table (the other direction, changelog to versions, is the versioned table's job).
//!
//! Shapes: input is a collection of `(K, V)` (a table keyed by `K`, any diffs); output is a
//! changelog `(K, Change<V>)`, each record with diff `+1`, emitted at the system time of the
//! change it describes.
//!
//! Rule, per key `k` and system time `t`, after consolidating the changes of `k` at `t` into
//! retracted values `R` and inserted values `I` (each repeated by its multiplicity, each list
//! sorted): the first `min(|R|, |I|)` pairs become `-U r` / `+U i` (update-before, then
//! update-after), the remaining insertions `+I i`, the remaining retractions `-D r`. The
//! `mode` then renders the rows ([`ChangelogMode::render`](crate::ChangelogMode::render)): `Retract` keeps all four kinds,
//! `Upsert` drops `-U` (Flink's ONLY_UPDATE_AFTER form), `UpsertNoInsert` also shows `+I` as `+U`.
//!
//! Order: every output row carries `seq = t` (the system time), so sorting the changelog by
//! `(seq, kind)` gives an emission order in which, per key, the changes of earlier system times
//! come first and an update-before precedes its update-after.
//!
//! Cost: the changes of a system time are buffered (exchanged by the key's hash) until the input
//! frontier passes it, then sorted; no state is kept across system times.

mod operator;
pub mod reference;
#[cfg(test)]
mod tests;

pub use operator::to_changelog;

use crate::{Change, RowKind, Seq};

/// Pairs one key's consolidated changes at one system time into changelog rows (see the module
/// docs): `changes` are `(value, diff)` with non-zero diffs, sorted by value.
pub fn pair_changes<V: Clone>(seq: Seq, changes: &[(V, isize)]) -> Vec<Change<V>> {
    let expand = |negative: bool| {
        changes
            .iter()
            .filter(move |(_, d)| (*d < 0) == negative && *d != 0)
            .flat_map(|(v, d)| std::iter::repeat_n(v, d.unsigned_abs()))
    };
    let (retracted, inserted): (Vec<&V>, Vec<&V>) =
        (expand(true).collect(), expand(false).collect());
    let pairs = retracted.len().min(inserted.len());
    let mut out = Vec::with_capacity(retracted.len() + inserted.len());
    for (r, i) in retracted.iter().zip(inserted.iter()) {
        out.push(Change::new(seq, RowKind::UpdateBefore, (*r).clone()));
        out.push(Change::new(seq, RowKind::UpdateAfter, (*i).clone()));
    }
    out.extend(
        inserted[pairs..]
            .iter()
            .map(|i| Change::new(seq, RowKind::Insert, (*i).clone())),
    );
    out.extend(
        retracted[pairs..]
            .iter()
            .map(|r| Change::new(seq, RowKind::Delete, (*r).clone())),
    );
    out
}
