//! Placeholder until the time module moves here (branch repr-time).
use serde::{Deserialize, Serialize};
/// Flink's TimestampData.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Ts {
    /// Milliseconds since the epoch.
    pub millis: i64,
    /// Nanoseconds within the millisecond.
    pub nanos_of_milli: u32,
}
