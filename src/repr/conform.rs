//! Whether a row is a row of a schema: the check at the boundary where rows packed by a user's
//! own code (a collection of [`Row`]s from the caller's dataflow) enter a plan, which reads them
//! by their schema's types (Flink's `fromDataStream` with a schema converts each record the
//! same way).

use super::{ColumnType, DataType, Datum, Row, RowRef, Schema};

impl Schema {
    /// Why `row` is not a row of this schema, naming the first column that does not fit (a NULL
    /// in a NOT NULL column, a datum of another type, an integer out of its type's range, a
    /// nested value whose elements do not fit), or a wrong number of columns; `None` if it
    /// fits.
    ///
    /// ```
    /// use differential_temporal::repr::{DataType, Datum, Row, Schema};
    ///
    /// let schema = Schema::builder()
    ///     .column("k", DataType::BigInt.not_null())
    ///     .column("s", DataType::STRING.nullable())
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(schema.misfit(&Row::pack([Datum::Int(1), Datum::Null])), None);
    /// assert_eq!(
    ///     schema.misfit(&Row::pack([Datum::Null, Datum::Str("a")])).unwrap(),
    ///     "column 'k' of type BIGINT NOT NULL holds NULL"
    /// );
    /// ```
    pub fn misfit(&self, row: &Row) -> Option<String> {
        let mut datums = row.iter();
        for field in &self.fields {
            let Some(datum) = datums.next() else {
                return Some(format!(
                    "the row has {} columns, the schema {}",
                    row.iter().count(),
                    self.len()
                ));
            };
            if !fits(datum, &field.ty) {
                return Some(format!(
                    "column '{}' of type {} holds {}",
                    field.name,
                    field.ty,
                    describe(datum)
                ));
            }
        }
        let extra = datums.count();
        (extra > 0).then(|| {
            format!(
                "the row has {} columns, the schema {}",
                self.len() + extra,
                self.len()
            )
        })
    }
}

/// Whether `datum` is a value of `ty`.
fn fits(datum: Datum<'_>, ty: &ColumnType) -> bool {
    let in_range = |v: i64, bits: u32| {
        let bound = 1i64 << (bits - 1);
        (-bound..bound).contains(&v)
    };
    match (&ty.data_type, datum) {
        (_, Datum::Null) => ty.nullable,
        (DataType::Boolean, Datum::Bool(_)) => true,
        (DataType::TinyInt, Datum::Int(v)) => in_range(v, 8),
        (DataType::SmallInt, Datum::Int(v)) => in_range(v, 16),
        (DataType::Int, Datum::Int(v)) => in_range(v, 32),
        (DataType::BigInt, Datum::Int(_)) => true,
        (DataType::Float | DataType::Double, Datum::Float(_)) => true,
        (DataType::Decimal { precision, .. }, Datum::Decimal(v)) => 10i128
            .checked_pow(u32::from(*precision))
            .is_none_or(|limit| v.unsigned_abs() < limit.unsigned_abs()),
        (DataType::Char(_) | DataType::Varchar(_), Datum::Str(_)) => true,
        (DataType::Binary(_) | DataType::Varbinary(_), Datum::Bytes(_)) => true,
        (DataType::Date, Datum::Date(_)) => true,
        (DataType::Time(_), Datum::Time(_)) => true,
        (DataType::Timestamp(_) | DataType::TimestampLtz(_), Datum::Timestamp(_)) => true,
        (DataType::IntervalDayTime, Datum::IntervalDayTime(_)) => true,
        (DataType::IntervalYearMonth, Datum::IntervalYearMonth(_)) => true,
        (DataType::Array(element), Datum::Array(items)) => items.iter().all(|d| fits(d, element)),
        (DataType::Map(k, v), Datum::Map(entries)) => entries_fit(entries, k, v),
        (DataType::Row(fields), Datum::Row(values)) => {
            values.iter().count() == fields.len()
                && values.iter().zip(fields).all(|(d, f)| fits(d, &f.ty))
        }
        _ => false,
    }
}

/// Whether a map's entries, keys and values alternating, are of types `k` and `v`.
fn entries_fit(entries: RowRef<'_>, k: &ColumnType, v: &ColumnType) -> bool {
    let mut items = entries.iter();
    while let Some(key) = items.next() {
        match items.next() {
            Some(value) if fits(key, k) && fits(value, v) => {}
            _ => return false,
        }
    }
    true
}

/// A datum's kind, for a message: `NULL`, `an integer 300`, `a string`...
pub(super) fn describe(datum: Datum<'_>) -> String {
    match datum {
        Datum::Null => "NULL".to_string(),
        Datum::Int(v) => format!("the integer {v}"),
        Datum::Decimal(v) => format!("the unscaled decimal {v}"),
        Datum::Bool(_) => "a BOOLEAN".to_string(),
        Datum::Float(_) => "a floating-point number".to_string(),
        Datum::Date(_) => "a DATE".to_string(),
        Datum::Time(_) => "a TIME".to_string(),
        Datum::Timestamp(_) => "a TIMESTAMP".to_string(),
        Datum::IntervalDayTime(_) | Datum::IntervalYearMonth(_) => "an INTERVAL".to_string(),
        Datum::Str(_) => "a string".to_string(),
        Datum::Bytes(_) => "bytes".to_string(),
        Datum::Array(_) => "an ARRAY".to_string(),
        Datum::Map(_) => "a MAP".to_string(),
        Datum::Row(_) => "a ROW".to_string(),
    }
}
