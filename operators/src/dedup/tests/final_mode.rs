//! Keep-first on watermark (rule A9): Flink's harness scenario with explicit watermarks, and
//! the operator against the sequential model with data-level watermarks.

use differential_dataflow::AsCollection;
use proptest::prelude::*;
use timely::dataflow::operators::vec::Broadcast;

use super::{inserts, Outcome};
use crate::dedup::{reference, Deduplicate, OnWatermark};
use crate::keyed_merge::Rejected;
use crate::retention::Retention;
use crate::testing::{batch, run_binary, run_unary, Epoch, Updates};
use crate::watermark::{watermarks, Watermark};
use crate::{Change, RowKind, SysTime};

type Val = (u32, i64); // (val, rowtime); key: key

fn split<K, V>(out: Updates<Outcome<K, V>>) -> (Updates<(K, Change<V>)>, Updates<(K, Rejected)>) {
    let (mut changelog, mut rejected) = (Vec::new(), Vec::new());
    for (outcome, sys, diff) in out {
        match outcome {
            Ok(change) => changelog.push((change, sys, diff)),
            Err(refused) => rejected.push((refused, sys, diff)),
        }
    }
    (changelog, rejected)
}

/// Flink's `RowTimeDeduplicateKeepFirstRowFunctionTest::testRowTimeDeduplicateKeepFirstRow`,
/// tests 1 and 2 (not the state-TTL steps). Each Flink watermark `w` is a candidate at the
/// epoch of the rows before it, so it is in force from the next epoch on.
#[test]
fn flink_harness_keep_first_on_watermark() {
    let rows = [
        ("key1", 0, 1), // behind watermark 50: late
        ("key1", 14, 101),
        ("key1", 13, 99),
        ("key1", 15, 99), // equal time: the earlier arrival (13) stays
        ("key1", 12, 100),
        ("key2", 11, 101),
        ("key1", 12, 300), // key1 and key2 already emitted: ignored
        ("key2", 11, 301),
        ("key3", 5, 299),
    ];
    let rows = inserts(rows.map(|(k, v, t)| (k.to_string(), (v, t))).to_vec());
    let epochs = batch(&rows, &[0, 6]);
    let marks: Vec<Epoch<Watermark<i64>>> =
        [50, 102, 302].map(|w| vec![(Watermark::At(w), 1)]).to_vec();
    for workers in [1, 2] {
        let out = run_binary(workers, epochs.clone(), marks.clone(), |rows, marks| {
            let marks = marks.inner.broadcast().as_collection();
            let merged =
                rows.deduplicate_first_on_watermark(|v: &Val| v.1, marks, OnWatermark::new());
            let refused = merged.rejected.map(Outcome::Err);
            merged.changelog.map(Outcome::Ok).concat(refused)
        });
        let (changelog, rejected) = split(out);
        let insert = |sys, seq, k: &str, v, t| {
            (
                (k.to_string(), Change::new(seq, RowKind::Insert, (v, t))),
                sys,
                1,
            )
        };
        assert_eq!(
            changelog,
            vec![
                insert(2, 2, "key1", 13, 99), // watermark 102
                insert(2, 5, "key2", 11, 101),
                insert(3, 8, "key3", 5, 299), // watermark 302
            ]
        );
        let reason = "late row: event time 1 is behind the watermark 50".to_string();
        let late = Rejected::late(0, reason);
        assert_eq!(rejected, vec![(("key1".to_string(), late), 1, 1)]);
    }
}

type Row = (i64, u8); // (event time, value); key: u8

/// Random rows (keys 0..4, event times 0..6, values 0..3, a few non-inserts), random cuts and
/// a random allowed lateness 0..3.
fn rows_and_cuts() -> impl Strategy<Value = (Vec<(u8, Change<Row>)>, Vec<usize>, i64)> {
    let row = (0u8..4, prop::bool::weighted(0.92), 0i64..6, 0u8..3);
    (
        prop::collection::vec(row, 0..40),
        prop::collection::vec(0usize..40, 0..8),
        0i64..3,
    )
        .prop_map(|(rows, mut cuts, lateness)| {
            cuts.sort();
            let seq = 0..;
            let rows = seq
                .zip(rows)
                .map(|(seq, (k, insert, t, v))| {
                    let kind = if insert {
                        RowKind::Insert
                    } else {
                        RowKind::UpdateAfter
                    };
                    (k, Change::new(seq, kind, (t, v)))
                })
                .collect();
            (rows, cuts, lateness)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20))]
    #[test]
    fn keep_first_on_watermark_matches_model((rows, cuts, lateness) in rows_and_cuts()) {
        let epochs = batch(&rows, &cuts);
        let script: Vec<Vec<_>> = epochs
            .iter()
            .map(|e| e.iter().map(|(r, _)| r.clone()).collect())
            .collect();
        let expected = reference::first_on_watermark(&script, |r: &Row| r.0, |m: &i64| m - lateness, None);
        for workers in [1, 2, 4] {
            let out = run_unary(workers, epochs.clone(), move |c| {
                let time = |(_, ch): &(u8, Change<Row>)| ch.row.0;
                let marks = watermarks(c.clone(), time, move |m: &i64| m - lateness, "Wm");
                let merged = c.deduplicate_first_on_watermark(|r: &Row| r.0, marks, OnWatermark::new());
                let refused = merged.rejected.map(Outcome::Err);
                merged.changelog.map(Outcome::Ok).concat(refused)
            });
            let (changelog, rejected) = split(out);
            prop_assert_eq!(&changelog, &expected.changelog, "{} workers", workers);
            prop_assert_eq!(&rejected, &expected.rejected, "{} workers", workers);
        }
    }

    /// With a retention of the emitted flags (0 to 3), on 1 and 2 workers.
    #[test]
    fn keep_first_on_watermark_with_retention_matches_model(
        (rows, cuts, lateness) in rows_and_cuts(),
        ttl in 0i64..4,
    ) {
        let epochs = batch(&rows, &cuts);
        let script: Vec<Vec<_>> = epochs
            .iter()
            .map(|e| e.iter().map(|(r, _)| r.clone()).collect())
            .collect();
        let retention = Retention::millis(ttl);
        let lower = move |m: &i64| m - lateness;
        let expected = reference::first_on_watermark(&script, |r: &Row| r.0, lower, Some(&retention));
        for workers in [1, 2] {
            let out = run_unary(workers, epochs.clone(), move |c| {
                let time = |(_, ch): &(u8, Change<Row>)| ch.row.0;
                let marks = watermarks(c.clone(), time, lower, "Wm");
                let ttl = Retention::millis(ttl);
                let merged = c.deduplicate_first_on_watermark(|r: &Row| r.0, marks, OnWatermark::new().retention(ttl).named("D"));
                let refused = merged.rejected.map(Outcome::Err);
                merged.changelog.map(Outcome::Ok).concat(refused)
            });
            let (changelog, rejected) = split(out);
            prop_assert_eq!(&changelog, &expected.changelog, "{} workers", workers);
            prop_assert_eq!(&rejected, &expected.rejected, "{} workers", workers);
        }
    }
}

/// Flink's `RowTimeDeduplicateKeepFirstRowFunctionTest`, the state-TTL part in our clock: a key
/// re-emits after its flag expired. Lateness 0, retention 10: the watermark 30 (epoch 2) emits
/// `a`@1 and `b`@25, then passes 1 + 10, so `a`'s flag is gone and `a`@31 is a first row again;
/// `b`'s flag (25 + 10 = 35) is not passed by the watermark 30, so `b`@32 is ignored. The
/// candidates `c`@30 and `a`@31 are emitted when the input ends (epoch 3).
#[test]
fn emitted_flag_expires_with_the_retention() {
    let rows = inserts(vec![
        ('a', (1i64, 0u8)),
        ('b', (25, 0)),
        ('c', (30, 0)),
        ('a', (31, 1)),
        ('b', (32, 1)),
    ]);
    let epochs = batch(&rows, &[1, 3]);
    let insert =
        |sys: SysTime, seq, k, t, v| ((k, Change::new(seq, RowKind::Insert, (t, v))), sys, 1);
    let want = vec![
        insert(2, 0, 'a', 1, 0),
        insert(3, 3, 'a', 31, 1), // re-emitted after expiry
        insert(2, 1, 'b', 25, 0),
        insert(3, 2, 'c', 30, 0),
    ];
    let script: Vec<Vec<_>> = (epochs.iter())
        .map(|e| e.iter().map(|(r, _)| r.clone()).collect())
        .collect();
    let ttl = Retention::millis(10);
    let model = reference::first_on_watermark(&script, |r: &Row| r.0, |m: &i64| *m, Some(&ttl));
    assert_eq!(model.changelog, want);
    for workers in [1, 2] {
        let out = run_unary(workers, epochs.clone(), |c| {
            let time = |(_, ch): &(char, Change<Row>)| ch.row.0;
            let marks = watermarks(c.clone(), time, |m: &i64| *m, "Wm");
            let ttl = Retention::millis(10);
            c.deduplicate_first_on_watermark(
                |r: &Row| r.0,
                marks,
                OnWatermark::new().retention(ttl).named("D"),
            )
            .changelog
        });
        assert_eq!(out, want, "{workers} workers");
    }
}

#[test]
fn waiting_candidates_fire_when_the_input_closes() {
    // Two epochs with rows, then two empty ones: the candidates the watermark never passed
    // fire when the input closes, at the system time it had advanced to (4).
    let rows = inserts(vec![(1u8, (4i64, 0u8)), (2, (9, 0)), (1, (2, 1))]);
    let mut epochs = batch(&rows, &[2]);
    epochs.extend([Vec::new(), Vec::new()]);
    let out = run_unary(2, epochs, |c| {
        let marks = watermarks(
            c.clone(),
            |(_, ch): &(u8, Change<Row>)| ch.row.0,
            |m: &i64| *m,
            "Wm",
        );
        c.deduplicate_first_on_watermark(|r: &Row| r.0, marks, OnWatermark::new())
            .changelog
    });
    let insert =
        |sys: SysTime, seq, k, t, v| ((k, Change::new(seq, RowKind::Insert, (t, v))), sys, 1);
    // Epoch 1 is under W = 9: time 2 is late, so key 1 keeps its candidate at time 4, which
    // W = 9 passes at epoch 1; key 2's candidate at 9 waits for the end (epoch 4).
    assert_eq!(out, vec![insert(1, 0, 1, 4, 0), insert(4, 1, 2, 9, 0)]);
}
