//! Values: Flink's logical types, schemas, packed rows, decimals, time and the text casts.
//!
//! The bottom layer of the relational stack (see `docs/architecture.md`): everything above it
//! (expressions, the plan, rendering, the Table API, SQL) carries rows as [`Row`]s and reads
//! them as [`Datum`]s, with the types in a [`Schema`].

pub mod cast;
mod conform;
pub mod decimal;
pub mod row;
pub mod time;
pub mod typed;
pub mod types;

pub use cast::{format_datum, parse_datum, print_datum, CastError};
pub use row::{
    column_range_span, prefix_len, ColumnCursor, ColumnSpans, Datum, DatumIter, DatumVec,
    DatumVecBorrow, DecodeError, IntPacker, LocatedRow, Number, Row, RowPacker, RowRef,
};
pub use time::Ts;
pub use types::{ColumnType, DataType, Field, Rowtime, Schema, SchemaBuilder, SchemaError};
