//! The Postgres column types the connector reads, and the declared types each reads as.

use crate::repr::{parse_datum, DataType, Datum};

/// The session settings the values' text forms depend on, set on every connection.
pub(super) const SESSION: &str =
    "SET TimeZone TO 'UTC'; SET DateStyle TO 'ISO, YMD'; SET bytea_output TO 'hex'; SET extra_float_digits TO 1";

/// The Postgres types the connector reads, by `pg_type.typname`, and the declared types each
/// reads as (a STRING column reads any of them, as Postgres writes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PostgresType {
    /// `boolean`.
    Bool,
    /// `smallint`, `integer`, `bigint`.
    Integer,
    /// `real`, `double precision`.
    Float,
    /// `numeric`.
    Numeric,
    /// `text`, `varchar`, `char`, `name`.
    Text,
    /// `date`.
    Date,
    /// `time`.
    Time,
    /// `timestamp`.
    Timestamp,
    /// `timestamptz`.
    TimestampTz,
    /// `bytea`.
    Bytes,
}

impl PostgresType {
    /// The type of `pg_type.typname`, if the connector reads it.
    pub fn of(typname: &str) -> Option<PostgresType> {
        Some(match typname {
            "bool" => PostgresType::Bool,
            "int2" | "int4" | "int8" => PostgresType::Integer,
            "float4" | "float8" => PostgresType::Float,
            "numeric" => PostgresType::Numeric,
            "text" | "varchar" | "bpchar" | "name" => PostgresType::Text,
            "date" => PostgresType::Date,
            "time" => PostgresType::Time,
            "timestamp" => PostgresType::Timestamp,
            "timestamptz" => PostgresType::TimestampTz,
            "bytea" => PostgresType::Bytes,
            _ => return None,
        })
    }

    /// Whether a value of this type reads as `declared`.
    pub fn reads_as(self, declared: &DataType) -> bool {
        use DataType as D;
        match declared {
            D::Char(_) | D::Varchar(_) => true,
            D::TinyInt | D::SmallInt | D::Int | D::BigInt => self == PostgresType::Integer,
            D::Decimal { .. } => matches!(self, PostgresType::Integer | PostgresType::Numeric),
            D::Float | D::Double => matches!(
                self,
                PostgresType::Integer | PostgresType::Float | PostgresType::Numeric
            ),
            D::Boolean => self == PostgresType::Bool,
            D::Date => self == PostgresType::Date,
            D::Time(_) => self == PostgresType::Time,
            D::Timestamp(_) => self == PostgresType::Timestamp,
            D::TimestampLtz(_) => self == PostgresType::TimestampTz,
            D::Binary(_) | D::Varbinary(_) => self == PostgresType::Bytes,
            _ => false,
        }
    }

    /// The datum of Postgres's text output `text` of a value of this type (the session's
    /// `TimeZone` UTC, `bytea_output` hex, as the connector's session sets them) read as `declared`: a
    /// STRING keeps the text; a timestamp with time zone drops its `+00`, bytes are decoded
    /// from hex into `scratch`; the rest is the one text-to-datum cast's.
    ///
    /// Errors: the value does not fit the declared type (the cast's reason).
    pub fn datum<'a>(
        self,
        text: &'a str,
        declared: &DataType,
        scratch: &'a mut Vec<u8>,
    ) -> Result<Datum<'a>, String> {
        if declared.is_string() {
            return parse_datum(text, declared, scratch).map_err(|e| e.to_string());
        }
        match self {
            PostgresType::TimestampTz => {
                let utc = text.strip_suffix("+00").unwrap_or(text);
                parse_datum(utc, declared, scratch).map_err(|e| e.to_string())
            }
            PostgresType::Bytes => {
                let hex = text
                    .strip_prefix("\\x")
                    .ok_or_else(|| format!("not hex bytes: {text:?}"))?;
                scratch.clear();
                for pair in hex.as_bytes().chunks(2) {
                    let digits = std::str::from_utf8(pair).ok().filter(|d| d.len() == 2);
                    let byte = digits.and_then(|d| u8::from_str_radix(d, 16).ok());
                    scratch.push(byte.ok_or_else(|| format!("not hex bytes: {text:?}"))?);
                }
                match declared {
                    DataType::Binary(n) | DataType::Varbinary(n) if scratch.len() > *n as usize => {
                        Err(format!("{} bytes do not fit {declared}", scratch.len()))
                    }
                    _ => Ok(Datum::Bytes(scratch)),
                }
            }
            _ => parse_datum(text, declared, scratch).map_err(|e| e.to_string()),
        }
    }
}

/// The names Postgres types go by in errors: what `format_type` prints for the supported ones.
pub(super) const SUPPORTED: &str = "boolean, smallint, integer, bigint, real, double precision, numeric, text, character varying, character, name, date, time, timestamp, timestamp with time zone, bytea";

#[cfg(test)]
mod tests {
    use super::*;

    /// Which Postgres types read as which declared types: a string reads all; numbers widen
    /// (an integer reads as a DECIMAL or a float, a numeric as a float), never narrow to an
    /// integer; times only as their own kind (a timestamp is not a TIMESTAMP_LTZ).
    #[test]
    fn each_postgres_type_reads_as_the_declared_types_it_can_hold() {
        use PostgresType as P;
        let all = [
            P::Bool,
            P::Integer,
            P::Float,
            P::Numeric,
            P::Text,
            P::Date,
            P::Time,
            P::Timestamp,
            P::TimestampTz,
            P::Bytes,
        ];
        let decimal = DataType::Decimal {
            precision: 10,
            scale: 2,
        };
        let declared: [(DataType, &[P]); 11] = [
            (DataType::Varchar(u32::MAX), &all),
            (DataType::Char(3), &all),
            (DataType::BigInt, &[P::Integer]),
            (DataType::TinyInt, &[P::Integer]),
            (decimal, &[P::Integer, P::Numeric]),
            (DataType::Double, &[P::Integer, P::Float, P::Numeric]),
            (DataType::Boolean, &[P::Bool]),
            (DataType::Date, &[P::Date]),
            (DataType::Timestamp(3), &[P::Timestamp]),
            (DataType::TimestampLtz(3), &[P::TimestampTz]),
            (DataType::Varbinary(10), &[P::Bytes]),
        ];
        for (ty, readers) in declared {
            for p in all {
                assert_eq!(p.reads_as(&ty), readers.contains(&p), "{p:?} as {ty}");
            }
        }
        for typname in ["int2", "int4", "int8"] {
            assert_eq!(PostgresType::of(typname), Some(P::Integer));
        }
        assert_eq!(PostgresType::of("jsonb"), None);
    }

    #[test]
    fn values_read_from_postgres_text() {
        let mut scratch = Vec::new();
        let mut read = |p: PostgresType, text: &str, ty: &DataType| {
            p.datum(text, ty, &mut scratch).map(|d| format!("{d:?}"))
        };
        let ltz = DataType::TimestampLtz(3);
        assert_eq!(
            read(PostgresType::TimestampTz, "2024-01-01 09:00:00.5+00", &ltz),
            read(PostgresType::TimestampTz, "2024-01-01 09:00:00.5", &ltz)
        );
        assert_eq!(
            read(PostgresType::Bytes, "\\x0aff", &DataType::Varbinary(2)),
            Ok("Bytes([10, 255])".to_string())
        );
        assert_eq!(
            read(PostgresType::Bytes, "\\x0aff", &DataType::Varbinary(1)),
            Err("2 bytes do not fit VARBINARY(1)".to_string())
        );
        assert_eq!(
            read(PostgresType::Bytes, "\\x0a1", &DataType::Varbinary(9)),
            Err("not hex bytes: \"\\\\x0a1\"".to_string())
        );
        // A string keeps Postgres's text whatever the type.
        let string = DataType::Varchar(u32::MAX);
        assert_eq!(
            read(PostgresType::TimestampTz, "2024-01-01 09:00:00+00", &string),
            Ok("Str(\"2024-01-01 09:00:00+00\")".to_string())
        );
    }
}
