//! Orders converted at the currency rate valid at order time: Flink's seed example of the
//! event-time temporal join, then the same over the real ECB euro reference rates of 2024.
//!
//! **Part 1, the seed** (Flink docs, `temporal_table_function.md` / `joins.md`):
//! `SELECT SUM(o.amount * r.rate) FROM orders o, LATERAL TABLE (rates(o.order_time)) r WHERE
//! o.currency = r.currency`, rates a temporal table function of the append-only history
//! `currency_rates` keyed by `currency` with time `update_time` (INNER join, rule B15):
//!
//! ```text
//! orders                         currency_rates
//! order_time amount currency     update_time currency  conversion_rate
//! 10:15      2      Euro         09:00       US Dollar 102
//! 10:30      1      US Dollar    09:00       Euro      114
//! 10:32      50     Yen          09:00       Yen       1
//! 10:52      3      Euro         10:45       Euro      116
//! 11:04      5      US Dollar    11:15       Euro      119
//!                                11:49       Pounds    108
//! ```
//!
//! Each order takes the rate of its currency with the greatest `update_time <= order_time`:
//! 2 x 114 + 1 x 102 + 50 x 1 + 3 x 116 + 5 x 102 = 228 + 102 + 50 + 348 + 510 = **1238**.
//!
//! **Part 2, real rates**: 100,000 synthetic orders (fixed seed, deterministic) in USD, GBP, JPY,
//! CHF, SEK and PLN at random times during 2024, joined (LEFT) with
//! `data/ecb/eurofxref_long_2024.csv` (`date,currency,rate_per_eur`: a versioned table keyed by
//! `currency`, each rate valid from its date's midnight until the next published rate), and
//! converted to EUR as `amount / rate_per_eur` (the rate is units per euro). Orders on 1 January
//! (before the first 2024 fixing) find no rate and are counted unmatched.
//!
//! Run it (2 workers by default; optional: a rates file in the same format, an order count):
//!
//! ```text
//! cargo run --release --example currency_conversion -- -w 2
//! cargo run --release --example currency_conversion -- -w 2 data/full/eurofxref_long.csv 1000000
//! ```
//!
//! Several processes take timely's cluster flags, `-n PROCESSES -p INDEX -h HOSTFILE` (a file
//! of `host:port` lines, one per process) with `-w` workers each, one command per process with
//! the same arguments. Every process generates the same orders and reads the rates file, each
//! worker feeding its share; the results are gathered at process 0, which prints them (the
//! others print nothing):
//!
//! ```text
//! printf '127.0.0.1:7101\n127.0.0.1:7102\n' > hosts.txt
//! cargo run --release --example currency_conversion -- -n 2 -p 0 -h hosts.txt -w 2 &
//! cargo run --release --example currency_conversion -- -n 2 -p 1 -h hosts.txt -w 2
//! ```
//!
//! Expected output (the time varies with the machine):
//!
//! ```text
//! seed: order_time amount currency rate amount*rate
//!   10:15 2 Euro 114 228
//!   10:30 1 US Dollar 102 102
//!   10:32 50 Yen 1 50
//!   10:52 3 Euro 116 348
//!   11:04 5 US Dollar 102 510
//! seed: SUM(amount * rate) = 1238
//! ECB 2024: 100000 orders, 99729 matched, 271 unmatched, 7680 rates, 0 rejected, 0.63 s
//! currency   orders  unmatched            amount        amount_eur
//! CHF         16834         38       83987691.33       88180500.21
//! GBP         16551         52       82128466.98       97018210.47
//! JPY         16645         42       83396742.23         509355.01
//! PLN         16732         51       83180607.39       19320643.33
//! SEK         16604         47       82925594.22        7251611.78
//! USD         16634         41       83253056.68       76952602.38
//! ```

#[path = "common/asof.rs"]
#[allow(dead_code)] // shared with the other example and the tests, each using a part
pub mod asof;

use std::collections::BTreeMap;
use std::process::ExitCode;

use differential_temporal::operators::temporal_join::JoinKind;

/// The shipped ECB rates of 2024.
const RATES: &str = "data/ecb/eurofxref_long_2024.csv";
/// The currencies of the synthetic orders.
const CURRENCIES: [&str; 6] = ["USD", "GBP", "JPY", "CHF", "SEK", "PLN"];
/// The seed of the synthetic orders.
const SEED: u64 = 2024;

fn rows(data: &[&[&str]]) -> Vec<asof::Row> {
    data.iter()
        .map(|r| r.iter().map(|c| c.to_string()).collect())
        .collect()
}

/// The seed example joined (INNER): one row per order, in order of the orders (`None` in a
/// process that does not host worker 0).
pub fn seed(cluster: impl Into<asof::Cluster>) -> Result<Option<asof::JoinOutput>, String> {
    let orders = rows(&[
        &["10:15", "2", "Euro"],
        &["10:30", "1", "US Dollar"],
        &["10:32", "50", "Yen"],
        &["10:52", "3", "Euro"],
        &["11:04", "5", "US Dollar"],
    ]);
    let rates = rows(&[
        &["09:00", "US Dollar", "102"],
        &["09:00", "Euro", "114"],
        &["09:00", "Yen", "1"],
        &["10:45", "Euro", "116"],
        &["11:15", "Euro", "119"],
        &["11:49", "Pounds", "108"],
    ]);
    let probe = asof::Table::rows(
        &["order_time", "amount", "currency"],
        orders,
        "currency",
        "order_time",
    )?;
    let build = asof::Table::rows(
        &["update_time", "currency", "conversion_rate"],
        rates,
        "currency",
        "update_time",
    )?;
    asof::asof_join(probe, build, JoinKind::Inner, cluster)
}

fn number(text: &str) -> Result<f64, String> {
    text.parse().map_err(|_| format!("not a number: `{text}`"))
}

/// `amount * conversion_rate` of each joined seed row.
pub fn seed_products(out: &asof::JoinOutput) -> Result<Vec<f64>, String> {
    out.rows
        .iter()
        .map(|r| {
            let rate = r.build.as_ref().ok_or("unmatched order")?;
            Ok(number(&r.probe[1])? * number(&rate[2])?)
        })
        .collect()
}

/// SplitMix64: a small deterministic generator for the synthetic orders.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `n` orders `order_id,order_time,amount,currency` at random times in 2024 (seed [`SEED`]).
pub fn orders_2024(n: usize) -> Vec<asof::Row> {
    const DAYS: [u64; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let mut state = SEED;
    (0..n)
        .map(|i| {
            let mut day = splitmix(&mut state) % 366;
            let mut month = 0;
            while day >= DAYS[month] {
                day -= DAYS[month];
                month += 1;
            }
            let second = splitmix(&mut state) % 86_400;
            let cents = 100 + splitmix(&mut state) % 1_000_000;
            let currency = CURRENCIES[(splitmix(&mut state) % CURRENCIES.len() as u64) as usize];
            vec![
                (i + 1).to_string(),
                format!(
                    "2024-{:02}-{:02} {:02}:{:02}:{:02}",
                    month + 1,
                    day + 1,
                    second / 3600,
                    second / 60 % 60,
                    second % 60
                ),
                format!("{}.{:02}", cents / 100, cents % 100),
                currency.to_string(),
            ]
        })
        .collect()
}

/// The synthetic orders joined (LEFT) with the ECB rates in `rates` as of order time (`None`
/// in a process that does not host worker 0).
pub fn ecb(
    rates: &str,
    orders: Vec<asof::Row>,
    cluster: impl Into<asof::Cluster>,
) -> Result<Option<asof::JoinOutput>, String> {
    let probe = asof::Table::rows(
        &["order_id", "order_time", "amount", "currency"],
        orders,
        "currency",
        "order_time",
    )?;
    let build = asof::Table::csv(rates, "currency", "date")?;
    asof::asof_join(probe, build, JoinKind::Left, cluster)
}

/// Per currency: orders, unmatched orders, `SUM(amount)`, `SUM(amount / rate_per_eur)` over the
/// matched ones (summed in order id order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Total {
    /// Orders.
    pub orders: usize,
    /// Orders without a rate.
    pub unmatched: usize,
    /// Sum of the matched orders' amounts, in the currency.
    pub amount: f64,
    /// Sum of the matched orders' amounts converted to EUR.
    pub amount_eur: f64,
}

/// Totals per currency of an [`ecb`] join.
pub fn totals(out: &asof::JoinOutput) -> Result<BTreeMap<String, Total>, String> {
    let mut totals: BTreeMap<String, Total> = BTreeMap::new();
    for r in &out.rows {
        let total = totals.entry(r.probe[3].clone()).or_default();
        total.orders += 1;
        match &r.build {
            Some(rate) => {
                let amount = number(&r.probe[2])?;
                total.amount += amount;
                total.amount_eur += amount / number(&rate[2])?;
            }
            None => total.unmatched += 1,
        }
    }
    Ok(totals)
}

fn run() -> Result<(), String> {
    let (cluster, args) = asof::parse_args(std::env::args().skip(1), 2)?;
    let rates = args.first().map_or(RATES, String::as_str);
    let n: usize = match args.get(1) {
        Some(n) => n.parse().map_err(|_| format!("bad order count `{n}`"))?,
        None => 100_000,
    };

    let Some(out) = seed(cluster.clone())? else {
        // Not process 0: take part in the second join too, then end without printing.
        ecb(rates, orders_2024(n), cluster)?;
        return Ok(());
    };
    let products = seed_products(&out)?;
    println!("seed: order_time amount currency rate amount*rate");
    for (r, p) in out.rows.iter().zip(&products) {
        let rate = r.build.as_ref().map_or("", |b| b[2].as_str());
        println!("  {} {} {} {rate} {p}", r.probe[0], r.probe[1], r.probe[2]);
    }
    println!(
        "seed: SUM(amount * rate) = {}",
        products.iter().sum::<f64>()
    );

    let out = ecb(rates, orders_2024(n), cluster)?.ok_or("process 0 hosts worker 0")?;
    let matched = out.matched();
    println!(
        "ECB 2024: {} orders, {matched} matched, {} unmatched, {} rates, {} rejected, {:.2} s",
        out.probe_rows,
        out.rows.len() - matched,
        out.build_rows,
        out.rejected.len(),
        out.elapsed.as_secs_f64()
    );
    println!("currency   orders  unmatched            amount        amount_eur");
    for (currency, t) in totals(&out)? {
        println!(
            "{currency:<8} {:>8} {:>10} {:>17.2} {:>17.2}",
            t.orders, t.unmatched, t.amount, t.amount_eur
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("currency_conversion: {e}");
            ExitCode::FAILURE
        }
    }
}
