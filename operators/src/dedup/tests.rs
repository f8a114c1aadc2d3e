//! Deduplication: the worked cases A02, A03, A05, A07 with their exact rows, refused input, and
//! every mode against the sequential model over random rows, batchings and worker counts.

use std::hash::Hash;

use differential_dataflow::ExchangeData;
use proptest::prelude::*;

use super::reference;
use super::{DedupConfig, DedupOrder, Deduplicate, Keep};
use crate::keyed_merge::Rejected;
use crate::testing::{batch, content_at, run_unary, Epoch, Updates};
use crate::{Change, ChangelogMode, RowKind, Seq, SysTime};

use RowKind::{Insert as I, UpdateAfter as UA, UpdateBefore as UB};

mod final_mode;

const LAST_BY_TIME: DedupConfig = DedupConfig::new(Keep::Last, DedupOrder::EventTime);
const FIRST_BY_TIME: DedupConfig = DedupConfig::new(Keep::First, DedupOrder::EventTime);
const LAST_BY_ARRIVAL: DedupConfig = DedupConfig::new(Keep::Last, DedupOrder::Arrival);
const FIRST_BY_ARRIVAL: DedupConfig = DedupConfig::new(Keep::First, DedupOrder::Arrival);

/// Both outputs of one run: the changelog as `Ok`, the refused rows as `Err`.
type Outcome<K, V> = Result<(K, Change<V>), (K, Rejected)>;

/// Runs the deduplication on `workers` threads; returns its changelog and refused rows.
fn run<K, V, E>(
    workers: usize,
    epochs: Vec<Epoch<(K, Change<V>)>>,
    config: DedupConfig,
    time_of: fn(&V) -> E,
) -> (Updates<(K, Change<V>)>, Updates<(K, Rejected)>)
where
    K: ExchangeData + Hash + Sync,
    V: ExchangeData + Sync,
    E: Ord + 'static,
{
    let out = run_unary(workers, epochs, move |c| {
        let merged = c.deduplicate(config, time_of);
        let refused = merged.rejected.map(Outcome::Err);
        merged.changelog.map(Outcome::Ok).concat(refused)
    });
    let (mut changelog, mut rejected) = (Vec::new(), Vec::new());
    for (outcome, sys, diff) in out {
        match outcome {
            Ok(change) => changelog.push((change, sys, diff)),
            Err(refused) => rejected.push((refused, sys, diff)),
        }
    }
    (changelog, rejected)
}

/// Numbers `rows` (key, row) as `+I` changes in arrival order.
fn inserts<K, V>(rows: Vec<(K, V)>) -> Vec<(K, Change<V>)> {
    let seq = 0..;
    seq.zip(rows)
        .map(|(seq, (k, v))| (k, Change::new(seq, I, v)))
        .collect()
}

/// The changelog in emission order (system time, then `seq`, then kind), rendered in `mode`:
/// `(system time, kind, key, row)`.
fn emitted<K: Clone, V: Clone>(
    changelog: &Updates<(K, Change<V>)>,
    mode: ChangelogMode,
) -> Vec<(SysTime, RowKind, K, V)> {
    let mut rows: Vec<_> = changelog
        .iter()
        .map(|((k, c), sys, diff)| {
            assert_eq!(*diff, 1, "every changelog row appears once");
            (*sys, c.seq, c.kind, k, &c.row)
        })
        .collect();
    rows.sort_by_key(|(sys, seq, kind, _, _)| (*sys, *seq, *kind));
    rows.into_iter()
        .filter_map(|(sys, _, kind, k, v)| Some((sys, mode.render(kind)?, k.clone(), v.clone())))
        .collect()
}

/// The changelog read as a collection (`+1` for `+I`/`+U`, `-1` for `-U`/`-D`), accumulated up
/// to system time `at`: the materialized table then.
fn table_at<K: Ord + Clone, V: Ord + Clone>(
    changelog: &Updates<(K, Change<V>)>,
    at: SysTime,
) -> Vec<((K, V), isize)> {
    let signed: Vec<_> = changelog
        .iter()
        .map(|((k, c), sys, diff)| {
            let sign = if c.kind.is_accumulate() { 1 } else { -1 };
            ((k.clone(), c.row.clone()), *sys, sign * diff)
        })
        .collect();
    content_at(&signed, at)
}

// ---- A02: versioned view by keep-last dedup (currency rates) ----

type Rate = (String, u32); // (update_time, rate); key: currency

fn currency_rates() -> Vec<(String, Change<Rate>)> {
    let rows = [
        ("09:00:00", "Yen", 102),
        ("09:00:00", "Euro", 114),
        ("09:00:00", "USD", 1),
        ("11:15:00", "Euro", 119),
        ("11:49:00", "Pounds", 108),
    ];
    let rows = rows.map(|(t, c, r)| (c.to_string(), (t.to_string(), r)));
    inserts(rows.to_vec())
}

fn rate_row(kind: RowKind, t: &str, c: &str, r: u32) -> (SysTime, RowKind, String, Rate) {
    (0, kind, c.to_string(), (t.to_string(), r))
}

#[test]
fn a02_versioned_view_upsert_and_retract() {
    for workers in [1, 2] {
        let epochs = batch(&currency_rates(), &[]);
        let (changelog, rejected) = run(workers, epochs, LAST_BY_TIME, |r: &Rate| r.0.clone());
        assert!(rejected.is_empty());
        // Consumer does not need update-before (the seed: the versioned view).
        assert_eq!(
            emitted(&changelog, ChangelogMode::Upsert),
            vec![
                rate_row(I, "09:00:00", "Yen", 102),
                rate_row(I, "09:00:00", "Euro", 114),
                rate_row(I, "09:00:00", "USD", 1),
                rate_row(UA, "11:15:00", "Euro", 119),
                rate_row(I, "11:49:00", "Pounds", 108),
            ]
        );
        // Consumer requires update-before (retract sink).
        assert_eq!(
            emitted(&changelog, ChangelogMode::Retract),
            vec![
                rate_row(I, "09:00:00", "Yen", 102),
                rate_row(I, "09:00:00", "Euro", 114),
                rate_row(I, "09:00:00", "USD", 1),
                rate_row(UB, "09:00:00", "Euro", 114),
                rate_row(UA, "11:15:00", "Euro", 119),
                rate_row(I, "11:49:00", "Pounds", 108),
            ]
        );
    }
}

// ---- A03: keep-last on event time, ties and out-of-order rows ----

type Msg = (u32, String, u64); // (a, c, rowtime ms); key: b

fn table_t() -> Vec<(u32, Change<Msg>)> {
    let rows = [
        (1, 1, "Hi", 1),
        (1, 3, "Hello", 3),
        (1, 2, "Hello world", 2),
        (2, 3, "I am fine.", 3),
        (2, 6, "Comment#1", 6),
        (3, 5, "Comment#2", 5),
        (3, 4, "Comment#2", 4),
        (4, 4, "Comment#3", 4),
    ];
    inserts(rows.map(|(a, b, c, t)| (b, (a, c.to_string(), t))).to_vec())
}

fn msg(a: u32, c: &str, t: u64) -> Msg {
    (a, c.to_string(), t)
}

#[test]
fn a03_keep_last_rowtime_raw_changelog_and_state() {
    let epochs = batch(&table_t(), &[]);
    let (changelog, _) = run(2, epochs, LAST_BY_TIME, |m: &Msg| m.2);
    let row = |kind, a, b, c, t| (0, kind, b, msg(a, c, t));
    assert_eq!(
        emitted(&changelog, ChangelogMode::Retract),
        vec![
            row(I, 1, 1, "Hi", 1),
            row(I, 1, 3, "Hello", 3),
            row(I, 1, 2, "Hello world", 2),
            row(UB, 1, 3, "Hello", 3), // equal time: the later arrival replaces
            row(UA, 2, 3, "I am fine.", 3),
            row(I, 2, 6, "Comment#1", 6),
            row(I, 3, 5, "Comment#2", 5),
            row(I, 3, 4, "Comment#2", 4),
            row(UB, 3, 4, "Comment#2", 4),
            row(UA, 4, 4, "Comment#3", 4),
        ]
    );
    // The final materialized state and, the whole input being one system time, the
    // compact-changes variant (A10): the net change per key, every row an insert.
    let state = vec![
        ((1, msg(1, "Hi", 1)), 1),
        ((2, msg(1, "Hello world", 2)), 1),
        ((3, msg(2, "I am fine.", 3)), 1),
        ((4, msg(4, "Comment#3", 4)), 1),
        ((5, msg(3, "Comment#2", 5)), 1),
        ((6, msg(2, "Comment#1", 6)), 1),
    ];
    assert_eq!(table_at(&changelog, 0), state);
}

#[test]
fn a10_compact_changes_is_the_consolidated_changelog_per_system_time() {
    let epochs = batch(&table_t(), &[]);
    let compacted = run_unary(2, epochs, |c| {
        c.deduplicate(LAST_BY_TIME, |m: &Msg| m.2)
            .changelog
            .explode(|(b, c)| {
                let sign = if c.kind.is_accumulate() { 1 } else { -1 };
                Some(((b, c.row), sign))
            })
            .consolidate()
    });
    let inserted = |a, b, c, t| ((b, msg(a, c, t)), 0, 1);
    assert_eq!(
        compacted,
        vec![
            inserted(1, 1, "Hi", 1),
            inserted(1, 2, "Hello world", 2),
            inserted(2, 3, "I am fine.", 3),
            inserted(4, 4, "Comment#3", 4),
            inserted(3, 5, "Comment#2", 5),
            inserted(2, 6, "Comment#1", 6),
        ]
    );
}

// ---- A05: the row-time keep-last operator's flags and state expiry ----

type Val = (u32, u64); // (val, rowtime); key: key

/// The A05 script: steps 1-3, (watermark 102, snapshot and restore), steps 6-8, (watermark
/// 302, state TTL expires), steps 11-12. Each watermark segment is one system time; with
/// `expiry` an empty system time (2) lets a retention of 2 epochs pass before steps 11-12.
fn a05_epochs(expiry: bool) -> Vec<Epoch<(String, Change<Val>)>> {
    let rows = [
        ("key1", 13, 99),
        ("key1", 12, 100),
        ("key2", 11, 101),
        ("key1", 12, 300),
        ("key2", 11, 301),
        ("key3", 5, 299),
        ("key1", 12, 400),
        ("key2", 11, 401),
    ];
    let rows = inserts(rows.map(|(k, v, t)| (k.to_string(), (v, t))).to_vec());
    if expiry {
        batch(&rows, &[3, 6, 6])
    } else {
        batch(&rows[..6], &[3])
    }
}

fn a05_row(
    sys: SysTime,
    kind: RowKind,
    key: &str,
    v: u32,
    t: u64,
) -> (SysTime, RowKind, String, Val) {
    (sys, kind, key.to_string(), (v, t))
}

/// The A05 expectation for steps 1-9 (and 11-13 at system time 3 when `expiry`), with
/// update-before (`-U` rows) and `+I` rows shown as the flags say.
fn a05_expected(mode: ChangelogMode, expiry: bool) -> Vec<(SysTime, RowKind, String, Val)> {
    let all = [
        a05_row(0, I, "key1", 13, 99),
        a05_row(0, UB, "key1", 13, 99),
        a05_row(0, UA, "key1", 12, 100),
        a05_row(0, I, "key2", 11, 101),
        a05_row(1, UB, "key1", 12, 100),
        a05_row(1, UA, "key1", 12, 300),
        a05_row(1, UB, "key2", 11, 101),
        a05_row(1, UA, "key2", 11, 301),
        a05_row(1, I, "key3", 5, 299),
        a05_row(3, I, "key1", 12, 400),
        a05_row(3, I, "key2", 11, 401),
    ];
    let steps = if expiry { &all[..] } else { &all[..9] };
    steps
        .iter()
        .filter_map(|(sys, kind, k, v)| Some((*sys, mode.render(*kind)?, k.clone(), *v)))
        .collect()
}

#[test]
fn a05_flag_combinations_without_and_with_state_expiry() {
    // UB = true (INS either); UB = false, INS = true; UB = false, INS = false.
    let modes = [
        ChangelogMode::Retract,
        ChangelogMode::Upsert,
        ChangelogMode::UpsertNoInsert,
    ];
    for (expiry, config) in [
        (false, LAST_BY_TIME),
        (true, LAST_BY_TIME.with_idle_state_retention(2)),
    ] {
        let (changelog, _) = run(2, a05_epochs(expiry), config, |v: &Val| v.1);
        for mode in modes {
            assert_eq!(
                emitted(&changelog, mode),
                a05_expected(mode, expiry),
                "{mode:?}"
            );
        }
    }
    // The spelled-out UB = false, INS = false form: every row is a +U.
    let (changelog, _) = run(1, a05_epochs(false), LAST_BY_TIME, |v: &Val| v.1);
    let kinds: Vec<_> = emitted(&changelog, ChangelogMode::UpsertNoInsert)
        .into_iter()
        .map(|(_, kind, _, _)| kind)
        .collect();
    assert_eq!(kinds, vec![UA; 6]);
}

#[test]
fn state_retention_forgets_only_idle_keys() {
    // Without a retention, steps 11-12 replace the kept rows (-U/+U), not +I.
    let (changelog, _) = run(2, a05_epochs(true), LAST_BY_TIME, |v: &Val| v.1);
    let late: Vec<_> = emitted(&changelog, ChangelogMode::Retract)
        .into_iter()
        .filter(|row| row.0 == 3)
        .collect();
    assert_eq!(
        late,
        vec![
            a05_row(3, UB, "key1", 12, 300),
            a05_row(3, UA, "key1", 12, 400),
            a05_row(3, UB, "key2", 11, 301),
            a05_row(3, UA, "key2", 11, 401),
        ]
    );
    // A retention of 3 epochs: the rows of system time 1 are still kept at system time 3.
    let config = LAST_BY_TIME.with_idle_state_retention(3);
    let (kept, _) = run(2, a05_epochs(true), config, |v: &Val| v.1);
    assert_eq!(kept, changelog);
}

// ---- A07: processing-time (arrival) dedup ----

type Tuple = (u32, String); // (a, c); key: b

fn tuple_data3() -> Vec<(u32, Change<Tuple>)> {
    let hellos = ["Hi", "Hello", "Hello world", "Hello world, how are you?"];
    let rows = (1..=21u32).map(|a| {
        let b = match a {
            1 => 1,
            2..=3 => 2,
            4..=6 => 3,
            7..=10 => 4,
            11..=15 => 5,
            _ => 6,
        };
        let c = match a {
            1..=4 => hellos[a as usize - 1].to_string(),
            5 => "I am fine.".to_string(),
            6 => "Luke Skywalker".to_string(),
            _ => format!("Comment#{}", a - 6),
        };
        (b, (a, c))
    });
    inserts(rows.collect())
}

fn tuple(a: u32, b: u32, c: &str) -> ((u32, Tuple), isize) {
    ((b, (a, c.to_string())), 1)
}

#[test]
fn a07_first_and_last_row_by_arrival() {
    let epochs = batch(&tuple_data3(), &[5, 12]);
    // Operation 1: keep first, insert-only.
    let (first, _) = run(2, epochs.clone(), FIRST_BY_ARRIVAL, |_: &Tuple| ());
    assert!(first.iter().all(|((_, c), _, _)| c.kind == I));
    assert_eq!(
        table_at(&first, 2),
        vec![
            tuple(1, 1, "Hi"),
            tuple(2, 2, "Hello"),
            tuple(4, 3, "Hello world, how are you?"),
            tuple(7, 4, "Comment#1"),
            tuple(11, 5, "Comment#5"),
            tuple(16, 6, "Comment#10"),
        ]
    );
    // Operation 2: keep last; its final state, and the changelog of key b = 2.
    let (last, _) = run(2, epochs, LAST_BY_ARRIVAL, |_: &Tuple| ());
    assert_eq!(
        table_at(&last, 2),
        vec![
            tuple(1, 1, "Hi"),
            tuple(3, 2, "Hello world"),
            tuple(6, 3, "Luke Skywalker"),
            tuple(10, 4, "Comment#4"),
            tuple(15, 5, "Comment#9"),
            tuple(21, 6, "Comment#15"),
        ]
    );
    let b2: Vec<_> = emitted(&last, ChangelogMode::Retract)
        .into_iter()
        .filter(|(_, _, b, _)| *b == 2)
        .map(|(_, kind, b, (a, c))| (kind, a, b, c))
        .collect();
    let hello = |kind, a, c: &str| (kind, a, 2, c.to_string());
    assert_eq!(
        b2,
        vec![
            hello(I, 2, "Hello"),
            hello(UB, 2, "Hello"),
            hello(UA, 3, "Hello world"),
        ]
    );
}

#[test]
fn identical_rows_are_suppressed_by_arrival_but_not_by_event_time() {
    let rows = inserts(vec![(7u8, (1u8, 1u8)), (7, (1, 1))]);
    let by_arrival = run(1, batch(&rows, &[]), LAST_BY_ARRIVAL, |_: &(u8, u8)| ()).0;
    assert_eq!(by_arrival, vec![((7, Change::new(0, I, (1, 1))), 0, 1)]);
    let by_time = run(1, batch(&rows, &[]), LAST_BY_TIME, |r: &(u8, u8)| r.0).0;
    assert_eq!(
        emitted(&by_time, ChangelogMode::Retract),
        vec![(0, I, 7, (1, 1)), (0, UB, 7, (1, 1)), (0, UA, 7, (1, 1))]
    );
}

// ---- refused input (A14) ----

#[test]
fn non_insert_rows_and_retractions_are_refused_with_their_reason() {
    let rows = vec![
        ((1u8, Change::new(0, I, 5u8)), 1),
        ((1u8, Change::new(1, RowKind::Delete, 5u8)), 1),
        ((1u8, Change::new(2, UA, 6u8)), 1),
        ((2u8, Change::new(3, I, 9u8)), -1),
    ];
    let (changelog, rejected) = run(2, vec![rows], LAST_BY_TIME, |v: &u8| *v);
    assert_eq!(changelog, vec![((1, Change::new(0, I, 5)), 0, 1)]);
    let refused = |k: u8, seq: Seq, reason: &str| {
        let reason = reason.to_string();
        ((k, Rejected::invalid(seq, reason)), 0, 1)
    };
    assert_eq!(
        rejected,
        vec![
            refused(
                1,
                1,
                "-D row refused: dedup input must be insert-only (rule A14)"
            ),
            refused(
                1,
                2,
                "+U row refused: dedup input must be insert-only (rule A14)"
            ),
            refused(
                2,
                3,
                "retraction of a write: merge input must be insert-only"
            ),
        ]
    );
}

// ---- every mode against the sequential model ----

type Row = (u8, u8); // (event time, value); key: u8

/// Random rows (keys 0..4, event times 0..6, values 0..3, a few non-inserts), random cuts
/// into system times, and a random idle-state retention (none, 1 or 2 epochs).
fn rows_and_cuts() -> impl Strategy<Value = (Vec<(u8, Change<Row>)>, Vec<usize>, Option<u64>)> {
    let row = (0u8..4, prop::bool::weighted(0.92), 0u8..6, 0u8..3);
    (
        prop::collection::vec(row, 0..40),
        prop::collection::vec(0usize..40, 0..6),
        prop::option::of(1u64..3),
    )
        .prop_map(|(rows, mut cuts, retention)| {
            cuts.sort();
            let seq = 0..;
            let rows = seq
                .zip(rows)
                .map(|(seq, (k, insert, t, v))| {
                    let kind = if insert { I } else { RowKind::Delete };
                    (k, Change::new(seq, kind, (t, v)))
                })
                .collect();
            (rows, cuts, retention)
        })
}

fn check_against_model(
    config: DedupConfig,
    rows: &[(u8, Change<Row>)],
    cuts: &[usize],
    retention: Option<u64>,
) -> Result<(), TestCaseError> {
    let config = match retention {
        Some(r) => config.with_idle_state_retention(r),
        None => config,
    };
    let epochs = batch(rows, cuts);
    let script: Vec<Vec<_>> = epochs
        .iter()
        .map(|e| e.iter().map(|(r, _)| r.clone()).collect())
        .collect();
    let expected = reference::deduplicate(&script, config, |r: &Row| r.0);
    for workers in [1, 2, 4] {
        let (changelog, rejected) = run(workers, epochs.clone(), config, |r: &Row| r.0);
        prop_assert_eq!(&changelog, &expected.changelog, "{} workers", workers);
        prop_assert_eq!(&rejected, &expected.rejected, "{} workers", workers);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn keep_last_by_event_time_matches_model((rows, cuts, ttl) in rows_and_cuts()) {
        check_against_model(LAST_BY_TIME, &rows, &cuts, ttl)?;
    }

    #[test]
    fn keep_first_by_event_time_matches_model((rows, cuts, ttl) in rows_and_cuts()) {
        check_against_model(FIRST_BY_TIME, &rows, &cuts, ttl)?;
    }

    #[test]
    fn keep_last_by_arrival_matches_model((rows, cuts, ttl) in rows_and_cuts()) {
        check_against_model(LAST_BY_ARRIVAL, &rows, &cuts, ttl)?;
    }

    #[test]
    fn keep_first_by_arrival_matches_model((rows, cuts, ttl) in rows_and_cuts()) {
        check_against_model(FIRST_BY_ARRIVAL, &rows, &cuts, ttl)?;
    }
}
