//! Event-time temporal join (Flink `FOR SYSTEM_TIME AS OF probe.time`), the temporal table
//! function join, and the processing-time (lookup) join.
//!
//! # Shapes
//!
//! * **Probe side**: a changelog `(K, Change<P>)` (each record diff `+1`; append-only is the
//!   common case) with an event time read by `probe_time: Fn(&P) -> E`. For the incremental
//!   join it is arranged by [`arrange_probe`] (key `(K, E)`, exchanged by `K` alone, so the
//!   probe rows of a key are in ascending event time next to the key's build versions).
//! * **Build side**: a versioned table's arrangement, `Arranged<VersionTrace<K, E, B>>` from
//!   [`arrange_versions`](crate::arrange_versions) (shared, not copied). A temporal table
//!   function is the same with every row of an append-only history as a version.
//! * **Output**: a changelog `(K, Change<(P, Option<B>)>)` whose `seq` and `kind` are the probe
//!   row's (rule B8: a probe `-U`/`-D` is joined at its own time and may carry another version
//!   than the row it retracts). `None` is the NULL padding of a LEFT join. The incremental join
//!   revises a row it emitted by retracting that record (diff `-1`, the kind kept), so its
//!   output mixes the two signs; [`Changelog::into_collection`] reads it (and every changelog)
//!   as one table, each record counting `diff × sign(kind)`.
//!
//! # Rules (semantics section B)
//!
//! A probe row with event time `t` joins the version of its key valid at `t`: the greatest
//! `(time, seq)` with `time <= t`, inclusive (B3, A3). No version, or a delete version, is no
//! match (B4). The residual predicate `Fn(&P, &B) -> bool` is checked against that one version
//! only (B5): on failure [`JoinKind::Inner`] drops the row and [`JoinKind::Left`] pads it.
//! A NULL key ([`JoinKey::is_null`]) matches nothing, NULL included: INNER drops the probe row,
//! LEFT pads it, neither is an error (SQL's rule; Flink's temporal join matches NULL to NULL).
//!
//! # Modes
//!
//! * [`temporal_join`] (**incremental**, the default): at every system time the output is
//!   exactly the temporal join of everything received so far. A late build version or delete
//!   retracts and re-emits the results of the probe rows in its validity interval; a late probe
//!   row is joined exactly.
//! * [`temporal_join_final`] (**final**, Flink's output): each probe row is emitted once,
//!   append-only, at the first system time whose combined watermark (min of both inputs',
//!   see [`crate::watermark`]; an input idle for [`JoinConfig::idle_timeout`] is left out, see
//!   [`crate::combined`]) has passed its time (B7); probe rows behind the watermark on
//!   arrival are late (B9): not joined, reported with their `seq` and a reason. A late build
//!   version is kept and seen by later probe rows (B10); [`late_versions`] reports it. It reads the
//!   build arrangement in place; [`arrange_versions_pruned`] keeps that arrangement bounded by
//!   the same watermarks (B11). [`temporal_join_final_pruned`] is the same join over versions
//!   of its own, pruned by the same rule, for a build side no other operator reads.
//! * [`lookup_join`] (**processing time**, B17/B18): each probe row arriving at system time `s`
//!   joins the build key's *current* version, the greatest `(time, seq)` among the versions
//!   received at system times `<= s`, once; never revised.
//!
//! All three are deterministic across worker counts and epoch batching (ties by `seq`), and all
//! three take a [`JoinConfig`]: INNER or LEFT, the residual predicate, the retention (none for
//! the incremental join) and the operator name, built as
//! `JoinConfig::new(kind).residual(..).retention(..).named(..)`.
//!
//! # Idle-state retention
//!
//! Off by default; set by [`JoinConfig::retention`]. [`temporal_join_final`] (B13) forgets a
//! key's build versions once the combined watermark passes the key's latest event time plus the
//! retention (see [`crate::retention`]); [`lookup_join`] (B17) once the key has not been touched
//! for that many system-time epochs ([`Retention::epochs`](crate::retention::Retention::epochs)). As in Flink, results then depend on timing (here:
//! on the watermark, resp. on how input is cut into system times), never on the worker count.
//! The incremental join has none: it is exact at every system time.

mod build_side;
mod config;
mod due;
mod final_mode;
mod final_pruned;
mod firing;
mod idle;
mod key;
mod late;
mod lookup;
mod marks;
mod operator;
mod own_versions;
mod prune;
pub mod reference;
#[cfg(test)]
mod tests;

use differential_dataflow::operators::arrange::{Arranged, TraceAgent};
use differential_dataflow::trace::implementations::{ValBatcher, ValSpine};
use differential_dataflow::{ExchangeData, Hashable, VecCollection};
use timely::dataflow::channels::pact::Exchange;

pub use config::{Always, JoinConfig, Residual};
pub use final_mode::{temporal_join_final, FinalJoin, Watermarks};
pub use final_pruned::{temporal_join_final_pruned, temporal_join_final_pruned_with};
pub use key::JoinKey;
pub use late::late_versions;
pub use lookup::lookup_join;
pub use operator::temporal_join;
pub use prune::arrange_versions_pruned;

use crate::changelog::Changelog;
use crate::versioned::VersionedTable;
use crate::{Change, SysTime};

/// INNER or LEFT OUTER (rule B1; a temporal table function join is INNER only in Flink).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JoinKind {
    /// Probe rows without a matching version are dropped.
    Inner,
    /// Probe rows without a matching version are emitted with `None` for the build side.
    Left,
}

/// One joined output row: the probe row and the chosen build row (`None` = NULL padding).
pub type Joined<P, B> = Change<(P, Option<B>)>;

/// The spine of a probe arrangement: key `(K, event time)`, value the probe row.
pub type ProbeSpine<K, E, P> = ValSpine<(K, E), Change<P>, SysTime, isize>;

/// A shared handle to a probe trace.
pub type ProbeTrace<K, E, P> = TraceAgent<ProbeSpine<K, E, P>>;

/// Arranges a probe changelog for [`temporal_join`]: key `(K, probe_time(row))`, value the
/// change, exchanged by the hash of `K` alone (co-partitioned with the build side).
///
/// `probe_time` reads a row's event time, in the unit of the build versions' times (Flink's
/// `FOR SYSTEM_TIME AS OF probe.time`, rule B3). Every change is kept, whatever its kind or
/// diff; never fails.
///
/// Cost: one arrangement of the probe rows (shareable with other operators).
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::temporal_join::arrange_probe;
/// use differential_temporal_operators::testing::run_unary;
/// use differential_temporal_operators::{Change, RowKind};
///
/// // Orders `(event time, amount)` of key 7: each is arranged under `(7, its event time)`.
/// let orders = vec![vec![
///     ((7u8, Change::new(0, RowKind::Insert, (12i64, 3i64))), 1),
///     ((7u8, Change::new(1, RowKind::Insert, (10i64, 4i64))), 1),
/// ]];
/// let out = run_unary(2, orders, |o| {
///     arrange_probe(o, |p: &(i64, i64)| p.0, "Orders").as_collection(|k, c| (*k, c.clone()))
/// });
/// let order = |seq, t, amount| ((7, t), Change::new(seq, RowKind::Insert, (t, amount)));
/// assert_eq!(out, vec![(order(1, 10, 4), 0, 1), (order(0, 12, 3), 0, 1)]);
/// ```
pub fn arrange_probe<'s, K, E, P, F>(
    probe: VecCollection<'s, SysTime, (K, Change<P>)>,
    probe_time: F,
    name: &str,
) -> Arranged<'s, ProbeTrace<K, E, P>>
where
    K: ExchangeData + Hashable,
    E: ExchangeData,
    P: ExchangeData,
    F: Fn(&P) -> E + 'static,
{
    type Update<K, E, P> = (((K, E), Change<P>), SysTime, isize);
    let keyed = probe.map(move |(k, c)| {
        let t = probe_time(&c.row);
        ((k, t), c)
    });
    let pact = Exchange::new(|u: &Update<K, E, P>| ((u.0).0).0.hashed().into());
    differential_dataflow::operators::arrange::arrangement::arrange_core::<
        _,
        _,
        _,
        ProbeSpine<K, E, P>,
    >(keyed.inner, pact, name, ValBatcher::new)
}

/// The build row a probe row joins given the version chosen for it (`None`: no version;
/// `Some(None)`: a delete version): `Some(Some(b))` matched, `Some(None)` NULL-padded (LEFT), or
/// `None` if INNER drops the row (rules B3-B5).
pub(crate) fn chosen<'b, P, B, R>(
    kind: JoinKind,
    residual: &R,
    row: &P,
    version: Option<&'b Option<B>>,
) -> Option<Option<&'b B>>
where
    R: Fn(&P, &B) -> bool,
{
    let matched = match version {
        Some(Some(b)) if residual(row, b) => Some(b),
        _ => None,
    };
    if matched.is_none() && kind == JoinKind::Inner {
        return None;
    }
    Some(matched)
}

/// The output row for probe row `change` given the version chosen for it (`None`: no version;
/// `Some(None)`: a delete version), or `None` if INNER drops it (rules B3-B5, B8).
pub(crate) fn join_row<P, B, R>(
    kind: JoinKind,
    residual: &R,
    change: &Change<P>,
    version: Option<&Option<B>>,
) -> Option<Joined<P, B>>
where
    P: Clone,
    B: Clone,
    R: Fn(&P, &B) -> bool,
{
    let matched = chosen(kind, residual, &change.row, version)?;
    Some(Change::new(
        change.seq,
        change.kind,
        (change.row.clone(), matched.cloned()),
    ))
}

impl<'s, K, P> Changelog<'s, K, P>
where
    K: ExchangeData + Hashable + JoinKey,
    P: ExchangeData,
{
    /// The incremental [`temporal_join`] of this probe changelog with `build`: each probe row
    /// joins the version of its key valid at `probe_time(row)` (rules B3-B5). The result is a
    /// changelog whose `seq` and kind are the probe rows'; a late build version revises the
    /// rows it re-versions by retracting them (diff `-1`), which
    /// [`into_collection`](Changelog::into_collection) reads as the changelog's other records.
    ///
    /// ```
    /// use differential_temporal_operators::changelog::Changelog;
    /// use differential_temporal_operators::temporal_join::{JoinConfig, JoinKind};
    /// use differential_temporal_operators::testing::{content_at, run_binary};
    /// use differential_temporal_operators::{Change, RowKind::Insert};
    ///
    /// // An order (time 10, amount 3) and two rates of its currency, the second one late.
    /// let orders = vec![vec![(('E', Change::new(0, Insert, (10i64, 3i64))), 1)]];
    /// let rates = vec![
    ///     vec![(('E', Change::new(0, Insert, (5i64, 114i64))), 1)],
    ///     vec![(('E', Change::new(1, Insert, (8i64, 116i64))), 1)],
    /// ];
    /// let out = run_binary(2, orders, rates, |o, r| {
    ///     let rates = Changelog::new(r).versioned(|r| r.0, "Rates");
    ///     let joined = Changelog::new(o).temporal_join(|o| o.0, &rates, JoinConfig::new(JoinKind::Inner));
    ///     joined.map(|c, (order, rate)| (c, order.1 * rate.map_or(0, |r| r.1))).into_collection()
    /// });
    /// assert_eq!(content_at(&out, 0), vec![(('E', 342), 1)]);
    /// assert_eq!(content_at(&out, 1), vec![(('E', 348), 1)]);
    /// ```
    pub fn temporal_join<E, B, R>(
        self,
        probe_time: impl Fn(&P) -> E + 'static,
        build: &VersionedTable<'s, K, E, B>,
        config: JoinConfig<R, std::convert::Infallible>,
    ) -> Changelog<'s, K, (P, Option<B>)>
    where
        E: ExchangeData,
        B: ExchangeData,
        R: Residual<P, B>,
    {
        let probe = arrange_probe(self.into_changes(), probe_time, "TemporalJoinProbe");
        Changelog::new(temporal_join(probe, build.arranged().clone(), config))
    }
}
