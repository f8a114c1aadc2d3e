//! The typed operators inside your own timely program.
//!
//! ```text
//! cargo run --example embed_typed -- -w 2
//! ```
//!
//! Orders arrive from an at-least-once source (an order may be delivered twice) and currency
//! rates as a changelog stamped with event times, some of them late. Each worker feeds its share
//! of the input through its own `ChangelogInput`s, which stamp every row with its `seq`. The
//! dataflow deduplicates the orders by id (the first delivery wins), joins each order with the
//! rate of its currency valid at the order's time (an event-time temporal join over the rates'
//! versioned table; a late rate corrects the orders it re-prices), and from there on is plain
//! differential dataflow: the changelog's table as a collection, `reduce`d per currency.
//!
//! Prints, for every worker count:
//!
//! ```text
//! CHF: 1 order(s), 525.00 EUR
//! GBP: 1 order(s), 0.00 EUR
//! USD: 2 order(s), 467.00 EUR
//! ```

use std::sync::{Arc, Mutex};

use differential_dataflow::consolidation::consolidate;
use differential_temporal_operators::dedup::{DedupConfig, DedupOrder, Keep};
use differential_temporal_operators::input::{ChangelogInput, SeqError};
use differential_temporal_operators::temporal_join::{JoinConfig, JoinKind};
use timely::dataflow::ProbeHandle;

/// An order: its currency, its event time (ms) and its amount (units of the currency).
type Order = (String, i64, i64);
/// A rate: its event time (ms) and the price of a unit of the currency, in euro cents.
type Rate = (i64, i64);

/// One epoch of input: orders `(id, order)` and rates `(currency, rate)`, in arrival order.
type Epoch = (Vec<(u32, Order)>, Vec<(String, Rate)>);

/// The input, epoch by epoch.
fn epochs() -> Vec<Epoch> {
    let order = |id, currency: &str, time, cents| (id, (currency.to_string(), time, cents));
    let rate = |currency: &str, time, price| (currency.to_string(), (time, price));
    vec![
        (
            vec![
                order(1, "USD", 10, 300),
                order(2, "CHF", 12, 500),
                order(1, "USD", 10, 300),
            ],
            vec![rate("USD", 5, 92), rate("CHF", 5, 105)],
        ),
        (
            vec![order(3, "USD", 20, 200)],
            // The rate of time 8 is late: it re-prices order 1 (time 10) from 92 to 93.
            vec![rate("USD", 15, 94), rate("USD", 8, 93)],
        ),
        (
            // GBP has no rate (a LEFT join keeps the order); order 2 is delivered again.
            vec![order(4, "GBP", 25, 100), order(2, "CHF", 12, 500)],
            vec![],
        ),
    ]
}

/// Runs the dataflow with timely's arguments `args` (`-w 2`, ...) and returns the final
/// totals: `(currency, orders, total in euro cents)`, by currency.
pub fn run(args: impl Iterator<Item = String>) -> Result<Vec<(String, isize, i64)>, String> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let guards = timely::execute_from_args(args, move |worker| {
        let (index, peers) = (worker.index(), worker.peers());
        let mut orders = ChangelogInput::<u32, Order>::new(worker);
        let mut rates = ChangelogInput::<String, Rate>::new(worker);
        let probe = ProbeHandle::new();
        let sink = Arc::clone(&sink);

        worker.dataflow::<u64, _, _>(|scope| {
            // The first delivery of each order id; then keyed by currency.
            let first = DedupConfig::new(Keep::First, DedupOrder::Arrival);
            let (orders, _refused) = orders.to_changelog(scope).deduplicate(first, |_| ());
            let orders = orders.map(|_id, (currency, time, cents)| (currency, (time, cents)));
            // The rates' versioned table, and each order joined with the rate as of its time.
            let rates = rates.to_changelog(scope).versioned(|rate| rate.0, "Rates");
            let priced =
                orders.temporal_join(|order| order.0, &rates, JoinConfig::new(JoinKind::Left));
            // Plain differential dataflow from here on: the joined table, reduced per currency.
            priced
                .into_collection()
                .map(|(currency, ((_, units), rate))| (currency, units * rate.map_or(0, |r| r.1)))
                .reduce(|_currency, input, output| {
                    let orders: isize = input.iter().map(|(_, n)| *n).sum();
                    let total: i64 = input.iter().map(|(v, n)| **v * *n as i64).sum();
                    output.push(((orders, total), 1isize));
                })
                .inspect(move |update| sink.lock().unwrap().push(update.clone()))
                .probe_with(&probe);
        });

        // Each worker enters its share of every epoch: the rows at positions `i % peers == index`.
        for (epoch, (order_rows, rate_rows)) in epochs().into_iter().enumerate() {
            for (id, order) in order_rows.into_iter().skip(index).step_by(peers) {
                orders.insert(id, order)?;
            }
            for (currency, rate) in rate_rows.into_iter().skip(index).step_by(peers) {
                rates.insert(currency, rate)?;
            }
            let next = epoch as u64 + 1;
            orders.advance_to(next)?;
            rates.advance_to(next)?;
            orders.flush();
            rates.flush();
            worker.step_while(|| probe.less_than(orders.time()));
        }
        Ok::<_, SeqError>(())
    })?;
    for result in guards.join() {
        result?.map_err(|e| e.to_string())?;
    }
    // The totals as of the end: every update, accumulated.
    let mut totals: Vec<_> = seen
        .lock()
        .unwrap()
        .drain(..)
        .map(|((currency, (orders, total)), _time, diff)| ((currency, orders, total), diff))
        .collect();
    consolidate(&mut totals);
    Ok(totals.into_iter().map(|(total, _)| total).collect())
}

fn main() -> Result<(), String> {
    for (currency, orders, total) in run(std::env::args())? {
        println!(
            "{currency}: {orders} order(s), {}.{:02} EUR",
            total / 100,
            total % 100
        );
    }
    Ok(())
}
