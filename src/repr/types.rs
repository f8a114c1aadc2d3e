//! Flink's logical types, columns and schemas.
//!
//! [`DataType`] is a Flink `LogicalType` without its nullability; [`ColumnType`] adds it (Flink
//! writes `BIGINT NOT NULL`). A [`Schema`] is the named columns of a table or of a plan node's
//! output, with the table's primary key and its time attributes: the *rowtime* (event time, with
//! the bounded delay of its `WATERMARK FOR ... AS rowtime - INTERVAL ...` declaration) and the
//! *proctime* (processing time). Types are printed as Flink prints them (`DECIMAL(10, 2)`,
//! `TIMESTAMP(3)`, `ARRAY<INT NOT NULL>`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The largest length of CHAR/VARCHAR/BINARY/VARBINARY; `STRING` is `VARCHAR(MAX_LENGTH)` and
/// `BYTES` is `VARBINARY(MAX_LENGTH)`, as in Flink.
pub const MAX_LENGTH: u32 = i32::MAX as u32;

/// The largest DECIMAL precision (Flink's `DecimalType.MAX_PRECISION`).
pub const MAX_DECIMAL_PRECISION: u8 = 38;

/// The largest fractional-second precision of TIME, TIMESTAMP and TIMESTAMP_LTZ.
pub const MAX_TIME_PRECISION: u8 = 9;

/// A Flink logical type, without nullability.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DataType {
    /// The type of an untyped `NULL` literal (Flink's `NULL` type).
    Null,
    /// BOOLEAN.
    Boolean,
    /// TINYINT: 8-bit signed.
    TinyInt,
    /// SMALLINT: 16-bit signed.
    SmallInt,
    /// INT: 32-bit signed.
    Int,
    /// BIGINT: 64-bit signed.
    BigInt,
    /// FLOAT: 32-bit IEEE 754 (carried as `f64`, rounded to `f32` when produced).
    Float,
    /// DOUBLE: 64-bit IEEE 754.
    Double,
    /// DECIMAL(p, s): `p` digits in all (1..=38), `s` of them after the point (0..=p).
    Decimal {
        /// Total digits.
        precision: u8,
        /// Digits after the point.
        scale: u8,
    },
    /// CHAR(n): fixed length `n` characters.
    Char(u32),
    /// VARCHAR(n): at most `n` characters; `VARCHAR(MAX_LENGTH)` is STRING.
    Varchar(u32),
    /// BINARY(n): fixed length `n` bytes.
    Binary(u32),
    /// VARBINARY(n): at most `n` bytes; `VARBINARY(MAX_LENGTH)` is BYTES.
    Varbinary(u32),
    /// DATE: a day, years 0000-9999.
    Date,
    /// TIME(p): a time of day with `p` fractional-second digits (0..=9).
    Time(u8),
    /// TIMESTAMP(p): a wall-clock date and time without time zone.
    Timestamp(u8),
    /// TIMESTAMP_LTZ(p): an instant, shown in the session time zone.
    TimestampLtz(u8),
    /// INTERVAL DAY TO SECOND(3): a duration in milliseconds.
    IntervalDayTime,
    /// INTERVAL YEAR TO MONTH: a number of months.
    IntervalYearMonth,
    /// `ARRAY<T>`.
    Array(Box<ColumnType>),
    /// MAP<K, V>.
    Map(Box<ColumnType>, Box<ColumnType>),
    /// ROW<name type, ...>.
    Row(Vec<Field>),
}

impl DataType {
    /// STRING (`VARCHAR(2147483647)`).
    pub const STRING: DataType = DataType::Varchar(MAX_LENGTH);
    /// BYTES (`VARBINARY(2147483647)`).
    pub const BYTES: DataType = DataType::Varbinary(MAX_LENGTH);

    /// DECIMAL(p, s), checked: `1 <= p <= 38`, `s <= p`.
    pub fn decimal(precision: u8, scale: u8) -> Result<DataType, SchemaError> {
        if !(1..=MAX_DECIMAL_PRECISION).contains(&precision) {
            return Err(SchemaError::InvalidType(format!(
                "DECIMAL precision must be between 1 and 38 (both inclusive), got {precision}"
            )));
        }
        if scale > precision {
            return Err(SchemaError::InvalidType(format!(
                "DECIMAL scale must be between 0 and the precision {precision} (both inclusive), got {scale}"
            )));
        }
        Ok(DataType::Decimal { precision, scale })
    }

    /// This type, nullable.
    pub fn nullable(self) -> ColumnType {
        ColumnType {
            data_type: self,
            nullable: true,
        }
    }

    /// This type, `NOT NULL`.
    pub fn not_null(self) -> ColumnType {
        ColumnType {
            data_type: self,
            nullable: false,
        }
    }

    /// Whether values are numbers (TINYINT..DOUBLE, DECIMAL).
    pub fn is_numeric(&self) -> bool {
        self.is_integer()
            || matches!(
                self,
                DataType::Float | DataType::Double | DataType::Decimal { .. }
            )
    }

    /// Whether values are exact integers (TINYINT..BIGINT).
    pub fn is_integer(&self) -> bool {
        matches!(
            self,
            DataType::TinyInt | DataType::SmallInt | DataType::Int | DataType::BigInt
        )
    }

    /// Whether values are character strings (CHAR, VARCHAR, STRING).
    pub fn is_string(&self) -> bool {
        matches!(self, DataType::Char(_) | DataType::Varchar(_))
    }

    /// Whether values are binary strings (BINARY, VARBINARY, BYTES).
    pub fn is_binary_string(&self) -> bool {
        matches!(self, DataType::Binary(_) | DataType::Varbinary(_))
    }

    /// Whether this is TIMESTAMP(p) or TIMESTAMP_LTZ(p): a type a time attribute can have.
    pub fn is_timestamp(&self) -> bool {
        matches!(self, DataType::Timestamp(_) | DataType::TimestampLtz(_))
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Null => f.write_str("NULL"),
            DataType::Boolean => f.write_str("BOOLEAN"),
            DataType::TinyInt => f.write_str("TINYINT"),
            DataType::SmallInt => f.write_str("SMALLINT"),
            DataType::Int => f.write_str("INT"),
            DataType::BigInt => f.write_str("BIGINT"),
            DataType::Float => f.write_str("FLOAT"),
            DataType::Double => f.write_str("DOUBLE"),
            DataType::Decimal { precision, scale } => write!(f, "DECIMAL({precision}, {scale})"),
            DataType::Char(n) => write!(f, "CHAR({n})"),
            DataType::Varchar(MAX_LENGTH) => f.write_str("STRING"),
            DataType::Varchar(n) => write!(f, "VARCHAR({n})"),
            DataType::Binary(n) => write!(f, "BINARY({n})"),
            DataType::Varbinary(MAX_LENGTH) => f.write_str("BYTES"),
            DataType::Varbinary(n) => write!(f, "VARBINARY({n})"),
            DataType::Date => f.write_str("DATE"),
            DataType::Time(p) => write!(f, "TIME({p})"),
            DataType::Timestamp(p) => write!(f, "TIMESTAMP({p})"),
            DataType::TimestampLtz(p) => write!(f, "TIMESTAMP_LTZ({p})"),
            DataType::IntervalDayTime => f.write_str("INTERVAL DAY TO SECOND(3)"),
            DataType::IntervalYearMonth => f.write_str("INTERVAL YEAR TO MONTH"),
            DataType::Array(element) => write!(f, "ARRAY<{element}>"),
            DataType::Map(key, value) => write!(f, "MAP<{key}, {value}>"),
            DataType::Row(fields) => {
                f.write_str("ROW<")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "`{}` {}", field.name, field.ty)?;
                }
                f.write_str(">")
            }
        }
    }
}

/// A type with its nullability.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ColumnType {
    /// The logical type.
    pub data_type: DataType,
    /// Whether NULL is a value of this type.
    pub nullable: bool,
}

impl fmt::Display for ColumnType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.data_type)?;
        if !self.nullable {
            f.write_str(" NOT NULL")?;
        }
        Ok(())
    }
}

/// A named column.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Field {
    /// The column's name, as written (Flink resolves names case-sensitively).
    pub name: String,
    /// Its type.
    pub ty: ColumnType,
}

impl Field {
    /// A column.
    pub fn new(name: impl Into<String>, ty: ColumnType) -> Field {
        Field {
            name: name.into(),
            ty,
        }
    }
}

/// A table's event-time attribute: its column and its watermark strategy.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rowtime {
    /// The index of the TIMESTAMP(p) / TIMESTAMP_LTZ(p) column.
    pub column: usize,
    /// The watermark's delay behind the largest event time seen, in milliseconds (`WATERMARK
    /// FOR ts AS ts - INTERVAL '5' SECOND` is 5000; `AS ts` is 0): Flink's bounded
    /// out-of-orderness strategy.
    pub delay_ms: i64,
}

/// The columns of a table or of a plan node's output, with the primary key and the time
/// attributes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Schema {
    /// The columns, in order.
    pub fields: Vec<Field>,
    /// The primary key's columns (`PRIMARY KEY (..) NOT ENFORCED`), if declared.
    pub primary_key: Option<Vec<usize>>,
    /// The event-time attribute, if declared.
    pub rowtime: Option<Rowtime>,
    /// The processing-time attribute (`pt AS PROCTIME()`), if declared.
    pub proctime: Option<usize>,
}

impl Schema {
    /// A schema of `fields`, with no key and no time attribute. Names must be unique.
    pub fn new(fields: Vec<Field>) -> Result<Schema, SchemaError> {
        for (i, field) in fields.iter().enumerate() {
            if fields[..i].iter().any(|f| f.name == field.name) {
                return Err(SchemaError::DuplicateColumn(field.name.clone()));
            }
        }
        Ok(Schema {
            fields,
            ..Schema::default()
        })
    }

    /// Every one of `names` as a nullable STRING column: the schema of a CSV file read without
    /// declared types, whose cells pass through as text.
    /// The names are not checked for repeats: a CSV header is checked when it is read.
    pub fn strings(names: &[String]) -> Schema {
        let fields = names
            .iter()
            .map(|n| Field::new(n.clone(), DataType::STRING.nullable()))
            .collect();
        Schema {
            fields,
            ..Schema::default()
        }
    }

    /// Starts a schema built column by column.
    ///
    /// ```
    /// use differential_temporal::repr::{DataType, Schema};
    ///
    /// let schema = Schema::builder()
    ///     .column("currency", DataType::STRING.not_null())
    ///     .column("rate", DataType::decimal(10, 4).unwrap().nullable())
    ///     .column("update_time", DataType::Timestamp(3).not_null())
    ///     .primary_key(["currency"])
    ///     .rowtime("update_time", 0)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(schema.index_of("rate"), Some(1));
    /// assert_eq!(schema.rowtime.unwrap().column, 2);
    /// ```
    pub fn builder() -> SchemaBuilder {
        SchemaBuilder::default()
    }

    /// The number of columns.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether there are no columns.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Whether `key` is one integer column (TINYINT .. BIGINT, each a
    /// [`Datum::Int`](super::Datum::Int)): such a key can be hashed and compared as an `i64`
    /// instead of as packed bytes, as the GROUP BY renders it.
    pub fn is_integer_key(&self, key: &[usize]) -> bool {
        match key {
            [column] => self.fields[*column].ty.data_type.is_integer(),
            _ => false,
        }
    }

    /// The index of the column named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// The index of the column named `name`, or an error listing the columns.
    pub fn resolve(&self, name: &str) -> Result<usize, SchemaError> {
        self.index_of(name)
            .ok_or_else(|| SchemaError::UnknownColumn {
                name: name.to_string(),
                columns: self.names().collect::<Vec<_>>().join(", "),
            })
    }

    /// The column names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|f| f.name.as_str())
    }

    /// The column types, in order.
    pub fn types(&self) -> impl Iterator<Item = &ColumnType> {
        self.fields.iter().map(|f| &f.ty)
    }

    /// Declares the primary key (columns by name). Primary key columns become NOT NULL, as
    /// Flink makes them.
    pub fn with_primary_key<S: AsRef<str>>(
        mut self,
        columns: impl IntoIterator<Item = S>,
    ) -> Result<Schema, SchemaError> {
        let mut key = Vec::new();
        for name in columns {
            let index = self.resolve(name.as_ref())?;
            if key.contains(&index) {
                return Err(SchemaError::DuplicateColumn(name.as_ref().to_string()));
            }
            self.fields[index].ty.nullable = false;
            key.push(index);
        }
        if key.is_empty() {
            return Err(SchemaError::InvalidKey(
                "a primary key needs at least one column".into(),
            ));
        }
        self.primary_key = Some(key);
        Ok(self)
    }

    /// Declares the event-time attribute `column` with a watermark `delay_ms` behind it. The
    /// column must be TIMESTAMP(p) or TIMESTAMP_LTZ(p), as Flink requires.
    pub fn with_rowtime(mut self, column: &str, delay_ms: i64) -> Result<Schema, SchemaError> {
        let index = self.resolve(column)?;
        let ty = &self.fields[index].ty.data_type;
        if !ty.is_timestamp() {
            return Err(SchemaError::InvalidTimeAttribute(format!(
                "the rowtime attribute '{column}' must be of type TIMESTAMP or TIMESTAMP_LTZ, but is of type {ty}"
            )));
        }
        if delay_ms < 0 {
            return Err(SchemaError::InvalidTimeAttribute(format!(
                "the watermark delay of '{column}' must not be negative, got {delay_ms} ms"
            )));
        }
        self.rowtime = Some(Rowtime {
            column: index,
            delay_ms,
        });
        Ok(self)
    }

    /// Declares `column` (TIMESTAMP_LTZ(3) NOT NULL, appended if absent) the processing-time
    /// attribute (`column AS PROCTIME()`).
    pub fn with_proctime(mut self, column: &str) -> Result<Schema, SchemaError> {
        let index = match self.index_of(column) {
            Some(index) => index,
            None => {
                self.fields
                    .push(Field::new(column, DataType::TimestampLtz(3).not_null()));
                self.fields.len() - 1
            }
        };
        if self.fields[index].ty.data_type != DataType::TimestampLtz(3) {
            return Err(SchemaError::InvalidTimeAttribute(format!(
                "the proctime attribute '{column}' must be of type TIMESTAMP_LTZ(3)"
            )));
        }
        self.proctime = Some(index);
        Ok(self)
    }
}

/// Prints the schema as Flink's `Table.printSchema()` does.
impl fmt::Display for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "(")?;
        for (i, field) in self.fields.iter().enumerate() {
            write!(f, "  `{}` {}", field.name, field.ty)?;
            if self.rowtime.as_ref().is_some_and(|r| r.column == i) {
                f.write_str(" *ROWTIME*")?;
            }
            if self.proctime == Some(i) {
                f.write_str(" *PROCTIME*")?;
            }
            let last = i + 1 == self.fields.len();
            if !last || self.rowtime.is_some() || self.primary_key.is_some() {
                f.write_str(",")?;
            }
            writeln!(f)?;
        }
        if let Some(rowtime) = &self.rowtime {
            let name = &self.fields[rowtime.column].name;
            write!(
                f,
                "  WATERMARK FOR `{name}`: {} AS `{name}`",
                self.fields[rowtime.column].ty.data_type
            )?;
            if rowtime.delay_ms > 0 {
                write!(
                    f,
                    " - INTERVAL '{}' SECOND",
                    rowtime.delay_ms as f64 / 1000.0
                )?;
            }
            writeln!(f, "{}", if self.primary_key.is_some() { "," } else { "" })?;
        }
        if let Some(key) = &self.primary_key {
            let names: Vec<String> = key
                .iter()
                .map(|&i| format!("`{}`", self.fields[i].name))
                .collect();
            writeln!(
                f,
                "  CONSTRAINT `PK` PRIMARY KEY ({}) NOT ENFORCED",
                names.join(", ")
            )?;
        }
        f.write_str(")")
    }
}

/// Builds a [`Schema`] column by column; errors are reported by [`SchemaBuilder::build`].
#[derive(Default)]
pub struct SchemaBuilder {
    fields: Vec<Field>,
    primary_key: Option<Vec<String>>,
    rowtime: Option<(String, i64)>,
    proctime: Option<String>,
}

impl SchemaBuilder {
    /// Adds a column.
    pub fn column(mut self, name: impl Into<String>, ty: ColumnType) -> Self {
        self.fields.push(Field::new(name, ty));
        self
    }

    /// Declares the primary key.
    pub fn primary_key<S: Into<String>>(mut self, columns: impl IntoIterator<Item = S>) -> Self {
        self.primary_key = Some(columns.into_iter().map(Into::into).collect());
        self
    }

    /// Declares the event-time attribute with its watermark delay in milliseconds.
    pub fn rowtime(mut self, column: impl Into<String>, delay_ms: i64) -> Self {
        self.rowtime = Some((column.into(), delay_ms));
        self
    }

    /// Declares the processing-time attribute (added as TIMESTAMP_LTZ(3) if not a column).
    pub fn proctime(mut self, column: impl Into<String>) -> Self {
        self.proctime = Some(column.into());
        self
    }

    /// The schema, or the first error.
    pub fn build(self) -> Result<Schema, SchemaError> {
        let mut schema = Schema::new(self.fields)?;
        if let Some(key) = self.primary_key {
            schema = schema.with_primary_key(key)?;
        }
        if let Some((column, delay)) = self.rowtime {
            schema = schema.with_rowtime(&column, delay)?;
        }
        if let Some(column) = self.proctime {
            schema = schema.with_proctime(&column)?;
        }
        Ok(schema)
    }
}

/// A schema or type that cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// A column name used twice.
    #[error("column '{0}' is declared more than once")]
    DuplicateColumn(String),
    /// A column name that does not exist.
    #[error("column '{name}' not found; the columns are: {columns}")]
    UnknownColumn {
        /// The name asked for.
        name: String,
        /// The columns there are, comma separated.
        columns: String,
    },
    /// A type with invalid parameters.
    #[error("invalid type: {0}")]
    InvalidType(String),
    /// A primary key that cannot be declared.
    #[error("invalid primary key: {0}")]
    InvalidKey(String),
    /// A time attribute that cannot be declared.
    #[error("invalid time attribute: {0}")]
    InvalidTimeAttribute(String),
}
