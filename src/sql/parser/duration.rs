//! Durations as Flink's options write them (`SET 'table.exec.emit.allow-lateness' = '10 ms'`, the
//! filesystem connector's `'source.monitor-interval'`): a number and a unit.

/// A duration as Flink's options write it (`10 ms`, `5 s`, `1 min`, `2 h`, `1 d`; a bare number
/// is milliseconds), in milliseconds.
pub(crate) fn parse_duration(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let unit_ms = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => 1,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000,
        "min" | "m" | "minute" | "minutes" => 60_000,
        "h" | "hour" | "hours" => 3_600_000,
        "d" | "day" | "days" => 86_400_000,
        _ => {
            return Err(format!(
                "'{text}' is not a duration (e.g. '10 ms', '5 s', '1 min')"
            ))
        }
    };
    number
        .parse::<i64>()
        .ok()
        .and_then(|n| n.checked_mul(unit_ms))
        .ok_or_else(|| format!("'{text}' is not a duration (e.g. '10 ms', '5 s', '1 min')"))
}
