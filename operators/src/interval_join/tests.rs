//! The interval join on a hand-made script and against the sequential model over random
//! inputs (out of order, with late rows), windows, residuals, padded sides, batchings and 1, 2
//! and 4 workers.

use proptest::prelude::*;

use super::reference::{self, Side};
use super::{interval_join, Bounds, IntervalJoinConfig};
use crate::testing::{arb_cuts, batch, content_at, run_binary, Epoch, Updates};
use crate::watermark::watermarks;
use crate::{Seq, SysTime};

/// A record: key, (event time, seq, value).
type Rec = (u8, (i64, Seq, u8));
type Out = (u8, Option<u8>, Option<u8>);

/// The join's parameters: window, watermark delays, padded sides, with a residual or not.
#[derive(Clone, Copy, Debug)]
struct Params {
    lower: i64,
    upper: i64,
    delays: (i64, i64),
    pad: (bool, bool),
    residual: bool,
}

fn residual(l: &u8, r: &u8) -> bool {
    !(l + r).is_multiple_of(3)
}

fn output(k: &u8, l: Option<&u8>, r: Option<&u8>) -> Out {
    (*k, l.copied(), r.copied())
}

/// The operator on `workers` workers: (joined rows, refused seqs).
fn run(
    workers: usize,
    p: Params,
    left: &[Epoch<Rec>],
    right: &[Epoch<Rec>],
) -> (Updates<Out>, Updates<Seq>) {
    let out = run_binary(workers, left.to_vec(), right.to_vec(), move |l, r| {
        let time = |(_, (t, _, _)): &Rec| *t;
        let (dl, dr) = p.delays;
        let marks = (
            watermarks(l.clone(), time, move |m| m - dl, "Wl"),
            watermarks(r.clone(), time, move |m| m - dr, "Wr"),
        );
        let mut config = IntervalJoinConfig::new(Bounds::integers(p.lower, p.upper))
            .padded(p.pad.0, p.pad.1)
            .named("Interval");
        if p.residual {
            config = config.residual(residual);
        }
        let joined = interval_join(l, r, marks, config, output);
        joined
            .joined
            .map(Ok)
            .concat(joined.rejected.map(|r| Err(r.seq)))
    });
    let mut joined = Vec::new();
    let mut refused = Vec::new();
    for (o, t, d) in out {
        match o {
            Ok(row) => joined.push((row, t, d)),
            Err(seq) => refused.push((seq, t, d)),
        }
    }
    (joined, refused)
}

fn model(p: Params, left: &[Epoch<Rec>], right: &[Epoch<Rec>]) -> (Updates<Out>, Updates<Seq>) {
    let (dl, dr) = p.delays;
    let (late_l, late_r) = (move |m: &i64| m - dl, move |m: &i64| m - dr);
    let bounds = Bounds::integers(p.lower, p.upper);
    let check = |l: &u8, r: &u8| !p.residual || residual(l, r);
    reference::interval_join(
        Side {
            epochs: left,
            lateness: &late_l,
            padded: p.pad.0,
        },
        Side {
            epochs: right,
            lateness: &late_r,
            padded: p.pad.1,
        },
        &bounds,
        check,
        output,
    )
}

/// `l.t BETWEEN r.t - 2 AND r.t + 1` (`-2 <= l.t - r.t <= 1`), FULL, no delay.
#[test]
fn full_join_frees_rows_and_reports_late_ones() {
    let rec = |k, t, seq, v| ((k, (t, seq, v)), 1);
    let left = vec![
        vec![rec(0, 10, 1, 1)],
        vec![],
        vec![rec(0, 11, 2, 2)],
        vec![rec(0, 20, 3, 4)],
        vec![rec(0, 3, 4, 3)],
    ];
    let right = vec![
        vec![],
        vec![rec(0, 9, 1, 7)],
        vec![],
        vec![rec(0, 30, 2, 8)],
    ];
    let p = Params {
        lower: -2,
        upper: 1,
        delays: (0, 0),
        pad: (true, true),
        residual: false,
    };
    for workers in [1, 2, 4] {
        let (joined, refused) = run(workers, p, &left, &right);
        assert_eq!(
            joined,
            vec![
                // The end of input (W = +infinity) pads the rows at 30 (right) and 20 (left).
                ((0, None, Some(8)), 5, 1),
                // Epoch 1: the right row at 9 joins the left row at 10 (10 - 9 = 1).
                ((0, Some(1), Some(7)), 1, 1),
                // The left row at 11 may join right rows in [10, 13]: none came; at epoch 4
                // the watermark min(20, 30) passes 13, it is freed and padded.
                ((0, Some(2), None), 4, 1),
                ((0, Some(4), None), 5, 1),
            ],
            "{workers} workers"
        );
        // The left row at 3 arrives under the watermark 20: late, reported at epoch 4.
        assert_eq!(refused, vec![(4, 4, 1)]);
        assert_eq!((joined, refused), model(p, &left, &right));
    }
}

fn arb_rows() -> impl Strategy<Value = Vec<(u8, i64, u8)>> {
    prop::collection::vec((0u8..3, 0i64..20, 0u8..5), 0..12)
}

fn epochs(rows: &[(u8, i64, u8)], cuts: &[usize]) -> Vec<Epoch<Rec>> {
    let records: Vec<Rec> = (rows.iter().enumerate())
        .map(|(i, &(k, t, v))| (k, (t, i as Seq, v)))
        .collect();
    batch(&records, cuts)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// The operator equals the model at every system time before the end and after it, and
    /// refuses the same records, on 1, 2 and 4 workers.
    #[test]
    fn interval_join_matches_model(
        left in arb_rows(),
        right in arb_rows(),
        (left_cuts, right_cuts) in (arb_cuts(12, 5), arb_cuts(12, 5)),
        (lower, width) in (-6i64..4, -1i64..8),
        delays in (0i64..5, 0i64..5),
        pad in (any::<bool>(), any::<bool>()),
        residual in any::<bool>(),
    ) {
        let p = Params { lower, upper: lower + width, delays, pad, residual };
        let (left, right) = (epochs(&left, &left_cuts), epochs(&right, &right_cuts));
        let (joined, refused) = model(p, &left, &right);
        // The end of input is emitted at a system time the driver chooses: compare before it
        // and after it.
        let last = |e: &[Epoch<Rec>]| e.iter().rposition(|e| !e.is_empty()).map_or(0, |s| s + 1);
        let end = last(&left).max(last(&right)) as SysTime;
        for workers in [1, 2, 4] {
            let (out, late) = run(workers, p, &left, &right);
            for at in (0..end).chain([SysTime::MAX]) {
                prop_assert_eq!(content_at(&out, at), content_at(&joined, at), "at {} on {} workers", at, workers);
            }
            prop_assert_eq!(&late, &refused);
        }
    }
}
