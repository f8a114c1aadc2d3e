//! The group aggregation against its sequential model, over random rows and retractions,
//! batchings and worker counts; refusals in a unit test.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::{group_aggregate, reference, GroupFold, CHUNK};
use crate::testing::{content_at, run_unary, Epoch};
use crate::Seq;

/// COUNT, SUM and MAX (over a multiset with signed counts, so it can retract in any order) per
/// key; folded unsorted when `unsorted`; a group's row from before a time's updates kept as a
/// snapshot of its state when `snapshot`.
#[derive(Clone)]
struct CountSumMax {
    unsorted: bool,
    snapshot: bool,
}

impl GroupFold<u8> for CountSumMax {
    type Value = i64;
    type State = (isize, i64, BTreeMap<i64, isize>);
    type Output = (u8, isize, i64, Option<i64>);

    fn init(&self) -> Self::State {
        (0, 0, BTreeMap::new())
    }

    fn update(&self, s: &mut Self::State, v: &i64, diff: isize) -> Result<(), String> {
        s.0 += diff;
        s.1 += v * diff as i64;
        let n = s.2.entry(*v).or_insert(0);
        *n += diff;
        if *n == 0 {
            s.2.remove(v);
        }
        Ok(())
    }

    fn output(&self, k: &u8, s: &Self::State) -> Result<Self::Output, String> {
        let max = s.2.iter().rev().find(|(_, n)| **n > 0).map(|(v, _)| *v);
        Ok((*k, s.0, s.1, max))
    }

    fn order_independent(&self) -> bool {
        self.unsorted
    }

    fn snapshot(&self, s: &Self::State) -> Option<Self::State> {
        self.snapshot.then(|| s.clone())
    }

    /// The count and the sum are values of the row.
    fn outputs_differ(&self, a: &Self::State, b: &Self::State) -> bool {
        (a.0, a.1) != (b.0, b.1)
    }
}

/// FIRST and LAST value in fold order (append-only input only).
#[derive(Clone)]
struct FirstLast;

impl GroupFold<u8> for FirstLast {
    type Value = i64;
    type State = Option<(i64, i64)>;
    type Output = (u8, i64, i64);

    fn init(&self) -> Self::State {
        None
    }

    fn update(&self, s: &mut Self::State, v: &i64, _diff: isize) -> Result<(), String> {
        *s = Some(s.map_or((*v, *v), |(first, _)| (first, *v)));
        Ok(())
    }

    fn output(&self, k: &u8, s: &Self::State) -> Result<Self::Output, String> {
        let (first, last) = s.expect("a group with rows has values");
        Ok((*k, first, last))
    }
}

type Input = (u8, (Seq, i64));

/// Random inserts and retractions of live rows, cut into epochs; `seq` grows with the epoch.
fn changes(retract: bool) -> impl Strategy<Value = Vec<Epoch<Input>>> {
    let ops = prop::collection::vec((0u8..4, -3i64..6, any::<bool>(), 0usize..4), 0..40);
    (ops, prop::collection::vec(0usize..40, 0..5)).prop_map(move |(ops, mut cuts)| {
        cuts.sort_unstable();
        let mut live: Vec<Input> = Vec::new();
        let mut epochs: Vec<Epoch<Input>> = vec![Vec::new()];
        for (i, (key, value, remove, pick)) in ops.into_iter().enumerate() {
            while cuts.first().is_some_and(|c| *c <= i) {
                cuts.remove(0);
                epochs.push(Vec::new());
            }
            let epoch = epochs.last_mut().expect("one epoch at least");
            if retract && remove && !live.is_empty() {
                let row = live.remove(pick % live.len());
                epoch.push((row, -1));
            } else {
                let row = (key, (i as Seq, value));
                live.push(row);
                epoch.push((row, 1));
            }
        }
        epochs
    })
}

fn check<F>(fold: F, epochs: Vec<Epoch<Input>>, workers: usize)
where
    F: GroupFold<u8, Value = i64> + Clone + Send + Sync,
    F::Output: Ord + std::fmt::Debug + Sync,
{
    let expected = reference::tables(&epochs, &fold);
    let out = run_unary(workers, epochs, move |rows| {
        group_aggregate(rows, fold.clone(), "Agg").table
    });
    for (time, table) in expected.iter().enumerate() {
        let got: Vec<_> = content_at(&out, time as u64)
            .into_iter()
            .map(|(row, diff)| {
                assert_eq!(diff, 1, "a group's row is present once");
                row
            })
            .collect();
        assert_eq!(&got, table, "at system time {time}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn retracting_fold_matches_model(
        epochs in changes(true),
        workers in prop::sample::select(vec![1usize, 2, 4]),
        unsorted in any::<bool>(),
        snapshot in any::<bool>(),
    ) {
        check(CountSumMax { unsorted, snapshot }, epochs, workers);
    }

    #[test]
    fn ordered_fold_sees_arrival_order(epochs in changes(false), workers in prop::sample::select(vec![1usize, 2, 4])) {
        check(FirstLast, epochs, workers);
    }
}

/// Refuses values above 10 and a sum above 12; the group keeps its other rows. Its row from
/// before a time's updates is kept as a snapshot of its state when `snapshot`.
#[derive(Clone, Copy)]
struct Bounded {
    snapshot: bool,
}

impl GroupFold<u8> for Bounded {
    type Value = i64;
    type State = i64;
    type Output = (u8, i64);

    fn init(&self) -> i64 {
        0
    }

    fn update(&self, s: &mut i64, v: &i64, diff: isize) -> Result<(), String> {
        if *v > 10 {
            return Err(format!("value {v} is too large"));
        }
        *s += v * diff as i64;
        Ok(())
    }

    fn output(&self, k: &u8, s: &i64) -> Result<(u8, i64), String> {
        if *s > 12 {
            return Err(format!("sum {s} overflows"));
        }
        Ok((*k, *s))
    }

    fn snapshot(&self, s: &i64) -> Option<i64> {
        self.snapshot.then_some(*s)
    }
}

#[test]
fn refused_rows_and_groups_are_reported() {
    let epochs = vec![
        vec![((1u8, (0u64, 5i64)), 1), ((1, (1, 11)), 1)],
        vec![((1, (2, 9)), 1)],
        vec![((1, (2, 9)), -1)],
    ];
    for snapshot in [false, true] {
        let fold = Bounded { snapshot };
        let table = run_unary(2, epochs.clone(), move |r| {
            group_aggregate(r, fold, "Agg").table
        });
        assert_eq!(table, vec![((1, 5), 0, 1), ((1, 5), 1, -1), ((1, 5), 2, 1)]);
        let refused = run_unary(2, epochs.clone(), move |r| {
            group_aggregate(r, fold, "Agg")
                .rejected
                .map(|r| (r.seq, r.reason.into_owned()))
        });
        assert_eq!(
            refused,
            vec![
                ((1, "value 11 is too large".to_string()), 0, 1),
                ((2, "sum 14 overflows".to_string()), 1, 1),
            ]
        );
    }
}

/// A group whose rows are all retracted is removed; a key that comes back starts from an empty
/// accumulator (its old MAX is gone).
#[test]
fn removed_groups_come_back_empty() {
    let fold = CountSumMax {
        unsorted: true,
        snapshot: false,
    };
    let epochs = vec![
        vec![((1u8, (0u64, 7i64)), 1)],
        vec![((1, (0, 7)), -1)],
        vec![((2, (1, 3)), 1)],
        vec![((1, (2, 4)), 1)],
    ];
    let table = run_unary(1, epochs, move |r| {
        group_aggregate(r, fold.clone(), "Agg").table
    });
    assert_eq!(
        table,
        vec![
            ((1, 1, 4, Some(4)), 3, 1),
            ((1, 1, 7, Some(7)), 0, 1),
            ((1, 1, 7, Some(7)), 1, -1),
            ((2, 1, 3, Some(3)), 2, 1),
        ]
    );
}

/// COUNT and SUM per `u64` key, kept and compared as snapshots.
struct CountSum;

impl GroupFold<u64> for CountSum {
    type Value = i64;
    type State = (isize, i64);
    type Output = (u64, isize, i64);

    fn init(&self) -> Self::State {
        (0, 0)
    }

    fn update(&self, s: &mut Self::State, v: &i64, diff: isize) -> Result<(), String> {
        *s = (s.0 + diff, s.1 + v * diff as i64);
        Ok(())
    }

    fn output(&self, k: &u64, s: &Self::State) -> Result<Self::Output, String> {
        Ok((*k, s.0, s.1))
    }

    fn order_independent(&self) -> bool {
        true
    }

    fn snapshot(&self, s: &Self::State) -> Option<Self::State> {
        Some(*s)
    }

    fn outputs_differ(&self, a: &Self::State, b: &Self::State) -> bool {
        a != b
    }
}

/// A system time whose output spans several messages: every row is sent, each once.
#[test]
fn outputs_of_many_groups_span_messages() {
    let keys = (CHUNK + CHUNK / 2) as u64;
    // Every group inserted at time 0, then each changed at time 1: `keys` rows retracted and
    // as many inserted at once.
    let rows = |time: u64| -> Epoch<(u64, (Seq, i64))> {
        (0..keys)
            .map(|k| ((k, (time * keys + k, time as i64 + 1)), 1))
            .collect()
    };
    let out = run_unary(2, vec![rows(0), rows(1)], |rows| {
        group_aggregate(rows, CountSum, "Agg").table
    });
    let first: Vec<_> = (0..keys).map(|k| ((k, 1, 1), 1)).collect();
    let second: Vec<_> = (0..keys).map(|k| ((k, 2, 3), 1)).collect();
    assert_eq!(content_at(&out, 0), first);
    assert_eq!(content_at(&out, 1), second);
    let changes = out.iter().filter(|(_, time, _)| *time == 1).count();
    assert_eq!(
        changes as u64,
        2 * keys,
        "each group retracted and inserted once"
    );
}
