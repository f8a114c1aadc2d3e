//! The `WITH (..)` options of a `'connector' = 'datagen'` table (Flink's
//! `docs/connectors/table/datagen.md`), validated into a [`DatagenSource`].
//!
//! - `'number-of-rows'`: how many rows. Without it (and without a sequence field) the table is
//!   unbounded, as Flink's: a CONTINUOUS materialized table reads it at its rate, forever; a
//!   batch query over it is refused, naming the option to add.
//! - `'rows-per-second'` (Flink's default 10000): generation sleeps between blocks of rows to
//!   keep to that rate.
//! - `'fields.<f>.kind'` = `'random'` (the default) or `'sequence'`. A sequence needs
//!   `'fields.<f>.start'` and `'fields.<f>.end'` (integers) and bounds the table to `end -
//!   start + 1` rows; it makes numbers (TINYINT .. BIGINT, FLOAT, DOUBLE, DECIMAL) or their
//!   text (CHAR, VARCHAR, STRING), as Flink's does. A random field takes, by type: numbers
//!   `'min'` and `'max'` (default the type's range; Flink's for FLOAT, DOUBLE and DECIMAL),
//!   VARCHAR and STRING `'length'` (default `n`, 100 for STRING) and `'var-len'`, DATE, TIME,
//!   TIMESTAMP and TIMESTAMP_LTZ `'max-past'` (a duration: now minus up to that much; Flink
//!   takes it for the timestamps only), and any of them `'null-rate'` (0 to 1).
//!
//! Values are deterministic: row `i` is a function of the table's name, the field and `i`
//! (Flink's random values are unseeded), and "now" is when `CREATE TABLE` ran. Errors are at
//! the option: an unknown option (with the closest valid name), a `fields.<f>.*` whose column
//! does not exist or does not take that option, an unknown kind, a sequence on a type it cannot
//! make, a sequence without `start` or `end`, a value that does not parse, min above max.

use std::collections::BTreeMap;

use crate::io::{
    DatagenSource, FieldGenerator, Generator, DEFAULT_ROWS_PER_SECOND, DEFAULT_STRING_LENGTH,
};
use crate::repr::types::MAX_LENGTH;
use crate::repr::{DataType, Schema};
use crate::sql::parse_duration;
use crate::sql::SqlError;
use crate::sql::{ColumnKind, CreateTable, TableOption};

/// The table-wide options.
const OPTIONS: &[&str] = &["connector", "number-of-rows", "rows-per-second"];

/// The generated table `t` declares, with `physical` its physical columns.
///
/// Errors: see the [module documentation](self).
pub(crate) fn datagen(t: &CreateTable, physical: &Schema) -> Result<DatagenSource, SqlError> {
    if let Some(c) = t
        .columns
        .iter()
        .find(|c| matches!(c.kind, ColumnKind::Metadata { .. }))
    {
        return Err(SqlError::at(
            c.name.span,
            format!(
                "the connector 'datagen' provides no metadata, but '{}' is a METADATA column",
                c.name.value
            ),
        ));
    }
    // fields.<f>.<key>, by column; every other option must be a table-wide one.
    let mut by_field: BTreeMap<&str, Vec<(&str, &TableOption)>> = BTreeMap::new();
    for o in &t.options {
        if OPTIONS.contains(&o.key.as_str()) {
            continue;
        }
        let Some((field, key)) = o
            .key
            .strip_prefix("fields.")
            .and_then(|rest| rest.rsplit_once('.'))
        else {
            return Err(unsupported(o, &supported(physical)));
        };
        if physical.index_of(field).is_none() {
            let names: Vec<&str> = physical.names().collect();
            return Err(SqlError::at(
                o.span,
                format!(
                    "Unsupported option '{}' for connector 'datagen': the table has no physical column '{field}'; its columns are {}",
                    o.key,
                    names.join(", ")
                ),
            ));
        }
        by_field.entry(field).or_default().push((key, o));
    }
    let get = |key: &str| t.options.iter().find(|o| o.key == key);
    let number_of_rows = get("number-of-rows").map(parse::<u64>).transpose()?;
    let rows_per_second = match get("rows-per-second") {
        None => DEFAULT_ROWS_PER_SECOND,
        Some(o) => match parse::<u64>(o)? {
            0 => return Err(SqlError::at(o.span, "'rows-per-second' must be positive")),
            n => n,
        },
    };
    let mut fields = Vec::with_capacity(physical.len());
    for column in &physical.fields {
        let options = by_field.remove(column.name.as_str()).unwrap_or_default();
        let field = field(&column.name, &column.ty.data_type, &options, t)?;
        let span = options.first().map_or(t.name.span, |(_, o)| o.span);
        field
            .check(column)
            .map_err(|m| SqlError::at(span, format!("field '{}': {m}", column.name)))?;
        fields.push(field);
    }
    let source = DatagenSource::new(&t.name.value, physical.clone(), fields, number_of_rows)
        .map_err(|m| SqlError::at(t.name.span, m))?;
    Ok(source.with_rows_per_second(rows_per_second))
}

/// The generator of the column `name` of type `ty`, from its `fields.<name>.*` options.
fn field(
    name: &str,
    ty: &DataType,
    options: &[(&str, &TableOption)],
    t: &CreateTable,
) -> Result<FieldGenerator, SqlError> {
    let get = |key: &str| options.iter().find(|(k, _)| *k == key).map(|(_, o)| *o);
    let kind = get("kind");
    let sequence = match kind {
        None => false,
        Some(o) if o.value == "random" => false,
        Some(o) if o.value == "sequence" => true,
        Some(o) => {
            return Err(SqlError::at(
                o.span,
                format!(
                    "Unsupported generator kind: {} ('{}'); the kinds are 'random' and 'sequence'",
                    o.value, o.key
                ),
            ))
        }
    };
    let is_number = ty.is_integer()
        || matches!(
            ty,
            DataType::Float | DataType::Double | DataType::Decimal { .. }
        );
    let is_time = matches!(
        ty,
        DataType::Date | DataType::Time(_) | DataType::Timestamp(_) | DataType::TimestampLtz(_)
    );
    // The keys this field takes, and its generator.
    let (keys, generator): (&[&str], Generator) = if sequence {
        let kind = kind.expect("a sequence is declared");
        if !is_number && !ty.is_string() {
            return Err(SqlError::at(
                kind.span,
                format!(
                    "a sequence generator makes numbers or their text, not {ty} (field '{name}'); use 'random'"
                ),
            ));
        }
        let bound = |key: &str| {
            let option = get(key).ok_or_else(|| {
                SqlError::at(
                    kind.span,
                    format!(
                        "Could not find required property 'fields.{name}.{key}' for sequence generator."
                    ),
                )
            })?;
            parse::<i64>(option)
        };
        let (start, end) = (bound("start")?, bound("end")?);
        (
            &["kind", "start", "end"],
            Generator::Sequence { start, end },
        )
    } else if ty.is_integer() {
        let (low, high) = integer_range(ty);
        let min = get("min").map(parse::<i64>).transpose()?.unwrap_or(low);
        let max = get("max").map(parse::<i64>).transpose()?.unwrap_or(high);
        (
            &["kind", "min", "max", "null-rate"],
            Generator::Int { min, max },
        )
    } else if is_number {
        let (low, high) = if *ty == DataType::Float {
            (f64::from(f32::from_bits(1)), f64::from(f32::MAX))
        } else {
            (f64::from_bits(1), f64::MAX)
        };
        let min = get("min").map(parse::<f64>).transpose()?.unwrap_or(low);
        let max = get("max").map(parse::<f64>).transpose()?.unwrap_or(high);
        (
            &["kind", "min", "max", "null-rate"],
            Generator::Float { min, max },
        )
    } else if *ty == DataType::Boolean {
        (&["kind", "null-rate"], Generator::Bool)
    } else if let DataType::Char(n) = *ty {
        let generator = Generator::String {
            length: n,
            var_len: false,
        };
        (&["kind", "null-rate"], generator)
    } else if let DataType::Varchar(n) = *ty {
        let default = if n == MAX_LENGTH {
            DEFAULT_STRING_LENGTH
        } else {
            n
        };
        let length = match get("length") {
            None => default,
            Some(o) => match parse::<u32>(o)? {
                0 => return Err(SqlError::at(o.span, "'length' must be positive")),
                l if l > n => {
                    return Err(SqlError::at(
                        o.span,
                        format!("'{}' is {l}, longer than the column's type {ty}", o.key),
                    ))
                }
                l => l,
            },
        };
        let var_len = get("var-len")
            .map(parse::<bool>)
            .transpose()?
            .unwrap_or(false);
        let generator = Generator::String { length, var_len };
        (&["kind", "length", "var-len", "null-rate"], generator)
    } else if is_time {
        let max_past_ms = match get("max-past") {
            None => 0,
            Some(o) => parse_duration(&o.value).map_err(|m| {
                SqlError::at(
                    o.span,
                    format!(
                        "Could not parse value '{}' for key '{}': {m}",
                        o.value, o.key
                    ),
                )
            })?,
        };
        (
            &["kind", "max-past", "null-rate"],
            Generator::Past { max_past_ms },
        )
    } else {
        let span = kind.map_or(t.name.span, |o| o.span);
        return Err(SqlError::at(
            span,
            format!("Unsupported type: {ty} (field '{name}' of a datagen table)"),
        ));
    };
    if let Some((_, o)) = options.iter().find(|(k, _)| !keys.contains(k)) {
        let valid: Vec<String> = keys.iter().map(|k| format!("fields.{name}.{k}")).collect();
        let what = if sequence { "sequence" } else { "random" };
        return Err(SqlError::at(
            o.span,
            format!(
                "Unsupported option '{}' for connector 'datagen': a {what} {ty} field takes {}",
                o.key,
                valid.join(", ")
            ),
        ));
    }
    let null_rate = get("null-rate")
        .map(parse::<f64>)
        .transpose()?
        .unwrap_or(0.0);
    if let Some(o) = get("null-rate").filter(|_| !(0.0..=1.0).contains(&null_rate)) {
        return Err(SqlError::at(
            o.span,
            format!("'{}' is {null_rate}, not a rate in [0, 1]", o.key),
        ));
    }
    Ok(FieldGenerator {
        generator,
        null_rate,
    })
}

/// The smallest and largest value of an integer type.
fn integer_range(ty: &DataType) -> (i64, i64) {
    match ty {
        DataType::TinyInt => (i8::MIN.into(), i8::MAX.into()),
        DataType::SmallInt => (i16::MIN.into(), i16::MAX.into()),
        DataType::Int => (i32::MIN.into(), i32::MAX.into()),
        _ => (i64::MIN, i64::MAX),
    }
}

/// The option's value as a `T`, or Flink's message at the option.
pub(super) fn parse<T: std::str::FromStr>(o: &TableOption) -> Result<T, SqlError> {
    o.value.trim().parse().map_err(|_| {
        SqlError::at(
            o.span,
            format!("Could not parse value '{}' for key '{}'.", o.value, o.key),
        )
    })
}

/// The table-wide options and the field options' patterns, for error messages.
fn supported(physical: &Schema) -> Vec<String> {
    let mut valid: Vec<String> = OPTIONS.iter().map(|o| o.to_string()).collect();
    if let Some(first) = physical.names().next() {
        valid.extend(
            [
                "kind",
                "start",
                "end",
                "min",
                "max",
                "length",
                "var-len",
                "max-past",
                "null-rate",
            ]
            .iter()
            .map(|k| format!("fields.{first}.{k}")),
        );
    }
    valid
}

fn unsupported(option: &TableOption, valid: &[String]) -> SqlError {
    let valid: Vec<&str> = valid.iter().map(String::as_str).collect();
    SqlError::at(
        option.span,
        super::connector::unsupported("datagen", option, &valid),
    )
}
