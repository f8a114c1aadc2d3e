//! Idle-state retention (Flink's `table.exec.state.ttl`), measured on the watermark.
//!
//! Flink clears the state of a key that no row has touched for the retention, on a
//! *processing-time* timer (wall clock: `TemporalRowTimeJoinOperator`,
//! `RowTimeDeduplicateKeepFirstRowFunction`). A wall clock would make results depend on
//! scheduling and on the number of workers, which no operator here may. The operators that take
//! a [`Retention`] measure it on **event time, read through the watermark** instead:
//!
//! * a row of a key with event time `t` *touches* the key; the key's *access time* is the
//!   greatest event time of the rows that touched it;
//! * its state expires at the first system time whose watermark has passed
//!   [`Retention::expiry`] of that access time (`expiry(access) < W`,
//!   [`Watermark::passed`](crate::watermark::Watermark::passed)), and the key is then as if
//!   never seen.
//!
//! So expiry is deterministic and never depends on the number of workers; like lateness, it
//! depends on the input order and on how rows are grouped into system times (the watermark
//! moves per system time). It does depend on timing exactly as in Flink: once a key has
//! expired, a later row of it sees none of the expired state. Retention is off unless asked for.
//!
//! Differences from Flink, all deliberate: the clock is the watermark, not the wall clock; a key
//! expires exactly after the retention (Flink's cleanup timer fires between 1x and 1.5x of it);
//! and the access time is the rows' event time, not their arrival.

use std::fmt;
use std::rc::Rc;

use crate::SysTime;

/// How long a key's state is kept after its last access, in event time: `expiry(t)` is the
/// event time from which state last touched at `t` is gone (`t + retention`).
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::retention::Retention;
///
/// // Event times in milliseconds, state kept for 10 ms after a key's latest row.
/// let ttl = Retention::millis(10);
/// assert_eq!(ttl.expiry(&5), 15);
/// assert_eq!(ttl.expiry(&i64::MAX), i64::MAX);
/// // Any ordered event-time type: a retention of 2 on `u8` times.
/// let small = Retention::new(|t: &u8| t.saturating_add(2));
/// assert_eq!(small.expiry(&7), 9);
/// // System-time epochs (the lookup join's clock): state touched at epoch 4 is gone at 7.
/// assert_eq!(Retention::epochs(3).expiry(&4), 7);
/// ```
#[derive(Clone)]
pub struct Retention<E> {
    expiry: Rc<dyn Fn(&E) -> E>,
}

impl<E> Retention<E> {
    /// A retention given by `expiry`, which maps an access time `t` to the event time from
    /// which the state is gone; it must be monotone and `expiry(t) >= t`.
    pub fn new(expiry: impl Fn(&E) -> E + 'static) -> Self {
        Retention {
            expiry: Rc::new(expiry),
        }
    }

    /// The event time from which state last touched at `accessed` is gone.
    pub fn expiry(&self, accessed: &E) -> E {
        (self.expiry)(accessed)
    }
}

impl Retention<i64> {
    /// A retention of `ms` for event times in milliseconds (`t + ms`, saturating).
    pub fn millis(ms: i64) -> Self {
        Retention::new(move |t: &i64| t.saturating_add(ms))
    }
}

impl Retention<SysTime> {
    /// A retention of `epochs` system-time epochs (`s + epochs`, saturating), the
    /// processing-time clock of the lookup join: state last touched at epoch `s` is gone from
    /// epoch `s + epochs` on. `epochs` should be at least `1`: with `0` a key's state is gone
    /// at the epoch it is touched (leave the retention unset to keep state forever).
    pub fn epochs(epochs: SysTime) -> Self {
        Retention::new(move |s: &SysTime| s.saturating_add(epochs))
    }
}

impl<E> fmt::Debug for Retention<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Retention(..)")
    }
}
