//! The versioned table on the worked case A01 and against its sequential reference model.

use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use super::reference::Reference;
use super::{versions_from_changelog, HistoryRow, VersionedTable};
use crate::testing::{batch, content_at, run_unary, Epoch};
use crate::{Change, RowKind, SysTime, Version};

/// A products row: (update_time in ms, product_name, price).
type Product = (i64, String, String);

/// "HH:MM:SS" as milliseconds since midnight.
fn hms(s: &str) -> i64 {
    let parts: Vec<i64> = s.split(':').map(|p| p.parse().expect("a number")).collect();
    ((parts[0] * 60 + parts[1]) * 60 + parts[2]) * 1000
}

/// The products changelog of case A01 (Flink's versioned_tables.md), seq = line number.
fn products() -> Vec<(String, Change<Product>)> {
    let lines = [
        ("+I", "00:01:00", "p_001", "scooter", "11.11"),
        ("+I", "00:02:00", "p_002", "basketball", "23.11"),
        ("-U", "12:00:00", "p_001", "scooter", "11.11"),
        ("+U", "12:00:00", "p_001", "scooter", "12.99"),
        ("-U", "12:00:00", "p_002", "basketball", "23.11"),
        ("+U", "12:00:00", "p_002", "basketball", "19.99"),
        ("-D", "18:00:00", "p_001", "scooter", "12.99"),
    ];
    lines
        .iter()
        .enumerate()
        .map(|(seq, (kind, time, id, name, price))| {
            let row = (hms(time), name.to_string(), price.to_string());
            let kind = kind.parse::<RowKind>().expect("a row kind");
            (id.to_string(), Change::new(seq as u64, kind, row))
        })
        .collect()
}

fn product(time: &str, name: &str, price: &str) -> Product {
    (hms(time), name.to_string(), price.to_string())
}

/// The snapshots of the products table as of each of `times`, tagged with the time: one
/// table, one arrangement, one reader per time. Returns the content at the end of the input.
fn snapshots(
    workers: usize,
    epochs: Vec<Epoch<(String, Change<Product>)>>,
    times: &[i64],
) -> Vec<((i64, String, Product), isize)> {
    let last = (epochs.len() - 1) as SysTime;
    let times = times.to_vec();
    let out = run_unary(workers, epochs, move |c| {
        let table = VersionedTable::new(versions_from_changelog(c, |r: &Product| r.0), "P");
        let mut all: Vec<_> = times
            .iter()
            .map(|&t| table.as_of(t).map(move |(k, row)| (t, k, row)))
            .collect();
        let first = all.pop().expect("some times");
        first.concatenate(all)
    });
    content_at(&out, last)
}

#[test]
fn a01_as_of_every_probe_time() {
    // (probe time, product_id, expected row of the LEFT join; None = NULL columns)
    let probes = [
        ("00:00:59", "p_001", None),
        (
            "00:01:00",
            "p_001",
            Some(product("00:01:00", "scooter", "11.11")),
        ),
        ("00:01:00", "p_002", None),
        (
            "10:00:00",
            "p_001",
            Some(product("00:01:00", "scooter", "11.11")),
        ),
        (
            "10:00:00",
            "p_002",
            Some(product("00:02:00", "basketball", "23.11")),
        ),
        (
            "11:59:59",
            "p_001",
            Some(product("00:01:00", "scooter", "11.11")),
        ),
        (
            "12:00:00",
            "p_001",
            Some(product("12:00:00", "scooter", "12.99")),
        ),
        (
            "12:00:00",
            "p_002",
            Some(product("12:00:00", "basketball", "19.99")),
        ),
        (
            "13:00:00",
            "p_001",
            Some(product("12:00:00", "scooter", "12.99")),
        ),
        (
            "13:00:00",
            "p_002",
            Some(product("12:00:00", "basketball", "19.99")),
        ),
        ("18:00:00", "p_001", None),
        (
            "18:00:00",
            "p_002",
            Some(product("12:00:00", "basketball", "19.99")),
        ),
        ("19:00:00", "p_001", None),
    ];
    let mut times: Vec<i64> = probes.iter().map(|(t, _, _)| hms(t)).collect();
    times.dedup();
    let changelog = products();
    // One epoch, and one changelog row per epoch; 1 and 2 workers.
    for (workers, cuts) in [(1, vec![]), (2, vec![]), (2, (1..7).collect::<Vec<_>>())] {
        let content = snapshots(workers, batch(&changelog, &cuts), &times);
        for (t, id, expected) in &probes {
            let found: Vec<_> = content
                .iter()
                .filter(|((at, k, _), _)| *at == hms(t) && k == id)
                .map(|((_, _, row), diff)| (row.clone(), *diff))
                .collect();
            assert_eq!(
                found,
                expected.iter().map(|r| (r.clone(), 1)).collect::<Vec<_>>()
            );
        }
    }
}

#[test]
fn seed_example_snapshots_at_10_and_13() {
    let content = snapshots(
        2,
        batch(&products(), &[3]),
        &[hms("10:00:00"), hms("13:00:00")],
    );
    let row = |t: &str, id: &str, time: &str, name: &str, price: &str| {
        ((hms(t), id.to_string(), product(time, name, price)), 1)
    };
    assert_eq!(
        content,
        vec![
            row("10:00:00", "p_001", "00:01:00", "scooter", "11.11"),
            row("10:00:00", "p_002", "00:02:00", "basketball", "23.11"),
            row("13:00:00", "p_001", "12:00:00", "scooter", "12.99"),
            row("13:00:00", "p_002", "12:00:00", "basketball", "19.99"),
        ]
    );
}

#[test]
fn a01_history() {
    for (workers, cuts) in [(1, vec![]), (2, (1..7).collect::<Vec<_>>())] {
        let epochs = batch(&products(), &cuts);
        let last = (epochs.len() - 1) as SysTime;
        let out = run_unary(workers, epochs, |c| {
            VersionedTable::new(versions_from_changelog(c, |r: &Product| r.0), "P").history()
        });
        let row = |id: &str, from: &str, to: Option<&str>, seq, name: &str, price: &str| {
            let (valid_from, valid_to) = (hms(from), to.map(hms));
            let row = product(from, name, price);
            (
                (
                    id.to_string(),
                    HistoryRow {
                        valid_from,
                        valid_to,
                        seq,
                        row,
                    },
                ),
                1,
            )
        };
        assert_eq!(
            content_at(&out, last),
            vec![
                row("p_001", "00:01:00", Some("12:00:00"), 0, "scooter", "11.11"),
                row("p_001", "12:00:00", Some("18:00:00"), 3, "scooter", "12.99"),
                row(
                    "p_002",
                    "00:02:00",
                    Some("12:00:00"),
                    1,
                    "basketball",
                    "23.11"
                ),
                row("p_002", "12:00:00", None, 5, "basketball", "19.99"),
            ]
        );
    }
}

/// What the property test reads from one table: snapshots at a few times, and the history.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
enum Read {
    AsOf(i64, u8, i64),
    History(u8, HistoryRow<i64, i64>),
}

/// The event times the property test reads the table as of (versions have times 0..8).
const PROBES: [i64; 5] = [-1, 0, 3, 5, 7];

type Versions = Vec<((u8, Version<i64, i64>), isize)>;

/// Every read of the property test, from one shared arrangement.
fn reads<'s>(
    versions: differential_dataflow::VecCollection<'s, SysTime, (u8, Version<i64, i64>)>,
) -> differential_dataflow::VecCollection<'s, SysTime, Read> {
    let table = VersionedTable::new(versions, "T");
    let snapshots = PROBES.map(|t| table.as_of(t).map(move |(k, v)| Read::AsOf(t, k, v)));
    table
        .history()
        .map(|(k, h)| Read::History(k, h))
        .concatenate(snapshots)
}

/// The model's reads after the updates `seen`.
fn model(seen: &Versions) -> Vec<(Read, isize)> {
    let table = Reference::new(seen.iter().cloned());
    let mut out: Vec<(Read, isize)> = table
        .history()
        .into_iter()
        .map(|(k, h)| (Read::History(k, h), 1))
        .collect();
    for t in PROBES {
        out.extend(
            table
                .as_of(&t)
                .into_iter()
                .map(|(k, v)| (Read::AsOf(t, k, v), 1)),
        );
    }
    out.sort();
    out
}

/// Checks the dataflow against the model at every system time, on 1, 2 and 4 workers.
fn check(epochs: Vec<Epoch<(u8, Version<i64, i64>)>>) -> Result<(), TestCaseError> {
    for workers in [1, 2, 4] {
        let out = run_unary(workers, epochs.clone(), reads);
        let mut seen = Vec::new();
        for (s, epoch) in epochs.iter().enumerate() {
            seen.extend(epoch.iter().cloned());
            prop_assert_eq!(content_at(&out, s as SysTime), model(&seen), "at {}", s);
        }
    }
    Ok(())
}

/// Random versions (arrival order = seq order, many ties in event time, ~20% deletes), cut into
/// epochs; ~15% of them are retracted again in the epoch after their insertion.
fn epochs() -> impl Strategy<Value = Vec<Epoch<(u8, Version<i64, i64>)>>> {
    let version = (
        0u8..4,
        0i64..8,
        prop::bool::weighted(0.2),
        0i64..3,
        prop::bool::weighted(0.15),
    );
    (
        prop::collection::vec(version, 0..30),
        prop::collection::vec(0usize..30, 0..5),
    )
        .prop_map(|(vs, mut cuts)| {
            cuts.sort();
            let versions: Vec<_> = vs
                .iter()
                .enumerate()
                .map(|(seq, &(k, time, delete, row, _))| {
                    let seq = seq as u64;
                    let v = if delete {
                        Version::delete(time, seq)
                    } else {
                        Version::row(time, seq, row)
                    };
                    (k, v)
                })
                .collect();
            let mut epochs = batch(&versions, &cuts);
            epochs.push(Vec::new());
            // Epoch of version `p`: the number of cuts at or before `p`.
            for (p, (v, retract)) in versions.iter().zip(vs.iter().map(|x| x.4)).enumerate() {
                if retract {
                    let e = cuts.iter().filter(|&&c| c <= p).count();
                    epochs[e + 1].push((v.clone(), -1));
                }
            }
            epochs
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn matches_reference_at_every_system_time(epochs in epochs()) {
        check(epochs)?;
    }
}

#[test]
fn retracted_versions_restore_earlier_ones() {
    let a1 = (1u8, Version::row(1i64, 0, 10i64));
    let a3 = (1u8, Version::row(3, 1, 30));
    let a3_tie = (1u8, Version::row(3, 2, 31));
    let d5 = (1u8, Version::delete(5, 3));
    let epochs = vec![
        vec![
            (a1.clone(), 1),
            (a3.clone(), 1),
            (a3_tie.clone(), 1),
            (d5.clone(), 1),
        ],
        vec![(a3_tie, -1)],
        vec![(d5, -1), (a1, -1)],
        vec![(a3, -1)],
    ];
    check(epochs).expect("matches the model");
}
