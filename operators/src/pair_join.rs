//! What the keyed pair joins of this crate share besides their own rule (the window of
//! [`interval_join`](crate::interval_join), the retention of [`ttl_join`](crate::ttl_join)):
//! which sides' unmatched rows are padded, a residual predicate on the pairs, and the
//! operator's name.

use std::rc::Rc;

use crate::SysTime;

/// A pair join's configuration: its own rule `spec`, the padded sides, a residual and a name.
/// Built by the joins' `new` ([`IntervalJoinConfig::new`](crate::interval_join::IntervalJoinConfig),
/// [`TtlJoinConfig::new`](crate::ttl_join::TtlJoinConfig)): INNER, without residual.
pub struct PairJoinConfig<S, L, R> {
    pub(crate) spec: S,
    pub(crate) pad: (bool, bool),
    pub(crate) residual: Option<Rc<dyn Fn(&L, &R) -> bool>>,
    pub(crate) name: String,
    /// The idle-source timeout in system times (`0`: off), for the joins with watermarks.
    pub(crate) idle_timeout: SysTime,
}

impl<S, L, R> PairJoinConfig<S, L, R> {
    /// An INNER join by `spec`, without residual, named `name`.
    pub(crate) fn inner(spec: S, name: &str) -> Self {
        PairJoinConfig {
            spec,
            pad: (false, false),
            residual: None,
            name: name.to_string(),
            idle_timeout: 0,
        }
    }

    /// Pads the unmatched rows of the left side (LEFT), the right side (RIGHT) or both (FULL).
    pub fn padded(mut self, left: bool, right: bool) -> Self {
        self.pad = (left, right);
        self
    }

    /// A predicate a pair the join's rule matches must also pass (the rest of the ON clause).
    pub fn residual(mut self, residual: impl Fn(&L, &R) -> bool + 'static) -> Self {
        self.residual = Some(Rc::new(residual));
        self
    }

    /// The operator's name in the dataflow graph.
    pub fn named(mut self, name: &str) -> Self {
        self.name = name.to_string();
        self
    }

    /// Whether `l` and `r` pass the residual (always, without one).
    pub(crate) fn passes(&self, l: &L, r: &R) -> bool {
        self.residual.as_ref().is_none_or(|f| f(l, r))
    }
}
