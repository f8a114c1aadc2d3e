//! The currency conversion example: the seed result exactly (Flink docs), and the ECB run
//! against a plain-Rust as-of computation over the same files.

#[path = "../examples/currency_conversion.rs"]
#[allow(dead_code)]
mod example;

use std::collections::HashMap;

const RATES: &str = "data/ecb/eurofxref_long_2024.csv";

#[test]
fn seed_orders_join_the_rate_valid_at_order_time() {
    for workers in [1, 2, 4] {
        let out = example::seed(workers).unwrap().unwrap();
        let joined: Vec<Vec<String>> = out.rows.iter().map(|r| r.cells(out.build_width)).collect();
        let row = |r: &[&str]| r.iter().map(|c| c.to_string()).collect::<Vec<_>>();
        assert_eq!(
            joined,
            vec![
                row(&["10:15", "2", "Euro", "09:00", "Euro", "114"]),
                row(&["10:30", "1", "US Dollar", "09:00", "US Dollar", "102"]),
                row(&["10:32", "50", "Yen", "09:00", "Yen", "1"]),
                row(&["10:52", "3", "Euro", "10:45", "Euro", "116"]),
                row(&["11:04", "5", "US Dollar", "09:00", "US Dollar", "102"]),
            ]
        );
        assert_eq!(
            out.header,
            [
                "order_time",
                "amount",
                "currency",
                "update_time",
                "currency0",
                "conversion_rate"
            ]
        );
        let products = example::seed_products(&out).unwrap();
        assert_eq!(products, vec![228.0, 102.0, 50.0, 348.0, 510.0]);
        assert_eq!(products.iter().sum::<f64>(), 1238.0);
    }
}

/// Per currency the rates sorted by (date, position); each order takes the last rate whose date
/// is <= its order time (`YYYY-MM-DD` sorts before any `YYYY-MM-DD hh:mm:ss` of that day).
fn expected(orders: &[Vec<String>]) -> Vec<Vec<String>> {
    let mut reader = csv::Reader::from_path(RATES).unwrap();
    let rates: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    let mut by_currency: HashMap<&str, Vec<(&str, usize)>> = HashMap::new();
    for (p, r) in rates.iter().enumerate() {
        by_currency.entry(&r[1]).or_default().push((&r[0], p));
    }
    for v in by_currency.values_mut() {
        v.sort();
    }
    orders
        .iter()
        .map(|o| {
            let versions = by_currency
                .get(o[3].as_str())
                .map_or(&[][..], Vec::as_slice);
            let n = versions.partition_point(|(date, _)| *date <= o[1].as_str());
            let mut row = o.clone();
            match n.checked_sub(1) {
                Some(v) => row.extend(rates[versions[v].1].iter().cloned()),
                None => row.extend(std::iter::repeat_n(String::new(), 3)),
            }
            row
        })
        .collect()
}

#[test]
fn ecb_conversion_matches_plain_as_of() {
    let orders = example::orders_2024(20_000);
    let out = example::ecb(RATES, orders.clone(), 2).unwrap().unwrap();
    assert_eq!(out.probe_rows, 20_000);
    assert_eq!(out.build_rows, 7_680);
    assert!(out.rejected.is_empty());
    let got: Vec<Vec<String>> = out.rows.iter().map(|r| r.cells(out.build_width)).collect();
    let want = expected(&orders);
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w);
    }
    // Only orders before the first fixing of 2024 (2 January) have no rate.
    for r in &out.rows {
        assert_eq!(
            r.build.is_none(),
            r.probe[1].starts_with("2024-01-01"),
            "{r:?}"
        );
    }
    // Totals recomputed from the plain rows, in the same order (so equal to the bit).
    let totals = example::totals(&out).unwrap();
    let mut plain: HashMap<&str, (usize, usize, f64, f64)> = HashMap::new();
    for w in &want {
        let t = plain.entry(&w[3]).or_default();
        t.0 += 1;
        if w[6].is_empty() {
            t.1 += 1;
        } else {
            let amount: f64 = w[2].parse().unwrap();
            t.2 += amount;
            t.3 += amount / w[6].parse::<f64>().unwrap();
        }
    }
    assert_eq!(totals.len(), 6);
    for (currency, t) in &totals {
        let p = plain[currency.as_str()];
        assert_eq!(
            (t.orders, t.unmatched, t.amount, t.amount_eur),
            p,
            "{currency}"
        );
    }
}
