//! Typed differential-dataflow operators for event-time data: changelogs, versioned tables,
//! as-of snapshots, deduplication, temporal joins and the keyed merge under merge engines (whose
//! field rules, over rows of values, live in the `differential-temporal` crate).
//!
//! Two clocks run through every operator here:
//!
//! * **system time** is the timely timestamp (`u64` epochs): when an update entered the
//!   dataflow. Its frontier says which results are complete.
//! * **event time** is data: a field of each row (milliseconds since the epoch in the CSV layer,
//!   any ordered type `E` here). Rows may arrive in any event-time order; operators compare event
//!   times themselves and correct earlier output by retracting and re-inserting.
//!
//! Ties are broken by the **source sequence number** (`seq`, a row's position in its input), so
//! results never depend on the number of workers or on how input was batched into epochs.
//!
//! The operators know nothing of CSV or of rows of text values: they are generic over key, row
//! and event-time types. The `differential-temporal` crate builds the CSV and command-line layer
//! on top of them.
#![forbid(missing_docs)]

pub mod changelog;
pub mod combined;
pub mod dedup;
mod epochs;
pub mod group_aggregate;
pub mod input;
pub mod interval_join;
pub mod keyed_merge;
pub mod over;
pub mod pair_join;
mod pending;
mod prefetch;
pub mod retention;
pub mod temporal_join;
pub mod testing;
pub mod to_changelog;
pub mod ttl_join;
pub mod version;
pub mod versioned;
pub mod watermark;
pub mod window;

pub use changelog::{Change, Changelog, ChangelogMode, RowKind};
pub use dedup::{DedupConfig, DedupOrder, Deduplicate, Keep};
pub use version::{arrange_versions, Version, VersionSpine, VersionTrace, VersionVal};
pub use versioned::{versions_from_changelog, HistoryRow, VersionedTable};

/// The system-time (timely) timestamp used by every dataflow of this crate: an epoch number.
pub type SysTime = u64;

/// A source sequence number: the position of a row in its input, the tie-breaker of last resort.
pub type Seq = u64;
