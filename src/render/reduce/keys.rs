//! The group keys of a GROUP BY over packed rows, read where they lie in each input row
//! ([`GroupKey`]), and how a group's key starts its output row ([`OutputKey`]):
//!
//! * [`IntGroupKey`]: one integer column (TINYINT .. BIGINT), kept and hashed as an `i64` when
//!   the column is NOT NULL, else as an `Option<i64>` (NULL is a group, as in SQL's GROUP BY):
//!   a number compared in a register instead of a packed key row, the way the temporal join
//!   keys one integer column.
//! * [`RowGroupKey`]: any columns, hashed and compared as their packed bytes.
//!
//! Either way the output row is the same: the packing of an integer is canonical (its
//! narrowest tag), so a key packed again from its `i64` has the bytes it had in the input.

use std::hash::{BuildHasher, Hash, Hasher};
use std::marker::PhantomData;
use std::ops::Range;
use std::rc::Rc;

use crate::repr::{
    column_range_span, prefix_len, ColumnCursor, ColumnSpans, Datum, Number, Row, RowPacker,
    RowRef, Schema,
};
use differential_temporal_operators::group_aggregate::GroupKey;
use differential_temporal_operators::{Change, Seq};

/// How a GROUP BY's key is kept, from its columns' types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyKind {
    /// One integer column ([`IntGroupKey`]), NULL or not.
    Int { nullable: bool },
    /// Any other columns ([`RowGroupKey`]).
    Columns,
}

impl KeyKind {
    /// The kind of the key `group` (column indexes) of rows of `schema`.
    pub(crate) fn of(schema: &Schema, group: &[usize]) -> KeyKind {
        match schema.is_integer_key(group) {
            true => KeyKind::Int {
                nullable: schema.fields[group[0]].ty.nullable,
            },
            false => KeyKind::Columns,
        }
    }
}

/// A group's key as the start of its output row.
pub(crate) trait OutputKey: 'static {
    /// Appends the key's columns.
    fn pack_key(&self, packer: &mut RowPacker<'_>);

    /// The key's one integer column (`None` inside for NULL), or `None` when it is not one:
    /// an output row of integers then packs it itself (on the stack).
    fn int(&self) -> Option<Option<i64>>;
}

impl OutputKey for Row {
    fn pack_key(&self, packer: &mut RowPacker<'_>) {
        packer.extend_by_row(self.as_row_ref());
    }

    #[inline(always)]
    fn int(&self) -> Option<Option<i64>> {
        None
    }
}

impl OutputKey for Option<i64> {
    fn pack_key(&self, packer: &mut RowPacker<'_>) {
        packer.push(self.map_or(Datum::Null, Datum::Int));
    }

    #[inline(always)]
    fn int(&self) -> Option<Option<i64>> {
        Some(*self)
    }
}

impl OutputKey for i64 {
    fn pack_key(&self, packer: &mut RowPacker<'_>) {
        packer.push_int(*self);
    }

    #[inline(always)]
    fn int(&self) -> Option<Option<i64>> {
        Some(Some(*self))
    }
}

/// How [`IntGroupKey`] keeps the value of its column: `i64` for a NOT NULL column (8 bytes a
/// group), `Option<i64>` for a nullable one (16).
pub(super) trait IntKey: OutputKey + Copy + Eq + Hash {
    /// The key of a row whose key column reads `number`, or `None` when the column cannot hold
    /// it (not an integer, or a NULL in a NOT NULL column).
    fn of(number: Number) -> Option<Self>;
}

impl IntKey for i64 {
    #[inline]
    fn of(number: Number) -> Option<i64> {
        match number {
            Number::Int(v) => Some(v),
            _ => None,
        }
    }
}

impl IntKey for Option<i64> {
    #[inline]
    fn of(number: Number) -> Option<Option<i64>> {
        match number {
            Number::Int(v) => Some(Some(v)),
            Number::Null => Some(None),
            _ => None,
        }
    }
}

/// The group key of one integer column `column` (see the [module docs](self)), kept as a `K`:
/// read from each row by its tag, once (the row's [`GroupKey::Probe`]), never decoded into
/// datums or copied into a key row.
pub(super) struct IntGroupKey<K> {
    column: usize,
    hasher: foldhash::fast::RandomState,
    key: PhantomData<fn() -> K>,
}

impl<K> Clone for IntGroupKey<K> {
    fn clone(&self) -> Self {
        IntGroupKey {
            column: self.column,
            hasher: self.hasher.clone(),
            key: PhantomData,
        }
    }
}

impl<K: IntKey> IntGroupKey<K> {
    /// The key of column `column`, which the schema types TINYINT .. BIGINT
    /// ([`Schema::is_integer_key`](crate::repr::Schema::is_integer_key)), and NOT NULL when
    /// `K` is `i64`.
    pub(super) fn new(column: usize) -> IntGroupKey<K> {
        IntGroupKey {
            column,
            hasher: foldhash::fast::RandomState::default(),
            key: PhantomData,
        }
    }

    /// The key of `row`.
    ///
    /// # Panics
    ///
    /// When the column holds neither an integer nor (in a nullable column) NULL: rows are
    /// packed by their schema, which types it so (a caller's own rows are checked against it
    /// by [`Table::render`](crate::table::Table::render)).
    #[inline]
    fn of(&self, row: &Row) -> K {
        let number = ColumnCursor::new(row).number(self.column);
        match K::of(number) {
            Some(key) => key,
            None => unreachable!("GROUP BY column {} holds {number:?}", self.column),
        }
    }
}

impl<K: IntKey> GroupKey<Change<Row>> for IntGroupKey<K> {
    type Key = K;
    /// The key, read from the row once.
    type Probe = K;
    type Value = Row;

    fn route(&self, change: &Change<Row>) -> u64 {
        // The same seed on every worker.
        foldhash::fast::FixedState::default().hash_one(self.of(&change.row))
    }

    fn hash(&self, change: &Change<Row>) -> (u64, K) {
        let key = self.of(&change.row);
        (self.hasher.hash_one(key), key)
    }

    fn hash_key(&self, key: &K) -> u64 {
        self.hasher.hash_one(key)
    }

    fn is_key(&self, _: &Change<Row>, probe: K, key: &K) -> bool {
        probe == *key
    }

    fn key(&self, _: &Change<Row>, probe: K) -> K {
        probe
    }

    fn seq(&self, change: &Change<Row>) -> Seq {
        change.seq
    }

    fn diff(&self, change: &Change<Row>, diff: isize) -> isize {
        diff * change.kind.sign()
    }

    fn value<'r>(&self, change: &'r Change<Row>) -> &'r Row {
        &change.row
    }
}

/// The group key of a GROUP BY's input rows: the columns `group`, hashed and compared where
/// they lie in each row, and copied into a key row only when a group is created.
#[derive(Clone)]
pub(super) struct RowGroupKey {
    columns: KeyColumns,
    hasher: foldhash::fast::RandomState,
}

/// Where a key lies in a row.
#[derive(Clone)]
enum KeyColumns {
    /// Consecutive columns, in order (`GROUP BY a, b` of a row `(a, b, ..)`): one slice of the
    /// row, whose bytes are the key row's.
    Span(Range<usize>),
    /// Any other columns: located, and hashed and compared column by column.
    Scattered {
        group: Rc<[usize]>,
        /// How many leading columns hold the key.
        width: usize,
    },
}

impl RowGroupKey {
    pub(super) fn new(group: Vec<usize>) -> RowGroupKey {
        let start = group.first().copied().unwrap_or(0);
        let consecutive = group.iter().enumerate().all(|(i, &c)| c == start + i);
        let columns = match consecutive {
            true => KeyColumns::Span(start..start + group.len()),
            false => KeyColumns::Scattered {
                width: prefix_len(group.iter().copied()),
                group: group.into(),
            },
        };
        RowGroupKey {
            columns,
            hasher: foldhash::fast::RandomState::default(),
        }
    }

    /// The hash of `row`'s key by `hasher`: the same as [`Self::hash_key_by`] of that key.
    fn hash_by(&self, hasher: &impl BuildHasher, row: &Row) -> u64 {
        match &self.columns {
            KeyColumns::Span(columns) => {
                hasher.hash_one(&row.as_bytes()[column_range_span(row, columns.clone())])
            }
            KeyColumns::Scattered { group, width } => {
                let mut state = hasher.build_hasher();
                let mut spans = ColumnSpans::new();
                (spans.locate(row, *width)).hash_columns(group.iter().copied(), &mut state);
                state.finish()
            }
        }
    }

    /// The hash of a key row by `hasher`.
    fn hash_key_by(&self, hasher: &impl BuildHasher, key: &Row) -> u64 {
        match &self.columns {
            KeyColumns::Span(_) => hasher.hash_one(key.as_bytes()),
            KeyColumns::Scattered { group, .. } => {
                let mut state = hasher.build_hasher();
                let mut spans = ColumnSpans::new();
                (spans.locate(key, group.len())).hash_columns(0..group.len(), &mut state);
                state.finish()
            }
        }
    }
}

impl GroupKey<Change<Row>> for RowGroupKey {
    type Key = Row;
    /// Nothing: the key is hashed and compared where it lies in the row.
    type Probe = ();
    type Value = Row;

    fn route(&self, change: &Change<Row>) -> u64 {
        // The same seed on every worker.
        self.hash_by(&foldhash::fast::FixedState::default(), &change.row)
    }

    fn hash(&self, change: &Change<Row>) -> (u64, ()) {
        (self.hash_by(&self.hasher, &change.row), ())
    }

    fn hash_key(&self, key: &Row) -> u64 {
        self.hash_key_by(&self.hasher, key)
    }

    fn is_key(&self, change: &Change<Row>, (): (), key: &Row) -> bool {
        let row = &change.row;
        match &self.columns {
            KeyColumns::Span(columns) => {
                row.as_bytes()[column_range_span(row, columns.clone())] == *key.as_bytes()
            }
            KeyColumns::Scattered { group, width } => {
                let mut spans = ColumnSpans::new();
                (spans.locate(row, *width)).columns_equal(group, key)
            }
        }
    }

    fn key(&self, change: &Change<Row>, (): ()) -> Row {
        let row = &change.row;
        match &self.columns {
            KeyColumns::Span(columns) => {
                let span = column_range_span(row, columns.clone());
                RowRef::from_packed(&row.as_bytes()[span]).to_row()
            }
            KeyColumns::Scattered { group, width } => {
                let mut spans = ColumnSpans::new();
                (spans.locate(row, *width)).project(group)
            }
        }
    }

    fn seq(&self, change: &Change<Row>) -> Seq {
        change.seq
    }

    fn diff(&self, change: &Change<Row>, diff: isize) -> isize {
        diff * change.kind.sign()
    }

    fn value<'r>(&self, change: &'r Change<Row>) -> &'r Row {
        &change.row
    }
}
