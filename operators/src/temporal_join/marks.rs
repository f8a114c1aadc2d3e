//! The combined watermark of a temporal join's two inputs, as the final-mode operators read it.

use serde::{Deserialize, Serialize};

use crate::combined::Combined;
use crate::watermark::Watermark;
use crate::SysTime;

/// A record of either input's watermark collection.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(super) enum Mark<E> {
    /// A candidate of the probe side's watermark collection.
    Probe(Watermark<E>),
    /// A candidate of the build side's watermark collection.
    Build(Watermark<E>),
}

/// The combined watermark of the probe (input 0) and build (input 1) sides, idle after
/// `timeout` system times (`0`: never; see [`crate::combined`]).
pub(super) fn combined<E: Ord + Clone>(timeout: SysTime) -> Combined<E> {
    Combined::new(2, timeout)
}

impl<E> Mark<E> {
    /// Records this watermark record of `epoch` into `marks`.
    pub(super) fn observe_into(self, epoch: SysTime, marks: &mut Combined<E>)
    where
        E: Ord + Clone,
    {
        match self {
            Mark::Probe(w) => marks.observe(0, epoch, w),
            Mark::Build(w) => marks.observe(1, epoch, w),
        }
    }
}
