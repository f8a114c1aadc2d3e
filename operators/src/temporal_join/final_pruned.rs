//! The final-mode temporal join over build versions of its own (the `OwnVersions` build side),
//! kept bounded by rule B11.

use std::hash::Hash;

use differential_dataflow::{ExchangeData, Hashable, VecCollection};
use timely::dataflow::operators::Exchange;

use super::final_mode::{final_join, FinalJoin, Watermarks};
use super::own_versions::OwnVersions;
use super::{JoinConfig, JoinKey, Joined, Residual};
use crate::{Change, SysTime, Version};

/// [`temporal_join_final`](super::temporal_join_final) over the build `versions` themselves
/// rather than a shared arrangement of them: the join keeps each key's versions in a vector of
/// its own and drops, as the watermark rises, those no probe row can choose any more (rule
/// B11, as [`arrange_versions_pruned`](super::arrange_versions_pruned) does for an arrangement).
///
/// Shapes, rules and `config` as [`temporal_join_final`](super::temporal_join_final): the same
/// output as `temporal_join_final` over `arrange_versions_pruned(versions, ..)` with the same
/// watermarks and idle timeout. Use it when no other operator reads the versions (the
/// relational layer's temporal join does); with a retention (B13) an expired key's versions are
/// removed rather than hidden.
///
/// Precondition (as the pruned arrangement's): no version behind the combined watermark is
/// retracted (diff `-1`); such a retraction may find its version pruned already, so the join
/// would see no version where the unpruned one gives the exact answer. Retractions of versions
/// at or after the watermark are exact.
///
/// Cost: per version received, an O(log v) insertion into its key's vector (`v` the key's
/// live versions; O(1) amortized for a version newer than the key's others); per probe row, a
/// hash lookup and a search from the front of its key's versions when it fires (O(log v)); per
/// rise, for each key whose second oldest version the watermark passed, its entry taken from
/// the due entries' sorted runs (O(log n) amortized sequential merge steps an entry) and the
/// truncation of its vector. The firing's and the rise's lookups are prefetched a few rows
/// ahead. State: per key its live versions (those at or after the combined watermark and the
/// newest before it) and one due entry (an entry made stale by an older version or a forgotten
/// key stays until the watermark passes it), and the probe rows waiting.
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::temporal_join::{temporal_join_final_pruned, JoinConfig, JoinKind};
/// use differential_temporal_operators::testing::run_binary;
/// use differential_temporal_operators::watermark::watermarks;
/// use differential_temporal_operators::{Change, RowKind, Version};
///
/// // Rates of key 1 at times 5 and 12 (epochs 0 and 1), orders at times 10 and 13 (epoch 1).
/// let orders = vec![vec![], vec![
///     ((1u8, Change::new(0, RowKind::Insert, 10i64)), 1),
///     ((1u8, Change::new(1, RowKind::Insert, 13i64)), 1),
/// ]];
/// let rates = vec![
///     vec![((1u8, Version::row(5i64, 0, 114i64)), 1)],
///     vec![((1u8, Version::row(12i64, 1, 116i64)), 1)],
/// ];
/// let out = run_binary(2, orders, rates, |o, r| {
///     let o_wm = watermarks(o.clone(), |(_, c): &(u8, Change<i64>)| c.row, |m: &i64| *m, "OWm");
///     let r_wm = watermarks(r.clone(), |(_, v): &(u8, Version<i64, i64>)| v.time, |m: &i64| *m, "RWm");
///     let config = JoinConfig::new(JoinKind::Left).named("J");
///     temporal_join_final_pruned(o, |t: &i64| *t, r, (o_wm, r_wm), config).joined
/// });
/// // Epoch 2 (the end of input): the watermark min(13, 12) = 12 fires the order at 10, the end
/// // the one at 13, each joined with the rate valid at its time.
/// let row = |seq, t, rate| ((1, Change::new(seq, RowKind::Insert, (t, Some(rate)))), 2, 1);
/// assert_eq!(out, vec![row(0, 10, 114), row(1, 13, 116)]);
/// ```
pub fn temporal_join_final_pruned<'s, K, E, P, B, T, R>(
    probe: VecCollection<'s, SysTime, (K, Change<P>)>,
    probe_time: T,
    versions: VecCollection<'s, SysTime, (K, Version<E, B>)>,
    watermarks: Watermarks<'s, E>,
    config: JoinConfig<R, E>,
) -> FinalJoin<'s, K, (K, Joined<P, B>)>
where
    K: ExchangeData + Hashable + JoinKey + Hash,
    E: ExchangeData,
    P: ExchangeData,
    B: ExchangeData,
    T: Fn(&P) -> E + 'static,
    R: Residual<P, B>,
{
    temporal_join_final_pruned_with(probe, probe_time, versions, watermarks, config, |k, j| {
        (k, j)
    })
}

/// [`temporal_join_final_pruned`] with each joined row output as `output(key, joined row)`,
/// made where the joined rows are split from the late ones: a projection of the joined rows
/// (a relational join's output columns) costs no pass over them of its own. Shapes, rules and
/// cost otherwise as [`temporal_join_final_pruned`].
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::temporal_join::{
///     temporal_join_final_pruned_with, JoinConfig, JoinKind, Joined,
/// };
/// use differential_temporal_operators::testing::run_binary;
/// use differential_temporal_operators::watermark::watermarks;
/// use differential_temporal_operators::{Change, RowKind, Version};
///
/// // An order of 3 items at time 10 joined with the price valid then (5 from time 5 on):
/// // output as (seq, total) only.
/// let orders = vec![vec![((1u8, Change::new(0, RowKind::Insert, (10i64, 3i64))), 1)]];
/// let prices = vec![vec![((1u8, Version::row(5i64, 0, 5i64)), 1)]];
/// let out = run_binary(1, orders, prices, |o, p| {
///     let o_wm = watermarks(o.clone(), |(_, c): &(u8, Change<(i64, i64)>)| c.row.0, |m: &i64| *m, "OWm");
///     let p_wm = watermarks(p.clone(), |(_, v): &(u8, Version<i64, i64>)| v.time, |m: &i64| *m, "PWm");
///     let config = JoinConfig::new(JoinKind::Inner);
///     let total = |_key: u8, j: Joined<(i64, i64), i64>| {
///         let ((_, items), price) = j.row;
///         (j.seq, items * price.unwrap_or(0))
///     };
///     temporal_join_final_pruned_with(o, |p: &(i64, i64)| p.0, p, (o_wm, p_wm), config, total).joined
/// });
/// // The order fires at the end of input (epoch 1; the watermark min(10, 5) = 5 had not passed it).
/// assert_eq!(out, vec![((0, 15), 1, 1)]);
/// ```
pub fn temporal_join_final_pruned_with<'s, K, E, P, B, T, R, O>(
    probe: VecCollection<'s, SysTime, (K, Change<P>)>,
    probe_time: T,
    versions: VecCollection<'s, SysTime, (K, Version<E, B>)>,
    watermarks: Watermarks<'s, E>,
    config: JoinConfig<R, E>,
    output: impl FnMut(K, Joined<P, B>) -> O + 'static,
) -> FinalJoin<'s, K, O>
where
    K: ExchangeData + Hashable + JoinKey + Hash,
    E: ExchangeData,
    P: ExchangeData,
    B: ExchangeData,
    T: Fn(&P) -> E + 'static,
    R: Residual<P, B>,
    O: differential_dataflow::Data,
{
    // Exchanged by key as the probe rows are.
    type Update<K, E, B> = ((K, Version<E, B>), SysTime, isize);
    let versions = (versions.inner).exchange(|u: &Update<K, E, B>| (u.0).0.hashed().into());
    let build = (versions, OwnVersions::default());
    final_join(probe, probe_time, build, watermarks, config, output)
}
