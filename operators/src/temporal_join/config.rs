//! [`JoinConfig`]: how a temporal join joins, one builder for the three joins.

use std::convert::Infallible;

use super::JoinKind;
use crate::retention::Retention;
use crate::watermark::TimeText;
use crate::SysTime;

/// How a temporal join joins: INNER or LEFT, the residual predicate, the idle-state retention
/// and the dataflow operator's name. One builder for [`temporal_join`](super::temporal_join),
/// [`temporal_join_final`](super::temporal_join_final) and
/// [`lookup_join`](super::lookup_join), in place of positional parameters.
///
/// `R` is the residual predicate ([`Always`] unless [`residual`](Self::residual) sets one) and
/// `T` the clock the retention is measured on: the event-time type for the final-mode join, the
/// system time ([`SysTime`](crate::SysTime), epochs) for the lookup join, and [`Infallible`] for
/// the incremental join, which has no retention (it is exact at every system time), so that a
/// retention there does not compile.
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::retention::Retention;
/// use differential_temporal_operators::temporal_join::{JoinConfig, JoinKind};
///
/// // LEFT join, a residual `rate > amount`, state kept 10 ms after a key's latest event time.
/// let config = JoinConfig::new(JoinKind::Left)
///     .residual(|amount: &i64, rate: &i64| rate > amount)
///     .retention(Retention::millis(10))
///     .named("OrdersRates");
/// assert_eq!((config.kind(), config.name()), (JoinKind::Left, "OrdersRates"));
/// assert!(config.retained().is_some());
/// assert!(config.holds(&3, &5) && !config.holds(&5, &3));
/// ```
#[derive(Clone, Debug)]
pub struct JoinConfig<R = Always, T = Infallible> {
    kind: JoinKind,
    residual: R,
    retention: Option<Retention<T>>,
    idle_timeout: SysTime,
    time_text: TimeText<T>,
    name: &'static str,
}

/// The residual predicate that always holds: no condition beyond the keys (no `ON ... AND`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Always;

/// A residual predicate on a probe row `P` and the build row `B` of the version chosen for it
/// (rule B5): any `Fn(&P, &B) -> bool`, or [`Always`].
pub trait Residual<P, B>: 'static {
    /// `true` iff `probe` and `build` join.
    fn holds(&self, probe: &P, build: &B) -> bool;
}

impl<P, B, F: Fn(&P, &B) -> bool + 'static> Residual<P, B> for F {
    fn holds(&self, probe: &P, build: &B) -> bool {
        self(probe, build)
    }
}

impl<P, B> Residual<P, B> for Always {
    fn holds(&self, _: &P, _: &B) -> bool {
        true
    }
}

impl<T> JoinConfig<Always, T> {
    /// A `kind` join with no residual predicate, no retention (state kept forever) and the
    /// join's default operator name.
    pub fn new(kind: JoinKind) -> Self {
        JoinConfig {
            kind,
            residual: Always,
            retention: None,
            idle_timeout: 0,
            time_text: TimeText::default(),
            name: "",
        }
    }
}

impl<R, T> JoinConfig<R, T> {
    /// The same join with the residual predicate `residual(probe row, build row)`, checked
    /// against the chosen version only (rule B5): on failure INNER drops the probe row and LEFT
    /// pads it.
    pub fn residual<P, B, F>(self, residual: F) -> JoinConfig<F, T>
    where
        F: Fn(&P, &B) -> bool + 'static,
    {
        JoinConfig {
            kind: self.kind,
            residual,
            retention: self.retention,
            idle_timeout: self.idle_timeout,
            time_text: self.time_text,
            name: self.name,
        }
    }

    /// The same join with idle-state retention (Flink's `table.exec.state.ttl`; `None`: off),
    /// measured on the join's clock `T`: see [`temporal_join_final`](super::temporal_join_final)
    /// (event time, through the watermark) and [`lookup_join`](super::lookup_join) (epochs).
    pub fn retention(self, retention: impl Into<Option<Retention<T>>>) -> Self {
        JoinConfig {
            retention: retention.into(),
            ..self
        }
    }

    /// The same join with an idle-source timeout of `timeout` system times (Flink's
    /// `table.exec.source.idle-timeout`; `0`, the default: off): an input of
    /// [`temporal_join_final`](super::temporal_join_final) that sends nothing for that long
    /// stops holding the combined watermark back (see [`crate::combined`]), so a versioned side
    /// that stops changing no longer holds every probe row until the input ends. Give the same
    /// timeout to [`late_versions`](super::late_versions) and
    /// [`arrange_versions_pruned`](super::arrange_versions_pruned) over the same watermarks.
    /// The incremental and lookup joins have no watermark: they do not read it.
    pub fn idle_timeout(self, timeout: SysTime) -> Self {
        JoinConfig {
            idle_timeout: timeout,
            ..self
        }
    }

    /// The same join, the reasons of late probe rows of
    /// [`temporal_join_final`](super::temporal_join_final) writing event times and watermarks
    /// with `text` instead of their `Debug` form (give the same to
    /// [`late_versions`](super::late_versions)).
    pub fn time_text(self, text: fn(&T) -> String) -> Self {
        JoinConfig {
            time_text: TimeText::with(text),
            ..self
        }
    }

    /// How late rows' reasons write event times.
    pub fn time_texts(&self) -> TimeText<T> {
        self.time_text
    }

    /// The idle-source timeout in system times (`0`: off).
    pub fn idle_timed_out(&self) -> SysTime {
        self.idle_timeout
    }

    /// The same join, its dataflow operator named `name` (a stable string shown in timely's
    /// logs and dataflow graph).
    pub fn named(self, name: &'static str) -> Self {
        JoinConfig { name, ..self }
    }

    /// INNER or LEFT.
    pub fn kind(&self) -> JoinKind {
        self.kind
    }

    /// The operator name: the one given to [`named`](Self::named), else `""` (each join then
    /// uses its own default).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The idle-state retention, if any.
    pub fn retained(&self) -> Option<&Retention<T>> {
        self.retention.as_ref()
    }

    /// `true` iff the residual predicate holds for `probe` and `build`.
    pub fn holds<P, B>(&self, probe: &P, build: &B) -> bool
    where
        R: Residual<P, B>,
    {
        self.residual.holds(probe, build)
    }

    /// Splits the config for an operator: kind, residual as a closure, retention, and the
    /// operator name (`default` if none was given).
    pub(super) fn into_parts<P, B>(
        self,
        default: &'static str,
    ) -> (
        JoinKind,
        impl Fn(&P, &B) -> bool + 'static,
        Option<Retention<T>>,
        &'static str,
    )
    where
        R: Residual<P, B>,
        P: 'static,
        B: 'static,
        T: 'static,
    {
        let residual = self.residual;
        let name = if self.name.is_empty() {
            default
        } else {
            self.name
        };
        let holds = move |p: &P, b: &B| residual.holds(p, b);
        (self.kind, holds, self.retention, name)
    }
}
