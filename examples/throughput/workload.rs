//! The deterministic workloads: every input row is a pure function of its index, so any worker
//! (or the baseline) generates exactly its share of an epoch without seeing the others.
//!
//! Random draws come from ChaCha8 (`rand_chacha`) with a fixed seed, one stream per workload,
//! positioned at word `8 i` for row `i` (four `u64` draws a row). Event times are milliseconds:
//! row `i` happens at `BASE_MS + i` minus a jitter in `0..JITTER_MS`, so rows arrive up to
//! 5 s out of event-time order and many share an event time.

use std::ops::Range;

use differential_temporal::merge_engine::Row;
use differential_temporal::repr::Datum;
use nexmark::config::NexmarkConfig;
use nexmark::event::{Event, EventType};
use nexmark::EventGenerator;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The seed of every workload.
pub const SEED: u64 = 0x7468_7275_2026_1130;
/// The event time of row 0, in ms since the Unix epoch (2023-11-14).
pub const BASE_MS: i64 = 1_700_000_000_000;
/// Rows arrive up to this many ms behind their index's time (the allowed lateness of the
/// final-mode join).
pub const JITTER_MS: i64 = 5_000;
/// Versions per key of the temporal join's build side.
pub const VERSIONS_PER_KEY: u64 = 10;
/// Keys of the window aggregations: as the rows are one a millisecond, a key has about one
/// row a second of event time whatever the run's size.
pub const WINDOW_KEYS: u64 = 1_000;
/// Payloads are drawn in `0..PAYLOADS`.
const PAYLOADS: u64 = 1_000;

/// Which random stream a workload draws from (distinct data per workload).
#[derive(Clone, Copy, Debug)]
pub enum Stream {
    /// Dedup keep-last rows.
    Dedup = 1,
    /// Versioned merge-engine writes.
    Merge = 2,
    /// Temporal-join probe rows.
    Probe = 3,
    /// Temporal-join build versions.
    Build = 4,
    /// As-of snapshot versions.
    Versions = 5,
    /// The equi-join's dimension rates.
    Dims = 6,
}

/// Four random `u64` draws for row `i` of `stream`.
pub fn draw(stream: Stream, i: u64) -> [u64; 4] {
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    rng.set_stream(stream as u64);
    rng.set_word_pos(u128::from(i) * 8);
    std::array::from_fn(|_| rng.next_u64())
}

/// The shape of a run: how many rows, and how many keys they spread over.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Input rows (probe rows for the temporal joins).
    pub rows: u64,
    /// Rows entered per system time (epoch), over all workers.
    pub epoch_rows: u64,
}

impl Shape {
    /// Keys of the keyed workloads: one per 10 rows (1M keys at 10M rows).
    pub fn keys(&self) -> u64 {
        (self.rows / 10).max(1)
    }

    /// Keys of the temporal join's build side: 100k (issue 3), fewer for runs under 1M rows.
    pub fn build_keys(&self) -> u64 {
        (self.rows / 10).clamp(1, 100_000)
    }

    /// The event-time span of the rows: one row per ms.
    pub fn span_ms(&self) -> i64 {
        self.rows as i64
    }

    /// The epochs: row ranges of `epoch_rows` rows.
    pub fn epochs(&self) -> impl Iterator<Item = Range<u64>> + '_ {
        (0..self.rows)
            .step_by(self.epoch_rows as usize)
            .map(|start| start..(start + self.epoch_rows).min(self.rows))
    }
}

/// The indices of `range` that worker `index` of `peers` owns (row `i` on worker `i % peers`).
pub fn share(range: Range<u64>, index: usize, peers: usize) -> impl Iterator<Item = u64> {
    let (index, peers) = (index as u64, peers as u64);
    let first = range.start + (index + peers - range.start % peers) % peers;
    (first..range.end).step_by(peers as usize)
}

/// A keyed event row: the key, its event time (ms) and a small payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyedRow {
    /// The key.
    pub key: u64,
    /// Event time in ms.
    pub time: i64,
    /// Payload in `0..1000`.
    pub payload: u64,
}

/// Row `i` of a keyed stream over `keys` keys.
pub fn event(stream: Stream, i: u64, keys: u64) -> KeyedRow {
    let d = draw(stream, i);
    KeyedRow {
        key: d[0] % keys,
        time: BASE_MS + i as i64 - (d[1] % JITTER_MS as u64) as i64,
        payload: d[2] % PAYLOADS,
    }
}

/// Write `i` of the merge-engine workload: its key and its typed row `[key BIGINT, payload
/// BIGINT, version BIGINT]` (the engine's [`Row`], as `dtemporal merge --schema` reads it from a
/// CSV file: each cell parsed once, at ingest), the version being the event time.
pub fn merge_write(i: u64, keys: u64) -> (u64, Row) {
    let e = event(Stream::Merge, i, keys);
    let cells = [e.key as i64, e.payload as i64, e.time].map(Datum::Int);
    (e.key, Row::pack(cells))
}

/// Version `i` of the as-of workload: `(key, time, payload or None for a delete)`; one in ten
/// versions is a delete.
pub fn version(i: u64, keys: u64) -> (u64, i64, Option<u64>) {
    let e = event(Stream::Versions, i, keys);
    let d = draw(Stream::Versions, i);
    (
        e.key,
        e.time,
        (!d[3].is_multiple_of(10)).then_some(e.payload),
    )
}

/// What row `i` of the equi-join workload changes, over `keys` keys:
///
/// * `insert`: the order `event(Dedup, i)` enters the orders table;
/// * `delete`: the order entered `keys` rows earlier leaves it (from row `keys` on), so the
///   table holds the latest `keys` orders;
/// * `dim`: `(key, old rate, new rate)`: the rate of dimension key `i % keys` moves from its
///   generation `i / keys` to the next ([`dim_rate`]).
#[derive(Clone, Copy, Debug)]
pub struct EquiStep {
    /// The order inserted.
    pub insert: KeyedRow,
    /// The order deleted, if any.
    pub delete: Option<KeyedRow>,
    /// The dimension row updated: key, old rate, new rate.
    pub dim: (u64, u64, u64),
}

/// Row `i` of the equi-join workload (see [`EquiStep`]).
pub fn equi_step(i: u64, keys: u64) -> EquiStep {
    let (key, generation) = (i % keys, i / keys);
    EquiStep {
        insert: event(Stream::Dedup, i, keys),
        delete: i
            .checked_sub(keys)
            .map(|old| event(Stream::Dedup, old, keys)),
        dim: (
            key,
            dim_rate(key, generation, keys),
            dim_rate(key, generation + 1, keys),
        ),
    }
}

/// The rate of dimension key `key` at its `generation` (generation 0 is loaded before the
/// clock starts).
pub fn dim_rate(key: u64, generation: u64, keys: u64) -> u64 {
    draw(Stream::Dims, generation * keys + key)[0] % PAYLOADS
}

/// The event time the as-of snapshot is read at: 90% into the span.
pub fn as_of_time(shape: &Shape) -> i64 {
    BASE_MS + shape.span_ms() / 10 * 9
}

/// Build version `v` of the temporal join: key `v / 10`, the `j = v % 10`-th version of the
/// key at a random time in the `j`-th tenth of the probe rows' span; `(key, time, rate)`.
/// Times of one key are strictly increasing, so versions never tie.
pub fn build_version(v: u64, shape: &Shape) -> (u64, i64, u64) {
    let d = draw(Stream::Build, v);
    let slot = (shape.span_ms() / VERSIONS_PER_KEY as i64).max(1);
    let j = (v % VERSIONS_PER_KEY) as i64;
    let time = BASE_MS + j * slot + (d[0] % slot as u64) as i64;
    (v / VERSIONS_PER_KEY, time, d[1] % PAYLOADS)
}

/// The number of build versions.
pub fn build_versions(shape: &Shape) -> u64 {
    shape.build_keys() * VERSIONS_PER_KEY
}

/// A Nexmark bid, reduced to the columns q18 uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bid {
    /// The bidder (person id).
    pub bidder: u64,
    /// The auction id.
    pub auction: u64,
    /// The bid's event time (ms).
    pub date_time: u64,
    /// The price.
    pub price: u64,
}

/// Bids with index `first, first + step, ...` (`count` of them), in that order, from the
/// `nexmark` crate's generator (bids only) in its default configuration, except that its base
/// time (the wall clock by default) is fixed at [`BASE_MS`].
pub fn bids(first: u64, step: u64, count: usize, out: &mut Vec<(u64, Bid)>) {
    let config = NexmarkConfig {
        base_time: BASE_MS as u64,
        ..NexmarkConfig::default()
    };
    let generator = EventGenerator::new(config)
        .with_type_filter(EventType::Bid)
        .with_offset(first)
        .with_step(step);
    for (n, event) in generator.take(count).enumerate() {
        if let Event::Bid(b) = event {
            let bid = Bid {
                bidder: b.bidder as u64,
                auction: b.auction as u64,
                date_time: b.date_time,
                price: b.price as u64,
            };
            out.push((first + n as u64 * step, bid));
        }
    }
}

/// The bids of `range` owned by worker `index` of `peers`, with their indices.
pub fn bid_share(range: Range<u64>, index: usize, peers: usize, out: &mut Vec<(u64, Bid)>) {
    let mut mine = share(range, index, peers);
    if let Some(first) = mine.next() {
        bids(first, peers as u64, 1 + mine.count(), out);
    }
}
