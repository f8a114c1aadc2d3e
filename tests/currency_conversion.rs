//! The currency conversion example: the seed result exactly (Flink docs), and the ECB run
//! against a plain-Rust as-of computation over the same files.

#[path = "../examples/currency_conversion.rs"]
#[allow(dead_code)]
mod example;

use std::collections::HashMap;

const RATES: &str = "data/ecb/eurofxref_long_2024.csv";

fn workers(n: usize) -> Vec<String> {
    vec!["-w".to_string(), n.to_string()]
}

#[test]
fn seed_orders_join_the_rate_valid_at_order_time() {
    for n in [1, 2, 4] {
        let (joined, sum) = example::seed(workers(n)).unwrap().unwrap();
        assert_eq!(
            joined,
            [
                "2024-01-01 10:15:00.000,2,Euro,114,228",
                "2024-01-01 10:30:00.000,1,US Dollar,102,102",
                "2024-01-01 10:32:00.000,50,Yen,1,50",
                "2024-01-01 10:52:00.000,3,Euro,116,348",
                "2024-01-01 11:04:00.000,5,US Dollar,102,510",
            ]
        );
        assert_eq!(sum, "1238");
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
    let out = example::ecb(RATES, &orders, workers(2)).unwrap().unwrap();
    assert_eq!(out.rejected, 0);
    // The example's rows: the order (its time typed, so written with milliseconds) and the
    // rate as written in the file.
    let want: Vec<Vec<String>> = expected(&orders)
        .into_iter()
        .map(|mut w| {
            w[1].push_str(".000");
            vec![
                w[0].clone(),
                w[1].clone(),
                w[2].clone(),
                w[3].clone(),
                w[6].clone(),
            ]
        })
        .collect();
    assert_eq!(out.rows.len(), want.len());
    for (g, w) in out.rows.iter().zip(&want) {
        assert_eq!(g, w);
    }
    // Only orders before the first fixing of 2024 (2 January) have no rate.
    for r in &out.rows {
        assert_eq!(r[4].is_empty(), r[1].starts_with("2024-01-01"), "{r:?}");
    }
    // Totals recomputed from the plain rows, in the same order (so equal to the bit).
    let totals = example::totals(&out).unwrap();
    let mut plain: HashMap<&str, (usize, usize, f64, f64)> = HashMap::new();
    for w in &want {
        let t = plain.entry(&w[3]).or_default();
        t.0 += 1;
        if w[4].is_empty() {
            t.1 += 1;
        } else {
            let amount: f64 = w[2].parse().unwrap();
            t.2 += amount;
            t.3 += amount / w[4].parse::<f64>().unwrap();
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
