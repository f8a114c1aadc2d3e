//! The `WITH (..)` options of a `'connector' = 'nexmark'` table, validated into a
//! [`NexmarkSource`]: one of the Nexmark benchmark's tables, its events made by the `nexmark`
//! crate's generator ([`crate::io::nexmark`] for the columns and the events).
//!
//! - `'nexmark.table'`: `person`, `auction` or `bid`. Flink's Nexmark source is one table of
//!   all events (`event_type` and a ROW per kind) that the benchmark splits with views; here
//!   each table is declared on its own, with the views' column names.
//! - `'events.num'`: how many events of all kinds the stream has; the table keeps those of its
//!   kind (as Flink's views over one source do). Without it the table is unbounded, as Flink's
//!   source: a CONTINUOUS materialized table reads it (`first-event.rate` events' rows a
//!   second), a batch query over it is refused.
//! - `'first-event.rate'`, `'next-event.rate'` (Flink's default 10000 each): events a second of
//!   event time, alternating every 10 minutes (Flink's square rate shape). They space the
//!   events' times; a batch query does not throttle generation.
//!
//! Errors are at the option or the column: an unknown option (with the closest valid name), a
//! missing or unknown `'nexmark.table'`, a value that does not
//! parse or a rate out of range, a METADATA column, a physical column that is not a field of
//! the table or whose type does not hold it.

use super::datagen::parse;
use crate::io::nexmark::{DEFAULT_EVENT_RATE, MAX_EVENT_RATE};
use crate::io::{NexmarkSource, NexmarkTable};
use crate::repr::Schema;
use crate::sql::SqlError;
use crate::sql::{ColumnKind, CreateTable};

/// The options a nexmark table takes.
const OPTIONS: &[&str] = &[
    "connector",
    "nexmark.table",
    "events.num",
    "first-event.rate",
    "next-event.rate",
];

/// The Nexmark table `t` declares, with `physical` its physical columns.
///
/// Errors: see the [module documentation](self).
pub(crate) fn nexmark(t: &CreateTable, physical: &Schema) -> Result<NexmarkSource, SqlError> {
    super::connector::check_options(t, "nexmark", OPTIONS)?;
    let get = |key: &str| t.options.iter().find(|o| o.key == key);
    let table_option = get("nexmark.table").ok_or_else(|| {
        SqlError::at(
            t.name.span,
            format!(
                "table '{}' needs the option 'nexmark.table' ('person', 'auction' or 'bid')",
                t.name.value
            ),
        )
    })?;
    let table = NexmarkTable::from_name(&table_option.value).ok_or_else(|| {
        SqlError::at(
            table_option.span,
            format!(
                "'nexmark.table' is 'person', 'auction' or 'bid', not '{}'",
                table_option.value
            ),
        )
    })?;
    for column in &t.columns {
        let at = |message: String| SqlError::at(column.name.span, message);
        match &column.kind {
            ColumnKind::Metadata { .. } => {
                return Err(at(format!(
                    "the connector 'nexmark' provides no metadata, but '{}' is a METADATA column",
                    column.name.value
                )))
            }
            ColumnKind::Physical { .. } => {
                if let Some(field) = physical.fields.iter().find(|f| f.name == column.name.value) {
                    table.field_of(field).map_err(at)?;
                }
            }
            ColumnKind::Computed(_) => {}
        }
    }
    let events = get("events.num").map(parse::<u64>).transpose()?;
    let rate = |key: &str| -> Result<u64, SqlError> {
        let Some(o) = get(key) else {
            return Ok(DEFAULT_EVENT_RATE);
        };
        match parse::<u64>(o)? {
            r if (1..=MAX_EVENT_RATE).contains(&r) => Ok(r),
            r => Err(SqlError::at(
                o.span,
                format!("'{key}' is {r}, not a rate in [1, {MAX_EVENT_RATE}] events a second"),
            )),
        }
    };
    let (first, next) = (rate("first-event.rate")?, rate("next-event.rate")?);
    let source = NexmarkSource::new(&t.name.value, table, physical.clone(), events.unwrap_or(0))
        .and_then(|s| s.with_rates(first, next))
        .map_err(|m| SqlError::at(t.name.span, m))?;
    Ok(match events {
        Some(_) => source,
        None => source.unbounded(),
    })
}
