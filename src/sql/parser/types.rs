//! Flink's SQL type names onto [`DataType`]: `BOOLEAN`, `TINYINT` .. `BIGINT`, `FLOAT`,
//! `DOUBLE`, `DECIMAL(p, s)`, `CHAR(n)`, `VARCHAR(n)`, `STRING`, `BYTES`, `BINARY(n)`,
//! `VARBINARY(n)`, `DATE`, `TIME(p)`, `TIMESTAMP(p)`, `TIMESTAMP(p) WITH LOCAL TIME ZONE` and
//! `TIMESTAMP_LTZ(p)`, `ARRAY<T>` (nullable elements).
//!
//! A parameter left out takes Flink SQL's default (its DDL's, `FlinkTypeSystem` over
//! Calcite's; Flink's `SqlDdlToOperationConverterTest` lists them): `CHAR` and `BINARY` have
//! length 1, `VARCHAR` is `STRING` and `VARBINARY` is `BYTES` (the largest length), `DECIMAL`
//! is `DECIMAL(10, 0)` and `DECIMAL(p)` is `DECIMAL(p, 0)`, `TIME` is `TIME(0)`, `TIMESTAMP`
//! and `TIMESTAMP_LTZ` have precision 6.

use sqlparser::ast::{self, CharacterLength, ExactNumberInfo, TimezoneInfo, TypeModifier};

use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use crate::repr::types::MAX_LENGTH;
use crate::repr::{DataType, Field, Schema};

/// The type `ty` names, or what is wrong with it.
pub fn data_type(ty: &ast::DataType) -> Result<DataType, String> {
    use ast::DataType as T;
    // A length between 1 and MAX_LENGTH, `default` when not given.
    let checked = |n: Option<u64>, default: u32| match n {
        None => Ok(default),
        Some(n) => u32::try_from(n)
            .ok()
            .filter(|&n| (1..=MAX_LENGTH).contains(&n))
            .ok_or_else(|| format!("the length of {ty} must be between 1 and {MAX_LENGTH}")),
    };
    let length = |l: &Option<CharacterLength>, default: u32| match l {
        Some(CharacterLength::IntegerLength { length, .. }) => checked(Some(*length), default),
        Some(CharacterLength::Max) => Ok(MAX_LENGTH),
        None => Ok(default),
    };
    let time_precision = |p: &Option<u64>, default: u8| match p {
        None => Ok(default),
        Some(p) if *p <= 9 => Ok(*p as u8),
        Some(p) => Err(format!(
            "the precision of {ty} must be between 0 and 9, got {p}"
        )),
    };
    Ok(match ty {
        T::Boolean | T::Bool => DataType::Boolean,
        T::TinyInt(_) => DataType::TinyInt,
        T::SmallInt(_) => DataType::SmallInt,
        T::Int(_) | T::Integer(_) => DataType::Int,
        T::BigInt(_) => DataType::BigInt,
        T::Float(_) | T::Real => DataType::Float,
        T::Double(_) | T::DoublePrecision => DataType::Double,
        T::Decimal(info) | T::Numeric(info) | T::Dec(info) => {
            let (p, s) = match info {
                ExactNumberInfo::None => (10, 0),
                ExactNumberInfo::Precision(p) => (*p, 0),
                ExactNumberInfo::PrecisionAndScale(p, s) => {
                    (*p, u64::try_from(*s).unwrap_or(u64::MAX))
                }
            };
            let p = u8::try_from(p).unwrap_or(u8::MAX);
            let s = u8::try_from(s).unwrap_or(u8::MAX);
            DataType::decimal(p, s).map_err(|e| e.to_string())?
        }
        T::Char(l) | T::Character(l) => DataType::Char(length(l, 1)?),
        T::Varchar(l) | T::CharVarying(l) | T::CharacterVarying(l) => {
            DataType::Varchar(length(l, MAX_LENGTH)?)
        }
        T::String(_) | T::Text => DataType::STRING,
        T::Bytes(_) => DataType::BYTES,
        T::Binary(n) => DataType::Binary(checked(*n, 1)?),
        T::Varbinary(n) => DataType::Varbinary(match n {
            Some(ast::BinaryLength::IntegerLength { length }) => {
                checked(Some(*length), MAX_LENGTH)?
            }
            Some(ast::BinaryLength::Max) | None => MAX_LENGTH,
        }),
        T::Date => DataType::Date,
        T::Time(p, TimezoneInfo::None | TimezoneInfo::WithoutTimeZone) => {
            DataType::Time(time_precision(p, 0)?)
        }
        T::Timestamp(p, TimezoneInfo::None | TimezoneInfo::WithoutTimeZone) => {
            DataType::Timestamp(time_precision(p, 6)?)
        }
        T::Custom(name, modifiers) if name.to_string().eq_ignore_ascii_case("TIMESTAMP_LTZ") => {
            let p = match modifiers.as_slice() {
                [] => None,
                [TypeModifier::Number(n, _)] => Some(
                    n.parse::<u64>()
                        .map_err(|_| format!("the precision of {ty} must be between 0 and 9"))?,
                ),
                _ => return Err(format!("{ty} takes one precision")),
            };
            DataType::TimestampLtz(time_precision(&p, 6)?)
        }
        T::Array(ast::ArrayElemTypeDef::AngleBracket(element)) => {
            DataType::Array(Box::new(data_type(element)?.nullable()))
        }
        other => return Err(format!("the type {other} is not supported")),
    })
}

/// The columns of a column list as Flink's `CREATE TABLE` declares them, `name TYPE [NOT NULL]`
/// separated by commas (`"a BIGINT NOT NULL, ts TIMESTAMP(3), v DECIMAL(10, 2)"`): the
/// schema a command line's `--schema` declares.
///
/// Errors: text that is not such a list, an unsupported type or one out of range, a name
/// given twice; the message says which.
///
/// ```
/// use differential_temporal::repr::DataType;
/// use differential_temporal::sql::parse_columns;
///
/// let schema = parse_columns("a BIGINT NOT NULL, v DECIMAL(10, 2)").unwrap();
/// assert_eq!(schema.fields[0].ty, DataType::BigInt.not_null());
/// assert_eq!(schema.fields[1].ty, DataType::decimal(10, 2).unwrap().nullable());
/// assert!(parse_columns("a BIGINT,").is_err());
/// ```
pub fn parse_columns(text: &str) -> Result<Schema, String> {
    let bad = |e: &dyn std::fmt::Display| format!("invalid column list {text:?}: {e}");
    let mut parser = Parser::new(&super::FlinkDialect)
        .try_with_sql(text)
        .map_err(|e| bad(&e))?;
    let mut fields = Vec::new();
    loop {
        let name = parser.parse_identifier().map_err(|e| bad(&e))?;
        let ast_ty = parser.parse_data_type().map_err(|e| bad(&e))?;
        let ty = data_type(&ast_ty).map_err(|e| bad(&e))?;
        let not_null = parser.parse_keywords(&[Keyword::NOT, Keyword::NULL]);
        let ty = if not_null {
            ty.not_null()
        } else {
            ty.nullable()
        };
        fields.push(Field::new(name.value, ty));
        if !parser.consume_token(&Token::Comma) {
            break;
        }
    }
    if parser.peek_token().token != Token::EOF {
        let rest = parser.peek_token().token;
        return Err(bad(&format!("expected a comma or the end, found {rest}")));
    }
    Schema::new(fields).map_err(|e| bad(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::parser::Parser;

    fn parse(text: &str) -> Result<DataType, String> {
        let mut p = Parser::new(&super::super::FlinkDialect)
            .try_with_sql(text)
            .unwrap();
        data_type(&p.parse_data_type().unwrap())
    }

    #[test]
    fn flink_type_names() {
        assert_eq!(parse("STRING"), Ok(DataType::STRING));
        assert_eq!(
            parse("DECIMAL(32, 2)"),
            Ok(DataType::decimal(32, 2).unwrap())
        );
        assert_eq!(parse("DECIMAL"), Ok(DataType::decimal(10, 0).unwrap()));
        assert_eq!(parse("TIMESTAMP(3)"), Ok(DataType::Timestamp(3)));
        assert_eq!(parse("TIMESTAMP"), Ok(DataType::Timestamp(6)));
        assert_eq!(parse("TIMESTAMP_LTZ(3)"), Ok(DataType::TimestampLtz(3)));
        assert_eq!(parse("VARCHAR(5)"), Ok(DataType::Varchar(5)));
        assert_eq!(parse("BIGINT"), Ok(DataType::BigInt));
        assert_eq!(parse("BYTES"), Ok(DataType::Varbinary(MAX_LENGTH)));
    }

    /// A parameter left out takes Flink SQL's default (`SqlDdlToOperationConverterTest`'s
    /// `testCreateTableWithFullDataTypes`); a bare `VARCHAR` was `VARCHAR(1)` and a
    /// `VARBINARY(n)` was `BYTES` (issue 46).
    #[test]
    fn defaults_and_lengths_as_flink_ddl() {
        assert_eq!(parse("VARCHAR"), Ok(DataType::STRING));
        assert_eq!(parse("CHAR"), Ok(DataType::Char(1)));
        assert_eq!(parse("CHAR(33)"), Ok(DataType::Char(33)));
        assert_eq!(parse("VARCHAR(33)"), Ok(DataType::Varchar(33)));
        assert_eq!(parse("BINARY"), Ok(DataType::Binary(1)));
        assert_eq!(parse("BINARY(33)"), Ok(DataType::Binary(33)));
        assert_eq!(parse("VARBINARY"), Ok(DataType::BYTES));
        assert_eq!(parse("VARBINARY(33)"), Ok(DataType::Varbinary(33)));
        assert_eq!(parse("DEC"), Ok(DataType::decimal(10, 0).unwrap()));
        assert_eq!(parse("NUMERIC(10)"), Ok(DataType::decimal(10, 0).unwrap()));
        assert_eq!(parse("TIME"), Ok(DataType::Time(0)));
        assert_eq!(parse("TIMESTAMP_LTZ"), Ok(DataType::TimestampLtz(6)));
        assert_eq!(
            parse("BINARY(0)"),
            Err("the length of BINARY(0) must be between 1 and 2147483647".into())
        );
        assert!(parse("DECIMAL(40, 2)").unwrap_err().contains("38"));
        assert_eq!(
            parse("TIMESTAMP(12)"),
            Err("the precision of TIMESTAMP(12) must be between 0 and 9, got 12".into())
        );
    }
}
