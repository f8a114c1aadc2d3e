//! Flink's tableau: the box `TableResult.print()` and the SQL client draw around a result.
//!
//! ```text
//! +----+----------------------+----------------------+
//! | op |                    a |                  cnt |
//! +----+----------------------+----------------------+
//! | +I |                  foo |                    1 |
//! | -U |                  foo |                    1 |
//! | +U |                  foo |                    2 |
//! +----+----------------------+----------------------+
//! 3 rows in set
//! ```
//!
//! As Flink's `TableauStyle` (flink-table-common, `org.apache.flink.table.utils.print`) draws
//! it: every cell, header included, is right-aligned (numbers and strings alike); NULL is
//! `<NULL>`; values are Flink's printing cast to STRING ([`print_datum`]: `TRUE`, `x'0a'`,
//! timestamps per precision, decimals with their scale); a value wider than its column is cut
//! and ends in `...`; no rows prints `Empty set`, else the box and `N rows in set` (`1 row in
//! set`). A character's width is 2 for East Asian wide and full-width characters, else its
//! UTF-16 length, as Flink counts.
//!
//! Column widths come from the types ([`Widths::ByType`], what `TableResult.print()` uses:
//! BIGINT 20, INT 11, DECIMAL(p, s) p + 2, BOOLEAN 5, DATE 10, TIME(p) 8 or 9 + p, TIMESTAMP(p)
//! 19, 23, 26 or 29, and the maximum column width, 30 by default, for strings, floats and the
//! rest; at least the name and `<NULL>`) or from the values ([`Widths::ByContent`], the SQL
//! client's batch results: the widest value or name, at most the maximum).

use std::fmt::{self, Write};

use unicode_width::UnicodeWidthChar;

use crate::operators::RowKind;
use crate::repr::cast::print_datum;
use crate::repr::{DataType, Row, Schema};

/// How Flink writes NULL in a tableau (`PrintStyle.NULL_VALUE`).
pub const NULL_VALUE: &str = "<NULL>";

/// Flink's default `table.display.max-column-width`.
pub const DEFAULT_MAX_COLUMN_WIDTH: usize = 30;

const ROW_KIND_COLUMN: &str = "op";
const TRUNCATED: &str = "...";

/// Where the column widths come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Widths {
    /// From the column types (Flink's `tableauWithTypeInferredColumnWidths`).
    ByType,
    /// From the names and values, capped by the maximum width (Flink's
    /// `tableauWithDataInferredColumnWidths`).
    ByContent,
}

/// A tableau printer's settings.
///
/// ```
/// use differential_temporal::io::Tableau;
/// use differential_temporal::operators::RowKind;
/// use differential_temporal::repr::{DataType, Datum, Row, Schema};
///
/// let schema = Schema::builder().column("n", DataType::Int.nullable()).build().unwrap();
/// let rows = [Row::pack([Datum::Int(7)]), Row::pack([Datum::Null])];
/// let mut out = String::new();
/// Tableau::table_result(true)
///     .print(&schema, rows.iter().map(|r| (RowKind::Insert, r)), &mut out)
///     .unwrap();
/// assert_eq!(
///     out,
///     "+----+-------------+\n\
///      | op |           n |\n\
///      +----+-------------+\n\
///      | +I |           7 |\n\
///      | +I |      <NULL> |\n\
///      +----+-------------+\n\
///      2 rows in set\n"
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tableau {
    /// Where the widths come from.
    pub widths: Widths,
    /// The widest a column gets (`table.display.max-column-width`).
    pub max_column_width: usize,
    /// Whether to lead with the `op` column (the row kinds).
    pub print_row_kind: bool,
}

impl Tableau {
    /// What Flink's `TableResult.print()` draws: widths by type, at most 30, with the `op`
    /// column in streaming mode (`streaming`), without it in batch mode.
    pub fn table_result(streaming: bool) -> Tableau {
        Tableau {
            widths: Widths::ByType,
            max_column_width: DEFAULT_MAX_COLUMN_WIDTH,
            print_row_kind: streaming,
        }
    }

    /// Prints `rows` (each with its kind, shown when [`Tableau::print_row_kind`]) of `schema`
    /// to `out`. Errors are `out`'s only.
    pub fn print<'r>(
        &self,
        schema: &Schema,
        rows: impl IntoIterator<Item = (RowKind, &'r Row)>,
        out: &mut impl Write,
    ) -> fmt::Result {
        let names: Vec<&str> = self
            .print_row_kind
            .then_some(ROW_KIND_COLUMN)
            .into_iter()
            .chain(schema.names())
            .collect();
        let types: Vec<&DataType> = schema.types().map(|t| &t.data_type).collect();
        let cells: Vec<Vec<String>> = rows
            .into_iter()
            .map(|(kind, row)| self.cells(kind, row, &types))
            .collect::<Result<_, _>>()?;
        if cells.is_empty() {
            return out.write_str("Empty set\n");
        }
        let widths = match self.widths {
            Widths::ByType => self.widths_by_type(schema),
            Widths::ByContent => {
                let mut widths: Vec<usize> = names.iter().map(|n| n.len()).collect();
                for row in &cells {
                    for (w, cell) in widths.iter_mut().zip(row) {
                        *w = (*w).max(display_width(cell));
                    }
                }
                widths
                    .iter()
                    .map(|w| (*w).min(self.max_column_width))
                    .collect()
            }
        };
        border(&widths, out)?;
        line(names.iter().copied(), &widths, out)?;
        border(&widths, out)?;
        for row in &cells {
            line(row.iter().map(String::as_str), &widths, out)?;
        }
        border(&widths, out)?;
        let term = if cells.len() > 1 { "rows" } else { "row" };
        writeln!(out, "{} {term} in set", cells.len())
    }

    /// The head of a streaming result's tableau, as Flink's SQL client prints a streaming
    /// query's rows as they come: the top border and the names (widths by type, whatever
    /// [`Tableau::widths`] says: the rows are not known yet). Errors are `out`'s only.
    ///
    /// ```
    /// use differential_temporal::io::Tableau;
    /// use differential_temporal::operators::RowKind;
    /// use differential_temporal::repr::{DataType, Datum, Row, Schema};
    ///
    /// let schema = Schema::builder().column("n", DataType::Int.nullable()).build().unwrap();
    /// let tableau = Tableau::table_result(true);
    /// let mut out = String::new();
    /// tableau.print_head(&schema, &mut out).unwrap();
    /// // ... each round's rows as they come:
    /// let round = [Row::pack([Datum::Int(7)])];
    /// tableau.print_rows(&schema, round.iter().map(|r| (RowKind::Insert, r)), &mut out).unwrap();
    /// // ... and when the query is cancelled:
    /// tableau.print_tail(&schema, 1, &mut out).unwrap();
    /// assert_eq!(
    ///     out,
    ///     "+----+-------------+\n\
    ///      | op |           n |\n\
    ///      +----+-------------+\n\
    ///      | +I |           7 |\n\
    ///      +----+-------------+\n\
    ///      Received a total of 1 row\n"
    /// );
    /// ```
    pub fn print_head(&self, schema: &Schema, out: &mut impl Write) -> fmt::Result {
        let widths = self.widths_by_type(schema);
        let names =
            (self.print_row_kind.then_some(ROW_KIND_COLUMN).into_iter()).chain(schema.names());
        border(&widths, out)?;
        line(names, &widths, out)?;
        border(&widths, out)
    }

    /// Rows of a streaming result's tableau under [`print_head`](Tableau::print_head)'s.
    /// Errors are `out`'s only.
    pub fn print_rows<'r>(
        &self,
        schema: &Schema,
        rows: impl IntoIterator<Item = (RowKind, &'r Row)>,
        out: &mut impl Write,
    ) -> fmt::Result {
        let widths = self.widths_by_type(schema);
        let types: Vec<&DataType> = schema.types().map(|t| &t.data_type).collect();
        for (kind, row) in rows {
            let cells = self.cells(kind, row, &types)?;
            line(cells.iter().map(String::as_str), &widths, out)?;
        }
        Ok(())
    }

    /// The end of a streaming result's tableau: the bottom border and Flink's count
    /// (`Received a total of N rows`). Errors are `out`'s only.
    pub fn print_tail(&self, schema: &Schema, rows: u64, out: &mut impl Write) -> fmt::Result {
        border(&self.widths_by_type(schema), out)?;
        let term = if rows == 1 { "row" } else { "rows" };
        writeln!(out, "Received a total of {rows} {term}")
    }

    /// The printed cells of one row, led by its kind when the kinds are printed.
    fn cells(
        &self,
        kind: RowKind,
        row: &Row,
        types: &[&DataType],
    ) -> Result<Vec<String>, fmt::Error> {
        let mut cells = Vec::with_capacity(types.len() + 1);
        if self.print_row_kind {
            cells.push(kind.as_str().to_string());
        }
        for (datum, ty) in row.iter().zip(types) {
            let mut cell = String::new();
            if datum.is_null() {
                cell.push_str(NULL_VALUE);
            } else {
                print_datum(datum, ty, &mut cell)?;
            }
            cells.push(cell);
        }
        Ok(cells)
    }

    /// Flink's `TableauStyle.columnWidthsByType`.
    fn widths_by_type(&self, schema: &Schema) -> Vec<usize> {
        let columns = schema.fields.iter().map(|field| {
            let len = match &field.ty.data_type {
                DataType::TinyInt => 4,
                DataType::SmallInt => 6,
                DataType::Int => 11,
                DataType::BigInt => 20,
                DataType::Decimal { precision, .. } => usize::from(*precision) + 2,
                DataType::Boolean => 5,
                DataType::Date => 10,
                DataType::Time(0) => 8,
                DataType::Time(p) => usize::from(*p) + 9,
                DataType::Timestamp(p) | DataType::TimestampLtz(p) => match p {
                    0 => 19,
                    1..=3 => 23,
                    4..=6 => 26,
                    _ => 29,
                },
                _ => self.max_column_width,
            };
            field.name.len().max(len).max(NULL_VALUE.len())
        });
        self.print_row_kind
            .then_some(ROW_KIND_COLUMN.len())
            .into_iter()
            .chain(columns)
            .collect()
    }
}

/// `+----+---+`: each column's width plus its two spaces.
fn border(widths: &[usize], out: &mut impl Write) -> fmt::Result {
    out.write_char('+')?;
    for w in widths {
        for _ in 0..w + 2 {
            out.write_char('-')?;
        }
        out.write_char('+')?;
    }
    out.write_char('\n')
}

/// `| a |  b |`: each cell right-aligned in its column, or cut to fit and ended with `...`.
fn line<'c>(
    cells: impl Iterator<Item = &'c str>,
    widths: &[usize],
    out: &mut impl Write,
) -> fmt::Result {
    out.write_char('|')?;
    for (cell, &width) in cells.zip(widths) {
        out.write_char(' ')?;
        let len = display_width(cell);
        if len <= width {
            pad(width - len, out)?;
            out.write_str(cell)?;
        } else {
            // Flink's truncateString: the longest prefix within the width less `...`, padded.
            let target = width.saturating_sub(TRUNCATED.len());
            let mut used = 0;
            let mut end = 0;
            for (i, c) in cell.char_indices() {
                if used + char_width(c) > target {
                    break;
                }
                used += char_width(c);
                end = i + c.len_utf8();
            }
            pad(target - used, out)?;
            out.write_str(&cell[..end])?;
            out.write_str(TRUNCATED)?;
        }
        out.write_str(" |")?;
    }
    out.write_char('\n')
}

fn pad(n: usize, out: &mut impl Write) -> fmt::Result {
    for _ in 0..n {
        out.write_char(' ')?;
    }
    Ok(())
}

/// Flink's `getStringDisplayWidth`: UTF-16 length plus one per wide character.
fn display_width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

fn char_width(c: char) -> usize {
    c.len_utf16() + usize::from(c.width() == Some(2))
}
