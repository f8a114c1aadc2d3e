//! Nexmark events: the `person`, `auction` and `bid` tables of the Nexmark benchmark as a
//! bounded source of packed [`Row`]s, made by the `nexmark` crate's generator (a port of the
//! Beam / Flink Nexmark generator).
//!
//! The columns are those of Flink's Nexmark benchmark (`nexmark-flink`'s `ddl_gen.sql` views):
//!
//! - `person(id, name, emailAddress, creditCard, city, state, dateTime, extra)`
//! - `auction(id, itemName, description, initialBid, reserve, dateTime, expires, seller,
//!   category, extra)`
//! - `bid(auction, bidder, price, channel, url, dateTime, extra)`
//!
//! Ids and prices are BIGINT, times (`dateTime`, `expires`) TIMESTAMP(3) (or TIMESTAMP_LTZ),
//! the rest STRING; a table declares any of its columns, in any order.
//!
//! The events are a pure function of their index: event `n` of the stream (all kinds, 1 person,
//! 3 auctions and 46 bids in every 50) is the generator's event `n` in its default
//! configuration, except that its base time is fixed at [`BASE_TIME_MS`] (the generator reads
//! the clock otherwise) and its rate shape is Flink's default square wave between
//! `first-event.rate` and `next-event.rate` events a second (10,000 each by default): the rates
//! space the events' times, they do not throttle generation (Flink's source sleeps to keep
//! to them; a deliberate difference, as the table is bounded). States, cities and names are
//! written as Flink's generator writes them (`OR`, `Los Angeles`, `Peter Shultz`: the crate's
//! defaults are lower case, and Flink's q3 compares `P.state = 'OR'`); the values themselves
//! come from the crate's random draws, not Java's `Random`, so they are Flink's kinds of values,
//! not Flink's exact events. A table of `events` events keeps
//! those of its kind among the first `events` ([`NexmarkSource::rows`]), as Flink's does.
//!
//! The generator draws each event's values from a `SmallRng` (rand 0.8) seeded by the event's
//! number: the same events in every run and build on 64-bit targets.
//!
//! Reading: the rows are cut into blocks of [`block_rows`](NexmarkSource::with_block_rows)
//! consecutive rows; block `b` enters at system time `b`, with `seq` the row's index, and row
//! `i` is made by worker `i % peers` (as [`DatagenSource`](super::DatagenSource)'s), so the
//! rows are the same on any number of workers.

pub mod queries;

use nexmark::config::{NexmarkConfig, RateShape};
use nexmark::event::{Event, EventType};
use nexmark::EventGenerator;

use super::datagen::{worker_share, DatagenBlocks};
use crate::csv::{Block, RowError};
use crate::operators::{Change, RowKind};
use crate::repr::time::truncate_to_precision;
use crate::repr::{DataType, Datum, Field, Row, Schema, Ts};

/// The generator's base time (the time of event 0): 2023-11-14 22:13:20 UTC, in ms since the
/// Unix epoch.
pub const BASE_TIME_MS: u64 = 1_700_000_000_000;

/// Flink's default `first-event.rate` and `next-event.rate`, in events a second.
pub const DEFAULT_EVENT_RATE: u64 = 10_000;

/// The largest event rate the generator takes (above it events would share their
/// microseconds).
pub const MAX_EVENT_RATE: u64 = 1_000_000;

/// The most events a stream has (2^40, about 1.1e12): their times, even at 1 event a second,
/// stay far within a millisecond `i64`, and the generator's ids within a `u64`.
pub const MAX_EVENTS: u64 = 1 << 40;

/// One of the three Nexmark tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NexmarkTable {
    /// People: sellers and bidders.
    Person,
    /// Auctions.
    Auction,
    /// Bids on auctions.
    Bid,
}

/// What a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    Str,
    Time,
}

const PERSON: &[(&str, Kind)] = &[
    ("id", Kind::Int),
    ("name", Kind::Str),
    ("emailAddress", Kind::Str),
    ("creditCard", Kind::Str),
    ("city", Kind::Str),
    ("state", Kind::Str),
    ("dateTime", Kind::Time),
    ("extra", Kind::Str),
];

const AUCTION: &[(&str, Kind)] = &[
    ("id", Kind::Int),
    ("itemName", Kind::Str),
    ("description", Kind::Str),
    ("initialBid", Kind::Int),
    ("reserve", Kind::Int),
    ("dateTime", Kind::Time),
    ("expires", Kind::Time),
    ("seller", Kind::Int),
    ("category", Kind::Int),
    ("extra", Kind::Str),
];

const BID: &[(&str, Kind)] = &[
    ("auction", Kind::Int),
    ("bidder", Kind::Int),
    ("price", Kind::Int),
    ("channel", Kind::Str),
    ("url", Kind::Str),
    ("dateTime", Kind::Time),
    ("extra", Kind::Str),
];

impl NexmarkTable {
    /// The table of a `'nexmark.table'` value: `person`, `auction` or `bid`.
    pub fn from_name(name: &str) -> Option<NexmarkTable> {
        match name {
            "person" => Some(NexmarkTable::Person),
            "auction" => Some(NexmarkTable::Auction),
            "bid" => Some(NexmarkTable::Bid),
            _ => None,
        }
    }

    /// The table's name: `person`, `auction` or `bid`.
    pub fn name(self) -> &'static str {
        match self {
            NexmarkTable::Person => "person",
            NexmarkTable::Auction => "auction",
            NexmarkTable::Bid => "bid",
        }
    }

    /// The names of the table's fields, in Flink's order.
    pub fn fields(self) -> impl Iterator<Item = &'static str> {
        self.kinds().iter().map(|(name, _)| *name)
    }

    /// The field `column` reads (its index in [`fields`](Self::fields)), matched by name.
    ///
    /// Errors: `column` is not a field of the table (the message lists them), or its type does
    /// not hold the field's values (BIGINT for ids and prices, TIMESTAMP(p) or TIMESTAMP_LTZ(p)
    /// for times, STRING for text).
    ///
    /// ```
    /// use differential_temporal::io::NexmarkTable;
    /// use differential_temporal::repr::{DataType, Field};
    ///
    /// let price = Field::new("price", DataType::BigInt.nullable());
    /// assert_eq!(NexmarkTable::Bid.field_of(&price), Ok(2));
    /// let small = Field::new("price", DataType::Int.nullable());
    /// assert_eq!(
    ///     NexmarkTable::Bid.field_of(&small).unwrap_err(),
    ///     "column 'price' is of type INT, but the nexmark field bid.price is a BIGINT"
    /// );
    /// ```
    pub fn field_of(self, column: &Field) -> Result<usize, String> {
        let Some(index) = self.fields().position(|f| f == column.name) else {
            let fields: Vec<&str> = self.fields().collect();
            return Err(format!(
                "column '{}' is not a field of the nexmark table '{}'; its fields are {}",
                column.name,
                self.name(),
                fields.join(", ")
            ));
        };
        let ty = &column.ty.data_type;
        let (fits, wanted) = match self.kinds()[index].1 {
            Kind::Int => (*ty == DataType::BigInt, "BIGINT"),
            Kind::Str => (*ty == DataType::STRING, "STRING"),
            Kind::Time => (
                matches!(ty, DataType::Timestamp(_) | DataType::TimestampLtz(_)),
                "TIMESTAMP(3)",
            ),
        };
        if fits {
            Ok(index)
        } else {
            Err(format!(
                "column '{}' is of type {ty}, but the nexmark field {}.{} is a {wanted}",
                column.name,
                self.name(),
                column.name
            ))
        }
    }

    fn kinds(self) -> &'static [(&'static str, Kind)] {
        match self {
            NexmarkTable::Person => PERSON,
            NexmarkTable::Auction => AUCTION,
            NexmarkTable::Bid => BID,
        }
    }

    fn event_type(self) -> EventType {
        match self {
            NexmarkTable::Person => EventType::Person,
            NexmarkTable::Auction => EventType::Auction,
            NexmarkTable::Bid => EventType::Bid,
        }
    }
}

/// A Nexmark table: see the [module documentation](self).
///
/// ```
/// use differential_temporal::io::{NexmarkSource, NexmarkTable};
/// use differential_temporal::repr::{DataType, Datum, Schema};
///
/// let schema = Schema::builder()
///     .column("price", DataType::BigInt.nullable())
///     .column("auction", DataType::BigInt.nullable())
///     .build()
///     .unwrap();
/// let bids = NexmarkSource::new("bid", NexmarkTable::Bid, schema, 100).unwrap();
/// // Events 4..50 and 54..100 are bids.
/// assert_eq!(bids.rows(), 92);
/// let event = bids.events(0..1).next().unwrap();
/// let row = bids.row(&event);
/// let nexmark::event::Event::Bid(bid) = event else { panic!("a bid table holds bids") };
/// assert_eq!(row.get(0), Some(Datum::Int(bid.price as i64)));
/// assert_eq!(row.get(1), Some(Datum::Int(bid.auction as i64)));
/// ```
#[derive(Clone, Debug)]
pub struct NexmarkSource {
    name: String,
    table: NexmarkTable,
    schema: Schema,
    /// The field of each column.
    columns: Vec<(usize, Kind)>,
    events: u64,
    bounded: bool,
    /// `first-event.rate`, events a second.
    first_rate: u64,
    generator: EventGenerator,
    block_rows: u64,
}

impl NexmarkSource {
    /// The table `name` of `schema`'s columns, each a field of `table` matched by name, holding
    /// the events of `table`'s kind among the first `events`, at the default rates.
    ///
    /// Errors: more than [`MAX_EVENTS`] events, a column that is not a field of `table`, or
    /// whose type does not hold the field's values ([`NexmarkTable::field_of`]).
    pub fn new(
        name: &str,
        table: NexmarkTable,
        schema: Schema,
        events: u64,
    ) -> Result<NexmarkSource, String> {
        if events > MAX_EVENTS {
            return Err(format!(
                "{events} events are more than the generator makes ({MAX_EVENTS})"
            ));
        }
        let columns = schema
            .fields
            .iter()
            .map(|column| table.field_of(column).map(|i| (i, table.kinds()[i].1)))
            .collect::<Result<_, _>>()?;
        let source = NexmarkSource {
            name: name.to_string(),
            table,
            schema,
            columns,
            events,
            bounded: true,
            first_rate: DEFAULT_EVENT_RATE,
            generator: EventGenerator::default(),
            block_rows: 1024,
        };
        source.with_rates(DEFAULT_EVENT_RATE, DEFAULT_EVENT_RATE)
    }

    /// Spaces the events' times at `first` events a second, then `next`, alternating every 10
    /// minutes of event time (Flink's square rate shape; equal rates give a steady rate).
    ///
    /// Errors: a rate that is 0 or above [`MAX_EVENT_RATE`].
    pub fn with_rates(mut self, first: u64, next: u64) -> Result<NexmarkSource, String> {
        for rate in [first, next] {
            if !(1..=MAX_EVENT_RATE).contains(&rate) {
                return Err(format!(
                    "an event rate of {rate} a second is not in [1, {MAX_EVENT_RATE}]"
                ));
            }
        }
        let config = NexmarkConfig {
            first_rate: first as usize,
            next_rate: next as usize,
            ..flink_config()
        };
        self.generator = EventGenerator::new(config).with_type_filter(self.table.event_type());
        self.first_rate = first;
        Ok(self)
    }

    /// The same table without an event count, as Flink's source without `'events.num'`: its
    /// events go on ([`MAX_EVENTS`] of them, about 1.1e12), which only a live run (a
    /// CONTINUOUS materialized table) reads; [`is_bounded`](Self::is_bounded) is false.
    pub fn unbounded(mut self) -> NexmarkSource {
        self.events = MAX_EVENTS;
        self.bounded = false;
        self
    }

    /// Whether the table has an event count, so that a batch query ends.
    pub fn is_bounded(&self) -> bool {
        self.bounded
    }

    /// The table's rows among `first-event.rate` events (at least 1): the rows a second a
    /// live run takes from it.
    pub fn rows_per_second(&self) -> u64 {
        self.rows_among(self.first_rate).max(1)
    }

    /// Cuts the rows into blocks (system times) of `rows` rows (at least 1; 1024 by default).
    pub fn with_block_rows(mut self, rows: u64) -> NexmarkSource {
        self.block_rows = rows.max(1);
        self
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The columns.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// How many rows the table has: the events of its kind among the first `events` (1 in 50
    /// are people, 3 auctions, 46 bids).
    pub fn rows(&self) -> u64 {
        self.rows_among(self.events)
    }

    /// The events of the table's kind among the first `events` of the stream.
    fn rows_among(&self, events: u64) -> u64 {
        let (first, share) = match self.table {
            NexmarkTable::Person => (0, 1),
            NexmarkTable::Auction => (1, 3),
            NexmarkTable::Bid => (4, 46),
        };
        let (epochs, rest) = (events / 50, events % 50);
        epochs * share + rest.saturating_sub(first).min(share)
    }

    /// The table's events `range` (row indices), in order: the rows before they are packed,
    /// for a computation outside the dataflow to check against.
    pub fn events(&self, range: std::ops::Range<u64>) -> impl Iterator<Item = Event> {
        let count = range.end.min(self.rows()).saturating_sub(range.start);
        self.generator
            .clone()
            .with_offset(range.start)
            .take(count as usize)
    }

    /// `event`'s row: its fields of the table's columns, in the columns' order.
    pub fn row(&self, event: &Event) -> Row {
        let mut row = Row::new();
        let mut packer = row.packer();
        for (column, &(index, kind)) in self.schema.fields.iter().zip(&self.columns) {
            let datum = match (event, kind) {
                (_, Kind::Time) => {
                    let ms = match (event, index) {
                        (Event::Auction(a), 6) => a.expires,
                        _ => event.timestamp(),
                    };
                    let ts = Ts::from_millis(i64::try_from(ms).unwrap_or(i64::MAX));
                    match column.ty.data_type {
                        DataType::Timestamp(p) | DataType::TimestampLtz(p) => {
                            Datum::Timestamp(truncate_to_precision(ts, p))
                        }
                        _ => Datum::Null,
                    }
                }
                (Event::Person(p), _) => match index {
                    0 => int(p.id),
                    1 => Datum::Str(&p.name),
                    2 => Datum::Str(&p.email_address),
                    3 => Datum::Str(&p.credit_card),
                    4 => Datum::Str(&p.city),
                    5 => Datum::Str(&p.state),
                    _ => Datum::Str(&p.extra),
                },
                (Event::Auction(a), _) => match index {
                    0 => int(a.id),
                    1 => Datum::Str(&a.item_name),
                    2 => Datum::Str(&a.description),
                    3 => int(a.initial_bid),
                    4 => int(a.reserve),
                    7 => int(a.seller),
                    8 => int(a.category),
                    _ => Datum::Str(&a.extra),
                },
                (Event::Bid(b), _) => match index {
                    0 => int(b.auction),
                    1 => int(b.bidder),
                    2 => int(b.price),
                    3 => Datum::Str(&b.channel),
                    4 => Datum::Str(&b.url),
                    _ => Datum::Str(&b.extra),
                },
            };
            packer.push(datum);
        }
        row
    }

    /// The blocks this source is read in, each worker passing every one.
    pub fn blocks(&self) -> DatagenBlocks {
        DatagenBlocks::new(self.rows(), self.block_rows, u64::MAX)
    }

    /// Generates the rows of `block` (one of [`blocks`](Self::blocks)) that worker `(index,
    /// peers)` makes, as [`generate_rows`](Self::generate_rows) does for the block's rows.
    pub fn generate_block(
        &self,
        block: &Block,
        worker: (u64, u64),
        out: impl FnMut(Result<Change<Row>, RowError>),
    ) {
        let last = block
            .first_line
            .saturating_add(self.block_rows)
            .min(self.rows());
        self.generate_rows(block.first_line..last, worker, out);
    }

    /// Generates the rows `rows` that worker `(index, peers)` makes, those `i` with
    /// `i % peers == index`, each as a `+I` change with `seq` its index, passing each to `out`
    /// in order.
    pub fn generate_rows(
        &self,
        rows: std::ops::Range<u64>,
        (index, peers): (u64, u64),
        mut out: impl FnMut(Result<Change<Row>, RowError>),
    ) {
        let mut mine = worker_share(rows.start, rows.end, index, peers);
        let Some(first) = mine.next() else {
            return;
        };
        let step = peers.max(1);
        let events = self.generator.clone().with_offset(first).with_step(step);
        for (i, event) in std::iter::once(first).chain(mine).zip(events) {
            out(Ok(Change::new(i, RowKind::Insert, self.row(&event))));
        }
    }
}

/// An id or a price as a BIGINT.
/// The generator's configuration as Flink's Nexmark generator (`nexmark-flink`'s
/// `PersonGenerator`) makes its values: US states in upper case (`AZ`, `CA`, `ID`, `OR`, `WA`,
/// `WY`; the queries compare them, q3's `P.state = 'OR'`), cities and first and last names
/// capitalized (`Los Angeles`, `Peter Shultz`); the `nexmark` crate's defaults are all lower
/// case. Channels (`Google`, `Facebook`, `Baidu`, `Apple`, else `channel-N`), URL shapes
/// (`https://www.nexmark.com/a_b/c_d/e_f/item.htm?query=1[&channel_id=N]`), categories
/// (10 to 14) and the hot ratios are the crate's, the same as Flink's. Base time
/// [`BASE_TIME_MS`], square rate shape, default rates.
fn flink_config() -> NexmarkConfig {
    let list = |text: &str| text.split(',').map(str::to_string).collect();
    NexmarkConfig {
        base_time: BASE_TIME_MS,
        rate_shape: RateShape::Square,
        us_states: list("AZ,CA,ID,OR,WA,WY"),
        us_cities: list(
            "Phoenix,Los Angeles,San Francisco,Boise,Portland,Bend,Redmond,Seattle,Kent,Cheyenne",
        ),
        first_names: list("Peter,Paul,Luke,John,Saul,Vicky,Kate,Julie,Sarah,Deiter,Walter"),
        last_names: list("Shultz,Abrams,Spencer,White,Bartels,Walton,Smith,Jones,Noris"),
        ..NexmarkConfig::default()
    }
}

fn int(value: usize) -> Datum<'static> {
    Datum::Int(i64::try_from(value).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table's rows are the events of its kind among the first `events` of the whole stream,
    /// in stream order: the same as walking the unfiltered generator.
    #[test]
    fn rows_are_the_streams_events_of_the_kind() {
        let empty = Schema::builder().build().unwrap();
        for events in [0, 1, 3, 4, 5, 49, 50, 51, 1234] {
            let config = flink_config();
            let stream: Vec<Event> = EventGenerator::new(config).take(events as usize).collect();
            for table in [
                NexmarkTable::Person,
                NexmarkTable::Auction,
                NexmarkTable::Bid,
            ] {
                let source = NexmarkSource::new("t", table, empty.clone(), events).unwrap();
                let kind: Vec<&Event> = stream
                    .iter()
                    .filter(|e| e.event_type() == table.event_type())
                    .collect();
                assert_eq!(source.rows(), kind.len() as u64, "{table:?} of {events}");
                let rows: Vec<Event> = source.events(0..source.rows()).collect();
                assert_eq!(
                    rows.iter().collect::<Vec<_>>(),
                    kind,
                    "{table:?} of {events}"
                );
            }
        }
    }
}
