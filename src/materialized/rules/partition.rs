//! Partitions of a FULL refresh (semantics D8, D9, D11): the partition a periodic refresh
//! overwrites, from the schedule time and the `partition.fields.<f>.date-formatter` options,
//! and the checks of a manual `REFRESH PARTITION (..)` spec.
//!
//! Date formats are Java's `DateTimeFormatter` patterns as Flink users write them; the letters
//! `yyyy`, `MM`, `dd`, `HH`, `mm`, `ss` (and quoted or punctuation literals) are supported.

use chrono::{Duration as ChronoDuration, NaiveDateTime};

use super::freshness::IntervalFreshness;

/// The option prefix and suffix of a partition column's date formatter.
pub const FORMATTER_PREFIX: &str = "partition.fields.";
/// See [`FORMATTER_PREFIX`].
pub const FORMATTER_SUFFIX: &str = ".date-formatter";

/// The schedule time's format (Flink's `yyyy-MM-dd HH:mm:ss`).
pub const SCHEDULE_TIME_FORMAT: &str = "%Y-%m-%d %H:%M:%S";

/// The partition column named by a `partition.fields.<f>.date-formatter` option key.
pub fn formatter_column(key: &str) -> Option<&str> {
    key.strip_prefix(FORMATTER_PREFIX)?
        .strip_suffix(FORMATTER_SUFFIX)
}

/// The partition a periodic refresh at `schedule_time` overwrites: for each `(column,
/// pattern)` of `formatters`, in order, `format(schedule_time - freshness, pattern)` (Flink's
/// `MaterializedTableManager.getPeriodRefreshPartition`: the period that just ended).
/// `table` is the identifier messages name.
///
/// Errors (Flink's messages): no schedule time; a schedule time that is not `yyyy-MM-dd
/// HH:mm:ss`; a pattern with letters other than the supported ones.
///
/// ```
/// use differential_temporal::materialized::{period_partition, IntervalFreshness, TimeUnit};
///
/// let day = IntervalFreshness::of("1", TimeUnit::Day).unwrap();
/// let formatters = vec![("ds".to_string(), "yyyy-MM-dd".to_string())];
/// let partition = period_partition("`t`", Some("2024-01-01 00:00:00"), day, &formatters).unwrap();
/// assert_eq!(partition, vec![("ds".to_string(), "2023-12-31".to_string())]);
/// ```
pub fn period_partition(
    table: &str,
    schedule_time: Option<&str>,
    freshness: IntervalFreshness,
    formatters: &[(String, String)],
) -> Result<Vec<(String, String)>, String> {
    let schedule_time = schedule_time.ok_or_else(|| {
        format!("The scheduler time must not be null during the periodic refresh of the materialized table {table}.")
    })?;
    let mut partition = Vec::with_capacity(formatters.len());
    for (column, pattern) in formatters {
        let time = NaiveDateTime::parse_from_str(schedule_time, SCHEDULE_TIME_FORMAT).map_err(|_| {
            format!("Failed to parse a valid partition value for the field '{column}' in materialized table {table} using the scheduler time '{schedule_time}' based on the date format 'yyyy-MM-dd HH:mm:ss'.")
        })?;
        let start = time - ChronoDuration::seconds(freshness.duration().as_secs() as i64);
        partition.push((column.clone(), format_java(start, pattern)?));
    }
    Ok(partition)
}

/// `time` formatted by the Java `DateTimeFormatter` pattern `pattern`.
///
/// Errors: a pattern letter other than `y M d H m s`, or a run of them of an unsupported width.
pub fn format_java(time: NaiveDateTime, pattern: &str) -> Result<String, String> {
    let mut chrono_pattern = String::new();
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let run = chars[i..].iter().take_while(|&&d| d == c).count();
        if c == '\'' {
            let end = chars[i + 1..]
                .iter()
                .position(|&d| d == '\'')
                .ok_or_else(|| format!("unclosed quote in the date format '{pattern}'"))?;
            for literal in &chars[i + 1..i + 1 + end] {
                push_literal(&mut chrono_pattern, *literal);
            }
            i += end + 2;
            continue;
        }
        if c.is_ascii_alphabetic() {
            let spec = match (c, run) {
                ('y', 4) | ('u', 4) => "%Y",
                ('y', 2) | ('u', 2) => "%y",
                ('M', 2) => "%m",
                ('d', 2) => "%d",
                ('H', 2) => "%H",
                ('m', 2) => "%M",
                ('s', 2) => "%S",
                _ => {
                    return Err(format!(
                        "the date format '{pattern}' has '{}', which is not supported (supported: yyyy, yy, MM, dd, HH, mm, ss)",
                        c.to_string().repeat(run)
                    ))
                }
            };
            chrono_pattern.push_str(spec);
        } else {
            for _ in 0..run {
                push_literal(&mut chrono_pattern, c);
            }
        }
        i += run;
    }
    Ok(time.format(&chrono_pattern).to_string())
}

fn push_literal(pattern: &mut String, c: char) {
    if c == '%' {
        pattern.push_str("%%");
    } else {
        pattern.push(c);
    }
}

/// Checks a `REFRESH PARTITION (k = v, ..)` spec against the table's partition columns (names
/// and whether each is a character string), with Flink's messages
/// (`MaterializedTableManager.validatePartitionSpec`); `spec` holds each key and whether its
/// value was a string literal.
///
/// Errors: keys that are not partition columns; keys of a partition column that is not a
/// character string.
pub fn validate_partition_spec(
    spec: &[(String, bool)],
    partition_columns: &[(String, bool)],
) -> Result<(), String> {
    let unknown: Vec<&str> = spec
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !partition_columns.iter().any(|(c, _)| c == k))
        .collect();
    if !unknown.is_empty() {
        let known: Vec<&str> = partition_columns.iter().map(|(c, _)| c.as_str()).collect();
        return Err(format!(
            "The partition spec contains unknown partition keys:\n\n{}\n\nAll known partition keys are:\n\n{}",
            java_hash_set_order(&unknown).join("\n"),
            java_hash_set_order(&known).join("\n")
        ));
    }
    let not_strings: Vec<&str> = spec
        .iter()
        .filter(|(k, literal_string)| {
            !literal_string
                || partition_columns
                    .iter()
                    .any(|(c, string)| c == k && !string)
        })
        .map(|(k, _)| k.as_str())
        .collect();
    if !not_strings.is_empty() {
        return Err(format!(
            "Currently, refreshing materialized table only supports referring to char, varchar and string type partition keys. All specified partition keys in partition specs with unsupported types are:\n\n{}",
            java_hash_set_order(&not_strings).join("\n")
        ));
    }
    Ok(())
}

/// `names` in the iteration order of a `java.util.HashSet` built from them (Flink lists the
/// keys of its messages from one): by bucket of the spread `String.hashCode`, in a table of
/// the smallest power of two (at least 16) that holds them under the 0.75 load factor; a bucket
/// keeps insertion order.
fn java_hash_set_order<'a>(names: &[&'a str]) -> Vec<&'a str> {
    let mut buckets = 16usize;
    while names.len() * 4 > buckets * 3 {
        buckets *= 2;
    }
    let bucket = |s: &str| {
        let h = s
            .encode_utf16()
            .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)));
        let spread = (h ^ ((h as u32) >> 16) as i32) as u32;
        spread as usize & (buckets - 1)
    };
    let mut unique: Vec<&str> = Vec::new();
    for n in names {
        if !unique.contains(n) {
            unique.push(n);
        }
    }
    let mut ordered: Vec<(usize, usize, &str)> = unique
        .into_iter()
        .enumerate()
        .map(|(i, n)| (bucket(n), i, n))
        .collect();
    ordered.sort();
    ordered.into_iter().map(|(_, _, n)| n).collect()
}

/// The query a refresh runs: the definition, filtered to the partition `spec` (Flink's
/// `MaterializedTableManager.getRefreshStatement` without its `INSERT OVERWRITE t` line).
pub fn refresh_query(definition: &str, spec: &[(String, String)]) -> String {
    let mut query = format!("SELECT * FROM ({definition})");
    if !spec.is_empty() {
        let conditions: Vec<String> = spec
            .iter()
            .map(|(k, v)| format!("{k} = '{}'", v.replace('\'', "''")))
            .collect();
        query.push_str(&format!("\n  WHERE {}", conditions.join(" AND ")));
    }
    query
}

/// The statement a manual refresh of `table` runs, as Flink writes it (semantics D11).
///
/// ```
/// use differential_temporal::materialized::refresh_statement;
///
/// let spec = vec![("k1".to_string(), "v1".to_string())];
/// assert_eq!(
///     refresh_statement("t", "SELECT * FROM s", &spec),
///     "INSERT OVERWRITE t\n  SELECT * FROM (SELECT * FROM s)\n  WHERE k1 = 'v1'"
/// );
/// ```
pub fn refresh_statement(table: &str, definition: &str, spec: &[(String, String)]) -> String {
    format!(
        "INSERT OVERWRITE {table}\n  {}",
        refresh_query(definition, spec)
    )
}
