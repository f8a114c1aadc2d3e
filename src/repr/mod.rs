//! Values: Flink's logical types, packed rows, decimals, time.

pub mod decimal;
pub mod time;
