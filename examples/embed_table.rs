//! A SQL query rendered into your own timely dataflow, over your own collections.
//!
//! ```text
//! cargo run --example embed_table -- -w 2
//! ```
//!
//! Orders and currency rates are Rust structs, declared with `row_struct!`: their schemas come
//! from their fields, and they are packed into rows with `to_row`. Each worker feeds its share
//! through its own `ChangelogInput`s (which stamp every row with its `seq`), registers the two
//! collections in a `TableEnv` of its own, and renders one SQL query into its dataflow: each
//! order priced at the rate of its currency valid at the order's time (an event-time temporal
//! join; a late rate re-prices the orders it covers), summed per currency. The result rows are
//! read back as a Rust struct with `from_row`.
//!
//! Prints, for every worker count:
//!
//! ```text
//! CHF: 1 order(s), 525.00 EUR
//! USD: 2 order(s), 467.00 EUR
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use differential_dataflow::consolidation::consolidate;
use differential_temporal::operators::input::ChangelogInput;
use differential_temporal::operators::SysTime;
use differential_temporal::render::{ExecutionMode, RenderContext};
use differential_temporal::repr::typed::{FromRow, IntoRow, RowType};
use differential_temporal::repr::{Row, Ts};
use differential_temporal::row_struct;
use differential_temporal::table::TableEnv;
use timely::dataflow::ProbeHandle;

row_struct! {
    /// An order: its currency, amount (units of the currency) and event time.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Order {
        pub currency: String,
        pub amount: i64,
        pub ts: Ts,
    }
}

row_struct! {
    /// A rate: the price of a unit of the currency in euro cents, from its event time on.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Rate {
        pub currency: String,
        pub price: i64,
        pub ts: Ts,
    }
}

row_struct! {
    /// A result row of the query.
    #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
    pub struct Total {
        pub currency: String,
        pub orders: i64,
        pub cents: Option<i64>,
    }
}

/// The query: every order priced as of its time, summed per currency.
const QUERY: &str = "SELECT o.currency, COUNT(*) AS orders, SUM(o.amount * r.price) AS cents
    FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.currency = r.currency
    GROUP BY o.currency";

/// The input, epoch by epoch: orders and rates, in arrival order.
fn epochs() -> Vec<(Vec<Order>, Vec<Rate>)> {
    let at = Ts::from_millis;
    let order = |currency: &str, amount, ts| Order {
        currency: currency.to_string(),
        amount,
        ts: at(ts),
    };
    let rate = |currency: &str, price, ts| Rate {
        currency: currency.to_string(),
        price,
        ts: at(ts),
    };
    vec![
        (
            vec![order("USD", 300, 10), order("CHF", 500, 12)],
            vec![rate("USD", 92, 5), rate("CHF", 105, 5)],
        ),
        (
            vec![order("USD", 200, 20)],
            // The rate of time 8 is late: it re-prices the first order (time 10) from 92 to 93.
            vec![rate("USD", 94, 15), rate("USD", 93, 8)],
        ),
        // GBP has no rate: the inner join drops its order.
        (vec![order("GBP", 100, 25)], vec![]),
    ]
}

/// Runs the dataflow with timely's arguments `args` (`-w 2`, ...) and returns the final
/// result rows, sorted, and the number of rows the plan refused.
pub fn run(args: impl Iterator<Item = String>) -> Result<(Vec<Total>, usize), String> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let guards = timely::execute_from_args(args, move |worker| {
        let (index, peers) = (worker.index(), worker.peers());
        let mut orders = ChangelogInput::<(), Row>::new(worker);
        let mut rates = ChangelogInput::<(), Row>::new(worker);
        let probe = ProbeHandle::new();
        let sink = Arc::clone(&sink);

        // The environment lives on the worker: one per worker, the same on each.
        let env = TableEnv::new();
        let orders_schema = Order::schema()
            .with_rowtime("ts", 0)
            .map_err(|e| e.to_string())?;
        let rates_schema = Rate::schema()
            .with_primary_key(["currency"])
            .and_then(|s| s.with_rowtime("ts", 0))
            .map_err(|e| e.to_string())?;
        env.register_collection("orders", orders_schema, false)
            .map_err(|e| e.to_string())?;
        env.register_collection("rates", rates_schema, false)
            .map_err(|e| e.to_string())?;
        let totals = env.sql_query(QUERY).map_err(|e| e.to_string())?;

        worker.dataflow::<SysTime, _, _>(|scope| {
            // The plan reads `Change<Row>` collections by table name.
            let rows = |input: &mut ChangelogInput<(), Row>| {
                input
                    .to_changelog(scope)
                    .into_changes()
                    .map(|((), change)| change)
            };
            let sources = BTreeMap::from([
                ("orders".to_string(), rows(&mut orders)),
                ("rates".to_string(), rows(&mut rates)),
            ]);
            let mut ctx = RenderContext::new(scope, sources, ExecutionMode::Incremental);
            let table = totals.render(&mut ctx).map_err(|e| e.to_string())?;
            let refused = differential_dataflow::collection::concatenate(scope, ctx.refused)
                .map(|rejected| Err(rejected.to_string()));
            table
                .into_table()
                .map(|row| Ok(Total::from_row(&row).map_err(|e| e.to_string())))
                .concat(refused)
                .inspect(move |(result, _time, diff)| {
                    sink.lock().unwrap().push((result.clone(), *diff))
                })
                .probe_with(&probe);
            Ok::<_, String>(())
        })?;

        // Each worker enters its share of every epoch: the rows at positions `i % peers == index`.
        for (epoch, (order_rows, rate_rows)) in epochs().into_iter().enumerate() {
            for order in order_rows.iter().skip(index).step_by(peers) {
                orders
                    .insert((), order.to_row())
                    .map_err(|e| e.to_string())?;
            }
            for rate in rate_rows.iter().skip(index).step_by(peers) {
                rates.insert((), rate.to_row()).map_err(|e| e.to_string())?;
            }
            let next = epoch as SysTime + 1;
            orders.advance_to(next).map_err(|e| e.to_string())?;
            rates.advance_to(next).map_err(|e| e.to_string())?;
            orders.flush();
            rates.flush();
            worker.step_while(|| probe.less_than(orders.time()));
        }
        Ok::<_, String>(())
    })?;
    for result in guards.join() {
        result??;
    }
    // The result as of the end: every update, accumulated.
    let mut updates = std::mem::take(&mut *seen.lock().unwrap());
    consolidate(&mut updates);
    let mut totals = Vec::new();
    let mut refused = 0;
    for (result, diff) in updates {
        match result {
            Ok(Ok(total)) if diff == 1 => totals.push(total),
            Ok(Ok(total)) => return Err(format!("{total:?} counted {diff} times")),
            Ok(Err(misread)) => return Err(misread),
            Err(_) => refused += diff as usize,
        }
    }
    Ok((totals, refused))
}

fn main() -> Result<(), String> {
    let (totals, refused) = run(std::env::args())?;
    for Total {
        currency,
        orders,
        cents,
    } in totals
    {
        let cents = cents.unwrap_or(0);
        println!(
            "{currency}: {orders} order(s), {}.{:02} EUR",
            cents / 100,
            cents % 100
        );
    }
    if refused > 0 {
        println!("{refused} row(s) refused");
    }
    Ok(())
}
