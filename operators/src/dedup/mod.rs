//! Deduplication: keep the first or the last row of each key, by event time or by arrival
//! (Flink's `ROW_NUMBER() OVER (PARTITION BY k ORDER BY t [ASC|DESC]) = 1`, semantics rules
//! A6-A14).
//!
//! Shapes: input is an append-only changelog `(K, Change<V>)`, keyed by the dedup key `K`
//! (Flink's `PARTITION BY` columns), every record a `+I` with diff `+1`; `Change::seq` is the
//! row's position in its source (arrival order); the event time is read from the row by a
//! `time_of: Fn(&V) -> E` extractor. Output is a [`Merged`]: the dedup result's changelog
//! `(K, Change<V>)` in retract form (`+I` for a key's first row, `-U old` then `+U new` when a
//! row replaces the kept one; every output row carries the `seq` of the input row that caused
//! it), and the refused rows.
//!
//! Modes ([`Keep`] × [`DedupOrder`]):
//!
//! * **Event time, keep last** (`ORDER BY rowtime DESC`, rule A7): a row replaces the kept row
//!   iff its event time is `>=` the kept row's (on equal times the later arrival wins); a row
//!   with a smaller time loses and emits nothing. An identical row still emits `-U`/`+U`.
//! * **Event time, keep first** (`ORDER BY rowtime ASC`, Flink's classic operator, rule A8): a
//!   row replaces the kept row iff its event time is strictly smaller.
//! * **Arrival, keep first** (`ORDER BY proctime ASC`, rule A11): only a key's first row, as
//!   `+I`; the output is insert-only.
//! * **Arrival, keep last** (`ORDER BY proctime DESC`, rule A11): `+I` for the first row, then
//!   `-U`/`+U` for every later row, except that a row identical to the kept one emits nothing.
//!
//! "Arrival" is source order (`seq`), not wall-clock time, so every mode is deterministic: the
//! result does not depend on the number of workers nor on how input is cut into system times
//! (the fold is [`keyed_merge`](crate::keyed_merge::keyed_merge), which applies each key's rows
//! in `seq` order). Output is emitted as soon as a system time completes; no watermark is
//! needed.
//!
//! Changelog modes: the retract form is what a consumer needing update-before rows (a retract
//! sink) sees. [`ChangelogMode::render`](crate::ChangelogMode::render) gives the other views of
//! Flink's flags: [`ChangelogMode::Upsert`](crate::ChangelogMode::Upsert) drops the `-U` rows
//! (update-before not required), [`ChangelogMode::UpsertNoInsert`](crate::ChangelogMode) also
//! shows `+I` as `+U` (`table.exec.deduplicate.insert-update-after-sensitive-enabled = false`).
//! Mini-batch "compact changes" (rule A10) is the net change per key per system time: the
//! changelog read as a collection of rows with `+1` for `+I`/`+U` and `-1` for `-U`/`-D`,
//! consolidated.
//!
//! Versioned view (rule A6): with [`Keep::Last`] and [`DedupOrder::EventTime`], the output
//! changelog, keyed by `K` and stamped with `time_of(row)`, *is* the versioned table of
//! Flink's versioned view by deduplication; reading it through the versioned table's
//! `versions_from_changelog` gives the versions of each key (the `-U` rows are dropped there,
//! rule A5). [`Keep::First`] gives the keep-first view.
//!
//! State retention (rule A13): [`DedupConfig::idle_state_retention`] forgets a key after that
//! many system-time epochs without any row of it; its next row is then a first row again (`+I`,
//! with no retraction of the forgotten row, as in Flink).
//!
//! Errors: a row of any kind other than `+I` is refused (rule A14, "dedup input must be
//! insert-only"), as is a retracted record (negative diff): each is reported in
//! [`Merged::rejected`] with its `seq` and the reason, and changes nothing.
//!
//! Cost: one hash-map probe and one comparison per row; one row (and its event time) of state
//! per key, exchanged by the key's hash.
//!
//! Not here: Flink >= 2.1's insert-only keep-first that emits on watermark (rule A9).

pub mod reference;
mod rules;
#[cfg(test)]
mod tests;

use std::hash::Hash;

use differential_dataflow::{ExchangeData, VecCollection};

pub use rules::DedupRule;

use crate::keyed_merge::{keyed_merge_with_retention, Merged};
use crate::{Change, SysTime};

/// Which row of each key deduplication keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keep {
    /// The first row by the order (`ORDER BY .. ASC`).
    First,
    /// The last row by the order (`ORDER BY .. DESC`).
    Last,
}

/// The order in which deduplication ranks a key's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DedupOrder {
    /// By the row's event time (`time_of(row)`); equal times by arrival (`seq`).
    EventTime,
    /// By arrival, i.e. source sequence number (Flink's processing-time dedup).
    Arrival,
}

/// A deduplication: which row to keep, by which order, and for how long to keep idle state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DedupConfig {
    /// Keep the first or the last row.
    pub keep: Keep,
    /// Rank rows by event time or by arrival.
    pub order: DedupOrder,
    /// Forget a key's state after this many system-time epochs without a row of the key
    /// (`None`: keep state forever). A key whose last row arrived at system time `s` is a new
    /// key again for rows of system times `>= s + retention` (rule A13).
    pub idle_state_retention: Option<SysTime>,
}

impl DedupConfig {
    /// Keep the `keep` row of each key by `order`, with state kept forever.
    pub const fn new(keep: Keep, order: DedupOrder) -> Self {
        DedupConfig {
            keep,
            order,
            idle_state_retention: None,
        }
    }

    /// The same deduplication, forgetting a key after `epochs` system-time epochs without a
    /// row of it (`0` keeps state forever).
    pub const fn with_idle_state_retention(self, epochs: SysTime) -> Self {
        DedupConfig {
            idle_state_retention: Some(epochs),
            ..self
        }
    }
}

/// Deduplication of an append-only changelog `(K, Change<V>)` (see the [module docs](self)).
pub trait Deduplicate<'s, K: 'static, V: 'static> {
    /// Keeps the first or last row of each key `K`, by event time `time_of(row)` or by
    /// arrival (`seq`), and returns the result's changelog in retract form plus the refused
    /// rows (any kind other than `+I`, rule A14).
    ///
    /// Under [`DedupOrder::Arrival`] `time_of` is never called: pass `|_| ()`.
    ///
    /// # Examples
    ///
    /// Keep-last by event time (rule A7): the row with time 3 replaces the one with time 1, the
    /// late row with time 2 loses, the equal-time row (3) replaces again.
    ///
    /// ```
    /// use differential_temporal_operators::dedup::{DedupConfig, DedupOrder, Deduplicate, Keep};
    /// use differential_temporal_operators::testing::{batch, run_unary};
    /// use differential_temporal_operators::{Change, RowKind::*};
    ///
    /// // (key, (event time, value)), in arrival order.
    /// let rows: Vec<_> = [(1, "a"), (3, "b"), (2, "c"), (3, "d")]
    ///     .into_iter()
    ///     .enumerate()
    ///     .map(|(seq, (t, v))| ("k".to_string(), Change::new(seq as u64, Insert, (t, v.to_string()))))
    ///     .collect();
    /// let last = DedupConfig::new(Keep::Last, DedupOrder::EventTime);
    /// let out = run_unary(2, batch(&rows, &[2]), move |c| {
    ///     c.deduplicate(last, |row: &(u32, String)| row.0).changelog
    /// });
    /// let shown: Vec<_> = out
    ///     .iter()
    ///     .map(|((_, c), sys, _)| (*sys, c.kind, c.row.1.as_str()))
    ///     .collect();
    /// assert_eq!(shown, vec![
    ///     (0, Insert, "a"),
    ///     (0, UpdateBefore, "a"), (0, UpdateAfter, "b"),
    ///     (1, UpdateBefore, "b"), (1, UpdateAfter, "d"),
    /// ]);
    /// ```
    fn deduplicate<E, F>(self, config: DedupConfig, time_of: F) -> Merged<'s, K, V>
    where
        E: Ord + 'static,
        F: Fn(&V) -> E + Send + 'static;

    /// As [`deduplicate`](Deduplicate::deduplicate), naming the dataflow operator `name`.
    fn deduplicate_named<E, F>(
        self,
        config: DedupConfig,
        time_of: F,
        name: &str,
    ) -> Merged<'s, K, V>
    where
        E: Ord + 'static,
        F: Fn(&V) -> E + Send + 'static;
}

impl<'s, K, V> Deduplicate<'s, K, V> for VecCollection<'s, SysTime, (K, Change<V>)>
where
    K: ExchangeData + Hash,
    V: ExchangeData,
{
    fn deduplicate<E, F>(self, config: DedupConfig, time_of: F) -> Merged<'s, K, V>
    where
        E: Ord + 'static,
        F: Fn(&V) -> E + Send + 'static,
    {
        self.deduplicate_named(config, time_of, "Deduplicate")
    }

    fn deduplicate_named<E, F>(
        self,
        config: DedupConfig,
        time_of: F,
        name: &str,
    ) -> Merged<'s, K, V>
    where
        E: Ord + 'static,
        F: Fn(&V) -> E + Send + 'static,
    {
        let rule = DedupRule::new(config.keep, config.order, time_of);
        keyed_merge_with_retention(self, rule, config.idle_state_retention, name)
    }
}
