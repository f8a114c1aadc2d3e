//! Deterministic, data-level watermarks over system-time epochs.
//!
//! A watermark is a lower bound on the event times still to come on an input. Here it is
//! computed from the data itself, per system-time epoch, so it never depends on the number of
//! workers or on wall-clock scheduling:
//!
//! * For an input with a declared allowed lateness `L`, the watermark **in force for the rows of
//!   epoch `s`** is `W(s) = (max event time of all rows in epochs < s) - L`, or
//!   [`Watermark::Min`] if no earlier epoch had a row.
//! * A row of epoch `s` is **late** iff its event time is `< W(s)` ([`Watermark::is_late`]).
//!   This is the set Flink's bounded-out-of-orderness generator calls late: Flink's watermark is
//!   `max - L - 1` and a row is late iff `time <= watermark`. For integer times, Flink's
//!   watermark value is therefore `W - 1`; a Flink rule "fire when `t <= watermark`" reads here
//!   "fire when `t < W`" ([`Watermark::passed`]).
//! * When the input has ended, its watermark is [`Watermark::Max`] (+infinity). So that this is
//!   deterministic too, an operator applies it at one system time, [`WatermarkTracker::end_epoch`]
//!   (the epoch after the last one with data), once every input has ended.
//! * An input may have no watermark ([`no_watermark`]): then it is `Min` until the input ends.
//!
//! Shapes: [`watermarks`] turns a collection into a *watermark collection*: one
//! `Watermark<E>` record (diff `+1`) per worker and per epoch in which that worker saw data,
//! stamped with that epoch and broadcast to every worker. The value is `At(lateness(max))`, the
//! worker's local maximum event time of the epoch already lowered by the lateness bound (the
//! bound is monotone, so the maximum of the lowered values is the lowered maximum). An operator
//! embeds a [`WatermarkTracker`], feeds it that collection as an extra input, and asks it for
//! the watermark in force at the epochs it processes.
//!
//! Cost: one comparison per row, one record per worker per epoch (times the number of workers,
//! after the broadcast); a tracker holds one value per epoch not yet folded.

use std::collections::BTreeMap;

use differential_dataflow::{AsCollection, Data, ExchangeData, VecCollection};
use serde::{Deserialize, Serialize};
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::vec::Broadcast;
use timely::dataflow::operators::{Capability, Operator};
use timely::progress::frontier::AntichainRef;

use crate::SysTime;

/// A watermark: `-infinity`, an event time, or `+infinity`.
///
/// Ordered `Min < At(_) < Max`, so the combined watermark of several inputs is their `min`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Watermark<E> {
    /// No lower bound yet (no data, or an input without a watermark).
    Min,
    /// Every row still to come that is not late has an event time `>=` this one.
    At(E),
    /// The input has ended: no row will come.
    Max,
}

/// As in reports of late rows: the event time itself for `At`, else `-infinity` / `+infinity`.
impl<E: std::fmt::Debug> std::fmt::Display for Watermark<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Watermark::Min => f.write_str("-infinity"),
            Watermark::At(time) => write!(f, "{time:?}"),
            Watermark::Max => f.write_str("+infinity"),
        }
    }
}

/// How a report of a late row writes event times and watermarks: by default their `Debug`
/// form, or with a caller's function (say, epoch milliseconds for times an input wrote as
/// such).
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::watermark::{TimeText, Watermark};
///
/// let seconds = TimeText::with(|t: &i64| format!("{} s", t / 1000));
/// assert_eq!(seconds.time(&5000), "5 s");
/// assert_eq!(seconds.mark(&Watermark::At(7000)), "7 s");
/// assert_eq!(seconds.mark(&Watermark::Min), "-infinity");
/// assert_eq!(TimeText::<i64>::default().time(&5000), "5000");
/// ```
#[derive(Debug)]
pub struct TimeText<E>(Option<fn(&E) -> String>);

impl<E> Clone for TimeText<E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for TimeText<E> {}

impl<E> Default for TimeText<E> {
    fn default() -> Self {
        TimeText(None)
    }
}

impl<E> TimeText<E> {
    /// Times written by `text`.
    pub fn with(text: fn(&E) -> String) -> Self {
        TimeText(Some(text))
    }
}

impl<E: std::fmt::Debug> TimeText<E> {
    /// The text of the event time `time`.
    pub fn time(&self, time: &E) -> String {
        match self.0 {
            Some(text) => text(time),
            None => format!("{time:?}"),
        }
    }

    /// The text of the watermark `mark`: its time's, or `-infinity` / `+infinity`.
    pub fn mark(&self, mark: &Watermark<E>) -> String {
        match mark {
            Watermark::At(time) => self.time(time),
            other => other.to_string(),
        }
    }
}

impl<E: Ord> Watermark<E> {
    /// `true` iff a row with event time `time` arriving under this watermark is late
    /// (`time < W`).
    pub fn is_late(&self, time: &E) -> bool {
        match self {
            Watermark::Min => false,
            Watermark::At(w) => time < w,
            Watermark::Max => true,
        }
    }

    /// `true` iff this watermark has passed `time`: no row that is not late can have an event
    /// time `<= time` any more, so results at `time` are final. Same test as
    /// [`is_late`](Self::is_late); Flink says "the watermark `W - 1` reached `time`".
    pub fn passed(&self, time: &E) -> bool {
        self.is_late(time)
    }
}

/// The watermark collection of `data`: per epoch and worker, `At(lateness(max event time))`,
/// broadcast to every worker (see the module docs).
///
/// `event_time` reads a record's event time; `lateness` maps a maximum event time to the
/// watermark it implies (e.g. `|t| t - 5_000` for 5 s of allowed lateness; it must be monotone).
/// Every update counts, whatever its diff: a retraction is data that arrived too.
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::testing::{batch, run_unary};
/// use differential_temporal_operators::watermark::{watermarks, Watermark};
///
/// // Epoch 0 holds event times 10 and 7, epoch 1 holds 12 (lateness 2).
/// let epochs = batch(&[10i64, 7, 12], &[2]);
/// let out = run_unary(2, epochs, |c| watermarks(c, |t: &i64| *t, |m: &i64| m - 2, "Wm"));
/// // With 2 workers each worker broadcasts its local maximum: 8 and 5 in epoch 0, 10 in epoch 1
/// // (from the worker that held that row), each seen by both workers.
/// assert_eq!(
///     out,
///     vec![(Watermark::At(5), 0, 2), (Watermark::At(8), 0, 2), (Watermark::At(10), 1, 2)]
/// );
/// ```
pub fn watermarks<'s, D, E, T, L>(
    data: VecCollection<'s, SysTime, D>,
    event_time: T,
    lateness: L,
    name: &str,
) -> VecCollection<'s, SysTime, Watermark<E>>
where
    D: Data,
    E: ExchangeData,
    T: Fn(&D) -> E + 'static,
    L: Fn(&E) -> E + 'static,
{
    epoch_marks(data, move |d| Watermark::At(event_time(d)), name).map(move |w| match w {
        Watermark::At(max) => Watermark::At(lateness(&max)),
        other => other,
    })
}

/// The watermark collection of an input without a watermark: one `Min` record per worker and
/// epoch with data (so a [`WatermarkTracker`] still learns the input's epochs), broadcast.
///
/// Such an input holds the combined watermark at `-infinity` until it ends (a Flink source
/// without a watermark strategy holds back event-time operators the same way); then its
/// watermark is `Max`. Never fails.
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::testing::{batch, run_unary};
/// use differential_temporal_operators::watermark::{no_watermark, Watermark};
///
/// // Epoch 0 holds two rows (one per worker), epoch 1 one row (on one worker); each worker
/// // with data broadcasts `Min` to both workers.
/// let epochs = batch(&[10i64, 7, 12], &[2]);
/// let out = run_unary(2, epochs, |c| no_watermark::<_, i64>(c, "NoWm"));
/// assert_eq!(out, vec![(Watermark::Min, 0, 4), (Watermark::Min, 1, 2)]);
/// ```
pub fn no_watermark<'s, D, E>(
    data: VecCollection<'s, SysTime, D>,
    name: &str,
) -> VecCollection<'s, SysTime, Watermark<E>>
where
    D: Data,
    E: ExchangeData,
{
    epoch_marks(data, |_| Watermark::Min, name)
}

/// Per epoch, the worker-local maximum of `mark` over the epoch's updates, broadcast.
fn epoch_marks<'s, D, E, M>(
    data: VecCollection<'s, SysTime, D>,
    mark: M,
    name: &str,
) -> VecCollection<'s, SysTime, Watermark<E>>
where
    D: Data,
    E: ExchangeData,
    M: Fn(&D) -> Watermark<E> + 'static,
{
    data.inner
        .unary_frontier(Pipeline, name, move |_cap, _info| {
            // Local maximum per epoch not yet complete, with a capability to emit it.
            let mut open: BTreeMap<SysTime, (Capability<SysTime>, Watermark<E>)> = BTreeMap::new();
            move |(input, frontier), output| {
                input.for_each(|cap, updates| {
                    let Some(cap) = cap.retain_least(output.output_index()) else {
                        return;
                    };
                    for (d, t, _diff) in updates.drain(..) {
                        let m = mark(&d);
                        match open.get_mut(&t) {
                            Some((_, max)) if *max < m => *max = m,
                            Some(_) => {}
                            None => {
                                open.insert(t, (cap.delayed(&t), m));
                            }
                        }
                    }
                });
                // An epoch's maximum is final once the frontier has passed it.
                while let Some(entry) = open.first_entry() {
                    if frontier.less_equal(entry.key()) {
                        break;
                    }
                    let (cap, max) = entry.remove();
                    let t = *cap.time();
                    output.session(&cap).give((max, t, 1isize));
                }
            }
        })
        .broadcast()
        .as_collection()
}

/// The watermark state an operator embeds: fed a watermark collection, it answers the watermark
/// in force for an epoch once all earlier epochs are complete.
///
/// Feed it every record of the watermark collection with [`observe`](Self::observe) (the
/// record's epoch and value; diffs are ignored), then ask [`at`](Self::at) for epochs in
/// non-decreasing order, each only once [`is_complete`](Self::is_complete) says the epochs
/// before it are all known. After the input's frontier is empty, [`end_epoch`](Self::end_epoch)
/// is the system time at which [`Watermark::Max`] takes over.
#[derive(Clone, Debug)]
pub struct WatermarkTracker<E> {
    /// Candidates of epochs not yet folded, maximum per epoch.
    maxima: BTreeMap<SysTime, Watermark<E>>,
    /// Maximum of the candidates of every epoch `< folded_through`.
    folded: Watermark<E>,
    /// Every epoch `< folded_through` is folded into `folded`.
    folded_through: SysTime,
    /// The greatest epoch observed.
    last: Option<SysTime>,
    /// The greatest epoch folded (observed and `<` an epoch asked for).
    last_folded: Option<SysTime>,
}

impl<E: Ord + Clone> Default for WatermarkTracker<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Ord + Clone> WatermarkTracker<E> {
    /// A tracker that has seen nothing: its watermark is `Min`.
    pub fn new() -> Self {
        WatermarkTracker {
            maxima: BTreeMap::new(),
            folded: Watermark::Min,
            folded_through: 0,
            last: None,
            last_folded: None,
        }
    }

    /// Records one record of the watermark collection: `candidate` observed at `epoch`.
    pub fn observe(&mut self, epoch: SysTime, candidate: Watermark<E>) {
        self.last = self.last.max(Some(epoch));
        if epoch < self.folded_through {
            // Cannot happen when `at` is only asked for complete epochs; keep it monotone.
            self.folded = self.folded.clone().max(candidate);
            self.last_folded = self.last_folded.max(Some(epoch));
            return;
        }
        let slot = self.maxima.entry(epoch).or_insert(Watermark::Min);
        if *slot < candidate {
            *slot = candidate;
        }
    }

    /// `true` iff every epoch `< epoch` is complete under the input's `frontier`, so
    /// [`at`](Self::at)`(epoch)` is final. An empty frontier (input ended) completes every epoch.
    pub fn is_complete(epoch: SysTime, frontier: AntichainRef<SysTime>) -> bool {
        frontier.iter().all(|f| *f >= epoch)
    }

    /// The watermark in force for the rows of `epoch`: the greatest candidate of the epochs
    /// `< epoch`, or `Min`. Epochs must be asked in non-decreasing order.
    pub fn at(&mut self, epoch: SysTime) -> Watermark<E> {
        while let Some(entry) = self.maxima.first_entry() {
            if *entry.key() >= epoch {
                break;
            }
            self.last_folded = self.last_folded.max(Some(*entry.key()));
            let candidate = entry.remove();
            if self.folded < candidate {
                self.folded = candidate;
            }
        }
        self.folded_through = self.folded_through.max(epoch);
        self.folded.clone()
    }

    /// The greatest epoch with a record before the epoch last asked for with [`at`](Self::at)
    /// (`None` if none): the input's latest activity as of that epoch, which the
    /// [idle timeout](crate::combined) measures from.
    pub fn last_active(&self) -> Option<SysTime> {
        self.last_folded
    }

    /// The epoch after the last one observed (0 if none): where `Max` takes over once the
    /// input has ended.
    pub fn end_epoch(&self) -> SysTime {
        self.last.map_or(0, |l| l + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{batch, run_unary};

    /// The global watermark per epoch, computed from a tracker fed the broadcast collection.
    fn tracked(out: &[(Watermark<i64>, SysTime, isize)], epochs: SysTime) -> Vec<Watermark<i64>> {
        let mut tracker = WatermarkTracker::new();
        for (w, t, _) in out {
            tracker.observe(*t, w.clone());
        }
        (0..=epochs).map(|s| tracker.at(s)).collect()
    }

    #[test]
    fn watermark_per_epoch_is_worker_count_independent() {
        let rows = [5i64, 3, 9, 2, 1, 20, 4, 4];
        let epochs = batch(&rows, &[3, 4, 4, 6]);
        let mut seen = Vec::new();
        for workers in [1, 2, 4] {
            let out = run_unary(workers, epochs.clone(), |c| {
                watermarks(c, |t: &i64| *t, |m: &i64| m - 1, "Wm")
            });
            // Every worker sees every worker's maximum: the broadcast copies are `workers`-fold.
            let per_worker: isize = out.iter().filter(|r| r.1 == 0).map(|r| r.2).sum();
            assert_eq!(per_worker as usize, workers * workers.min(3));
            seen.push(tracked(&out, 5));
        }
        use Watermark::*;
        // Epochs: [5,3,9] [2] [] [1,20] [4,4]; W(s) = max of epochs < s, minus 1.
        let expected = vec![Min, At(8), At(8), At(8), At(19), At(19)];
        assert!(seen.iter().all(|s| *s == expected), "{seen:?}");
    }

    #[test]
    fn late_rows_and_end_of_input() {
        use Watermark::*;
        assert!(At(5).is_late(&4) && !At(5).is_late(&5));
        assert!(!Min.is_late(&i64::MIN) && Max.is_late(&i64::MAX));
        assert!(Min < At(i64::MIN) && At(i64::MAX) < Max);

        let out = run_unary(2, batch(&[1u8, 2, 3], &[1]), |c| {
            no_watermark::<_, i64>(c, "No")
        });
        assert_eq!(out, vec![(Min, 0, 2), (Min, 1, 4)]);
        let mut tracker = WatermarkTracker::<i64>::new();
        for (w, t, _) in &out {
            tracker.observe(*t, w.clone());
        }
        assert_eq!(tracker.at(2), Min);
        // The input ended after epoch 1: `Max` takes over at epoch 2.
        assert_eq!(tracker.end_epoch(), 2);
        assert!(WatermarkTracker::<i64>::is_complete(
            7,
            AntichainRef::new(&[])
        ));
        assert!(!WatermarkTracker::<i64>::is_complete(
            7,
            AntichainRef::new(&[6])
        ));
        assert!(WatermarkTracker::<i64>::is_complete(
            7,
            AntichainRef::new(&[7])
        ));
    }
}
