//! What a measurement checks and prints: an order-independent digest of output records, and
//! the report line.

use std::fmt;

use differential_temporal::operators::RowKind;

/// The count and an order-independent checksum of a multiset of output records.
///
/// Each record is a short array of `u64` fields; its hash (a splitmix64 chain over the fields)
/// is added to `sum` times its diff, and the diff to `records`. Retractions therefore cancel
/// the records they retract, and the digest does not depend on workers, batching or order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Digest {
    /// The sum of the diffs.
    pub records: i64,
    /// The sum of `hash(record) * diff`, wrapping.
    pub sum: u64,
}

impl Digest {
    /// Adds `record` with multiplicity `diff`.
    pub fn add<const N: usize>(&mut self, record: [u64; N], diff: isize) {
        let hash = record.iter().fold(0x243f_6a88_85a3_08d3, |h, f| mix(h ^ f));
        self.records += diff as i64;
        self.sum = self.sum.wrapping_add(hash.wrapping_mul(diff as u64));
    }

    /// The digest of both multisets.
    pub fn merge(self, other: Digest) -> Digest {
        Digest {
            records: self.records + other.records,
            sum: self.sum.wrapping_add(other.sum),
        }
    }
}

/// The splitmix64 finalizer.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A row kind as a digest field.
pub fn kind_code(kind: RowKind) -> u64 {
    match kind {
        RowKind::Insert => 1,
        RowKind::UpdateBefore => 2,
        RowKind::UpdateAfter => 3,
        RowKind::Delete => 4,
    }
}

/// A string as a digest field: its hash (SipHash with fixed keys, the same in every process).
pub fn text(s: &str) -> u64 {
    use std::hash::BuildHasher;
    std::hash::BuildHasherDefault::<std::hash::DefaultHasher>::default().hash_one(s)
}

/// A digest field marking a refused (rejected or late) row: no baseline produces one, so any
/// refusal makes the digests differ.
pub const REFUSED: u64 = u64::MAX;

/// One measurement, printed as the report line.
#[derive(Clone, Debug)]
pub struct Line {
    /// The measured operation.
    pub op: &'static str,
    /// Worker threads of the dataflow.
    pub workers: usize,
    /// Input rows.
    pub rows: u64,
    /// Seconds the dataflow took.
    pub seconds: f64,
    /// Seconds the sequential baseline took.
    pub baseline_seconds: f64,
    /// The child process's peak resident set (VmHWM) after the dataflow, in MiB.
    pub peak_rss_mb: f64,
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rate = self.rows as f64 / self.seconds;
        let baseline = self.rows as f64 / self.baseline_seconds;
        write!(
            f,
            "op={} workers={} rows={} seconds={:.3} rows_per_s={:.0} baseline_rows_per_s={:.0} \
             ratio={:.3} peak_rss_mb={:.1}",
            self.op,
            self.workers,
            self.rows,
            self.seconds,
            rate,
            baseline,
            rate / baseline,
            self.peak_rss_mb
        )
    }
}
