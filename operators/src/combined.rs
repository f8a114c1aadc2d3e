//! The combined watermark of an operator's inputs, with the idle-source timeout (Flink's
//! `table.exec.source.idle-timeout`).
//!
//! An operator with several inputs (the interval join, the final-mode temporal join) is held
//! back by the least of their [watermarks](crate::watermark): an input that sends nothing holds
//! every result open. With an **idle timeout** of `N` system times (`N > 0`), an input is
//! **idle** at system time `s` when it has had no watermark record (no rows) in the `N` system
//! times before `s`: with its latest record at epoch `last`, it is idle from `last + 1 + N` on
//! (an input that never sent anything is idle from `N` on), until it sends again. The timeout is
//! measured on system time, not on the wall clock, so results never depend on scheduling.
//!
//! The combined watermark in force for the rows of `s` (Flink's `StatusWatermarkValve`):
//!
//! * `C(s) = max(C(s - 1), min over the inputs not idle at s of W_i(s))`: an idle input is left
//!   out of the minimum and the combined watermark never goes back;
//! * when every input is idle, `C(s) = C(s - 1)`: it does not advance;
//! * an input that sends again holds it back from its next rows on; its rows behind `C` are
//!   late, and the operators report them as every late row.
//!
//! With the timeout off (`0`, the default, as in Flink) no input is ever idle and `C` is the
//! plain minimum. An operator with a single input gains nothing from it: when that input is
//! idle, every input is. Idleness is per input, never per worker or partition: an input's
//! watermark is computed over all workers, so a worker without data never holds anything back
//! (Flink's per-split watermarks need the timeout for that case too).
//!
//! Since `C` can rise at a system time where no input sent anything (the moment an input turns
//! idle), [`Combined::next_rise`] names those system times too, so that an operator holding work
//! visits them and releases what waited there, not at the next row.
//!
//! Cost: per watermark record (one per input, worker and epoch with data) a few ordered-set
//! inserts; per visited epoch O(inputs).

use std::collections::BTreeSet;

use crate::watermark::{Watermark, WatermarkTracker};
use crate::SysTime;

/// The combined watermark of several inputs' watermark collections, with an idle timeout (see
/// the [module docs](self)).
///
/// Feed it every watermark record with [`observe`](Self::observe); visit the epochs it names
/// ([`next_rise`](Self::next_rise)) and those with data in increasing order, each once every
/// earlier epoch is complete, asking [`at`](Self::at).
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::combined::Combined;
/// use differential_temporal_operators::watermark::Watermark::{At, Min};
///
/// // Two inputs, idle after 3 quiet system times. Input 0 sends up to epoch 6, input 1 only
/// // at epoch 0: it is idle from epoch 4 on (0 + 1 + 3), and the watermark may rise there.
/// let mut c = Combined::new(2, 3);
/// c.observe(1, 0, At(5));
/// for epoch in 0..7 {
///     c.observe(0, epoch, At(10 * epoch as i64));
/// }
/// let seen: Vec<_> = (0..8).map(|s| c.at(s)).collect();
/// assert_eq!(seen, [Min, At(0), At(5), At(5), At(30), At(40), At(50), At(60)]);
/// // Input 1 sends again at epoch 8 (event time 20, behind 60): the watermark stays at 60.
/// c.observe(1, 8, At(20));
/// c.observe(0, 8, At(80));
/// assert_eq!((c.at(8), c.at(9)), (At(60), At(60)));
/// ```
#[derive(Clone, Debug)]
pub struct Combined<E> {
    inputs: Vec<WatermarkTracker<E>>,
    /// `N` system times; `0`: off.
    timeout: SysTime,
    /// The combined watermark last in force.
    current: Watermark<E>,
    /// The epochs at which the watermark may rise, not yet visited.
    rises: BTreeSet<SysTime>,
}

impl<E: Ord + Clone> Combined<E> {
    /// `inputs` inputs, none seen: the watermark is `Min`. `timeout` is the idle timeout in
    /// system times (`0`: off).
    pub fn new(inputs: usize, timeout: SysTime) -> Self {
        Combined {
            inputs: vec![WatermarkTracker::new(); inputs],
            timeout,
            current: Watermark::Min,
            rises: BTreeSet::new(),
        }
    }

    /// Records a watermark record of `input` (an index `< inputs`, else ignored) at `epoch`.
    pub fn observe(&mut self, input: usize, epoch: SysTime, candidate: Watermark<E>) {
        let Some(tracker) = self.inputs.get_mut(input) else {
            return;
        };
        tracker.observe(epoch, candidate);
        self.rises.insert(epoch + 1);
        if self.timeout > 0 {
            // Where this input turns idle if it sends nothing more; where the inputs that
            // never sent anything do.
            self.rises.insert(epoch + 1 + self.timeout);
            if epoch < self.timeout {
                self.rises.insert(self.timeout);
            }
        }
    }

    /// The earliest epoch at which the watermark may rise, not yet visited.
    pub fn next_rise(&self) -> Option<SysTime> {
        self.rises.first().copied()
    }

    /// `true` iff some rise is still to visit.
    pub fn rising(&self) -> bool {
        !self.rises.is_empty()
    }

    /// The combined watermark in force for the rows of `now` (epochs asked in increasing
    /// order, each once every earlier epoch is complete); marks `now` visited.
    pub fn at(&mut self, now: SysTime) -> Watermark<E> {
        self.rises.remove(&now);
        let timeout = self.timeout;
        let active = self.inputs.iter_mut().filter_map(|tracker| {
            let w = tracker.at(now);
            let quiet_from = tracker.last_active().map_or(0, |last| last + 1);
            (timeout == 0 || now < quiet_from + timeout).then_some(w)
        });
        if let Some(least) = active.min() {
            if self.current < least {
                self.current = least;
            }
        }
        self.current.clone()
    }

    /// The epoch at which `Max` takes over once every input has ended: the epoch after the
    /// last one observed on any input (0 if none).
    pub fn end_epoch(&self) -> SysTime {
        let ends = self.inputs.iter().map(WatermarkTracker::end_epoch);
        ends.max().unwrap_or(0)
    }

    /// Every input has ended: forgets the rises after [`end_epoch`](Self::end_epoch) (inputs
    /// turning idle after the end), where `Max` has taken over already.
    pub fn ended(&mut self) {
        let end = self.end_epoch();
        self.rises.retain(|&rise| rise <= end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Watermark::{At, Max, Min};

    /// The watermarks of epochs `0..through` after feeding `records` `(input, epoch, value)`.
    fn run(
        inputs: usize,
        timeout: SysTime,
        records: &[(usize, SysTime, Watermark<i64>)],
        through: SysTime,
    ) -> Vec<Watermark<i64>> {
        let mut c = Combined::new(inputs, timeout);
        for (i, s, w) in records {
            c.observe(*i, *s, w.clone());
        }
        (0..through).map(|s| c.at(s)).collect()
    }

    #[test]
    fn timeout_off_is_the_plain_minimum() {
        let records = [(0, 0, At(10)), (0, 5, At(50)), (1, 1, At(7))];
        assert_eq!(
            run(2, 0, &records, 7),
            [Min, Min, At(7), At(7), At(7), At(7), At(7)]
        );
    }

    #[test]
    fn idle_input_is_left_out_then_holds_back_again_without_going_back() {
        // Input 1 sends at epoch 1 (7), then nothing until epoch 6 (20); timeout 2: idle at
        // epochs 4 and 5 (from 1 + 1 + 2), active again from epoch 7 (its record of epoch 6).
        let mut records: Vec<_> = (0..9).map(|s| (0, s, At(10 * s as i64))).collect();
        records.extend([(1, 1, At(7)), (1, 6, At(20)), (1, 8, At(100))]);
        let seen = run(2, 2, &records, 10);
        let expect = [
            Min,
            Min,
            At(7),
            At(7),
            At(30),
            At(40),
            At(50),
            At(50),
            At(50),
            At(80),
        ];
        assert_eq!(seen, expect);
        // An input that never sent anything is idle from epoch `timeout` on.
        let seen = run(2, 3, &[(0, 0, At(1)), (0, 1, At(2)), (0, 4, At(5))], 6);
        assert_eq!(seen, [Min, Min, Min, At(2), At(2), At(5)]);
    }

    #[test]
    fn every_input_idle_holds_the_watermark_and_rises_are_named() {
        let records = [(0, 0, At(3)), (1, 0, At(9))];
        let mut c = Combined::new(2, 4);
        for (i, s, w) in records {
            c.observe(i, s, w);
        }
        // Epoch 1: the data; epoch 4: the never-sent rule; epoch 5: both idle.
        assert_eq!(c.rises.iter().copied().collect::<Vec<_>>(), [1, 4, 5]);
        let seen: Vec<_> = (0..8).map(|s| c.at(s)).collect();
        assert_eq!(seen, [Min, At(3), At(3), At(3), At(3), At(3), At(3), At(3)]);
        assert!(!c.rising());
        // Ended: the rises after the end epoch are dropped.
        let mut c = Combined::<i64>::new(2, 4);
        c.observe(0, 2, Max);
        c.ended();
        assert_eq!((c.next_rise(), c.end_epoch()), (Some(3), 3));
    }
}
