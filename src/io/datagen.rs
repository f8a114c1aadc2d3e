//! Generated rows: Flink's `datagen` connector
//! (`docs/connectors/table/datagen.md`) as a bounded source of packed [`Row`]s.
//!
//! A [`DatagenSource`] has one [`FieldGenerator`] per column of its schema and a number of rows.
//! Row `i`'s values are a pure function of the source's seed (a hash of the table's name), the
//! column's position and `i`: each cell draws from a splitmix64 stream seeded by those three, so
//! the rows do not depend on the number of workers, on batching or on the run (Flink's random
//! generators are unseeded; this is a deliberate difference). Random times count back from an
//! *anchor* instant fixed when the source is made (Flink reads the clock for every row).
//!
//! Reading: the rows are cut into blocks of [`block_rows`](DatagenSource::block_rows)
//! consecutive rows; block `b` enters at system time `b` (as block `b` of a file does,
//! [`crate::run`]), with `seq` the row's index. Every worker passes every block and makes its
//! share of it: row `i` is made by worker `i % peers`. Generation is throttled to
//! `rows-per-second`: block `b` is not made before `b * block_rows / rows_per_second` seconds
//! after the worker started reading (a sleep between blocks, never per row). A row is packed in
//! one scratch row and copied out: one allocation per row at most, no string per cell.

use std::fmt::Write as _;
use std::ops::Range;

pub(crate) use self::blocks::worker_share;
pub use self::blocks::DatagenBlocks;
pub(crate) use self::random::fnv1a;
use self::random::{mix, SplitMix};
use crate::csv::{Block, RowError};
use crate::operators::{Change, RowKind};
use crate::repr::time::{truncate_time_to_precision, truncate_to_precision, MILLIS_PER_DAY};
use crate::repr::{DataType, Datum, Field, Row, Schema, Ts};

/// Flink's default `rows-per-second`.
pub const DEFAULT_ROWS_PER_SECOND: u64 = 10_000;

/// Flink's default length of a random `STRING` (`VARCHAR(n)` defaults to `n`).
pub const DEFAULT_STRING_LENGTH: u32 = 100;

/// How one column's values are made.
#[derive(Clone, Debug, PartialEq)]
pub enum Generator {
    /// `start + i` for row `i` (`'kind' = 'sequence'`): integers, FLOAT, DOUBLE, DECIMAL, and
    /// strings (the number's decimal text), as Flink's sequence generator.
    Sequence {
        /// The first value.
        start: i64,
        /// The last value (inclusive): the table has at most `end - start + 1` rows.
        end: i64,
    },
    /// A uniform integer in `[min, max]` (TINYINT .. BIGINT).
    Int {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// A uniform number in `[min, max)` (FLOAT, DOUBLE; DECIMAL truncated to its scale).
    Float {
        /// Smallest value.
        min: f64,
        /// Upper bound.
        max: f64,
    },
    /// `true` or `false`, evenly.
    Bool,
    /// `length` random hexadecimal digits (Flink's `nextHexString`); with `var_len` a uniform
    /// length in `1..=length`.
    String {
        /// Characters per value.
        length: u32,
        /// Whether the length varies.
        var_len: bool,
    },
    /// The anchor instant minus a uniform `[0, max_past)` milliseconds, as a DATE, TIME,
    /// TIMESTAMP or TIMESTAMP_LTZ (Flink's `max-past`; 0 gives the anchor itself).
    Past {
        /// The largest step back, in milliseconds.
        max_past_ms: i64,
    },
}

impl Generator {
    /// What the generator makes, for messages: `sequence`, `random integer`, ...
    pub fn describe(&self) -> &'static str {
        match self {
            Generator::Sequence { .. } => "sequence",
            Generator::Int { .. } => "random integer",
            Generator::Float { .. } => "random number",
            Generator::Bool => "random boolean",
            Generator::String { .. } => "random string",
            Generator::Past { .. } => "random time",
        }
    }

    /// Whether this generator can make values of `ty`, or why not.
    pub fn check(&self, ty: &DataType) -> Result<(), String> {
        let fits = match self {
            Generator::Sequence { .. } => {
                ty.is_integer()
                    || ty.is_string()
                    || matches!(
                        ty,
                        DataType::Float | DataType::Double | DataType::Decimal { .. }
                    )
            }
            Generator::Int { .. } => ty.is_integer(),
            Generator::Float { .. } => {
                matches!(
                    ty,
                    DataType::Float | DataType::Double | DataType::Decimal { .. }
                )
            }
            Generator::Bool => *ty == DataType::Boolean,
            Generator::String { .. } => ty.is_string(),
            Generator::Past { .. } => matches!(
                ty,
                DataType::Date
                    | DataType::Time(_)
                    | DataType::Timestamp(_)
                    | DataType::TimestampLtz(_)
            ),
        };
        if fits {
            Ok(())
        } else {
            Err(format!(
                "a {} generator cannot make values of type {ty}",
                self.describe()
            ))
        }
    }
}

/// One column's generator and how often it is NULL.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldGenerator {
    /// How values are made.
    pub generator: Generator,
    /// The fraction of NULLs, `0.0..=1.0` (Flink's `null-rate`).
    pub null_rate: f64,
}

impl FieldGenerator {
    /// `generator`, never NULL.
    pub fn new(generator: Generator) -> FieldGenerator {
        FieldGenerator {
            generator,
            null_rate: 0.0,
        }
    }

    /// Whether this generator can make the values of `column`, or why not: a generator that
    /// does not fit the column's type, a null rate outside `0..=1` or above 0 on a NOT NULL
    /// column, a sequence that ends before it starts, a random range whose min is above its
    /// max, values outside the type's range (TINYINT .. INT, DECIMAL's integer digits).
    ///
    /// ```
    /// use differential_temporal::io::{FieldGenerator, Generator};
    /// use differential_temporal::repr::{DataType, Field};
    ///
    /// let small = Field::new("n", DataType::TinyInt.nullable());
    /// assert!(FieldGenerator::new(Generator::Int { min: -5, max: 5 }).check(&small).is_ok());
    /// assert_eq!(
    ///     FieldGenerator::new(Generator::Int { min: 0, max: 300 }).check(&small).unwrap_err(),
    ///     "the values [0, 300] do not fit its type TINYINT ([-128, 127])"
    /// );
    /// ```
    pub fn check(&self, column: &Field) -> Result<(), String> {
        let (field, ty) = (self, &column.ty);
        field.generator.check(&ty.data_type)?;
        if !(0.0..=1.0).contains(&field.null_rate) {
            return Err(format!(
                "the null rate {} is not in [0, 1]",
                field.null_rate
            ));
        }
        if field.null_rate > 0.0 && !ty.nullable {
            return Err("a NOT NULL column cannot have a null rate".into());
        }
        match field.generator {
            Generator::Sequence { start, end } if start > end => {
                return Err(format!(
                    "The start value ({start}) cannot be greater than the end value ({end})."
                ))
            }
            Generator::Int { min, max } if min > max => {
                return Err(format!(
                    "lower bound ({min}) must not be greater than upper bound ({max})"
                ))
            }
            Generator::Float { min, max } if min > max || min.is_nan() || max.is_nan() => {
                return Err(format!(
                    "lower bound ({min:?}) must not be greater than upper bound ({max:?})"
                ))
            }
            _ => {}
        }
        if let (Generator::Sequence { start, end }, DataType::Char(n) | DataType::Varchar(n)) =
            (&field.generator, &ty.data_type)
        {
            let width = start.to_string().len().max(end.to_string().len());
            if width > *n as usize {
                return Err(format!(
                    "the values [{start}, {end}] do not fit its type {} (up to {width} characters)",
                    ty.data_type
                ));
            }
        }
        if let Some((low, high)) = value_range(&ty.data_type) {
            let (min, max) = match field.generator {
                Generator::Sequence { start, end } => (start, end),
                Generator::Int { min, max } => (min, max),
                _ => (low, high),
            };
            if min < low || max > high {
                return Err(format!(
                    "the values [{min}, {max}] do not fit its type {} ([{low}, {high}])",
                    ty.data_type
                ));
            }
        }
        Ok(())
    }
}

/// A table of generated rows: see the [module documentation](self).
///
/// ```
/// use differential_temporal::io::{DatagenSource, FieldGenerator, Generator};
/// use differential_temporal::repr::{DataType, Datum, Row, Schema};
///
/// let schema = Schema::builder()
///     .column("id", DataType::BigInt.not_null())
///     .column("score", DataType::Int.nullable())
///     .build()
///     .unwrap();
/// let fields = vec![
///     FieldGenerator::new(Generator::Sequence { start: 1, end: 1000 }),
///     FieldGenerator::new(Generator::Int { min: 0, max: 9 }),
/// ];
/// let source = DatagenSource::new("t", schema, fields, None).unwrap();
/// assert_eq!(source.rows(), 1000);
/// let mut scratch = Row::new();
/// let row = source.row(41, &mut scratch, &mut String::new());
/// assert_eq!(row.get(0), Some(Datum::Int(42)));
/// assert!(matches!(row.get(1), Some(Datum::Int(0..=9))));
/// ```
#[derive(Clone, Debug)]
pub struct DatagenSource {
    name: String,
    schema: Schema,
    fields: Vec<FieldGenerator>,
    rows: u64,
    bounded: bool,
    seed: u64,
    rows_per_second: u64,
    anchor: Ts,
    block_rows: u64,
}

impl DatagenSource {
    /// The table `name` of `schema`'s columns, made by `fields` (one per column), with
    /// `number_of_rows` rows, or fewer when a sequence ends first (`end - start + 1`). With
    /// neither a row count nor a sequence the table is unbounded, as Flink's: its rows go on
    /// forever ([`is_bounded`](Self::is_bounded) is false, [`rows`](Self::rows) is
    /// `u64::MAX`), which only a live run (a CONTINUOUS materialized table) reads. The seed
    /// is a hash of `name`; the anchor of random times is now; `rows-per-second` is Flink's
    /// default ([`with_rows_per_second`](Self::with_rows_per_second)).
    ///
    /// Errors: a field count that is not the column count, a field that does not fit its column
    /// ([`FieldGenerator::check`], the message prefixed with `column 'c': `).
    pub fn new(
        name: &str,
        schema: Schema,
        fields: Vec<FieldGenerator>,
        number_of_rows: Option<u64>,
    ) -> Result<DatagenSource, String> {
        if fields.len() != schema.len() {
            return Err(format!(
                "{} generators for {} columns",
                fields.len(),
                schema.len()
            ));
        }
        let mut rows = number_of_rows;
        for (field, column) in fields.iter().zip(&schema.fields) {
            field
                .check(column)
                .map_err(|m| format!("column '{}': {m}", column.name))?;
            if let Generator::Sequence { start, end } = field.generator {
                let length = (end as i128 - start as i128 + 1).min(u64::MAX as i128) as u64;
                rows = Some(rows.map_or(length, |r| r.min(length)));
            }
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        Ok(DatagenSource {
            name: name.to_string(),
            schema,
            fields,
            rows: rows.unwrap_or(u64::MAX),
            bounded: rows.is_some(),
            seed: fnv1a(name.as_bytes()),
            rows_per_second: DEFAULT_ROWS_PER_SECOND,
            anchor: Ts::from_millis(now),
            block_rows: 1024,
        })
    }

    /// Generates at most `rows_per_second` rows a second (at least 1).
    pub fn with_rows_per_second(mut self, rows_per_second: u64) -> DatagenSource {
        self.rows_per_second = rows_per_second.max(1);
        self
    }

    /// Counts random times back from `anchor` instead of from the moment the source was made.
    pub fn with_anchor(mut self, anchor: Ts) -> DatagenSource {
        self.anchor = anchor;
        self
    }

    /// Cuts the rows into blocks (system times) of `rows` rows (at least 1; 1024 by default).
    pub fn with_block_rows(mut self, rows: u64) -> DatagenSource {
        self.block_rows = rows.max(1);
        self
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The columns.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// How many rows the table has (`u64::MAX` for an unbounded one).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Whether the table has a row count or a sequence field, so that a batch query ends.
    pub fn is_bounded(&self) -> bool {
        self.bounded
    }

    /// The rows of a block: `rows-per-second` when smaller than the configured size, so that a
    /// slow rate still makes a block a second.
    pub fn block_rows(&self) -> u64 {
        self.block_rows.min(self.rows_per_second)
    }

    /// The limit of generation, in rows a second.
    pub fn rows_per_second(&self) -> u64 {
        self.rows_per_second
    }

    /// Row `i`, packed in `scratch` (its buffer reused) and copied out; `text` is a reused
    /// buffer for string values.
    pub fn row(&self, i: u64, scratch: &mut Row, text: &mut String) -> Row {
        let mut packer = scratch.packer();
        for (index, (field, column)) in self.fields.iter().zip(&self.schema.fields).enumerate() {
            let mut rng = SplitMix(mix(self.seed, index as u64, i));
            if field.null_rate > 0.0 && rng.unit() < field.null_rate {
                packer.push(Datum::Null);
                continue;
            }
            let ty = &column.ty.data_type;
            let datum = match field.generator {
                Generator::Sequence { start, .. } => {
                    let value = start.wrapping_add(i as i64);
                    match ty {
                        DataType::Float => Datum::Float(value as f32 as f64),
                        DataType::Double => Datum::Float(value as f64),
                        DataType::Decimal { scale, .. } => {
                            Datum::Decimal(value as i128 * 10i128.pow(u32::from(*scale)))
                        }
                        t if t.is_string() => {
                            text.clear();
                            let _ = write!(text, "{value}");
                            Datum::Str(text)
                        }
                        _ => Datum::Int(value),
                    }
                }
                Generator::Int { min, max } => Datum::Int(rng.int_in(min, max)),
                Generator::Float { min, max } => {
                    let (min, max) = within_decimal(ty, min, max);
                    float_datum(ty, rng.float_in(min, max))
                }
                Generator::Bool => Datum::Bool(rng.next() & 1 == 1),
                Generator::String { length, var_len } => {
                    let length = if var_len && length > 1 {
                        rng.int_in(1, i64::from(length)) as u32
                    } else {
                        length
                    };
                    hex_string(&mut rng, length, text);
                    Datum::Str(text)
                }
                Generator::Past { max_past_ms } => {
                    let past = if max_past_ms > 0 {
                        rng.int_in(0, max_past_ms - 1)
                    } else {
                        0
                    };
                    let ts = Ts::from_millis(self.anchor.millis.saturating_sub(past));
                    match *ty {
                        DataType::Date => Datum::Date(ts.millis.div_euclid(MILLIS_PER_DAY) as i32),
                        DataType::Time(p) => {
                            Datum::Time(truncate_time_to_precision(ts.nanos_of_day(), p))
                        }
                        DataType::Timestamp(p) | DataType::TimestampLtz(p) => {
                            Datum::Timestamp(truncate_to_precision(ts, p))
                        }
                        _ => Datum::Null,
                    }
                }
            };
            packer.push(datum);
        }
        scratch.clone()
    }

    /// The blocks this source is read in, each worker passing every one, throttled to
    /// `rows-per-second` (see the [module documentation](self)).
    pub fn blocks(&self) -> DatagenBlocks {
        DatagenBlocks::new(self.rows, self.block_rows(), self.rows_per_second)
    }

    /// Generates the rows of `block` (one of [`blocks`](Self::blocks)) that worker `(index,
    /// peers)` makes, as [`generate_rows`](Self::generate_rows) does for the block's rows.
    pub fn generate_block(
        &self,
        block: &Block,
        worker: (u64, u64),
        out: impl FnMut(Result<Change<Row>, RowError>),
    ) {
        let last = block
            .first_line
            .saturating_add(self.block_rows())
            .min(self.rows);
        self.generate_rows(block.first_line..last, worker, out);
    }

    /// Generates the rows `rows` that worker `(index, peers)` makes, those `i` with
    /// `i % peers == index`, each as a `+I` change with `seq` its index, passing each to `out`
    /// in order: one allocation a row (its packed copy).
    pub fn generate_rows(
        &self,
        rows: Range<u64>,
        (index, peers): (u64, u64),
        mut out: impl FnMut(Result<Change<Row>, RowError>),
    ) {
        let (mut scratch, mut text) = (Row::new(), String::new());
        for i in worker_share(rows.start, rows.end, index, peers) {
            let row = self.row(i, &mut scratch, &mut text);
            out(Ok(Change::new(i, RowKind::Insert, row)));
        }
    }
}

/// The integer values a column of type `ty` holds (for DECIMAL(p, s), of its integer part).
fn value_range(ty: &DataType) -> Option<(i64, i64)> {
    let bound = |bits: u32| (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1);
    match *ty {
        DataType::TinyInt => Some(bound(8)),
        DataType::SmallInt => Some(bound(16)),
        DataType::Int => Some(bound(32)),
        DataType::Decimal { precision, scale } if precision - scale < 19 => {
            let largest = 10i64.pow(u32::from(precision - scale)) - 1;
            Some((-largest, largest))
        }
        _ => None,
    }
}

/// `[min, max]` within what DECIMAL(p, s) holds (`±(10^(p-s) - 10^-s)`), as Flink bounds a
/// random decimal before drawing; other types' bounds as they are.
fn within_decimal(ty: &DataType, min: f64, max: f64) -> (f64, f64) {
    let DataType::Decimal { precision, scale } = *ty else {
        return (min, max);
    };
    let largest =
        10f64.powi(i32::from(precision) - i32::from(scale)) - 10f64.powi(-i32::from(scale));
    let (min, max) = (min.max(-largest), max.min(largest));
    if min > max {
        (max, max)
    } else {
        (min, max)
    }
}

/// FLOAT is rounded to `f32`; DECIMAL(p, s) is truncated to `s` digits and kept within `p`.
fn float_datum(ty: &DataType, value: f64) -> Datum<'static> {
    match *ty {
        DataType::Float => Datum::Float(value as f32 as f64),
        DataType::Decimal { precision, scale } => {
            let largest = 10i128.pow(u32::from(precision)) - 1;
            let unscaled = (value * 10f64.powi(i32::from(scale))).trunc();
            Datum::Decimal((unscaled as i128).clamp(-largest, largest))
        }
        _ => Datum::Float(value),
    }
}

/// `length` hexadecimal digits in `text`, sixteen per draw.
fn hex_string(rng: &mut SplitMix, length: u32, text: &mut String) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    text.clear();
    let mut left = length;
    while left > 0 {
        let mut bits = rng.next();
        for _ in 0..left.min(16) {
            text.push(DIGITS[(bits & 15) as usize] as char);
            bits >>= 4;
        }
        left = left.saturating_sub(16);
    }
}

mod blocks;
mod random;
#[cfg(test)]
mod tests;
