//! The combined watermark of a temporal join's two inputs, as the final-mode operators read it.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::watermark::{Watermark, WatermarkTracker};
use crate::SysTime;

/// A record of either input's watermark collection.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(super) enum Mark<E> {
    /// A candidate of the probe side's watermark collection.
    Probe(Watermark<E>),
    /// A candidate of the build side's watermark collection.
    Build(Watermark<E>),
}

/// `min(probe W(s), build W(s))` over the epochs of both watermark collections, with the epochs
/// at which it may rise (one after each epoch holding a candidate).
pub(super) struct Combined<E> {
    probe: WatermarkTracker<E>,
    build: WatermarkTracker<E>,
    rises: BTreeSet<SysTime>,
}

impl<E: Ord + Clone> Combined<E> {
    /// Nothing seen: the watermark is `Min`.
    pub(super) fn new() -> Self {
        Combined {
            probe: WatermarkTracker::new(),
            build: WatermarkTracker::new(),
            rises: BTreeSet::new(),
        }
    }

    /// Records a watermark record of `epoch`.
    pub(super) fn observe(&mut self, epoch: SysTime, mark: Mark<E>) {
        match mark {
            Mark::Probe(w) => self.probe.observe(epoch, w),
            Mark::Build(w) => self.build.observe(epoch, w),
        }
        self.rises.insert(epoch + 1);
    }

    /// The earliest epoch at which the watermark may rise, not yet visited.
    pub(super) fn next_rise(&self) -> Option<SysTime> {
        self.rises.first().copied()
    }

    /// `true` iff some rise is still to visit.
    pub(super) fn rising(&self) -> bool {
        !self.rises.is_empty()
    }

    /// The combined watermark in force for the rows of `now` (epochs visited in order, each
    /// once every earlier epoch is complete); marks `now` visited.
    pub(super) fn at(&mut self, now: SysTime) -> Watermark<E> {
        self.rises.remove(&now);
        self.probe.at(now).min(self.build.at(now))
    }

    /// The epoch at which `Max` takes over once both inputs have ended.
    pub(super) fn end_epoch(&self) -> SysTime {
        self.probe.end_epoch().max(self.build.end_epoch())
    }
}
