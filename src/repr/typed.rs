//! Rust values as rows: [`IntoRow`] and [`FromRow`] for tuples of up to 8 columns and for
//! structs declared with [`row_struct!`](crate::row_struct), the [`Schema`] derived from the
//! Rust type ([`RowType`]), and column access by name on a result row ([`NamedRow`]).
//!
//! The Rust types with a column type ([`Column`]):
//!
//! | Rust | column type |
//! |---|---|
//! | `bool` | `BOOLEAN NOT NULL` |
//! | `i8`, `i16`, `i32`, `i64` | `TINYINT`, `SMALLINT`, `INT`, `BIGINT`, `NOT NULL` |
//! | `f32`, `f64` | `FLOAT`, `DOUBLE`, `NOT NULL` |
//! | `String` | `STRING NOT NULL` |
//! | `Vec<u8>` | `BYTES NOT NULL` |
//! | [`Ts`] | `TIMESTAMP(3) NOT NULL` |
//! | `Option<T>` | `T`'s type, nullable (`None` is NULL) |
//!
//! A tuple's columns are named `f0`, `f1`, ... (Flink's names for a tuple's fields); a struct's
//! by its fields. Reading a row whose columns are not of the type's types (another type, a
//! NULL where the type has no `Option`, an integer out of range, another number of columns)
//! is a [`RowTypeError`] naming the column.
//!
//! # Examples
//!
//! ```
//! use differential_temporal::repr::typed::{FromRow, IntoRow, NamedRow, RowType};
//! use differential_temporal::repr::Ts;
//!
//! differential_temporal::row_struct! {
//!     /// An order: its currency, amount and time.
//!     #[derive(Clone, Debug, PartialEq)]
//!     pub struct Order {
//!         pub currency: String,
//!         pub amount: i64,
//!         pub note: Option<String>,
//!         pub ts: Ts,
//!     }
//! }
//!
//! let schema = Order::schema();
//! let columns: Vec<String> = schema.fields.iter().map(|f| format!("{} {}", f.name, f.ty)).collect();
//! assert_eq!(columns, ["currency STRING NOT NULL", "amount BIGINT NOT NULL", "note STRING", "ts TIMESTAMP(3) NOT NULL"]);
//! let order = Order { currency: "EUR".into(), amount: 3, note: None, ts: Ts::from_millis(10) };
//! let row = order.to_row();
//! assert_eq!(Order::from_row(&row), Ok(order));
//! assert_eq!(NamedRow::new(&schema, &row).get::<i64>("amount"), Ok(3));
//! // The same row read as a tuple of the wrong types names the first column that differs.
//! let wrong = <(String, String)>::from_row(&row).unwrap_err();
//! assert_eq!(wrong.to_string(), "column 'f1' of type STRING NOT NULL holds the integer 3");
//! ```

use std::fmt;
use std::marker::PhantomData;

use super::conform::describe;
use super::{ColumnType, DataType, Datum, DatumIter, Field, Row, RowPacker, Schema, Ts};

/// A Rust type that is one column (see the [module docs](self) for the types).
pub trait Column: Sized {
    /// The column's type (nullable only for `Option<T>`).
    fn column_type() -> ColumnType;
    /// Pushes the value's datum.
    fn push(&self, packer: &mut RowPacker<'_>);
    /// The value of `datum`, or `None` if it is not a value of this type.
    fn from_datum(datum: Datum<'_>) -> Option<Self>;
}

macro_rules! column {
    ($rust:ty, $data_type:expr, $datum:ident($v:ident) => $read:expr, $write:expr) => {
        impl Column for $rust {
            fn column_type() -> ColumnType {
                $data_type.not_null()
            }
            fn push(&self, packer: &mut RowPacker<'_>) {
                let $v = self;
                packer.push(Datum::$datum($write));
            }
            fn from_datum(datum: Datum<'_>) -> Option<Self> {
                match datum {
                    Datum::$datum($v) => $read,
                    _ => None,
                }
            }
        }
    };
}

column!(bool, DataType::Boolean, Bool(v) => Some(v), *v);
column!(i8, DataType::TinyInt, Int(v) => v.try_into().ok(), i64::from(*v));
column!(i16, DataType::SmallInt, Int(v) => v.try_into().ok(), i64::from(*v));
column!(i32, DataType::Int, Int(v) => v.try_into().ok(), i64::from(*v));
column!(i64, DataType::BigInt, Int(v) => Some(v), *v);
column!(f32, DataType::Float, Float(v) => Some(v as f32), f64::from(*v));
column!(f64, DataType::Double, Float(v) => Some(v), *v);
column!(String, DataType::STRING, Str(v) => Some(v.to_string()), v.as_str());
column!(Vec<u8>, DataType::BYTES, Bytes(v) => Some(v.to_vec()), v.as_slice());
column!(Ts, DataType::Timestamp(3), Timestamp(v) => Some(v), *v);

impl<T: Column> Column for Option<T> {
    fn column_type() -> ColumnType {
        ColumnType {
            nullable: true,
            ..T::column_type()
        }
    }
    fn push(&self, packer: &mut RowPacker<'_>) {
        match self {
            Some(v) => v.push(packer),
            None => packer.push(Datum::Null),
        }
    }
    fn from_datum(datum: Datum<'_>) -> Option<Self> {
        match datum {
            Datum::Null => Some(None),
            d => T::from_datum(d).map(Some),
        }
    }
}

/// A Rust type whose values are rows: its columns' names and types.
pub trait RowType {
    /// The columns, in row order.
    fn fields() -> Vec<Field>;

    /// The schema of the type's rows (no primary key, no time attribute: add them with
    /// [`Schema::with_primary_key`] and [`Schema::with_rowtime`]).
    fn schema() -> Schema {
        Schema::new(Self::fields()).expect("a Rust type's fields have distinct names")
    }
}

/// A Rust value packed as a row of its [`RowType`]'s schema.
pub trait IntoRow {
    /// The value's row.
    fn to_row(&self) -> Row;
}

/// A Rust value read from a row of its [`RowType`]'s schema.
pub trait FromRow: Sized {
    /// The value of `row`.
    ///
    /// Errors: a column of another type, NULL in a column that is not an `Option`, or another
    /// number of columns ([`RowTypeError`]).
    fn from_row(row: &Row) -> Result<Self, RowTypeError>;
}

/// A row that is not a value of a Rust type, or a column name a row does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowTypeError(String);

impl fmt::Display for RowTypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RowTypeError {}

/// The columns of a row read one by one as the columns of `S` (for [`FromRow`]
/// implementations, [`row_struct!`](crate::row_struct)'s included).
pub struct RowReader<'a, S> {
    datums: DatumIter<'a>,
    index: usize,
    of: PhantomData<S>,
}

impl<'a, S: RowType> RowReader<'a, S> {
    /// A reader at `row`'s first column.
    pub fn new(row: &'a Row) -> Self {
        RowReader {
            datums: row.iter(),
            index: 0,
            of: PhantomData,
        }
    }

    /// The next column's value.
    ///
    /// Errors: the row has no more columns, or the column is not a `T`.
    pub fn column<T: Column>(&mut self) -> Result<T, RowTypeError> {
        let index = self.index;
        self.index += 1;
        let Some(datum) = self.datums.next() else {
            return Err(self.arity(index));
        };
        T::from_datum(datum).ok_or_else(|| {
            let name = S::fields().swap_remove(index).name;
            let (ty, held) = (T::column_type(), describe(datum));
            RowTypeError(format!("column '{name}' of type {ty} holds {held}"))
        })
    }

    /// Checks that every column was read.
    ///
    /// Errors: the row has more columns than `S`.
    pub fn finish(mut self) -> Result<(), RowTypeError> {
        match self.datums.next() {
            None => Ok(()),
            Some(_) => Err(self.arity(self.index + 1)),
        }
    }

    /// The error of a row of another number of columns than `S`'s, `read` of them seen.
    fn arity(&mut self, read: usize) -> RowTypeError {
        let columns = read + self.datums.by_ref().count();
        let expected = S::fields().len();
        RowTypeError(format!(
            "the row has {columns} columns, the type {expected}"
        ))
    }
}

macro_rules! tuple {
    ($($t:ident $i:tt),+) => {
        impl<$($t: Column),+> RowType for ($($t,)+) {
            fn fields() -> Vec<Field> {
                vec![$(Field::new(concat!("f", $i), $t::column_type())),+]
            }
        }

        impl<$($t: Column),+> IntoRow for ($($t,)+) {
            fn to_row(&self) -> Row {
                let mut row = Row::new();
                let mut packer = row.packer();
                $(self.$i.push(&mut packer);)+
                row
            }
        }

        impl<$($t: Column),+> FromRow for ($($t,)+) {
            fn from_row(row: &Row) -> Result<Self, RowTypeError> {
                let mut reader = RowReader::<Self>::new(row);
                let value = ($(reader.column::<$t>()?,)+);
                reader.finish()?;
                Ok(value)
            }
        }
    };
}

tuple!(A 0);
tuple!(A 0, B 1);
tuple!(A 0, B 1, C 2);
tuple!(A 0, B 1, C 2, D 3);
tuple!(A 0, B 1, C 2, D 3, E 4);
tuple!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

/// Declares a struct whose values are rows: the struct as written, and its [`RowType`] (a
/// column per field, named as the field, of the field's [`Column`] type), [`IntoRow`] and
/// [`FromRow`]. Every field's type must be a [`Column`] type (see the
/// [module docs](crate::repr::typed), which give an example).
///
/// [`RowType`]: crate::repr::typed::RowType
/// [`IntoRow`]: crate::repr::typed::IntoRow
/// [`FromRow`]: crate::repr::typed::FromRow
/// [`Column`]: crate::repr::typed::Column
#[macro_export]
macro_rules! row_struct {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident : $ty:ty),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $($(#[$field_meta])* $field_vis $field: $ty),+
        }

        impl $crate::repr::typed::RowType for $name {
            fn fields() -> ::std::vec::Vec<$crate::repr::Field> {
                ::std::vec![$($crate::repr::Field::new(
                    stringify!($field),
                    <$ty as $crate::repr::typed::Column>::column_type(),
                )),+]
            }
        }

        impl $crate::repr::typed::IntoRow for $name {
            fn to_row(&self) -> $crate::repr::Row {
                let mut row = $crate::repr::Row::new();
                let mut packer = row.packer();
                $($crate::repr::typed::Column::push(&self.$field, &mut packer);)+
                row
            }
        }

        impl $crate::repr::typed::FromRow for $name {
            fn from_row(
                row: &$crate::repr::Row,
            ) -> ::std::result::Result<Self, $crate::repr::typed::RowTypeError> {
                let mut reader = $crate::repr::typed::RowReader::<Self>::new(row);
                let value = $name { $($field: reader.column::<$ty>()?),+ };
                reader.finish()?;
                ::std::result::Result::Ok(value)
            }
        }
    };
}

/// A result row with its schema, its columns read by name.
///
/// ```
/// use differential_temporal::repr::typed::NamedRow;
/// use differential_temporal::repr::{DataType, Datum, Row, Schema};
///
/// let schema = Schema::builder()
///     .column("currency", DataType::STRING.not_null())
///     .column("total", DataType::BigInt.nullable())
///     .build()
///     .unwrap();
/// let row = Row::pack([Datum::Str("EUR"), Datum::Null]);
/// let named = NamedRow::new(&schema, &row);
/// assert_eq!(named.get::<String>("currency"), Ok("EUR".to_string()));
/// assert_eq!(named.get::<Option<i64>>("total"), Ok(None));
/// assert_eq!(
///     named.get::<i64>("total").unwrap_err().to_string(),
///     "column 'total' read as BIGINT NOT NULL holds NULL"
/// );
/// assert_eq!(
///     named.get::<i64>("amount").unwrap_err().to_string(),
///     "no column 'amount': the columns are currency, total"
/// );
/// ```
#[derive(Clone, Copy, Debug)]
pub struct NamedRow<'a> {
    schema: &'a Schema,
    row: &'a Row,
}

impl<'a> NamedRow<'a> {
    /// `row`, a row of `schema`.
    pub fn new(schema: &'a Schema, row: &'a Row) -> Self {
        NamedRow { schema, row }
    }

    /// The datum of column `name`.
    ///
    /// Errors: the schema has no column `name`, or the row is shorter than the schema.
    pub fn datum(&self, name: &str) -> Result<Datum<'a>, RowTypeError> {
        let Some(index) = self.schema.index_of(name) else {
            let names: Vec<&str> = self.schema.names().collect();
            return Err(RowTypeError(format!(
                "no column '{name}': the columns are {}",
                names.join(", ")
            )));
        };
        self.row.get(index).ok_or_else(|| {
            RowTypeError(format!(
                "no column '{name}' in the row: it has {} columns, the schema {}",
                self.row.iter().count(),
                self.schema.len()
            ))
        })
    }

    /// The value of column `name` as a `T`.
    ///
    /// Errors: as [`datum`](Self::datum); the column's datum is not a `T`.
    pub fn get<T: Column>(&self, name: &str) -> Result<T, RowTypeError> {
        let datum = self.datum(name)?;
        T::from_datum(datum).ok_or_else(|| {
            let (ty, held) = (T::column_type(), describe(datum));
            RowTypeError(format!("column '{name}' read as {ty} holds {held}"))
        })
    }
}
