//! Final-mode session windows on hand-made scripts and against the sequential model over
//! random inputs (out of order, with late rows and bridges), gaps, delays, lateness,
//! batchings and 1, 2 and 4 workers.

use proptest::prelude::*;

use super::session_aggregate_final;
use super::session_reference::{sessions_final, Rules};
use crate::group_aggregate::GroupFold;
use crate::testing::{arb_cuts, batch, content_at, run_unary, Epoch, Updates};
use crate::watermark::watermarks;
use crate::{Seq, SysTime};

/// A record: key, (event time, seq, value).
type Rec = (u8, (i64, Seq, u8));
/// A session's row: key, start, end, values in `seq` order.
type Out = (u8, i64, i64, Vec<u8>);

/// Lists a session's values in fold order: any order but `seq`'s shows.
struct Values;

impl GroupFold<(u8, i64, i64)> for Values {
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

    fn output(&self, (k, start, end): &(u8, i64, i64), state: &Vec<u8>) -> Result<Out, String> {
        Ok((*k, *start, *end, state.clone()))
    }
}

/// Gap, watermark delay and allowed lateness.
#[derive(Clone, Copy, Debug)]
struct Params {
    gap: i64,
    delay: i64,
    lateness: i64,
}

/// The operator on `workers` workers: (table, refused seqs).
fn run(workers: usize, p: Params, epochs: &[Epoch<Rec>]) -> (Updates<Out>, Updates<Seq>) {
    let out = run_unary(workers, epochs.to_vec(), move |rows| {
        let time = |(_, (t, _, _)): &Rec| *t;
        let marks = watermarks(rows.clone(), time, move |m| m - p.delay, "Wm");
        let end = move |t: &i64| t + p.gap;
        let late = move |t: &i64| t + p.lateness;
        let result = session_aggregate_final(rows, marks, Values, end, late, "Session");
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

fn model(p: Params, epochs: &[Epoch<Rec>]) -> (Updates<Out>, Updates<Seq>) {
    let rules = Rules {
        end: &move |t: &i64| t + p.gap,
        lateness: &move |t: &i64| t + p.lateness,
        mark: &move |m: &i64| m - p.delay,
        invalid: &|v: &u8| *v == 255,
    };
    sessions_final(epochs, &rules, |k, start, end, values: &[&u8]| {
        (*k, *start, *end, values.iter().map(|v| **v).collect())
    })
}

fn rec(k: u8, t: i64, seq: Seq, v: u8) -> (Rec, isize) {
    ((k, (t, seq, v)), 1)
}

/// Case E02's rows (gap 5, delay 10), one an epoch: the row at 4 bridges {1, 2} and {8} before
/// either fired; everything fires at the end of input, once.
#[test]
fn an_out_of_order_row_merges_sessions_before_they_fire() {
    let epochs: Vec<Epoch<Rec>> = [(0, 1), (0, 2), (0, 8), (1, 9), (0, 4), (0, 16)]
        .iter()
        .enumerate()
        .map(|(i, &(k, t))| vec![rec(k, t, i as Seq, t as u8)])
        .collect();
    let p = Params {
        gap: 5,
        delay: 10,
        lateness: 0,
    };
    for workers in [1, 2, 4] {
        let (table, refused) = run(workers, p, &epochs);
        assert_eq!(
            table,
            vec![
                ((0, 1, 13, vec![1, 2, 8, 4]), 6, 1),
                ((0, 16, 21, vec![16]), 6, 1),
                ((1, 9, 14, vec![9]), 6, 1),
            ],
            "{workers} workers"
        );
        assert_eq!(refused, vec![]);
        assert_eq!((table, refused), model(p, &epochs));
    }
}

/// Gap 3, no delay, lateness 6: {0} and {5} fire under the watermarks 5 and 12; the row at 1
/// (`1 + 6 < 12`) is refused, the row at 6 revises {5} at once; a row at 9 with a value the
/// fold refuses bridges nothing, the next row at 9 bridges {5, 6} (fired) and {12} (not yet):
/// the fired row is retracted, the merged session shown when the watermark reaches its end.
#[test]
fn late_rows_revise_and_bridge_fired_sessions() {
    let epochs: Vec<Epoch<Rec>> = vec![
        vec![rec(0, 0, 1, 0)],
        vec![rec(0, 5, 2, 5)],
        vec![rec(0, 12, 3, 12)],
        vec![rec(0, 1, 4, 1), rec(0, 6, 5, 6)],
        vec![rec(0, 9, 6, 255), rec(0, 9, 7, 9)],
        vec![rec(0, 20, 8, 20)],
    ];
    let p = Params {
        gap: 3,
        delay: 0,
        lateness: 6,
    };
    for workers in [1, 2, 4] {
        let (table, refused) = run(workers, p, &epochs);
        assert_eq!(
            table,
            vec![
                ((0, 0, 3, vec![0]), 2, 1),
                ((0, 5, 9, vec![5, 6]), 3, 1),
                ((0, 5, 9, vec![5, 6]), 4, -1),
                ((0, 5, 15, vec![5, 12, 6, 9]), 6, 1),
                ((0, 20, 23, vec![20]), 6, 1),
            ],
            "{workers} workers"
        );
        assert_eq!(refused, vec![(4, 3, 1), (6, 4, 1)]);
        assert_eq!((table, refused), model(p, &epochs));
    }
}

fn arb_rows() -> impl Strategy<Value = Vec<(u8, i64, u8)>> {
    let value = (0u8..6).prop_map(|v| if v == 5 { 255 } else { v });
    prop::collection::vec((0u8..3, 0i64..30, value), 0..16)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The operator equals the model at every system time before the end and after it, and
    /// refuses the same records, on 1, 2 and 4 workers.
    #[test]
    fn sessions_match_model(
        rows in arb_rows(),
        cuts in arb_cuts(16, 6),
        gap in 1i64..6,
        delay in 0i64..6,
        lateness in 0i64..6,
    ) {
        let p = Params { gap, delay, lateness };
        let records: Vec<Rec> = (rows.iter().enumerate())
            .map(|(i, &(k, t, v))| (k, (t, i as Seq, v)))
            .collect();
        let epochs = batch(&records, &cuts);
        let (table, refused) = model(p, &epochs);
        let end = epochs.iter().rposition(|e| !e.is_empty()).map_or(0, |s| s + 1) as SysTime;
        for workers in [1, 2, 4] {
            let (out, late) = run(workers, p, &epochs);
            for at in (0..end).chain([SysTime::MAX]) {
                prop_assert_eq!(content_at(&out, at), content_at(&table, at), "at {} on {} workers", at, workers);
            }
            prop_assert_eq!(&late, &refused);
        }
    }
}
