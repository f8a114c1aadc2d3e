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
//! The example writes the two tables as CSV files (on 1 January 2024) and runs the seed's
//! statements with the library's `TableEnv`, the path of `dtemporal sql`.
//!
//! **Part 2, real rates**: 100,000 synthetic orders (fixed seed, deterministic) in USD, GBP, JPY,
//! CHF, SEK and PLN at random times during 2024, joined (LEFT) with
//! `data/ecb/eurofxref_long_2024.csv` (`date,currency,rate_per_eur`: a versioned table keyed by
//! `currency`, each rate valid from its date's midnight until the next published rate: the
//! table's event time is the computed column `valid_from AS CAST(\`date\` AS TIMESTAMP(3))`),
//! in Flink SQL:
//!
//! ```sql
//! SELECT o.order_id, o.order_time, o.amount, o.currency, r.rate_per_eur FROM orders AS o
//!   LEFT JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency
//! ```
//!
//! and converted to EUR as `amount / rate_per_eur` (the rate is units per euro). Orders on 1
//! January (before the first 2024 fixing) find no rate and are counted unmatched.
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
//! the same arguments. Every process generates the same orders into its own temporary file and
//! reads the rates file, each worker feeding its share; the results are gathered at process 0,
//! which prints them (the others print nothing):
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
//! seed: order_time,amount,currency,rate,converted
//!   2024-01-01 10:15:00.000,2,Euro,114,228
//!   2024-01-01 10:30:00.000,1,US Dollar,102,102
//!   2024-01-01 10:32:00.000,50,Yen,1,50
//!   2024-01-01 10:52:00.000,3,Euro,116,348
//!   2024-01-01 11:04:00.000,5,US Dollar,102,510
//! seed: SUM(amount * rate) = 1238
//! ECB 2024: 100000 orders, 99729 matched, 271 unmatched, 0 rejected, 0.34 s
//! currency   orders  unmatched            amount        amount_eur
//! CHF         16834         38       83987691.33       88180500.21
//! GBP         16551         52       82128466.98       97018210.47
//! JPY         16645         42       83396742.23         509355.01
//! PLN         16732         51       83180607.39       19320643.33
//! SEK         16604         47       82925594.22        7251611.78
//! USD         16634         41       83253056.68       76952602.38
//! ```

use std::collections::BTreeMap;
use std::path::Path;
#[path = "common/shared.rs"]
mod shared;

use std::process::ExitCode;
use std::time::Duration;

use differential_temporal::session::StatementResult;
use differential_temporal::table::{TableEnv, TableResult};

/// The shipped ECB rates of 2024.
const RATES: &str = "data/ecb/eurofxref_long_2024.csv";
/// The currencies of the synthetic orders.
const CURRENCIES: [&str; 6] = ["USD", "GBP", "JPY", "CHF", "SEK", "PLN"];
/// The seed of the synthetic orders.
const SEED: u64 = 2024;

/// Writes `rows` under `header` as the CSV file `name` in `dir`; returns its path.
fn write_csv(dir: &Path, name: &str, header: &str, rows: &[Vec<String>]) -> Result<String, String> {
    let path = dir.join(name);
    let mut text = format!("{header}\n");
    for row in rows {
        text.push_str(&row.join(","));
        text.push('\n');
    }
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path.to_string_lossy().into_owned())
}

fn table(rows: &[&[&str]]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| r.iter().map(|c| c.to_string()).collect())
        .collect()
}

/// The rows of a statement's result; `None` in a process that does not host worker 0.
fn rows(result: &StatementResult) -> Result<Option<&TableResult>, String> {
    match result {
        StatementResult::Rows(rows) => Ok(rows.is_complete().then_some(rows)),
        other => Err(format!("expected rows, got {other:?}")),
    }
}

/// The seed example (INNER): each order with its rate and `amount * rate`, in order-time order
/// (CSV lines), and Flink's `SUM(amount * rate)`; `None` in a process that does not host worker
/// 0.
pub fn seed(timely_args: Vec<String>) -> Result<Option<(Vec<String>, String)>, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let orders = write_csv(
        dir.path(),
        "orders.csv",
        "order_time,amount,currency",
        &table(&[
            &["2024-01-01 10:15:00", "2", "Euro"],
            &["2024-01-01 10:30:00", "1", "US Dollar"],
            &["2024-01-01 10:32:00", "50", "Yen"],
            &["2024-01-01 10:52:00", "3", "Euro"],
            &["2024-01-01 11:04:00", "5", "US Dollar"],
        ]),
    )?;
    let rates = write_csv(
        dir.path(),
        "rates.csv",
        "update_time,currency,rate",
        &table(&[
            &["2024-01-01 09:00:00", "US Dollar", "102"],
            &["2024-01-01 09:00:00", "Euro", "114"],
            &["2024-01-01 09:00:00", "Yen", "1"],
            &["2024-01-01 10:45:00", "Euro", "116"],
            &["2024-01-01 11:15:00", "Euro", "119"],
            &["2024-01-01 11:49:00", "Pounds", "108"],
        ]),
    )?;
    let script = format!(
        "CREATE TABLE orders (order_time TIMESTAMP(3), amount INT, currency STRING,
           WATERMARK FOR order_time AS order_time)
           WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv');
         CREATE TABLE currency_rates (update_time TIMESTAMP(3), currency STRING, rate INT,
           WATERMARK FOR update_time AS update_time)
           WITH ('connector' = 'filesystem', 'path' = '{rates}', 'format' = 'csv');
         CREATE TEMPORAL TABLE FUNCTION rates FOR currency_rates TIME update_time KEY currency;
         SELECT o.order_time, o.amount, o.currency, r.rate, o.amount * r.rate AS converted
           FROM orders AS o, LATERAL TABLE (rates(o.order_time)) AS r
           WHERE r.currency = o.currency;
         SELECT SUM(o.amount * r.rate) AS amount
           FROM orders AS o, LATERAL TABLE (rates(o.order_time)) AS r
           WHERE r.currency = o.currency;"
    );
    let env = TableEnv::new().with_timely_args(timely_args);
    let results = env.execute_sql(&script).map_err(|e| e.to_string())?;
    let (Some(joined), Some(sum)) = (rows(&results[3])?, rows(&results[4])?) else {
        return Ok(None);
    };
    let sum = sum.rows_as_text().concat();
    Ok(Some((joined.rows_as_text(), sum)))
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
pub fn orders_2024(n: usize) -> Vec<Vec<String>> {
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

/// The ECB run: each order with the rate valid at its time.
pub struct Converted {
    /// `order_id, order_time, amount, currency, rate_per_eur` per order in id order (the rate
    /// as written in the rates file, empty when the order found none).
    pub rows: Vec<Vec<String>>,
    /// Rows refused or unreadable (none on the shipped data).
    pub rejected: usize,
    /// How long the join ran.
    pub elapsed: Duration,
}

/// The synthetic orders joined (LEFT) with the ECB rates in `rates` as of order time (`None`
/// in a process that does not host worker 0).
pub fn ecb(
    rates: &str,
    orders: &[Vec<String>],
    timely_args: Vec<String>,
) -> Result<Option<Converted>, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let orders = write_csv(
        dir.path(),
        "orders.csv",
        "order_id,order_time,amount,currency",
        orders,
    )?;
    // The rate stays text as written; the totals parse it.
    let script = format!(
        "CREATE TABLE orders (order_id BIGINT, order_time TIMESTAMP(3), amount DECIMAL(10, 2),
           currency STRING, WATERMARK FOR order_time AS order_time)
           WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv');
         CREATE TABLE rates (`date` DATE, currency STRING, rate_per_eur STRING,
           valid_from AS CAST(`date` AS TIMESTAMP(3)), PRIMARY KEY (currency) NOT ENFORCED,
           WATERMARK FOR valid_from AS valid_from)
           WITH ('connector' = 'filesystem', 'path' = '{rates}', 'format' = 'csv');"
    );
    let env = TableEnv::new().with_timely_args(timely_args);
    env.execute_sql(&script).map_err(|e| e.to_string())?;
    let joined = env
        .sql_query(
            "SELECT o.order_id, o.order_time, o.amount, o.currency, r.rate_per_eur
             FROM orders AS o
             LEFT JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r
             ON o.currency = r.currency",
        )
        .map_err(|e| e.to_string())?;
    let Some((result, elapsed)) = shared::execute_timed(&joined)? else {
        return Ok(None);
    };
    let rows = result
        .rows_as_text()
        .iter()
        .map(|line| line.split(',').map(str::to_string).collect())
        .collect();
    Ok(Some(Converted {
        rows,
        rejected: result.refused().len() + result.malformed().len(),
        elapsed,
    }))
}

fn number(text: &str) -> Result<f64, String> {
    text.parse().map_err(|_| format!("not a number: `{text}`"))
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
pub fn totals(out: &Converted) -> Result<BTreeMap<String, Total>, String> {
    let mut totals: BTreeMap<String, Total> = BTreeMap::new();
    for r in &out.rows {
        let total = totals.entry(r[3].clone()).or_default();
        total.orders += 1;
        if r[4].is_empty() {
            total.unmatched += 1;
        } else {
            let amount = number(&r[2])?;
            total.amount += amount;
            total.amount_eur += amount / number(&r[4])?;
        }
    }
    Ok(totals)
}

fn run() -> Result<(), String> {
    let (timely, args) = shared::split_args(std::env::args().skip(1));
    let rates = args.first().map_or(RATES, String::as_str);
    let n: usize = match args.get(1) {
        Some(n) => n.parse().map_err(|_| format!("bad order count `{n}`"))?,
        None => 100_000,
    };
    let orders = orders_2024(n);
    let Some((joined, sum)) = seed(timely.clone())? else {
        // Not process 0: take part in the second join too, then end without printing.
        ecb(rates, &orders, timely)?;
        return Ok(());
    };
    println!("seed: order_time,amount,currency,rate,converted");
    for line in &joined {
        println!("  {line}");
    }
    println!("seed: SUM(amount * rate) = {sum}");

    let out = ecb(rates, &orders, timely)?.ok_or("process 0 hosts worker 0")?;
    let unmatched = out.rows.iter().filter(|r| r[4].is_empty()).count();
    println!(
        "ECB 2024: {} orders, {} matched, {unmatched} unmatched, {} rejected, {:.2} s",
        out.rows.len(),
        out.rows.len() - unmatched,
        out.rejected,
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
