//! When a key's oldest build versions may go: `(event time, key)` entries taken out once the
//! combined watermark passes their time (rule B11, for
//! [`temporal_join_final_pruned`](super::temporal_join_final_pruned)).
//!
//! A binary heap pops one entry in O(log n) steps that each land on a cold part of the heap
//! (with 100k keys, ~500 ns a pop). The entries leave in batches instead, all those a rise
//! passes at once, and in no particular order (each entry is checked against its key, so the
//! order does not matter); so they are kept in a few sorted runs, newest time first, and a rise
//! takes the tail of each run: memory read in order. New entries are sorted into a run of their
//! own at the next rise, and runs are merged so that each is more than twice the size of the
//! next (as in a log-structured merge tree): an entry is merged O(log n) times, each a
//! sequential pass.

/// The entries (see the [module docs](self)).
pub(super) struct Due<E, K> {
    /// Entries pushed since the last [`Due::take_before`], in no order.
    fresh: Vec<(E, K)>,
    /// Sorted runs, each newest time first; each more than twice the length of the next
    /// after a [`Due::take_before`].
    runs: Vec<Vec<(E, K)>>,
}

impl<E, K> Default for Due<E, K> {
    fn default() -> Self {
        Due {
            fresh: Vec::new(),
            runs: Vec::new(),
        }
    }
}

impl<E: Ord, K> Due<E, K> {
    /// Adds the entry `(time, key)`.
    pub(super) fn push(&mut self, time: E, key: K) {
        self.fresh.push((time, key));
    }

    /// Removes the entries with a time before `x` into `out`, in no particular order.
    pub(super) fn take_before(&mut self, x: &E, out: &mut Vec<(E, K)>) {
        if !self.fresh.is_empty() {
            let mut run = std::mem::take(&mut self.fresh);
            run.sort_by(|a, b| b.0.cmp(&a.0));
            self.runs.push(run);
        }
        for run in &mut self.runs {
            let from = run.partition_point(|(time, _)| time >= x);
            out.extend(run.drain(from..));
        }
        self.runs.retain(|run| !run.is_empty());
        // Merge a run into the one before it while that one is not more than twice as long.
        while let Some(i) = (1..self.runs.len()).find(|&i| {
            let (before, run) = (&self.runs[i - 1], &self.runs[i]);
            before.len() <= 2 * run.len()
        }) {
            let run = self.runs.remove(i);
            let before = &mut self.runs[i - 1];
            before.extend(run);
            // Two descending runs: the stable sort finds and merges them in one pass.
            before.sort_by(|a, b| b.0.cmp(&a.0));
        }
    }

    /// `true` iff no entry is left.
    #[cfg(test)]
    pub(super) fn is_empty(&self) -> bool {
        self.fresh.is_empty() && self.runs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Due;

    proptest! {
        /// Whatever the pushes and rises, each rise takes exactly the entries pushed and not
        /// yet taken whose time is before its watermark, and the runs stay geometric.
        #[test]
        fn a_rise_takes_exactly_the_entries_it_passes(
            steps in prop::collection::vec(
                (prop::collection::vec((0u16..500, 0u8..10), 0..40), 0u16..600),
                1..30,
            ),
        ) {
            let mut due = Due::default();
            let mut model: Vec<(u16, u8)> = Vec::new();
            for (pushes, x) in steps {
                for (time, key) in pushes {
                    due.push(time, key);
                    model.push((time, key));
                }
                let mut taken = Vec::new();
                due.take_before(&x, &mut taken);
                taken.sort();
                let mut expected: Vec<_> = model.iter().copied().filter(|e| e.0 < x).collect();
                expected.sort();
                model.retain(|e| e.0 >= x);
                prop_assert_eq!(taken, expected);
                for pair in due.runs.windows(2) {
                    prop_assert!(pair[0].len() > 2 * pair[1].len());
                }
                for run in &due.runs {
                    prop_assert!(run.windows(2).all(|w| w[0].0 >= w[1].0));
                }
            }
        }
    }
}
