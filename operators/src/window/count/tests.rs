//! Row-count windows on hand-made scripts, their state bound, and against a sequential model
//! over random keys, values, window shapes, batchings and 1, 2 and 4 workers.

use differential_dataflow::consolidation::consolidate_updates;
use proptest::prelude::*;

use super::{count_window_aggregate, CountWindows, KeyWindows, Spec};
use crate::epochs::EpochLogic;
use crate::group_aggregate::GroupFold;
use crate::testing::{arb_cuts, batch, run_unary, Epoch, Updates};
use crate::watermark::Watermark;
use crate::{Seq, SysTime};

/// A record: key, (seq, value).
type Rec = (u8, (Seq, u8));
/// A window's row: key, values in fold order.
type Out = (u8, Vec<u8>);

/// Lists a window's values in fold order; refuses the value 255.
struct Values;

impl GroupFold<u8> for Values {
    type Value = u8;
    type State = Vec<u8>;
    type Output = Out;

    fn init(&self) -> Vec<u8> {
        Vec::new()
    }

    fn update(&self, state: &mut Vec<u8>, value: &u8, diff: isize) -> Result<(), String> {
        match *value {
            255 => Err("the value 255 is refused".to_string()),
            v => {
                state.extend(std::iter::repeat_n(v, diff as usize));
                Ok(())
            }
        }
    }

    fn output(&self, k: &u8, state: &Vec<u8>) -> Result<Out, String> {
        Ok((*k, state.clone()))
    }
}

/// The operator on `workers` workers: (table, refused seqs).
fn run(
    workers: usize,
    size: u64,
    slide: u64,
    epochs: &[Epoch<Rec>],
) -> (Updates<Out>, Updates<Seq>) {
    let out = run_unary(workers, epochs.to_vec(), move |rows| {
        let result = count_window_aggregate(rows, size, slide, Values, "Count");
        (result.table.map(Ok)).concat(result.rejected.map(|r| Err(r.seq)))
    });
    let (mut table, mut refused) = (Vec::new(), Vec::new());
    for (o, t, d) in out {
        match o {
            Ok(row) => table.push((row, t, d)),
            Err(seq) => refused.push((seq, t, d)),
        }
    }
    (table, refused)
}

/// The sequential model: per key, the rows in (system time, seq) order; window `k` holds rows
/// `k * slide .. k * slide + size` and is shown at its last row's system time, or refused with
/// the `seq` of its first refused value; consolidated, as the harness returns the output.
fn model(size: u64, slide: u64, epochs: &[Epoch<Rec>]) -> (Updates<Out>, Updates<Seq>) {
    let mut rows: Vec<(u8, SysTime, Seq, u8)> = Vec::new();
    for (time, epoch) in epochs.iter().enumerate() {
        for ((k, (seq, v)), _) in epoch {
            rows.push((*k, time as SysTime, *seq, *v));
        }
    }
    rows.sort();
    let (mut table, mut refused) = (Vec::new(), Vec::new());
    for key in 0..=u8::MAX {
        let of_key: Vec<_> = rows.iter().filter(|r| r.0 == key).collect();
        let (size, slide) = (size as usize, slide as usize);
        let mut start = 0;
        while start + size <= of_key.len() {
            let window = &of_key[start..start + size];
            let time = window[size - 1].1;
            match window.iter().find(|r| r.3 == 255) {
                Some(r) => refused.push((r.2, time, 1)),
                None => table.push(((key, window.iter().map(|r| r.3).collect()), time, 1)),
            }
            start += slide;
        }
    }
    consolidate_updates(&mut table);
    consolidate_updates(&mut refused);
    (table, refused)
}

fn rec(k: u8, seq: Seq, v: u8) -> (Rec, isize) {
    ((k, (seq, v)), 1)
}

/// Windows of 3 every 2 rows: key 0's fifth row completes its second window in the last
/// system time; key 1's window holding the refused value 255 (seq 3) is refused when it fires,
/// the next is not; a retraction (seq 9) is refused and numbers no row.
#[test]
fn sliding_windows_fire_on_their_last_row() {
    let epochs: Vec<Epoch<Rec>> = vec![
        vec![rec(0, 0, 10), rec(1, 1, 20), rec(0, 2, 11), rec(1, 3, 255)],
        vec![rec(1, 4, 21), rec(0, 5, 12), rec(1, 6, 22), rec(1, 7, 23)],
        vec![rec(0, 8, 13), ((1, (9, 24)), -1), rec(0, 10, 14)],
    ];
    for workers in [1, 2, 4] {
        let (table, refused) = run(workers, 3, 2, &epochs);
        assert_eq!(
            table,
            vec![
                ((0, vec![10, 11, 12]), 1, 1),
                ((0, vec![12, 13, 14]), 2, 1),
                ((1, vec![21, 22, 23]), 1, 1),
            ],
            "{workers} workers"
        );
        assert_eq!(refused, vec![(3, 1, 1), (9, 2, 1)], "{workers} workers");
    }
}

/// A row entered with diff 2 is two rows; records of one system time are folded in `seq`
/// order whatever their order of arrival.
#[test]
fn copies_are_rows_and_a_time_is_folded_in_seq_order() {
    let epochs: Vec<Epoch<Rec>> = vec![vec![rec(0, 3, 3), ((0, (1, 1)), 2), rec(0, 2, 2)]];
    for workers in [1, 2] {
        let (table, refused) = run(workers, 2, 2, &epochs);
        assert_eq!(
            table,
            vec![((0, vec![1, 1]), 0, 1), ((0, vec![2, 3]), 0, 1)]
        );
        assert_eq!(refused, vec![]);
    }
}

/// The state: a key keeps at most `ceil(size / slide)` open windows, and is freed when it has
/// none and its next row opens one (a tumbling window's key when the window fires).
#[test]
fn state_is_the_open_windows() {
    let mut logic = CountWindows {
        spec: Spec {
            fold: Values,
            size: 5,
            slide: 2,
        },
        keys: Default::default(),
    };
    let open = |logic: &CountWindows<u8, Values>| -> Vec<(u8, u64, Vec<u64>)> {
        let mut keys: Vec<_> = (logic.keys.iter())
            .map(|(k, w): (&u8, &KeyWindows<Vec<u8>>)| {
                (*k, w.phase, w.open.iter().map(|o| o.rows).collect())
            })
            .collect();
        keys.sort();
        keys
    };
    let mut fired = 0;
    for (time, seq) in (0..12).enumerate() {
        let records = vec![((0u8, (seq, 0u8)), 1)];
        logic.epoch(time as SysTime, &Watermark::Min, records, &mut |_| {
            fired += 1
        });
        let windows = open(&logic)[0].2.len();
        assert!(windows <= 3, "{windows} open windows after row {seq}");
    }
    // 12 rows: windows at 0, 2, 4, 6 fired; those at 8 and 10 hold 4 and 2 rows.
    assert_eq!(fired, 4);
    assert_eq!(open(&logic), vec![(0, 0, vec![4, 2])]);

    logic.spec = Spec {
        fold: Values,
        size: 2,
        slide: 3,
    };
    logic.keys.clear();
    let records = (0..5).map(|seq| ((seq as u8 % 2, (seq, 0u8)), 1)).collect();
    logic.epoch(0, &Watermark::Min, records, &mut |_| {});
    // Key 0's 3 rows fired a window and its next row opens one: freed; key 1's 2 rows fired a
    // window and its next row is in none.
    assert_eq!(open(&logic), vec![(1, 2, vec![])]);
    logic.end(&mut |_| {});
    assert_eq!(open(&logic), vec![]);
}

fn arb_rows() -> impl Strategy<Value = Vec<(u8, u8)>> {
    let value = (0u8..12).prop_map(|v| if v == 11 { 255 } else { v });
    prop::collection::vec((0u8..3, value), 0..24)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The operator equals the model, rows and refusals, on 1, 2 and 4 workers.
    #[test]
    fn count_windows_match_model(
        rows in arb_rows(),
        cuts in arb_cuts(24, 6),
        size in 1u64..5,
        slide in 1u64..5,
    ) {
        let records: Vec<Rec> = (rows.iter().enumerate())
            .map(|(i, &(k, v))| (k, (i as Seq, v)))
            .collect();
        let epochs = batch(&records, &cuts);
        let expected = model(size, slide, &epochs);
        for workers in [1, 2, 4] {
            prop_assert_eq!(run(workers, size, slide, &epochs), expected.clone(), "{} workers", workers);
        }
    }
}
