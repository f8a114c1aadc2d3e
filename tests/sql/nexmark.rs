//! Nexmark queries (issue 12) in SQL over the `nexmark` connector's events: q3, q5, q7, q8, q11 and
//! q12 as Flink's Nexmark benchmark writes them (`nexmark-flink/src/main/resources/queries`),
//! each run incrementally on 1 and 2 workers and in final mode on 2, and checked equal to a
//! plain sequential computation of the same query over the same events
//! ([`NexmarkSource::events`]). q12's processing-time windows are computed on the environment's
//! processing-time clock (bid `i` enters at system time `i / block rows`, system time `s` is
//! processing time `start + s` seconds), so the sequential computation knows each bid's stamp.
//!
//! The streams: `EVENTS` events at `RATE` a second of event time (100 s; 1,000 people, 3,000
//! auctions, 46,000 bids), so about ten 10 s windows and fifty hops.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use differential_temporal::io::nexmark::queries::{Q11, Q12, Q3, Q5, Q7, Q8};
use differential_temporal::io::{NexmarkSource, NexmarkTable};
use differential_temporal::plan::ProcessingClock;
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::{format_datum, DataType, Datum, Schema, Ts};
use differential_temporal::table::TableEnv;
use nexmark::event::{Auction, Bid, Event, Person};

const EVENTS: u64 = 50_000;
const RATE: u64 = 500;
const SECOND: u64 = 1_000;

/// The `CREATE TABLE` of the three Nexmark tables (Flink's view columns), `EVENTS` events at
/// `RATE` a second, watermarks 4 s behind as in Flink's `ddl_gen.sql`.
fn ddl() -> String {
    ddl_with_bid_columns("")
}

/// [`ddl`] with `columns` (each followed by a comma) declared after the bid table's `extra`.
fn ddl_with_bid_columns(columns: &str) -> String {
    let with = |table: &str| {
        format!(
            "WITH ('connector' = 'nexmark', 'nexmark.table' = '{table}', 'events.num' = '{EVENTS}',
               'first-event.rate' = '{RATE}', 'next-event.rate' = '{RATE}')"
        )
    };
    format!(
        "CREATE TABLE person (id BIGINT, name STRING, emailAddress STRING, creditCard STRING,
           city STRING, state STRING, dateTime TIMESTAMP(3), extra STRING,
           WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND) {};
         CREATE TABLE auction (id BIGINT, itemName STRING, description STRING, initialBid BIGINT,
           reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT,
           category BIGINT, extra STRING,
           WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND) {};
         CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,
           dateTime TIMESTAMP(3), extra STRING, {columns}
           WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND) {}",
        with("person"),
        with("auction"),
        with("bid")
    )
}

/// A run: workers, block bytes (the generated rows cut into blocks of one row per 64 bytes),
/// mode.
type Run = (usize, usize, ExecutionMode);

const BLOCK: usize = 64 << 10;

/// Incremental on 1 and 2 workers, final (emit on window close) on 2: blocks of 1024 rows.
const RUNS: &[Run] = &[
    (1, BLOCK, ExecutionMode::Incremental),
    (2, BLOCK, ExecutionMode::Incremental),
    (2, BLOCK, ExecutionMode::Final),
];

/// `query`'s final table in `run`, as sorted text lines.
fn run(run: Run, query: &str) -> Vec<String> {
    run_in(environment(run), &ddl(), query)
}

/// The environment of `run`.
fn environment((workers, block_bytes, mode): Run) -> TableEnv {
    TableEnv::new()
        .with_workers(workers)
        .with_block_bytes(block_bytes)
        .with_mode(mode)
}

/// `query`'s final table in `env` after `ddl`, as sorted text lines.
fn run_in(env: TableEnv, ddl: &str, query: &str) -> Vec<String> {
    env.execute_sql(ddl).unwrap();
    let mut rows = env
        .sql_query(query)
        .unwrap()
        .execute()
        .unwrap()
        .rows_as_text();
    rows.sort();
    rows
}

/// Checks `query` in each of `runs` against `expected` (sorted here), which must not be empty.
fn check(runs: &[Run], query: &str, mut expected: Vec<String>) {
    expected.sort();
    assert!(!expected.is_empty());
    for &r in runs {
        let rows = run(r, query);
        assert_eq!(rows.len(), expected.len(), "{r:?}");
        assert_eq!(rows, expected, "{r:?}");
    }
}

/// The events of `table` the connector generates.
fn events(table: NexmarkTable) -> Vec<Event> {
    let empty = Schema::builder().build().unwrap();
    let source = NexmarkSource::new(table.name(), table, empty, EVENTS)
        .and_then(|s| s.with_rates(RATE, RATE))
        .unwrap();
    source.events(0..source.rows()).collect()
}

fn bids() -> Vec<Bid> {
    let all = events(NexmarkTable::Bid);
    all.into_iter()
        .map(|e| match e {
            Event::Bid(b) => b,
            other => panic!("{other:?}"),
        })
        .collect()
}

/// A time as the CSV text of a TIMESTAMP(3).
fn ts(ms: u64) -> String {
    let mut text = String::new();
    let datum = Datum::Timestamp(Ts::from_millis(ms as i64));
    format_datum(datum, &DataType::Timestamp(3), &mut text).unwrap();
    text
}

/// The start of the epoch-aligned window of `size` ms holding `t`.
fn start(t: u64, size: u64) -> u64 {
    t - t % size
}

/// The connector's rows are the generator's events: every bid's columns, whatever the workers
/// and the blocks (1024 rows, or 101: blocks that start on every worker's share).
#[test]
fn bids_are_the_generators_events() {
    let bids = bids();
    assert_eq!(bids.len(), 46_000);
    let sum = |f: fn(&Bid) -> usize| bids.iter().map(f).sum::<usize>();
    let expected = vec![format!(
        "{},{},{},{},{},{}",
        bids.len(),
        sum(|b| b.auction),
        sum(|b| b.bidder),
        sum(|b| b.price),
        ts(bids[0].date_time),
        ts(bids[bids.len() - 1].date_time)
    )];
    let query =
        "SELECT COUNT(*), SUM(auction), SUM(bidder), SUM(price), MIN(dateTime), MAX(dateTime)
                 FROM bid";
    let incremental = ExecutionMode::Incremental;
    let blocks = [(2, 64 * 101, incremental), (4, 64 * 101, incremental)];
    check(&[RUNS, &blocks].concat(), query, expected);
    let b = &bids[32_345];
    let expected = vec![format!(
        "{},{},{},{},{},{},{}",
        b.auction,
        b.bidder,
        b.price,
        b.channel,
        b.url,
        ts(b.date_time),
        b.extra
    )];
    let query = format!(
        "SELECT * FROM bid WHERE auction = {} AND bidder = {} AND price = {} AND extra = '{}'",
        b.auction, b.bidder, b.price, b.extra
    );
    check(RUNS, &query, expected);
}

/// q3, local item suggestion: the sellers of category 10 auctions living in OR, ID or CA. The
/// states are upper case, as Flink's generator writes them, so the query finds its rows (with
/// the `nexmark` crate's lower-case states it found none).
#[test]
fn q3_local_item_suggestion() {
    let people: BTreeMap<usize, (String, String, String)> = events(NexmarkTable::Person)
        .into_iter()
        .map(|e| match e {
            Event::Person(Person {
                id,
                name,
                city,
                state,
                ..
            }) => (id, (name, city, state)),
            other => panic!("{other:?}"),
        })
        .collect();
    let mut expected = Vec::new();
    for e in events(NexmarkTable::Auction) {
        let Event::Auction(a) = e else {
            panic!("{e:?}")
        };
        match people.get(&a.seller) {
            Some((name, city, state))
                if a.category == 10 && ["OR", "ID", "CA"].contains(&state.as_str()) =>
            {
                expected.push(format!("{name},{city},{state},{}", a.id))
            }
            _ => {}
        }
    }
    assert!(expected.len() > 100, "{}", expected.len());
    check(RUNS, Q3, expected);
}

/// q5, hot items: the auctions with the most bids in each 10 s window sliding by 2 s.
#[test]
fn q5_hot_items() {
    let query = Q5;
    // Bids per (window start, auction): each bid is in the 5 windows starting 0..5 slides
    // before its own slide.
    let (size, slide) = (10 * SECOND, 2 * SECOND);
    let mut counts: BTreeMap<(u64, usize), u64> = BTreeMap::new();
    for b in bids() {
        let last = start(b.date_time, slide);
        for k in 0..size / slide {
            if let Some(s) = last.checked_sub(k * slide) {
                *counts.entry((s, b.auction)).or_default() += 1;
            }
        }
    }
    let mut max: BTreeMap<u64, u64> = BTreeMap::new();
    for (&(s, _), &n) in &counts {
        let m = max.entry(s).or_default();
        *m = (*m).max(n);
    }
    let expected = counts
        .iter()
        .filter(|((s, _), n)| **n >= max[s])
        .map(|((_, auction), n)| format!("{auction},{n}"))
        .collect();
    check(RUNS, query, expected);
}

/// q7, highest bid: the bids at the highest price of each 10 s tumbling window, joined back on
/// the price within the window (both ends inclusive, as Flink's BETWEEN).
#[test]
fn q7_highest_bid() {
    let query = Q7;
    let size = 10 * SECOND;
    let bids = bids();
    let mut max: BTreeMap<u64, usize> = BTreeMap::new();
    for b in &bids {
        let m = max.entry(start(b.date_time, size) + size).or_default();
        *m = (*m).max(b.price);
    }
    let mut expected = Vec::new();
    for (&end, &price) in &max {
        for b in &bids {
            if b.price == price && end - size <= b.date_time && b.date_time <= end {
                let time = ts(b.date_time);
                let (auction, bidder, extra) = (b.auction, b.bidder, &b.extra);
                expected.push(format!("{auction},{bidder},{price},{time},{extra}"));
            }
        }
    }
    check(RUNS, query, expected);
}

/// q8, monitor new users: the people who opened an auction in the 10 s window they joined in.
#[test]
fn q8_new_users_who_sell() {
    let query = Q8;
    let size = 10 * SECOND;
    let sellers: BTreeSet<(usize, u64)> = events(NexmarkTable::Auction)
        .into_iter()
        .map(|e| match e {
            Event::Auction(Auction {
                seller, date_time, ..
            }) => (seller, start(date_time, size)),
            other => panic!("{other:?}"),
        })
        .collect();
    let people: BTreeSet<(usize, String, u64)> = events(NexmarkTable::Person)
        .into_iter()
        .map(|e| match e {
            Event::Person(Person {
                id,
                name,
                date_time,
                ..
            }) => (id, name, start(date_time, size)),
            other => panic!("{other:?}"),
        })
        .collect();
    let expected = people
        .into_iter()
        .filter(|(id, _, s)| sellers.contains(&(*id, *s)))
        .map(|(id, name, s)| format!("{id},{name},{}", ts(s)))
        .collect();
    check(RUNS, query, expected);
}

/// q11, user sessions: each bidder's bids in sessions closed by 10 s without a bid (rows
/// exactly the gap apart share a session), in Flink's group-window form and as the SESSION
/// window TVF.
#[test]
fn q11_user_sessions() {
    let legacy = Q11;
    let tvf = "
        SELECT bidder, count(*) AS bid_count, window_start AS starttime, window_end AS endtime
        FROM TABLE(SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
        GROUP BY bidder, window_start, window_end";
    let gap = 10 * SECOND;
    let mut times: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
    for b in bids() {
        times.entry(b.bidder).or_default().push(b.date_time);
    }
    let mut expected = Vec::new();
    for (bidder, mut times) in times {
        times.sort_unstable();
        let mut session = (times[0], times[0], 0);
        for t in times {
            if t > session.1 + gap {
                let (first, last, n) = session;
                expected.push(format!("{bidder},{n},{},{}", ts(first), ts(last + gap)));
                session = (t, t, 0);
            }
            session.1 = t;
            session.2 += 1;
        }
        let (first, last, n) = session;
        expected.push(format!("{bidder},{n},{},{}", ts(first), ts(last + gap)));
    }
    check(RUNS, legacy, expected.clone());
    check(RUNS, tvf, expected);
}

/// q12, processing-time windows: each bidder's bids per 10 s tumbling window of processing
/// time, `p_time AS PROCTIME()` stamped by a clock of one second a system time from the
/// generator's base time: with blocks of `b` rows, bid `i` has processing time `base + i / b`
/// seconds. Blocks of 1024 rows (five windows of ten blocks) and of 101 rows (a different
/// batching, so different windows).
#[test]
fn q12_processing_time_windows() {
    let base = differential_temporal::io::nexmark::BASE_TIME_MS;
    let clock = ProcessingClock::new(Ts::from_millis(base as i64), Duration::from_secs(1)).unwrap();
    let ddl = ddl_with_bid_columns("p_time AS PROCTIME(),");
    let size = 10 * SECOND;
    let bids = bids();
    let incremental = ExecutionMode::Incremental;
    let runs = [
        RUNS,
        &[
            (2, 64 * 101, incremental),
            (2, 64 * 101, ExecutionMode::Final),
        ],
    ]
    .concat();
    for run in runs {
        let block_rows = (run.1 / 64) as u64;
        let mut counts: BTreeMap<(usize, u64), u64> = BTreeMap::new();
        for (i, b) in bids.iter().enumerate() {
            let p_time = base + i as u64 / block_rows * SECOND;
            *counts.entry((b.bidder, start(p_time, size))).or_default() += 1;
        }
        let mut expected: Vec<String> = (counts.into_iter())
            .map(|((bidder, s), n)| format!("{bidder},{n},{},{}", ts(s), ts(s + size)))
            .collect();
        expected.sort();
        let env = environment(run).with_processing_clock(clock);
        let rows = run_in(env, &ddl, Q12);
        assert_eq!(rows.len(), expected.len(), "{run:?}");
        assert_eq!(rows, expected, "{run:?}");
    }
}
