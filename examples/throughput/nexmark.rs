//! Nexmark q5, q7, q8 and q11 (issue 12) in SQL, as Flink's Nexmark benchmark writes them (the
//! texts `tests/sql/nexmark.rs` checks), planned with `TableEnv::sql_query` over the tables
//! `person`, `auction` and `bid` registered as collections, and rendered in final mode.
//!
//! The events are the `'connector' = 'nexmark'` source's ([`NexmarkSource`], the `nexmark`
//! crate's generator at its default rate of 10,000 events a second of event time, so 10M events
//! span 1000 s): `N = --rows` events of all kinds (1 person, 3 auctions, 46 bids in 50), each
//! epoch the events `[a, b)`, every table's rows among them cut into one contiguous run per
//! worker, `seq` the row's index in its table. Only the tables a query reads are packed and fed
//! (q8 reads people and auctions, the others bids), but the rates count all `N` events, as a
//! Nexmark source emits all of them and Flink's views drop the other kinds. Each table declares
//! only the columns its query reads (as a projection pushed into the source would), rowtime
//! `dateTime` with Flink's 4 s watermark delay (the events are in time order, so none is late).
//!
//! Baselines: the sequential computations of `tests/sql/nexmark.rs`, in one pass over the
//! events and a pass over the state at the end:
//!
//! * q5: bids per (hop window start, auction) in a `HashMap`, then each window's maximum and
//!   the auctions that reach it, as `[auction, num]`;
//! * q7: per 10 s window its highest price and the bids at it, plus the bids at its end
//!   instant (`BETWEEN` includes it), as `[auction, bidder, price, dateTime, extra]`;
//! * q8: the set of (seller, window start) and of (person, name, window start), joined, as
//!   `[id, name, starttime]`;
//! * q11: each bidder's bid times sorted and split at 10 s gaps ([`sessions`]), as
//!   `[bidder, bid_count, starttime, endtime]`.
//!
//! Strings are digested as a hash ([`text`]).

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use differential_temporal::io::{NexmarkSource, NexmarkTable};
use differential_temporal::operators::{Change, RowKind};
use differential_temporal::render::ExecutionMode;
use differential_temporal::repr::{DataType, Row, Schema};
use nexmark::event::Event;

use crate::baseline::{timed, Base};
use crate::dataflows::{drive, Run};
use differential_temporal::io::nexmark::queries::{Q11, Q5, Q7, Q8};

use crate::relational::{integers, plan, render};
use crate::report::{text, Digest};
use crate::windows::sessions;
use crate::workload::Shape;
use crate::Op;

/// The windows' size (q5's hop, q7's and q8's tumble) and q11's gap, in ms.
const SIZE: u64 = 10_000;
/// q5's slide, in ms.
const SLIDE: u64 = 2_000;
/// Flink's watermark delay in the Nexmark DDL, in ms.
const DELAY_MS: i64 = 4_000;

/// A table a query reads and the columns it declares.
type Table = (NexmarkTable, &'static [&'static str]);

/// The query of `op` and the tables it reads, each with the columns the query reads.
fn query(op: Op) -> (&'static str, &'static [Table]) {
    use NexmarkTable::{Auction, Bid, Person};
    match op {
        Op::NexmarkQ5 => (Q5, &[(Bid, &["auction", "dateTime"])]),
        Op::NexmarkQ7 => (
            Q7,
            &[(Bid, &["auction", "bidder", "price", "dateTime", "extra"])],
        ),
        Op::NexmarkQ8 => (
            Q8,
            &[
                (Person, &["id", "name", "dateTime"]),
                (Auction, &["seller", "dateTime"]),
            ],
        ),
        Op::NexmarkQ11 => (Q11, &[(Bid, &["bidder", "dateTime"])]),
        other => unreachable!("{other:?} is not a Nexmark SQL query"),
    }
}

/// The schema of `columns`, rowtime `dateTime` 4 s behind.
fn schema(columns: &[&str]) -> Schema {
    let mut builder = Schema::builder();
    for &name in columns {
        let ty = match name {
            "dateTime" => DataType::Timestamp(3),
            "name" | "extra" => DataType::STRING,
            _ => DataType::BigInt,
        };
        builder = builder.column(name, ty.nullable());
    }
    builder
        .rowtime("dateTime", DELAY_MS)
        .build()
        .expect("a valid schema")
}

/// `table`'s source over the first `events` events of the stream.
fn source((table, columns): &Table, events: u64) -> NexmarkSource {
    NexmarkSource::new(table.name(), *table, schema(columns), events).expect("nexmark columns")
}

/// The rows of `source`'s table among the events `range` of the stream.
fn rows(source: &NexmarkSource, range: &Range<u64>) -> Range<u64> {
    let table = table_of(source);
    let before = |events| {
        NexmarkSource::new(source.name(), table, source.schema().clone(), events)
            .expect("nexmark columns")
            .rows()
    };
    before(range.start)..before(range.end)
}

/// The table `source` reads.
fn table_of(source: &NexmarkSource) -> NexmarkTable {
    NexmarkTable::from_name(source.name()).expect("sources are named after their table")
}

/// `op`'s query on `workers` threads over `shape.rows` events (see the module docs).
pub fn measure(op: Op, workers: usize, shape: Shape) -> Run {
    let (sql, tables) = query(op);
    let registered: Vec<_> = (tables.iter())
        .map(|(t, columns)| (t.name(), schema(columns), false))
        .collect();
    let plan = plan(&registered, |env| {
        env.sql_query(sql).expect("the query plans")
    });
    let sources: Vec<NexmarkSource> = tables.iter().map(|t| source(t, shape.rows)).collect();
    // Each table's rows of the epoch, one contiguous run per worker, tagged with the table.
    let generate = move |range: Range<u64>, index, peers, out: &mut Vec<(u8, Change<Row>)>| {
        for (tag, source) in sources.iter().enumerate() {
            let rows = rows(source, &range);
            let chunk = (rows.end - rows.start).div_ceil(peers as u64);
            let start = (rows.start + chunk * index as u64).min(rows.end);
            let mine = start..(start + chunk).min(rows.end);
            let events = source.events(mine.clone());
            out.extend(mine.zip(events).map(|(seq, event)| {
                (
                    tag as u8,
                    Change::new(seq, RowKind::Insert, source.row(&event)),
                )
            }));
        }
    };
    drive(workers, shape, generate, move |changes, sink| {
        let scope = changes.scope();
        let sources = (tables.iter().enumerate())
            .map(|(tag, (table, _))| {
                let tag = tag as u8;
                let rows = (changes.clone()).flat_map(move |(t, c)| (t == tag).then_some(c));
                (table.name().to_string(), rows)
            })
            .collect();
        let out = render(scope, sources, ExecutionMode::Final, &plan, sink).into_table();
        match op {
            Op::NexmarkQ5 => sink.observe(out, integers::<2>),
            Op::NexmarkQ7 => sink.observe(out, integers::<5>),
            Op::NexmarkQ8 => sink.observe(out, integers::<3>),
            _ => sink.observe(out, integers::<4>),
        }
    })
}

/// The baseline of `op` (see the module docs).
pub fn baseline(op: Op, shape: Shape) -> Base {
    let tables = query(op).1;
    let sources: Vec<NexmarkSource> = tables.iter().map(|t| source(t, shape.rows)).collect();
    let generate = |range: Range<u64>, out: &mut Vec<Event>| {
        for source in &sources {
            out.extend(source.events(rows(source, &range)));
        }
    };
    let mut digest = Digest::default();
    let start = |t: u64, size: u64| t - t % size;
    let (clock, keys) = match op {
        Op::NexmarkQ5 => {
            let mut counts: HashMap<(u64, u64), u64> = HashMap::new();
            let mut clock = timed(&shape, generate, |events| {
                for b in events.iter().filter_map(bid) {
                    let last = start(b.date_time, SLIDE);
                    for k in 0..SIZE / SLIDE {
                        if let Some(s) = last.checked_sub(k * SLIDE) {
                            *counts.entry((s, b.auction as u64)).or_default() += 1;
                        }
                    }
                }
            });
            clock.start();
            let mut max: HashMap<u64, u64> = HashMap::new();
            for (&(s, _), &n) in &counts {
                let m = max.entry(s).or_default();
                *m = (*m).max(n);
            }
            for (&(s, auction), &n) in &counts {
                if n >= max[&s] {
                    digest.add([auction, n], 1);
                }
            }
            clock.stop();
            (clock, counts.len() as u64)
        }
        Op::NexmarkQ7 => {
            // Per window end: the highest price among the window's bids and the bids at it,
            // and the bids at the end instant itself (in the next window, but `BETWEEN` keeps
            // them if they reach this window's highest price).
            type Fields = [u64; 5];
            let mut windows: HashMap<u64, (u64, Vec<Fields>, Vec<Fields>)> = HashMap::new();
            let mut bids = 0;
            let mut clock = timed(&shape, generate, |events| {
                for b in events.iter().filter_map(bid) {
                    bids += 1;
                    let (t, price) = (b.date_time, b.price as u64);
                    let fields = [b.auction as u64, b.bidder as u64, price, t, text(&b.extra)];
                    let (max, top, _) = windows.entry(start(t, SIZE) + SIZE).or_default();
                    if price > *max || top.is_empty() {
                        (*max, *top) = (price, Vec::new());
                    }
                    if price == *max {
                        top.push(fields);
                    }
                    if t.is_multiple_of(SIZE) {
                        windows.entry(t).or_default().2.push(fields);
                    }
                }
            });
            clock.start();
            for (max, top, at_end) in windows.values() {
                if !top.is_empty() {
                    let at_max = at_end.iter().filter(|f| f[2] == *max);
                    top.iter().chain(at_max).for_each(|f| digest.add(*f, 1));
                }
            }
            clock.stop();
            (clock, bids)
        }
        Op::NexmarkQ8 => {
            let mut sellers: HashSet<(u64, u64)> = HashSet::new();
            let mut people: HashSet<(u64, u64, u64)> = HashSet::new();
            let mut clock = timed(&shape, generate, |events| {
                for event in events {
                    match event {
                        Event::Person(p) => {
                            let s = start(p.date_time, SIZE);
                            people.insert((p.id as u64, text(&p.name), s));
                        }
                        Event::Auction(a) => {
                            sellers.insert((a.seller as u64, start(a.date_time, SIZE)));
                        }
                        Event::Bid(_) => {}
                    }
                }
            });
            clock.start();
            for &(id, name, s) in &people {
                if sellers.contains(&(id, s)) {
                    digest.add([id, name, s], 1);
                }
            }
            clock.stop();
            (clock, (people.len() + sellers.len()) as u64)
        }
        _ => {
            let mut by_bidder: HashMap<u64, Vec<(i64, u64)>> = HashMap::new();
            let mut clock = timed(&shape, generate, |events| {
                for b in events.iter().filter_map(bid) {
                    let times = by_bidder.entry(b.bidder as u64).or_default();
                    times.push((b.date_time as i64, 0));
                }
            });
            clock.start();
            let mut sessions_seen = 0;
            for (&bidder, times) in &mut by_bidder {
                sessions(times, SIZE as i64, |start, end, cnt, _| {
                    sessions_seen += 1;
                    digest.add([bidder, cnt, start as u64, end as u64], 1)
                });
            }
            clock.stop();
            (clock, sessions_seen)
        }
    };
    Base {
        digest,
        clock,
        keys,
    }
}

/// `event` if it is a bid.
fn bid(event: &Event) -> Option<&nexmark::event::Bid> {
    match event {
        Event::Bid(b) => Some(b),
        _ => None,
    }
}
