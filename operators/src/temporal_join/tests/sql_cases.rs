//! The SQL-level cases B09, B13 and B15: no watermark advances before the end of input, results
//! read through an upsert sink keyed by the order id (or as a set).

use std::collections::BTreeMap;

use super::upsert_sink;
use crate::temporal_join::{
    arrange_probe, temporal_join, temporal_join_final, JoinConfig, JoinKind, Joined,
};
use crate::testing::{content_at, run_binary, Epoch};
use crate::watermark::no_watermark;
use crate::{arrange_versions, Change, RowKind, SysTime, Version};

/// Seconds from 2020-08-15T00:00:00; `D` is one day.
const D: i64 = 86_400;

/// An order: (order id, amount, order time).
type Order = (u64, i64, i64);
/// A rate: (rate, currency time).
type Rate = (i64, i64);
type Joined9 = (String, Joined<Order, Rate>);

fn orders() -> Vec<(String, Change<Order>)> {
    use RowKind::*;
    let rows = [
        (Insert, 1, "Euro", 12, 60),
        (Insert, 2, "US Dollar", 1, 120),
        (Insert, 3, "RMB", 40, 180),
        (Insert, 4, "Euro", 14, D + 240),
        (UpdateBefore, 2, "US Dollar", 1, D + 180),
        (UpdateAfter, 2, "US Dollar", 18, D + 180),
        (Insert, 5, "RMB", 40, D + 180),
        (Insert, 6, "RMB", 40, D + 240),
        (Delete, 6, "RMB", 40, D + 240),
    ];
    rows.iter()
        .enumerate()
        .map(|(i, &(kind, id, cur, amount, t))| {
            (
                cur.to_string(),
                Change::new(i as u64 + 1, kind, (id, amount, t)),
            )
        })
        .collect()
}

/// Versions of (currency, seq, time, rate or None for a delete).
fn versions(rows: &[(&str, u64, i64, Option<i64>)]) -> Vec<(String, Version<i64, Rate>)> {
    rows.iter()
        .map(|&(cur, seq, t, rate)| {
            let v = Version {
                time: t,
                seq,
                row: rate.map(|r| (r, t)),
            };
            (cur.to_string(), v)
        })
        .collect()
}

/// Runs the incremental and the final-mode join over the same input (cut into two epochs each)
/// on 1 and 2 workers; asserts both give the same changelog and returns it.
fn both_modes(build: &[(String, Version<i64, Rate>)], kind: JoinKind) -> Vec<Joined9> {
    let orders = orders();
    fn ep<D: Clone>(rows: &[D]) -> Vec<Epoch<D>> {
        let (a, b) = rows.split_at(rows.len() / 2);
        vec![
            a.iter().map(|r| (r.clone(), 1)).collect(),
            b.iter().map(|r| (r.clone(), 1)).collect(),
        ]
    }
    let (probe, build) = (ep(&orders), ep(build));
    let mut seen = Vec::new();
    for workers in [1, 2] {
        let inc = run_binary(workers, probe.clone(), build.clone(), move |o, r| {
            let o = arrange_probe(o, |p: &Order| p.2, "Orders");
            temporal_join(
                o,
                arrange_versions(r, "Rates"),
                JoinConfig::new(kind).named("J"),
            )
        });
        let fin = run_binary(workers, probe.clone(), build.clone(), move |o, r| {
            let (o_wm, r_wm) = (
                no_watermark(o.clone(), "OWm"),
                no_watermark(r.clone(), "RWm"),
            );
            let r = arrange_versions(r, "Rates");
            temporal_join_final(
                o,
                |p: &Order| p.2,
                r,
                (o_wm, r_wm),
                JoinConfig::new(kind).named("J"),
            )
            .joined
        });
        // Final mode: everything fires once, at the end of input (epoch 2).
        assert!(fin.iter().all(|(_, t, r)| *t == 2 && *r == 1), "{fin:?}");
        let fin: Vec<_> = fin.into_iter().map(|(d, _, _)| d).collect();
        let inc: Vec<_> = content_at(&inc, SysTime::MAX)
            .into_iter()
            .map(|(d, r)| {
                assert_eq!(r, 1);
                d
            })
            .collect();
        assert_eq!(inc, fin);
        seen.push(fin);
    }
    assert_eq!(seen[0], seen[1]);
    seen.pop().unwrap()
}

/// The sink table: order id -> (amount, order time, (rate, currency time) or NULLs).
fn sink(changelog: Vec<Joined9>) -> BTreeMap<u64, (i64, i64, Option<Rate>)> {
    let rows = changelog
        .into_iter()
        .map(|(_, c)| {
            (
                c.row.0 .0,
                Change::new(c.seq, c.kind, (c.row.0 .1, c.row.0 .2, c.row.1)),
            )
        })
        .collect();
    upsert_sink(rows)
}

#[test]
fn b09_changelog_probe_vs_cdc_versioned_table() {
    // -U rows of the CDC table are not versions (A5); its -D is a version at its own time.
    let build = versions(&[
        ("Euro", 1, 1, Some(114)),
        ("US Dollar", 2, 2, Some(102)),
        ("Yen", 3, 3, Some(1)),
        ("RMB", 4, 4, Some(702)),
        ("Euro", 6, D + 60, Some(118)),
        ("US Dollar", 8, D + 120, Some(106)),
        ("RMB", 9, D + 120, None),
    ]);
    let left = both_modes(&build, JoinKind::Left);
    // The raw LEFT changelog (DERIVED in the case): the probe -U of order 2 is joined at its own
    // time and carries 106, not the 102 its +I carried (B8).
    use RowKind::*;
    let raw = |seq, kind, cur: &str, id, amount, t, rate: Option<Rate>| {
        (
            cur.to_string(),
            Change::new(seq, kind, ((id, amount, t), rate)),
        )
    };
    let mut expected = vec![
        raw(1, Insert, "Euro", 1, 12, 60, Some((114, 1))),
        raw(2, Insert, "US Dollar", 2, 1, 120, Some((102, 2))),
        raw(3, Insert, "RMB", 3, 40, 180, Some((702, 4))),
        raw(4, Insert, "Euro", 4, 14, D + 240, Some((118, D + 60))),
        raw(
            5,
            UpdateBefore,
            "US Dollar",
            2,
            1,
            D + 180,
            Some((106, D + 120)),
        ),
        raw(
            6,
            UpdateAfter,
            "US Dollar",
            2,
            18,
            D + 180,
            Some((106, D + 120)),
        ),
        raw(7, Insert, "RMB", 5, 40, D + 180, None),
        raw(8, Insert, "RMB", 6, 40, D + 240, None),
        raw(9, Delete, "RMB", 6, 40, D + 240, None),
    ];
    expected.sort();
    assert_eq!(left, expected);
    let table = |rows: &[(u64, i64, i64, Option<Rate>)]| {
        rows.iter()
            .map(|&(id, a, t, r)| (id, (a, t, r)))
            .collect::<BTreeMap<_, _>>()
    };
    let final_inner = [
        (1, 12, 60, Some((114, 1))),
        (2, 18, D + 180, Some((106, D + 120))),
        (3, 40, 180, Some((702, 4))),
        (4, 14, D + 240, Some((118, D + 60))),
    ];
    let mut final_left = final_inner.to_vec();
    final_left.push((5, 40, D + 180, None));
    assert_eq!(sink(left), table(&final_left));
    assert_eq!(
        sink(both_modes(&build, JoinKind::Inner)),
        table(&final_inner)
    );
}

#[test]
fn b13_versioned_views_from_dedup() {
    // currency_history (insert-only), seq = position: Euro 114 @1, US Dollar 102 @2, Yen 1 @3,
    // RMB 702 @4, Euro 118 @D+60, US Dollar 102 @D+120, US Dollar 106 @D+120.
    // Keep-first view (A8: only a strictly smaller time replaces): the first row of each key.
    let first = versions(&[
        ("Euro", 1, 1, Some(114)),
        ("US Dollar", 2, 2, Some(102)),
        ("Yen", 3, 3, Some(1)),
        ("RMB", 4, 4, Some(702)),
    ]);
    // Keep-last view (A7: time >= stored replaces, -U/+U; the +U rows are the versions, A5):
    // both US Dollar rows at D+120 are versions, the later one (seq 7) wins the tie (A4).
    let last = versions(&[
        ("Euro", 1, 1, Some(114)),
        ("US Dollar", 2, 2, Some(102)),
        ("Yen", 3, 3, Some(1)),
        ("RMB", 4, 4, Some(702)),
        ("Euro", 5, D + 60, Some(118)),
        ("US Dollar", 6, D + 120, Some(102)),
        ("US Dollar", 7, D + 120, Some(106)),
    ]);
    let table = |rows: &[(u64, i64, i64, Option<Rate>)]| {
        rows.iter()
            .map(|&(id, a, t, r)| (id, (a, t, r)))
            .collect::<BTreeMap<_, _>>()
    };
    assert_eq!(
        sink(both_modes(&first, JoinKind::Left)),
        table(&[
            (1, 12, 60, Some((114, 1))),
            (2, 18, D + 180, Some((102, 2))),
            (3, 40, 180, Some((702, 4))),
            (4, 14, D + 240, Some((114, 1))),
            (5, 40, D + 180, Some((702, 4))),
        ])
    );
    assert_eq!(
        sink(both_modes(&last, JoinKind::Inner)),
        table(&[
            (1, 12, 60, Some((114, 1))),
            (2, 18, D + 180, Some((106, D + 120))),
            (3, 40, 180, Some((702, 4))),
            (4, 14, D + 240, Some((118, D + 60))),
            (5, 40, D + 180, Some((702, 4))),
        ])
    );
}

/// A temporal table function's versions: every row of an append-only history, seq = position.
fn history<B: Clone>(rows: &[(&str, B, i64)]) -> Vec<Epoch<(String, Version<i64, B>)>> {
    let versions = rows
        .iter()
        .enumerate()
        .map(|(i, (k, b, t))| ((k.to_string(), Version::row(*t, i as u64, b.clone())), 1))
        .collect();
    vec![versions]
}

#[test]
fn b15_temporal_table_function() {
    // Operation 1: history filtered (rate > 110) before versioning; INNER.
    let rates = [
        ("US Dollar", 102i64, 1),
        ("Euro", 114, 1),
        ("Yen", 1, 1),
        ("Euro", 116, 5),
        ("Euro", 119, 7),
    ];
    let filtered: Vec<_> = rates.iter().copied().filter(|r| r.1 > 110).collect();
    let orders = [
        (2i64, "Euro", 2i64),
        (1, "US Dollar", 3),
        (50, "Yen", 4),
        (3, "Euro", 5),
    ];
    let probe: Vec<Epoch<(String, Change<(i64, i64)>)>> = vec![orders
        .iter()
        .enumerate()
        .map(|(i, &(a, c, t))| {
            (
                (
                    c.to_string(),
                    Change::new(i as u64, RowKind::Insert, (a, t)),
                ),
                1,
            )
        })
        .collect()];
    let out = run_binary(2, probe, history(&filtered), |o, r| {
        let o = arrange_probe(o, |p: &(i64, i64)| p.1, "Orders");
        temporal_join(
            o,
            arrange_versions(r, "Rates"),
            JoinConfig::new(JoinKind::Inner).named("J"),
        )
        .map(|(_, c)| c.row.0 .0 * c.row.1.unwrap())
    });
    assert_eq!(out, vec![(228, 0, 1), (348, 0, 1)]);

    // Operation 2: nested functions, Orders2 x Prices(o.rowtime) x Rates(o.rowtime), by chaining
    // two joins (the second probes with the first's output, keyed by currency).
    let prices = [
        ("A2", ("US Dollar", "10.2"), 1),
        ("A1", ("Euro", "11.4"), 1),
        ("A4", ("Yen", "1.0"), 1),
        ("A1", ("Euro", "11.6"), 5),
        ("A1", ("Euro", "11.9"), 7),
    ];
    let prices: Vec<_> = prices
        .iter()
        .map(|&(k, (c, p), t)| (k, (c.to_string(), p.to_string()), t))
        .collect();
    let orders2 = [
        (1u64, "A1", 2i64, 2i64),
        (2, "A2", 1, 3),
        (3, "A4", 50, 4),
        (4, "A1", 3, 5),
    ];
    type O2 = (u64, i64, i64);
    let probe: Vec<Epoch<(String, Change<O2>)>> = vec![orders2
        .iter()
        .map(|&(id, p, a, t)| {
            (
                (p.to_string(), Change::new(id, RowKind::Insert, (id, a, t))),
                1,
            )
        })
        .collect()];
    type L = Result<(String, Version<i64, (String, String)>), (String, Version<i64, i64>)>;
    let builds: Vec<Epoch<L>> = vec![history(&prices)[0]
        .iter()
        .map(|(v, r)| (Ok(v.clone()), *r))
        .chain(history(&rates)[0].iter().map(|(v, r)| (Err(v.clone()), *r)))
        .collect()];
    let out = run_binary(2, probe, builds, |o, b| {
        let prices = arrange_versions(b.clone().flat_map(|x: L| x.ok()), "Prices");
        let rates = arrange_versions(b.flat_map(|x: L| x.err()), "Rates");
        let o = arrange_probe(o, |p: &O2| p.2, "Orders2");
        let priced = temporal_join(o, prices, JoinConfig::new(JoinKind::Inner).named("Prices"))
            .map(|(_, c)| {
                let ((id, amount, t), price) = c.row;
                let (currency, price) = price.expect("inner join");
                (currency, Change::new(c.seq, c.kind, (id, amount, t, price)))
            });
        let priced = arrange_probe(priced, |p: &(u64, i64, i64, String)| p.2, "Priced");
        temporal_join(
            priced,
            rates,
            JoinConfig::new(JoinKind::Inner).named("Rates"),
        )
        .map(|(_, c)| {
            let ((id, amount, _, price), rate) = c.row;
            let total =
                amount as f64 * price.parse::<f64>().expect("price") * rate.expect("inner") as f64;
            (id, format!("{total:?}"))
        })
    });
    let expected = [
        (1, "2599.2000000000003"),
        (2, "1040.3999999999999"),
        (3, "50.0"),
        (4, "4036.7999999999997"),
    ];
    let expected: Vec<_> = expected
        .iter()
        .map(|&(id, s)| ((id, s.to_string()), 0, 1))
        .collect();
    assert_eq!(out, expected);
}
