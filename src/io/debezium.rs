//! Flink's `debezium-json` format for files, read and written ([`write_debezium_json`]): one
//! Debezium change event per line, its envelope
//! `{"before": {..}, "after": {..}, "op": "c" | "r" | "u" | "d"}` decoded into the changelog
//! as Flink's `DebeziumJsonDeserializationSchema` decodes it: `c` (create) and `r` (snapshot
//! read) give `+I after`, `u` gives `-U before` then `+U after`, `d` gives `-D before`.
//!
//! With `'debezium-json.schema-include' = 'true'` each event is wrapped as Debezium writes it
//! with its JSON converter's schemas enabled, `{"schema": {..}, "payload": {envelope}}`, and the
//! envelope is read from `payload`; without it (Flink's default) the line is the envelope.
//!
//! A column's value is the field of the same name of `before`/`after`; a missing field or JSON
//! `null` is NULL. A string, number or boolean is read as its text, as a CSV cell of the
//! column's type ([`parse_datum`]); an array or object is a row error. Lines that are empty or
//! only spaces are not events. Anything else that does not decode is a row error naming the file
//! and line, with Flink's message where Flink has one.

use serde_json::{Map, Value};

use crate::csv::{Block, RowError};
use crate::operators::{Change, RowKind};
use crate::repr::cast::parse_datum;
use crate::repr::{ColumnType, Datum, Row, Schema, Ts};

/// The options of the `debezium-json` format (Flink's names, prefix `debezium-json.`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DebeziumOptions {
    /// `debezium-json.schema-include` (default false): each event is wrapped in Debezium's
    /// `{"schema": .., "payload": ..}`.
    pub schema_include: bool,
    /// The columns read from the event's metadata rather than its row: column name, metadata.
    pub metadata: Vec<(String, DebeziumMetadata)>,
}

/// A value of an event's metadata (Flink's readable metadata of `debezium-json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DebeziumMetadata {
    /// `ingestion-timestamp`: when the connector processed the event (`ts_ms`, epoch
    /// milliseconds), a TIMESTAMP_LTZ(3) (or TIMESTAMP(3) in UTC).
    IngestionTimestamp,
    /// `source.timestamp`: when the change was made in the database (`source.ts_ms`).
    SourceTimestamp,
    /// `source.database` (`source.db`), a STRING.
    SourceDatabase,
    /// `source.schema` (`source.schema`), a STRING.
    SourceSchema,
    /// `source.table` (`source.table`), a STRING.
    SourceTable,
}

impl DebeziumMetadata {
    /// The keys, as Flink names them.
    pub const KEYS: &'static [&'static str] = &[
        "ingestion-timestamp",
        "source.timestamp",
        "source.database",
        "source.schema",
        "source.table",
    ];

    /// The metadata `key` names: one of [`KEYS`](Self::KEYS), also with the `value.` prefix
    /// Flink's Kafka connector puts before a value format's keys (`'value.source.timestamp'`,
    /// as the seed's DDL writes it).
    pub fn from_key(key: &str) -> Option<DebeziumMetadata> {
        Some(match key.strip_prefix("value.").unwrap_or(key) {
            "ingestion-timestamp" => DebeziumMetadata::IngestionTimestamp,
            "source.timestamp" => DebeziumMetadata::SourceTimestamp,
            "source.database" => DebeziumMetadata::SourceDatabase,
            "source.schema" => DebeziumMetadata::SourceSchema,
            "source.table" => DebeziumMetadata::SourceTable,
            _ => return None,
        })
    }

    /// Whether the value is a timestamp (else a string).
    pub fn is_timestamp(self) -> bool {
        matches!(
            self,
            DebeziumMetadata::IngestionTimestamp | DebeziumMetadata::SourceTimestamp
        )
    }

    /// The value in `envelope`, if present.
    fn read(self, envelope: &Map<String, Value>) -> Option<&Value> {
        let source = || envelope.get("source").and_then(Value::as_object);
        match self {
            DebeziumMetadata::IngestionTimestamp => envelope.get("ts_ms"),
            DebeziumMetadata::SourceTimestamp => source()?.get("ts_ms"),
            DebeziumMetadata::SourceDatabase => source()?.get("db"),
            DebeziumMetadata::SourceSchema => source()?.get("schema"),
            DebeziumMetadata::SourceTable => source()?.get("table"),
        }
    }
}

/// Flink's message for an update or delete whose `before` is null.
const REPLICA_IDENTITY: &str = "message is null, if you are using Debezium Postgres Connector, please check the Postgres table has been set REPLICA IDENTITY to FULL level.";

/// Decodes the events of one file into rows of a schema.
#[derive(Clone, Debug)]
pub(super) struct DebeziumJson {
    options: DebeziumOptions,
    /// The schema's columns: name, type, and the metadata it reads if it is a metadata column.
    columns: Vec<(String, ColumnType, Option<DebeziumMetadata>)>,
}

impl DebeziumJson {
    /// A decoder of `schema`'s columns.
    pub(super) fn new(schema: &Schema, options: DebeziumOptions) -> DebeziumJson {
        let columns = schema
            .fields
            .iter()
            .map(|f| {
                let metadata = options
                    .metadata
                    .iter()
                    .find(|(column, _)| *column == f.name)
                    .map(|(_, m)| *m);
                (f.name.clone(), f.ty.clone(), metadata)
            })
            .collect();
        DebeziumJson { options, columns }
    }

    /// Decodes every line of `block` into its changes, passing each to `out` in file order
    /// with `seq(line, i)` (`i` = 0, or 1 for the `+U` of an update); a line that does not
    /// decode is `error(line, reason)`.
    pub(super) fn parse_block(
        &self,
        block: &Block,
        seq: impl Fn(u64, u64) -> u64,
        error: impl Fn(u64, String) -> RowError,
        out: &mut dyn FnMut(Result<Change<Row>, RowError>),
    ) {
        let mut scratch = Row::new();
        let mut bytes = Vec::new();
        for (i, line) in block.bytes.split(|&b| b == b'\n').enumerate() {
            let number = block.first_line + i as u64;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let changes = std::str::from_utf8(line)
                .map_err(|e| format!("invalid UTF-8: {e}"))
                .and_then(|text| self.event(text, &mut scratch, &mut bytes));
            match changes {
                Ok(changes) => {
                    for (j, (kind, row)) in changes.into_iter().enumerate() {
                        out(Ok(Change::new(seq(number, j as u64), kind, row)));
                    }
                }
                Err(reason) => out(Err(error(number, reason))),
            }
        }
    }

    /// The changes of one event.
    fn event(
        &self,
        text: &str,
        scratch: &mut Row,
        bytes: &mut Vec<u8>,
    ) -> Result<Vec<(RowKind, Row)>, String> {
        let root: Value = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
        let Value::Object(root) = root else {
            return Err("a Debezium JSON message is an object".into());
        };
        let envelope = if self.options.schema_include {
            match root.get("payload") {
                Some(Value::Object(payload)) => payload,
                _ => return Err("no \"payload\" object: with 'debezium-json.schema-include' = 'true' a message is {\"schema\": .., \"payload\": ..}".into()),
            }
        } else if root.contains_key("schema") && root.contains_key("payload") {
            return Err("the message has Debezium's {\"schema\": .., \"payload\": ..} wrapper: set 'debezium-json.schema-include' = 'true'".into());
        } else {
            &root
        };
        let op = match envelope.get("op") {
            Some(Value::String(op)) => op.as_str(),
            other => {
                return Err(format!(
                    "Unknown \"op\" value \"{}\"",
                    other.unwrap_or(&Value::Null)
                ))
            }
        };
        let mut image = |field: &str, name: &str| -> Result<Row, String> {
            match envelope.get(field) {
                Some(Value::Object(values)) => self.row(values, envelope, scratch, bytes),
                None | Some(Value::Null) if field == "before" => {
                    Err(format!("The \"before\" field of {name} {REPLICA_IDENTITY}"))
                }
                None | Some(Value::Null) => {
                    Err(format!("the \"after\" field of {name} message is null"))
                }
                Some(other) => Err(format!("the \"{field}\" field is not an object: {other}")),
            }
        };
        Ok(match op {
            "c" | "r" => vec![(RowKind::Insert, image("after", "CREATE")?)],
            "u" => vec![
                (RowKind::UpdateBefore, image("before", "UPDATE")?),
                (RowKind::UpdateAfter, image("after", "UPDATE")?),
            ],
            "d" => vec![(RowKind::Delete, image("before", "DELETE")?)],
            other => return Err(format!("Unknown \"op\" value \"{other}\"")),
        })
    }

    /// The row of one image (`before` or `after`) of the event `envelope`.
    fn row(
        &self,
        values: &Map<String, Value>,
        envelope: &Map<String, Value>,
        scratch: &mut Row,
        bytes: &mut Vec<u8>,
    ) -> Result<Row, String> {
        let mut packer = scratch.packer();
        let mut number: String;
        for (name, ty, metadata) in &self.columns {
            let value = match metadata {
                Some(m) => m.read(envelope),
                None => values.get(name),
            };
            if let (Some(m), Some(Value::Number(n))) = (metadata, value) {
                let millis = n.as_i64().filter(|_| m.is_timestamp()).ok_or_else(|| {
                    format!(
                        "column \"{name}\": the metadata '{}' is {n}, not epoch milliseconds",
                        DebeziumMetadata::KEYS[*m as usize]
                    )
                })?;
                packer.push(Datum::Timestamp(Ts::from_millis(millis)));
                continue;
            }
            let text = match value {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.as_str()),
                Some(Value::Bool(b)) => Some(if *b { "true" } else { "false" }),
                Some(Value::Number(n)) => {
                    number = n.to_string();
                    Some(number.as_str())
                }
                Some(other) => {
                    return Err(format!(
                        "column \"{name}\": a JSON {} is not a value of type {}",
                        if other.is_array() { "array" } else { "object" },
                        ty.data_type
                    ))
                }
            };
            match text {
                None if !ty.nullable => {
                    return Err(format!(
                        "column \"{name}\": NULL in a NOT NULL column of type {}",
                        ty.data_type
                    ))
                }
                None => packer.push(Datum::Null),
                Some(text) => {
                    let datum = parse_datum(text, &ty.data_type, bytes)
                        .map_err(|e| format!("column \"{name}\": {e}"))?;
                    packer.push(datum);
                }
            }
        }
        Ok(scratch.clone())
    }
}

/// Writes `changes` (rows of `schema`) to `out` as Debezium events, one per line, as Flink's
/// `debezium-json` serialization writes them: `+I` and `+U` as `{"before":null,"after":{..},
/// "op":"c"}`, `-U` and `-D` as `{"before":{..},"after":null,"op":"d"}` (Flink does not merge an
/// update's two halves into one `u` event). A value is `null` for NULL, a boolean for BOOLEAN,
/// a JSON number for a number (exactly its text: a DECIMAL keeps its digits; a float that is
/// not finite is a string), and a string of its CSV text for every other type (timestamps
/// `yyyy-MM-dd HH:mm:ss.SSS`, Flink's `'SQL'` timestamp format).
///
/// Errors: those of `out`.
///
/// ```
/// use differential_temporal::io::write_debezium_json;
/// use differential_temporal::operators::RowKind;
/// use differential_temporal::repr::{DataType, Datum, Row, Schema};
///
/// let schema = Schema::builder()
///     .column("id", DataType::BigInt.not_null())
///     .column("name", DataType::STRING.nullable())
///     .build()
///     .unwrap();
/// let (old, new) = (Row::pack([Datum::Int(1), Datum::Str("a\"b")]), Row::pack([Datum::Int(1), Datum::Null]));
/// let mut out = Vec::new();
/// write_debezium_json(&mut out, &schema, [(RowKind::UpdateBefore, &old), (RowKind::UpdateAfter, &new)]).unwrap();
/// assert_eq!(
///     String::from_utf8(out).unwrap(),
///     "{\"before\":{\"id\":1,\"name\":\"a\\\"b\"},\"after\":null,\"op\":\"d\"}\n\
///      {\"before\":null,\"after\":{\"id\":1,\"name\":null},\"op\":\"c\"}\n"
/// );
/// ```
pub fn write_debezium_json<'r>(
    mut out: impl std::io::Write,
    schema: &Schema,
    changes: impl IntoIterator<Item = (RowKind, &'r Row)>,
) -> std::io::Result<()> {
    let mut line = String::new();
    let mut text = String::new();
    for (kind, row) in changes {
        line.clear();
        let mut image = |line: &mut String| -> std::io::Result<()> {
            line.push('{');
            for (i, (datum, field)) in row.iter().zip(&schema.fields).enumerate() {
                if i > 0 {
                    line.push(',');
                }
                line.push_str(&serde_json::to_string(&field.name)?);
                line.push(':');
                text.clear();
                crate::repr::cast::format_datum(datum, &field.ty.data_type, &mut text)
                    .map_err(std::io::Error::other)?;
                let number = field.ty.data_type.is_numeric()
                    && serde_json::from_str::<serde_json::Number>(&text).is_ok();
                match datum {
                    Datum::Null => line.push_str("null"),
                    Datum::Bool(b) => line.push_str(if b { "true" } else { "false" }),
                    _ if number => line.push_str(&text),
                    _ => line.push_str(&serde_json::to_string(&text)?),
                }
            }
            line.push('}');
            Ok(())
        };
        let insert = kind.is_accumulate();
        line.push_str("{\"before\":");
        if insert {
            line.push_str("null");
        } else {
            image(&mut line)?;
        }
        line.push_str(",\"after\":");
        if insert {
            image(&mut line)?;
        } else {
            line.push_str("null");
        }
        line.push_str(if insert {
            ",\"op\":\"c\"}\n"
        } else {
            ",\"op\":\"d\"}\n"
        });
        out.write_all(line.as_bytes())?;
    }
    out.flush()
}
