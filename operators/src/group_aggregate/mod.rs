//! Group aggregation: per key, an accumulator folded over the group's rows with signed
//! multiplicities, and the aggregated table (one row per group with rows) with retractions.
//!
//! This is Flink's `GroupAggFunction` (an accumulator per key, `accumulate` on `+I`/`+U`,
//! `retract` on `-U`/`-D`, the group removed when its row count returns to zero), applied per
//! system time: all of a time's updates of a key are folded, then the group's output row is
//! compared with the one emitted before and, when it differs, retracted and re-inserted. So the
//! output changes once per changed group and system time, whatever the number of input rows.
//!
//! Shapes: [`group_aggregate`] takes `(K, (Seq, V))` records with signed diffs (a table, or a
//! changelog whose `-U`/`-D` were turned into diff `-1`); [`group_aggregate_by`] takes records
//! of any type `R` and a [`GroupKey<R>`] that reads each record's key, sequence number, signed
//! diff and value where they lie (so a packed row need not be split into key and value first);
//! the key is copied out of a record only when its group is created. Both output the aggregated
//! table `O` (each group's row, diff `+1` when inserted and `-1` when retracted) and the refused
//! rows as [`Rejected`].
//!
//! Order: per key, a time's updates are consolidated and folded in `(seq, value)` order after
//! those of earlier times; with `seq` growing with system time (as every source here
//! guarantees), an append-only input is folded in input order, so order-sensitive aggregates
//! (FIRST_VALUE, LISTAGG) see arrival order. A fold that declares itself
//! [order independent](GroupFold::order_independent) gets the updates of a time without
//! retractions unsorted, as they arrive. The output never depends on the number of workers.
//!
//! A retraction of more rows than its group holds at its `seq` (an inconsistent changelog: a
//! `-D` with no `+I` before it) is refused ([`not_held`]) and left out: the group is what it is
//! without it, whatever the system times of the changes.
//!
//! Cost: per update one probe of a hash index of 4-byte slots and one [`GroupFold::update`];
//! the sort of each system time's updates unless the fold is order independent and the time has
//! no retraction (then one scan of their diffs); one
//! [`GroupFold::output`] per changed group and time, and one more for its previous row when it
//! had rows before, then their comparison unless [`GroupFold::outputs_differ`] tells. The
//! output rows are sent in messages of 1,024 rows. State: per group with rows its key and
//! one `State`, in a dense slab (the previous row is recomputed, not stored); a group whose
//! count returns to zero is removed (the last group moves into its place).

mod groups;
#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;

use std::hash::{BuildHasher, Hash};

use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use foldhash::fast::RandomState;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::dataflow::operators::generic::OutputBuilder;

use self::groups::{ahead, Groups, Slot};
use crate::keyed_merge::Rejected;
use crate::pending::{Pending, Update};
use crate::{Seq, SysTime};

/// How a group's rows fold into its accumulator and what row the group outputs.
///
/// `update` receives a key's updates of one system time in fold order (see the
/// [module docs](self)): each distinct `(seq, value)` once with its net multiplicity, or, for an
/// [order-independent](GroupFold::order_independent) fold, each update as it arrives
/// (`diff > 0` accumulates `diff` copies, `diff < 0` retracts `-diff` copies). It returns
/// `Err(reason)` to refuse the row, and must then leave the state as it was.
pub trait GroupFold<K>: 'static {
    /// The values aggregated (the columns the aggregates read).
    type Value: ExchangeData;
    /// The accumulator of one group.
    type State: 'static;
    /// A group's output row.
    type Output: ExchangeData;

    /// The accumulator of a group with no rows.
    fn init(&self) -> Self::State;

    /// Adds (`diff > 0`) or retracts (`diff < 0`) `|diff|` copies of `value`.
    fn update(
        &self,
        state: &mut Self::State,
        value: &Self::Value,
        diff: isize,
    ) -> Result<(), String>;

    /// The output row of group `key` (called only while it has a positive number of rows), or
    /// `Err(reason)` when it cannot be computed (an overflow): the group then has no row. A
    /// function of `key` and `state` alone: it is called again for the row to retract.
    fn output(&self, key: &K, state: &Self::State) -> Result<Self::Output, String>;

    /// A copy of `state` to make the group's output from later, when keeping one is cheaper
    /// than making the output (a few counters copied, where the output is a packed row);
    /// `None` (the default) when it is not. A group's output from before a system time's
    /// updates is kept this way until they are folded in, and made only if the group changed.
    fn snapshot(&self, state: &Self::State) -> Option<Self::State> {
        let _ = state;
        None
    }

    /// Whether groups of one key with states `a` and `b`, both with rows, certainly have
    /// different output rows, or at least one has none ([`output`](GroupFold::output) fails):
    /// then a changed group's old and new rows are not compared before the old is retracted and
    /// the new inserted. `false` (the default) when the states do not tell; never `true` for
    /// two states with the same row. Asked only of [snapshots](GroupFold::snapshot).
    fn outputs_differ(&self, a: &Self::State, b: &Self::State) -> bool {
        let _ = (a, b);
        false
    }

    /// Whether the output depends only on the multiset of values, whatever the order of
    /// updates, retractions before the insertions they cancel included (COUNT, SUM over
    /// integers, a multiset with signed counts). Then a system time's updates are folded as
    /// they arrive, without sorting them. Default `false`: consolidated, in `(seq, value)` order.
    fn order_independent(&self) -> bool {
        false
    }
}

/// Where a record's group key, sequence number and aggregated value lie, for
/// [`group_aggregate_by`]: the key is hashed and compared where it lies in the record (a packed
/// row's key columns, say) and copied out only when its group is created, so no stage before
/// the operator needs to split records into `(key, value)` pairs.
///
/// The hashes must agree: with `(h, p) = hash(r)`, `h == hash_key(&key(r, p))`, and
/// `is_key(r, p, k)` iff `key(r, p)` equals `k`. `route` must be the same function on every
/// worker (it picks the worker of a key); `hash` indexes one worker's groups and may be seeded
/// per instance. A fold that is not [order independent](GroupFold::order_independent) gets a
/// time's records sorted by `R`'s order, which must then put each key's records in `seq` order
/// (as `(key, (seq, value))` and records that start with their `seq` do).
pub trait GroupKey<R>: Clone + 'static {
    /// The key a group keeps.
    type Key: 'static;
    /// What [`hash`](Self::hash) read of a record's key and hands to [`is_key`](Self::is_key)
    /// and [`key`](Self::key) with it, so that a key that costs a read (an integer column of a
    /// packed row) is read once: that key, or `()` for a key compared where it lies.
    type Probe: Copy;
    /// What [`GroupFold::update`] receives of a record.
    type Value;

    /// The worker-picking hash of `record`'s key.
    fn route(&self, record: &R) -> u64;
    /// The index hash of `record`'s key, and its probe.
    fn hash(&self, record: &R) -> (u64, Self::Probe);
    /// The index hash of a stored key.
    fn hash_key(&self, key: &Self::Key) -> u64;
    /// Whether `record`'s key, of probe `probe`, is `key`.
    fn is_key(&self, record: &R, probe: Self::Probe, key: &Self::Key) -> bool;
    /// `record`'s key, of probe `probe`, owned (called when its group is created).
    fn key(&self, record: &R, probe: Self::Probe) -> Self::Key;
    /// The record's position in arrival order.
    fn seq(&self, record: &R) -> Seq;
    /// The multiplicity to fold for `record` arriving with `diff` (a retracting row kind
    /// negates it; default `diff`).
    fn diff(&self, record: &R, diff: isize) -> isize {
        let _ = record;
        diff
    }
    /// The value folded.
    fn value<'r>(&self, record: &'r R) -> &'r Self::Value;
}

/// The [`GroupKey`] of `(key, (seq, value))` records, the shape of [`group_aggregate`].
pub struct ByKey<K, V> {
    hasher: RandomState,
    marker: std::marker::PhantomData<fn() -> (K, V)>,
}

impl<K, V> Clone for ByKey<K, V> {
    fn clone(&self) -> Self {
        ByKey {
            hasher: self.hasher.clone(),
            marker: std::marker::PhantomData,
        }
    }
}

impl<K, V> Default for ByKey<K, V> {
    fn default() -> Self {
        ByKey {
            hasher: RandomState::default(),
            marker: std::marker::PhantomData,
        }
    }
}

impl<K: ExchangeData + Hash, V: 'static> GroupKey<(K, (Seq, V))> for ByKey<K, V> {
    type Key = K;
    type Probe = ();
    type Value = V;

    fn route(&self, (key, _): &(K, (Seq, V))) -> u64 {
        key.hashed()
    }
    fn hash(&self, (key, _): &(K, (Seq, V))) -> (u64, ()) {
        (self.hasher.hash_one(key), ())
    }
    fn hash_key(&self, key: &K) -> u64 {
        self.hasher.hash_one(key)
    }
    fn is_key(&self, (key, _): &(K, (Seq, V)), (): (), other: &K) -> bool {
        key == other
    }
    fn key(&self, (key, _): &(K, (Seq, V)), (): ()) -> K {
        key.clone()
    }
    fn seq(&self, (_, (seq, _)): &(K, (Seq, V))) -> Seq {
        *seq
    }
    fn value<'r>(&self, (_, (_, value)): &'r (K, (Seq, V))) -> &'r V {
        value
    }
}

/// How many output rows a message of the aggregated table carries: the rows are pushed into a
/// vector of this capacity and sent when it is full, not through timely's container builder,
/// whose push was not inlined for packed rows and whose messages are of 8 KiB (5% of a GROUP
/// BY's time over packed rows, by alternating runs).
const CHUNK: usize = 1024;

/// The outputs of [`group_aggregate`].
pub struct Aggregated<'s, O: 'static> {
    /// The aggregated table: each group's current row.
    pub table: VecCollection<'s, SysTime, O>,
    /// Rows `update` refused and groups `output` refused (with the `seq` of the group's last
    /// update at that time), each with diff `+1`.
    pub rejected: VecCollection<'s, SysTime, Rejected>,
}

/// The output row of a group of `key` with `rows` rows and `state` (`None` without rows).
fn output<K, F: GroupFold<K>>(
    fold: &F,
    key: &K,
    rows: isize,
    state: &F::State,
) -> Option<Result<F::Output, String>> {
    (rows > 0).then(|| fold.output(key, state))
}

/// A group's output row from before a system time's updates: the row, or its row count and a
/// snapshot of its state to make the row from ([`GroupFold::snapshot`]).
enum Before<S, O> {
    Row(Option<O>),
    State(isize, S),
}

impl<S, O> Before<S, O> {
    /// Whether the group's row now, with `rows` rows and state `now`, certainly differs from
    /// this one ([`GroupFold::outputs_differ`]).
    fn differs<K, F>(&self, fold: &F, rows: isize, now: &S) -> bool
    where
        F: GroupFold<K, State = S, Output = O>,
    {
        match self {
            Before::State(before, state) => {
                *before > 0 && rows > 0 && fold.outputs_differ(state, now)
            }
            Before::Row(_) => false,
        }
    }

    /// The output row (`None` if the group had no rows or its row could not be made).
    fn row<K, F>(self, fold: &F, key: &K) -> Option<O>
    where
        F: GroupFold<K, State = S, Output = O>,
    {
        match self {
            Before::Row(row) => row,
            Before::State(rows, state) => output(fold, key, rows, &state).and_then(Result::ok),
        }
    }
}

/// One group's accumulator, its net row count, the `seq` of its last update and whether it
/// changed at the system time being applied. The row it emitted last is not kept: it is
/// recomputed from the state when the group is first changed at a time, or from a snapshot of
/// the state then, once the time's updates are folded in (Flink's `GroupAggFunction` likewise
/// reads `prevAggValue` from the accumulator).
struct Group<S> {
    state: S,
    rows: isize,
    last: Seq,
    changed: bool,
}

impl<S> Group<S> {
    /// A group with no rows and no update yet.
    fn new(state: S) -> Self {
        Group {
            state,
            rows: 0,
            last: 0,
            changed: false,
        }
    }

    /// The group's output row (`None` while it has no rows).
    fn row<K, F>(&self, fold: &F, key: &K) -> Option<Result<F::Output, String>>
    where
        F: GroupFold<K, State = S>,
    {
        output(fold, key, self.rows, &self.state)
    }

    /// What its output row is known by until the system time's updates are folded in.
    fn before<K, F>(&self, fold: &F, key: &K) -> Before<S, F::Output>
    where
        F: GroupFold<K, State = S>,
    {
        match fold.snapshot(&self.state) {
            Some(state) => Before::State(self.rows, state),
            None => Before::Row(self.row(fold, key).and_then(Result::ok)),
        }
    }

    /// Folds one update in, or reports it refused: one the fold refuses, or a retraction of
    /// more rows than the group holds (left out, as Flink's `GroupAggFunction` skips a
    /// retraction into a group without state, but reported).
    fn apply<K, F>(
        &mut self,
        fold: &F,
        seq: Seq,
        value: &F::Value,
        diff: isize,
        refuse: &mut impl FnMut(Seq, String),
    ) where
        F: GroupFold<K, State = S>,
    {
        self.last = seq;
        if diff < 0 && self.rows + diff < 0 {
            return refuse(seq, not_held("group aggregation"));
        }
        match fold.update(&mut self.state, value, diff) {
            Ok(()) => self.rows += diff,
            Err(reason) => refuse(seq, reason),
        }
    }
}

/// Why a retraction of a row that the operator `node` does not hold is refused: no earlier
/// change of its input inserted it (an inconsistent changelog, e.g. a file whose `-D` has no
/// `+I` before it).
///
/// ```
/// use differential_temporal_operators::group_aggregate::not_held;
/// assert_eq!(
///     not_held("group aggregation"),
///     "a retraction of a row the group aggregation does not hold (no earlier change of its input inserted it)"
/// );
/// ```
pub fn not_held(node: &str) -> String {
    format!("a retraction of a row the {node} does not hold (no earlier change of its input inserted it)")
}

/// Aggregates `input` per key with `fold` (see the [module docs](self)).
///
/// # Examples
///
/// Count and sum per key, with a retraction:
///
/// ```
/// use differential_temporal_operators::group_aggregate::{group_aggregate, GroupFold};
/// use differential_temporal_operators::testing::run_unary;
///
/// struct CountSum;
/// impl GroupFold<u8> for CountSum {
///     type Value = i64;
///     type State = (isize, i64);
///     type Output = (u8, isize, i64);
///     fn init(&self) -> (isize, i64) { (0, 0) }
///     fn update(&self, s: &mut (isize, i64), v: &i64, diff: isize) -> Result<(), String> {
///         *s = (s.0 + diff, s.1 + v * diff as i64);
///         Ok(())
///     }
///     fn output(&self, k: &u8, s: &(isize, i64)) -> Result<(u8, isize, i64), String> {
///         Ok((*k, s.0, s.1))
///     }
/// }
///
/// let epochs = vec![
///     vec![((1u8, (0u64, 5i64)), 1), ((1, (1, 7)), 1)],
///     vec![((1, (0, 5)), -1)],
/// ];
/// let out = run_unary(2, epochs, |rows| group_aggregate(rows, CountSum, "Agg").table);
/// assert_eq!(out, vec![((1, 1, 7), 1, 1), ((1, 2, 12), 0, 1), ((1, 2, 12), 1, -1)]);
/// ```
pub fn group_aggregate<'s, K, F>(
    input: VecCollection<'s, SysTime, (K, (Seq, F::Value))>,
    fold: F,
    name: &str,
) -> Aggregated<'s, F::Output>
where
    K: ExchangeData + Hash,
    F: GroupFold<K>,
{
    group_aggregate_by(input, ByKey::default(), fold, name)
}

/// Aggregates `input` records per the key `grouping` finds in each, with `fold` (see the
/// [module docs](self)): [`group_aggregate`] for records that carry their key in place.
///
/// # Examples
///
/// Sum per key of `(seq, key, value)` records, keyed by their second field:
///
/// ```
/// use differential_temporal_operators::group_aggregate::{group_aggregate_by, GroupFold, GroupKey};
/// use differential_temporal_operators::testing::run_unary;
///
/// #[derive(Clone)]
/// struct Second;
/// impl GroupKey<(u64, u8, i64)> for Second {
///     type Key = u8;
///     type Probe = ();
///     type Value = i64;
///     fn route(&self, r: &(u64, u8, i64)) -> u64 { r.1.into() }
///     fn hash(&self, r: &(u64, u8, i64)) -> (u64, ()) { (r.1.into(), ()) }
///     fn hash_key(&self, k: &u8) -> u64 { (*k).into() }
///     fn is_key(&self, r: &(u64, u8, i64), (): (), k: &u8) -> bool { r.1 == *k }
///     fn key(&self, r: &(u64, u8, i64), (): ()) -> u8 { r.1 }
///     fn seq(&self, r: &(u64, u8, i64)) -> u64 { r.0 }
///     fn value<'r>(&self, r: &'r (u64, u8, i64)) -> &'r i64 { &r.2 }
/// }
/// struct Sum;
/// impl GroupFold<u8> for Sum {
///     type Value = i64;
///     type State = i64;
///     type Output = (u8, i64);
///     fn init(&self) -> i64 { 0 }
///     fn update(&self, s: &mut i64, v: &i64, diff: isize) -> Result<(), String> {
///         *s += v * diff as i64;
///         Ok(())
///     }
///     fn output(&self, k: &u8, s: &i64) -> Result<(u8, i64), String> { Ok((*k, *s)) }
/// }
///
/// let epochs = vec![vec![((0u64, 1u8, 5i64), 1), ((1, 1, 7), 1), ((2, 2, 1), 1)]];
/// let out = run_unary(2, epochs, |rows| group_aggregate_by(rows, Second, Sum, "Sum").table);
/// assert_eq!(out, vec![((1, 12), 0, 1), ((2, 1), 0, 1)]);
/// ```
pub fn group_aggregate_by<'s, R, G, F>(
    input: VecCollection<'s, SysTime, R>,
    grouping: G,
    fold: F,
    name: &str,
) -> Aggregated<'s, F::Output>
where
    R: ExchangeData,
    G: GroupKey<R>,
    F: GroupFold<G::Key, Value = G::Value>,
{
    type Builder<D> = CapacityContainerBuilder<Vec<Update<D>>>;
    let mut builder = OperatorBuilder::new(name.to_owned(), input.inner.scope());
    let router = grouping.clone();
    let exchange = Exchange::new(move |u: &Update<R>| router.route(&u.0));
    let mut input = builder.new_input(input.inner, exchange);
    let (table_out, table) = builder.new_output();
    let (rejected_out, rejected) = builder.new_output();
    let mut table_out = OutputBuilder::<_, Builder<F::Output>>::from(table_out);
    let mut rejected_out = OutputBuilder::<_, Builder<Rejected>>::from(rejected_out);
    builder.build(move |_initial_caps| {
        let mut pending = Pending::new();
        let mut groups: Groups<G::Key, Group<F::State>> = Groups::default();
        // The slots changed at the time being applied with the row each had before, or what it
        // is made from (a group whose row could not be made had none), and those of them left
        // without rows.
        let mut changed: Vec<(Slot, Before<F::State, F::Output>)> = Vec::new();
        let mut emptied: Vec<Slot> = Vec::new();
        let arrival_order = fold.order_independent();
        move |frontiers| {
            let frontier = &frontiers[0];
            let mut table_out = table_out.activate();
            let mut rejected_out = rejected_out.activate();
            input.for_each(|cap, data| {
                pending.stash(data, |t| [cap.delayed(t, 0), cap.delayed(t, 1)])
            });
            while let Some(([table_cap, rejected_cap], batches)) =
                pending.next_complete_batches(frontier)
            {
                let time = *table_cap.time();
                let mut rows = table_out.session(&table_cap);
                let mut refusals = rejected_out.session(&rejected_cap);
                let mut refuse =
                    |seq, reason| refusals.give((Rejected::invalid(seq, reason), time, 1));
                // Each record's key is read once, here, for its hash and its probe.
                let hashed = |update: Update<R>| (grouping.hash(&update.0), update);
                let prefetch =
                    |groups: &Groups<_, _>, ((hash, _), _): &((u64, _), _)| groups.prefetch(*hash);
                let fold_in =
                    |groups: &mut Groups<G::Key, Group<F::State>>,
                     ((hash, probe), (record, _, diff)): ((u64, G::Probe), Update<R>)| {
                        let slot = groups.get_or_insert(
                            hash,
                            |key| grouping.is_key(&record, probe, key),
                            || (grouping.key(&record, probe), Group::new(fold.init())),
                            |key| grouping.hash_key(key),
                        );
                        let (key, group) = groups.get_mut(slot);
                        if !group.changed {
                            group.changed = true;
                            changed.push((slot, group.before(&fold, key)));
                        }
                        let (seq, diff) = (grouping.seq(&record), grouping.diff(&record, diff));
                        group.apply(&fold, seq, grouping.value(&record), diff, &mut refuse);
                    };
                // A retraction is checked against the rows its group holds at its `seq`: a
                // time with retractions is folded in `seq` order whatever the fold.
                let retracting =
                    || batches.any(|(record, _, diff)| grouping.diff(record, *diff) < 0);
                if arrival_order && !retracting() {
                    let updates = batches.into_updates().map(hashed);
                    ahead(&mut groups, updates, prefetch, fold_in);
                } else {
                    // Sorted by record: with records ordered by key or by `seq` first, each
                    // key's updates come in fold order.
                    let mut updates = batches.into_vec();
                    differential_dataflow::consolidation::consolidate_updates(&mut updates);
                    ahead(
                        &mut groups,
                        updates.into_iter().map(hashed),
                        prefetch,
                        fold_in,
                    );
                }
                // The changed groups are met again in the order they changed: prefetched too.
                // Their rows are sent in containers of `CHUNK`, filled here.
                // (Nothing is allocated for a time that changed no group.)
                let mut emitted = Vec::with_capacity(CHUNK.min(2 * changed.len()));
                let mut emit_row = |row| {
                    emitted.push(row);
                    if emitted.len() == CHUNK {
                        rows.give_container(&mut emitted);
                        emitted.clear();
                        emitted.reserve(CHUNK);
                    }
                };
                let emit =
                    |groups: &mut Groups<G::Key, Group<F::State>>,
                     (slot, before): (Slot, Before<F::State, F::Output>)| {
                        let (key, group) = groups.get_mut(slot);
                        group.changed = false;
                        let differs = before.differs(&fold, group.rows, &group.state);
                        let before = before.row(&fold, key);
                        let now = group
                            .row(&fold, key)
                            .and_then(|row| row.map_err(|reason| refuse(group.last, reason)).ok());
                        if differs || now != before {
                            if let Some(old) = before {
                                emit_row((old, time, -1));
                            }
                            if let Some(row) = now {
                                emit_row((row, time, 1));
                            }
                        }
                        if group.rows == 0 {
                            emptied.push(slot);
                        }
                    };
                let prefetch_slot =
                    |groups: &Groups<_, _>, (slot, _): &(Slot, _)| groups.prefetch_slot(*slot);
                ahead(&mut groups, changed.drain(..), prefetch_slot, emit);
                if !emitted.is_empty() {
                    rows.give_container(&mut emitted);
                }
                emptied.sort_unstable_by(|a, b| b.cmp(a));
                groups.remove_all(&emptied, |key| grouping.hash_key(key));
                emptied.clear();
            }
        }
    });
    Aggregated {
        table: table.as_collection(),
        rejected: rejected.as_collection(),
    }
}
