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
//! (the fold is [`keyed_merge`], which applies each key's rows
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
//! Final mode (rule A9, Flink >= 2.1): [`Deduplicate::deduplicate_first_on_watermark`] keeps
//! the first row by event time but emits it only once the watermark has passed it, so its
//! output is insert-only; rows behind the watermark are refused as late. Its [`OnWatermark`]
//! config may expire the "already emitted" flag on the watermark (rule A13).
//!
//! Both methods take a config, built as `DedupConfig::new(keep, order).named(..)` and
//! `OnWatermark::new().retention(..).named(..)`: there is no `_named` or `_with_retention`
//! variant.

mod final_mode;
pub mod reference;
mod rules;
#[cfg(test)]
mod tests;

use std::hash::Hash;

use differential_dataflow::{ExchangeData, VecCollection};

pub use rules::DedupRule;

use crate::changelog::Changelog;
use crate::keyed_merge::{keyed_merge, Merged, Rejected};
use crate::retention::Retention;
use crate::watermark::{TimeText, Watermark};
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

/// A deduplication: which row to keep, by which order, for how long to keep idle state, and the
/// dataflow operator's name.
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
    /// The dataflow operator's name (default `"Deduplicate"`).
    pub name: &'static str,
}

impl DedupConfig {
    /// Keep the `keep` row of each key by `order`, with state kept forever.
    pub const fn new(keep: Keep, order: DedupOrder) -> Self {
        DedupConfig {
            keep,
            order,
            idle_state_retention: None,
            name: "Deduplicate",
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

    /// The same deduplication, its dataflow operator named `name`.
    pub const fn named(self, name: &'static str) -> Self {
        DedupConfig { name, ..self }
    }
}

/// How keep-first on the watermark runs
/// ([`Deduplicate::deduplicate_first_on_watermark`]): the retention of the "already emitted"
/// flag (off by default), how a late row's reason writes event times (default: their `Debug`
/// form) and the dataflow operator's name (default `"DeduplicateOnWatermark"`).
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::dedup::OnWatermark;
/// use differential_temporal_operators::retention::Retention;
///
/// // The emitted flag of a key expires 5 ms (of event time) after its row's time.
/// let config = OnWatermark::new().retention(Retention::millis(5)).named("Dedup");
/// assert_eq!(config.retained().map(|r| r.expiry(&1)), Some(6));
/// assert_eq!(config.name(), "Dedup");
/// assert!(OnWatermark::<i64>::new().retained().is_none());
/// // Late rows' reasons write event times in seconds.
/// let config = OnWatermark::new().time_text(|t: &i64| format!("{} s", t / 1000));
/// assert_eq!(config.text_of(&5000), "5 s");
/// assert_eq!(OnWatermark::<i64>::new().text_of(&5000), "5000");
/// ```
#[derive(Clone, Debug)]
pub struct OnWatermark<E> {
    retention: Option<Retention<E>>,
    time_text: TimeText<E>,
    name: &'static str,
}

impl<E> Default for OnWatermark<E> {
    fn default() -> Self {
        OnWatermark {
            retention: None,
            time_text: TimeText::default(),
            name: "DeduplicateOnWatermark",
        }
    }
}

impl<E> OnWatermark<E> {
    /// No retention (flags kept forever), the default name.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same, with idle-state retention of the "already emitted" flag (Flink's
    /// `table.exec.state.ttl`, rule A13), measured on the watermark in event time (`None`: off).
    pub fn retention(self, retention: impl Into<Option<Retention<E>>>) -> Self {
        OnWatermark {
            retention: retention.into(),
            ..self
        }
    }

    /// The same, the dataflow operator named `name`.
    pub fn named(self, name: &'static str) -> Self {
        OnWatermark { name, ..self }
    }

    /// The same, a late row's reason writing its event time and the watermark with `text`
    /// (say, epoch milliseconds for times the input wrote as such) instead of their `Debug`
    /// form.
    pub fn time_text(self, text: fn(&E) -> String) -> Self {
        OnWatermark {
            time_text: TimeText::with(text),
            ..self
        }
    }

    /// `time` as a late row's reason writes it.
    pub fn text_of(&self, time: &E) -> String
    where
        E: std::fmt::Debug,
    {
        self.time_text.time(time)
    }

    /// The retention, if any.
    pub fn retained(&self) -> Option<&Retention<E>> {
        self.retention.as_ref()
    }

    /// The operator name.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

/// Deduplication of an append-only changelog `(K, Change<V>)` (see the [module docs](self)).
pub trait Deduplicate<'s, K: 'static, V: 'static> {
    /// Keeps the first or last row of each key `K`, by event time `time_of(row)` or by
    /// arrival (`seq`), and returns the result's changelog in retract form plus the refused
    /// rows (any kind other than `+I`, rule A14). `config` says which row, by which order, the
    /// idle-state retention in epochs and the operator name.
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

    /// Keeps the first row of each key by event time `time_of(row)` and emits it, as `+I`, only
    /// once the watermark has passed it (Flink >= 2.1's insert-only keep-first, rule A9).
    ///
    /// `watermarks` is the input's watermark collection (from
    /// [`watermarks`](crate::watermark::watermarks) over this same collection, or
    /// [`no_watermark`](crate::watermark::no_watermark)); `W(s)` is the watermark in force for
    /// the rows of system time `s`. Per key, one candidate waits: the row with the smallest
    /// event time (a strictly smaller time replaces it; an equal time keeps the earlier
    /// arrival). At the first system time `s` with `time < W(s)` (Flink: the watermark reached
    /// the candidate's time) the candidate is emitted as `+I` with its own `seq`, and every
    /// later row of the key is ignored. When the input has ended (`W = Max`), the waiting
    /// candidates are emitted at the last system time the input had advanced to before it
    /// closed (at least the one after its last watermark record): with
    /// [`run_unary`](crate::testing::run_unary), the length of the script.
    ///
    /// Refused, into [`Merged::rejected`] with `seq` and reason: rows of system time `s` with
    /// `time < W(s)` (late; Flink's `numLateRecordsDropped`, count them with `.count()`), and
    /// non-insert rows (A14). Late is checked before "already emitted", as in Flink.
    ///
    /// The result is exact and independent of workers; it depends on how input is cut into
    /// system times only through the watermark. State: one candidate, or an emitted flag, per
    /// key; cost O(log n) per row.
    ///
    /// `config` ([`OnWatermark`]) names the operator and may set idle-state retention of the
    /// "already emitted" flag (Flink's `table.exec.state.ttl` on
    /// `RowTimeDeduplicateKeepFirstRowFunction`, rule A13), measured on the watermark (see
    /// [`crate::retention`]); without it the flag is kept forever. The flag of a key is written
    /// when its row (event time `t`) is emitted; it is gone once the watermark rises past
    /// `retention.expiry(t)` (later rows of the key do not refresh it: Flink refreshes its TTL on
    /// writes only). The key's next row is then a first row again: it waits for the watermark
    /// and is emitted as `+I`, with no retraction of the earlier row, as in Flink. Results then
    /// depend on timing exactly as in Flink; never on the number of workers. State: one
    /// candidate or flag per key whose flag has not expired, plus an O(log n) index of the
    /// flags' expiries.
    ///
    /// # Examples
    ///
    /// ```
    /// use differential_temporal_operators::dedup::{Deduplicate, OnWatermark};
    /// use differential_temporal_operators::testing::{batch, run_unary};
    /// use differential_temporal_operators::watermark::watermarks;
    /// use differential_temporal_operators::{Change, RowKind::Insert};
    ///
    /// type Row = (i64, char); // (event time, value)
    /// let rows: Vec<(u8, Change<Row>)> = [(5, 'a'), (3, 'b'), (9, 'c'), (1, 'd')]
    ///     .into_iter()
    ///     .enumerate()
    ///     .map(|(seq, r)| (1, Change::new(seq as u64, Insert, r)))
    ///     .collect();
    /// // Epoch 0: times 5 and 3; epoch 1: times 9 and 1, under the watermark W(1) = 5.
    /// let out = run_unary(2, batch(&rows, &[2]), |c| {
    ///     let marks = watermarks(c.clone(), |(_, ch): &(u8, Change<Row>)| ch.row.0, |m: &i64| *m, "Wm");
    ///     let merged = c.deduplicate_first_on_watermark(|r: &Row| r.0, marks, OnWatermark::new());
    ///     let late = merged.rejected.map(|(k, r)| (k, Err(r.seq)));
    ///     merged.changelog.map(|(k, ch)| (k, Ok(ch))).concat(late)
    /// });
    /// // W(1) = 5 passed time 3: 'b' is emitted at epoch 1; 'c' is ignored; 'd' (1 < 5) is late.
    /// assert_eq!(out, vec![
    ///     ((1, Ok(Change::new(1, Insert, (3, 'b')))), 1, 1),
    ///     ((1, Err(3)), 1, 1),
    /// ]);
    /// ```
    ///
    /// With a retention of 5 ms:
    ///
    /// ```
    /// use differential_temporal_operators::dedup::{Deduplicate, OnWatermark};
    /// use differential_temporal_operators::retention::Retention;
    /// use differential_temporal_operators::testing::run_unary;
    /// use differential_temporal_operators::watermark::watermarks;
    /// use differential_temporal_operators::{Change, RowKind::Insert};
    ///
    /// type Row = (i64, char); // (event time, value)
    /// let row = |seq, k: u8, t, v| ((k, Change::new(seq, Insert, (t, v))), 1);
    /// // Epoch 0: key 1 at 1; epoch 1: key 2 at 20; epoch 2 (watermark 20): key 1 at 21.
    /// let epochs = vec![vec![row(0, 1, 1, 'a')], vec![row(1, 2, 20, 'b')], vec![row(2, 1, 21, 'c')]];
    /// let out = run_unary(1, epochs, |c| {
    ///     let marks = watermarks(c.clone(), |(_, ch): &(u8, Change<Row>)| ch.row.0, |m: &i64| *m, "Wm");
    ///     let config = OnWatermark::new().retention(Retention::millis(5));
    ///     c.deduplicate_first_on_watermark(|r: &Row| r.0, marks, config).changelog
    /// });
    /// // At epoch 2 the watermark 20 emits 'a', then passes 1 + 5: key 1's flag is gone, so 'c'
    /// // is a first row again, emitted when the input ends (epoch 3), like 'b'.
    /// assert_eq!(out, vec![
    ///     ((1, Change::new(0, Insert, (1, 'a'))), 2, 1),
    ///     ((1, Change::new(2, Insert, (21, 'c'))), 3, 1),
    ///     ((2, Change::new(1, Insert, (20, 'b'))), 3, 1),
    /// ]);
    /// ```
    fn deduplicate_first_on_watermark<E, F>(
        self,
        time_of: F,
        watermarks: VecCollection<'s, SysTime, Watermark<E>>,
        config: OnWatermark<E>,
    ) -> Merged<'s, K, V>
    where
        E: ExchangeData,
        F: Fn(&V) -> E + 'static;
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
        let rule = DedupRule::new(config.keep, config.order, time_of);
        keyed_merge(self, rule, config.idle_state_retention, config.name)
    }

    fn deduplicate_first_on_watermark<E, F>(
        self,
        time_of: F,
        watermarks: VecCollection<'s, SysTime, Watermark<E>>,
        config: OnWatermark<E>,
    ) -> Merged<'s, K, V>
    where
        E: ExchangeData,
        F: Fn(&V) -> E + 'static,
    {
        final_mode::first_on_watermark(self, time_of, watermarks, config)
    }
}

impl<'s, K, V> Changelog<'s, K, V>
where
    K: ExchangeData + Hash,
    V: ExchangeData,
{
    /// [`Deduplicate::deduplicate`] on a typed changelog: the result's changelog, and the
    /// refused rows `(key, rejected)` (any kind other than `+I`, rule A14).
    ///
    /// ```
    /// use differential_temporal_operators::changelog::Changelog;
    /// use differential_temporal_operators::dedup::{DedupConfig, DedupOrder, Keep};
    /// use differential_temporal_operators::testing::run_unary;
    /// use differential_temporal_operators::{Change, RowKind::Insert};
    ///
    /// // Order 7 delivered twice: keep-first by arrival keeps one of them.
    /// let orders = vec![vec![
    ///     ((7u32, Change::new(0, Insert, 30i64)), 1),
    ///     ((7u32, Change::new(1, Insert, 30i64)), 1),
    /// ]];
    /// let first = DedupConfig::new(Keep::First, DedupOrder::Arrival);
    /// let out = run_unary(2, orders, move |o| {
    ///     let (unique, _refused) = Changelog::new(o).deduplicate(first, |_| ());
    ///     unique.into_collection()
    /// });
    /// assert_eq!(out, vec![((7, 30), 0, 1)]);
    /// ```
    pub fn deduplicate<E, F>(
        self,
        config: DedupConfig,
        time_of: F,
    ) -> (Self, VecCollection<'s, SysTime, (K, Rejected)>)
    where
        E: Ord + 'static,
        F: Fn(&V) -> E + Send + 'static,
    {
        let merged = self.into_changes().deduplicate(config, time_of);
        (Changelog::new(merged.changelog), merged.rejected)
    }
}
