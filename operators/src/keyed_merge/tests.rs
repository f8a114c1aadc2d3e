//! The keyed merge against a sequential fold, over random writes, batchings and worker counts.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::{keyed_merge, Folded, MergeRule};
use crate::testing::{batch, run_unary};
use crate::{Change, RowKind};

/// Sum of the values written per key; a `-D` removes the key; a negative write is refused.
struct Sum;

impl MergeRule for Sum {
    type Write = i64;
    type State = i64;
    type Row = i64;

    fn merge(
        &self,
        state: &mut Option<i64>,
        kind: RowKind,
        w: &i64,
        out: &mut Vec<(RowKind, i64)>,
    ) -> Folded {
        if *w < 0 {
            return Err(format!("negative write {w}").into());
        }
        match (kind.is_accumulate(), *state) {
            (true, None) => out.push((RowKind::Insert, *w)),
            (true, Some(old)) => {
                out.push((RowKind::UpdateBefore, old));
                out.push((RowKind::UpdateAfter, old + w));
            }
            (false, Some(old)) => out.push((RowKind::Delete, old)),
            (false, None) => {}
        }
        *state = match (kind.is_accumulate(), *state) {
            (true, old) => Some(old.unwrap_or(0) + w),
            (false, _) => None,
        };
        Ok(None)
    }
}

type Out = (Vec<(u8, Change<i64>)>, Vec<(u8, u64)>);

/// The sequential model: fold the writes in input order.
fn model(writes: &[(u8, Change<i64>)]) -> Out {
    let mut state = BTreeMap::new();
    let (mut changes, mut rejected) = (Vec::new(), Vec::new());
    for (k, c) in writes {
        let mut slot = state.remove(k);
        let mut out = Vec::new();
        match Sum.merge(&mut slot, c.kind, &c.row, &mut out) {
            Ok(_) => changes.extend(
                out.into_iter()
                    .map(|(kind, row)| (*k, Change::new(c.seq, kind, row))),
            ),
            Err(_) => rejected.push((*k, c.seq)),
        }
        if let Some(s) = slot {
            state.insert(*k, s);
        }
    }
    changes.sort();
    rejected.sort();
    (changes, rejected)
}

fn run(workers: usize, writes: &[(u8, Change<i64>)], cuts: &[usize]) -> Out {
    let epochs = batch(writes, cuts);
    let changes = run_unary(workers, epochs.clone(), |c| {
        keyed_merge(c, Sum, None, "Sum").changelog
    });
    let rejected = run_unary(workers, epochs, |c| {
        keyed_merge(c, Sum, None, "Sum")
            .rejected
            .map(|(k, r)| (k, r.seq))
    });
    let mut changes: Vec<_> = changes
        .into_iter()
        .map(|(d, _, r)| {
            assert_eq!(r, 1);
            d
        })
        .collect();
    let mut rejected: Vec<_> = rejected.into_iter().map(|(d, _, _)| d).collect();
    changes.sort();
    rejected.sort();
    (changes, rejected)
}

fn writes() -> impl Strategy<Value = (Vec<(u8, Change<i64>)>, Vec<usize>)> {
    let write = (0u8..4, prop::bool::weighted(0.85), -1i64..5);
    (
        prop::collection::vec(write, 0..40),
        prop::collection::vec(0usize..40, 0..5),
    )
        .prop_map(|(ws, mut cuts)| {
            cuts.sort();
            let ws = ws
                .into_iter()
                .enumerate()
                .map(|(seq, (k, ins, w))| {
                    let kind = if ins {
                        RowKind::Insert
                    } else {
                        RowKind::Delete
                    };
                    (k, Change::new(seq as u64, kind, w))
                })
                .collect();
            (ws, cuts)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn matches_sequential_fold((ws, cuts) in writes()) {
        let expected = model(&ws);
        for workers in [1, 2, 4] {
            prop_assert_eq!(&run(workers, &ws, &cuts), &expected);
        }
    }
}

#[test]
fn retracted_write_is_reported() {
    let w = (1u8, Change::new(0, RowKind::Insert, 5i64));
    let out = run_unary(2, vec![vec![(w, -1)]], |c| {
        keyed_merge(c, Sum, None, "Sum")
            .rejected
            .map(|(k, r)| (k, r.seq, r.reason.into_owned()))
    });
    assert_eq!(
        out,
        vec![(
            (
                1,
                0,
                "retraction of a write: merge input must be insert-only".to_string()
            ),
            0,
            1
        )]
    );
}
