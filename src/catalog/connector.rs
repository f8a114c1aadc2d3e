//! The `WITH (..)` options of a `CREATE TABLE`: Flink's `filesystem` connector
//! (`docs/connectors/table/filesystem.md`) with its `csv` and `debezium-json` formats.
//!
//! - `'connector' = 'filesystem'`, `'path'`: a file, or a directory whose files are all read
//!   ([`TypedSource::open_table`](crate::io::TypedSource::open_table): every file under it, in
//!   path order, names starting with `.` or `_` skipped).
//! - `'format' = 'csv'`: a header row; a file with an `op` column (`+I -U +U -D`) is a
//!   changelog.
//! - `'format' = 'debezium-json'`: one Debezium change event per line, a changelog
//!   ([`DebeziumOptions`]); `'debezium-json.schema-include' = 'true' | 'false'` (Flink's
//!   default false; a sink refuses `true`, as Flink's serialization does). `INSERT INTO` such
//!   a table writes Debezium events ([`write_debezium_json`](crate::io::write_debezium_json)).
//!   A `METADATA [FROM 'key']` column reads the event's metadata ([`DebeziumMetadata`]: Flink's
//!   keys, also with Kafka's `value.` prefix).
//!
//! - `'source.monitor-interval'` (Flink's): how often a CONTINUOUS materialized table reading
//!   the table lists its directory for new files; `0` or absent: the files are read once.
//!   Such a directory may be empty when the table is declared (its columns are).
//!
//! Any other option is an error listing the valid ones for the table's format. The `datagen`
//! connector's options are [`super::datagen`]'s, the `nexmark` connector's [`super::nexmark`]'s,
//! the `postgres-cdc` connector's [`super::postgres_cdc`]'s.

use crate::io::{DebeziumMetadata, DebeziumOptions, Format};
use crate::sql::SqlError;
use crate::sql::{ColumnKind, CreateTable, TableOption};

/// The connectors, by their `'connector'` identifier.
pub(super) const CONNECTORS: &str = "'datagen', 'filesystem', 'nexmark', 'postgres-cdc'";

/// The options of every filesystem table.
const OPTIONS: &[&str] = &["connector", "format", "path", "source.monitor-interval"];

/// The options of the `debezium-json` format.
const DEBEZIUM_OPTIONS: &[&str] = &["debezium-json.schema-include"];

/// The formats, by their `'format'` identifier.
const FORMATS: &[&str] = &["csv", "debezium-json"];

/// Whether `key` is an option of the filesystem connector or of one of its formats (the
/// options of a table's merge engine are the others).
pub(super) fn is_connector_option(key: &str) -> bool {
    OPTIONS.contains(&key) || DEBEZIUM_OPTIONS.contains(&key)
}

/// Where a filesystem table's rows are and how they are written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Connector {
    /// The file or directory.
    pub path: String,
    /// The format.
    pub format: Format,
    /// `'source.monitor-interval'`: how often a CONTINUOUS materialized table reading it
    /// lists the directory for new files (`None`: it reads the files once).
    pub monitor_interval: Option<std::time::Duration>,
}

/// The filesystem connector `t`'s options declare.
///
/// Errors (at the option, or at the table's name when one is missing): a connector other than
/// `filesystem`, an unknown format, an option that is not one of the format's (with the
/// closest valid name), a missing `connector`, `format` or `path`, a `schema-include` that is
/// not `true` or `false`, an unknown `debezium-json` metadata key or one whose column's type
/// does not fit it.
pub(crate) fn filesystem(t: &CreateTable) -> Result<Connector, SqlError> {
    let get = |key: &str| t.options.iter().find(|o| o.key == key);
    let needs = |key: &str, what: &str| {
        SqlError::at(
            t.name.span,
            format!("table '{}' needs the option '{key}' ({what})", t.name.value),
        )
    };
    let factory = |o: &TableOption, available: &str| {
        SqlError::at(
            o.span,
            format!(
                "Could not find any factory for identifier '{}' ('{}'); the available ones are {available}",
                o.value, o.key
            ),
        )
    };
    let connector = get("connector").ok_or_else(|| {
        needs(
            "connector",
            "'filesystem', 'datagen', 'nexmark' or 'postgres-cdc'",
        )
    })?;
    if connector.value != "filesystem" {
        return Err(factory(connector, CONNECTORS));
    }
    let format_option = get("format").ok_or_else(|| needs("format", "'csv' or 'debezium-json'"))?;
    let valid: Vec<&str> = match format_option.value.as_str() {
        "csv" => OPTIONS.to_vec(),
        "debezium-json" => OPTIONS.iter().chain(DEBEZIUM_OPTIONS).copied().collect(),
        _ => return Err(factory(format_option, &quoted(FORMATS))),
    };
    check_options(t, "filesystem", &valid)?;
    let path = get("path").ok_or_else(|| needs("path", "its file or directory"))?;
    let format = if format_option.value == "csv" {
        Format::Csv
    } else {
        let mut metadata = Vec::new();
        for column in &t.columns {
            let ColumnKind::Metadata { ty, key, .. } = &column.kind else {
                continue;
            };
            let key = key.as_deref().unwrap_or(&column.name.value);
            let bad = |message: String| Err(SqlError::at(column.name.span, message));
            let Some(m) = DebeziumMetadata::from_key(key) else {
                return bad(format!(
                    "Invalid metadata key '{key}' in column '{}' of a debezium-json table; the available keys are {} (or with the prefix 'value.')",
                    column.name.value,
                    quoted(DebeziumMetadata::KEYS)
                ));
            };
            let ty = crate::sql::data_type(ty).map_err(|e| SqlError::at(column.name.span, e))?;
            let fits = if m.is_timestamp() {
                ty.is_timestamp()
            } else {
                ty.is_string()
            };
            if !fits {
                return bad(format!(
                    "the metadata '{key}' is a {}, but the column is of type {ty}",
                    if m.is_timestamp() {
                        "TIMESTAMP_LTZ(3)"
                    } else {
                        "STRING"
                    }
                ));
            }
            metadata.push((column.name.value.clone(), m));
        }
        let schema_include = match get("debezium-json.schema-include") {
            None => false,
            Some(o) if o.value.eq_ignore_ascii_case("true") => true,
            Some(o) if o.value.eq_ignore_ascii_case("false") => false,
            Some(o) => {
                return Err(SqlError::at(
                    o.span,
                    format!("'{}' is 'true' or 'false', not '{}'", o.key, o.value),
                ))
            }
        };
        Format::DebeziumJson(DebeziumOptions {
            schema_include,
            metadata,
        })
    };
    let monitor_interval = match get("source.monitor-interval") {
        None => None,
        Some(o) => match crate::sql::parse_duration(&o.value) {
            Ok(0) => None,
            Ok(ms) if ms > 0 => Some(std::time::Duration::from_millis(ms as u64)),
            _ => {
                return Err(SqlError::at(
                    o.span,
                    format!(
                        "'{}' is a duration such as '1 s' or '500 ms', not '{}'",
                        o.key, o.value
                    ),
                ))
            }
        },
    };
    Ok(Connector {
        path: path.value.clone(),
        format,
        monitor_interval,
    })
}

/// `'a', 'b'`.
fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Errors: the first option of `t` not among `valid` (Flink's message, [`unsupported`], at the
/// option).
pub(super) fn check_options(
    t: &CreateTable,
    connector: &str,
    valid: &[&str],
) -> Result<(), SqlError> {
    match t.options.iter().find(|o| !valid.contains(&o.key.as_str())) {
        Some(bad) => Err(SqlError::at(bad.span, unsupported(connector, bad, valid))),
        None => Ok(()),
    }
}

/// Flink's message for an option `connector` does not take, with the closest valid name.
pub(super) fn unsupported(connector: &str, option: &TableOption, valid: &[&str]) -> String {
    let closest = valid
        .iter()
        .min_by_key(|v| edit_distance(v, &option.key))
        .filter(|v| edit_distance(v, &option.key) <= 2);
    let hint = closest.map_or(String::new(), |c| format!(" (did you mean '{c}'?)"));
    format!(
        "Unsupported option '{}' for connector '{connector}'{hint}; supported options: {}",
        option.key,
        valid.join(", ")
    )
}

/// Levenshtein distance, for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean() {
        assert_eq!(edit_distance("path", "pathh"), 1);
        assert_eq!(edit_distance("format", "fromat"), 2);
        let option = TableOption {
            key: "pth".into(),
            value: "x".into(),
            span: sqlparser::tokenizer::Span::empty(),
        };
        assert_eq!(
            unsupported("filesystem", &option, OPTIONS),
            "Unsupported option 'pth' for connector 'filesystem' (did you mean 'path'?); supported options: connector, format, path, source.monitor-interval"
        );
    }
}
