//! `Correlate`: each input row joined with the rows a table-valued expression gives for it
//! (Flink's `Correlate` node): a table function call (`LATERAL TABLE (f(a))`,
//! `join_lateral(call("f", [col("a")]))`) or `UNNEST(arr)`.
//!
//! Semantics (Flink's): per input row, the rows of the expansion appended to it. INNER drops an
//! input row whose expansion is empty (or whose every expanded row fails the condition); LEFT
//! keeps it once, padded with NULLs, and takes no condition but `ON TRUE` (Flink: "Only literal
//! TRUE is accepted"). Output rows keep the input row's kind and source position, so a
//! retraction of an input row retracts exactly its expansions, which requires a deterministic
//! function. `UNNEST` of an ARRAY gives one row per element (with `WITH ORDINALITY` also its
//! position from 1), of a MAP one `(key, value)` row per entry; a NULL or empty collection
//! gives none. The output is the input's columns then the expansion's (nullable under LEFT),
//! append-only if the input is, with the input's time attributes; it has no key (an input row
//! may expand to several equal rows).

use crate::expr::{invoke_table_function, EvalError, ExprError, ScalarExpr, TableFunctionRef};
use crate::repr::{ColumnType, DataType, Datum, Field, Row, RowRef, Schema};

use super::{join_schema, JoinKind, Mode, Node, PlanError, RelExpr};

/// What a [`Correlate`] expands each input row into.
#[derive(Clone, Debug, PartialEq)]
pub enum Expansion {
    /// A user-defined table function.
    Function(TableFunctionRef),
    /// `UNNEST` of an ARRAY or a MAP, with the element's position (from 1) when `ordinality`.
    Unnest {
        /// `WITH ORDINALITY`.
        ordinality: bool,
    },
}

/// The parts of a [`Node::Correlate`].
#[derive(Clone, Debug, PartialEq)]
pub struct Correlate {
    /// The input (the left side of the lateral join).
    pub input: Box<RelExpr>,
    /// The table function or UNNEST.
    pub expansion: Expansion,
    /// The arguments, over the input's columns (UNNEST: the one collection).
    pub args: Vec<ScalarExpr>,
    /// INNER or LEFT.
    pub kind: JoinKind,
    /// An INNER join's condition over the output columns (`None`: TRUE).
    pub condition: Option<ScalarExpr>,
}

/// The output columns of `UNNEST(arg)` of type `ty` (text `text` for errors): an ARRAY's
/// element (`EXPR$0`), a MAP's `KEY` and `VALUE`, and `ORDINALITY` (INT NOT NULL) when asked.
/// Anything else is Calcite's "Cannot apply 'UNNEST'" error.
pub fn unnest_columns(
    ty: &ColumnType,
    ordinality: bool,
    text: &str,
) -> Result<Vec<Field>, ExprError> {
    let mut fields = match &ty.data_type {
        DataType::Array(element) => vec![Field::new("EXPR$0", (**element).clone())],
        DataType::Map(key, value) => vec![
            Field::new("KEY", (**key).clone()),
            Field::new("VALUE", (**value).clone()),
        ],
        other => {
            return Err(ExprError::TypeMismatch {
                func: "UNNEST".into(),
                types: format!("<{other}>"),
                expr: text.into(),
                supported: "'UNNEST(<ARRAY>)', 'UNNEST(<MAP>)'".into(),
            })
        }
    };
    if ordinality {
        fields.push(Field::new("ORDINALITY", DataType::Int.not_null()));
    }
    Ok(fields)
}

impl RelExpr {
    /// The lateral join of this input with `expansion` called on `args` (over this input's
    /// columns), whose output columns are `columns`: INNER or LEFT, with an INNER join's
    /// `condition` over the output columns (the input's, then `columns`).
    ///
    /// Errors: a LEFT join with a condition (Flink's message), a condition that is not
    /// BOOLEAN, UNNEST without exactly one argument, output names that clash.
    pub fn correlate(
        self,
        expansion: Expansion,
        args: Vec<ScalarExpr>,
        columns: Schema,
        kind: JoinKind,
        condition: Option<ScalarExpr>,
    ) -> Result<RelExpr, PlanError> {
        const NODE: &str = "Correlate";
        if kind == JoinKind::Left && condition.is_some() {
            return Err(PlanError::invalid(
                NODE,
                left_condition_error("the condition"),
            ));
        }
        if let Some(c) = &condition {
            if !matches!(c.ty.data_type, DataType::Boolean | DataType::Null) {
                return Err(PlanError::invalid(
                    NODE,
                    format!(
                        "the join condition must be of type BOOLEAN, but is of type {}",
                        c.ty
                    ),
                ));
            }
        }
        if matches!(expansion, Expansion::Unnest { .. }) && args.len() != 1 {
            return Err(PlanError::invalid(NODE, "UNNEST takes one ARRAY or MAP"));
        }
        let schema = join_schema(&self.schema, &columns, kind);
        let mode = match self.mode {
            Mode::AppendOnly => Mode::AppendOnly,
            Mode::Updating { .. } => Mode::Updating { upsert_key: None },
        };
        Ok(RelExpr {
            node: Node::Correlate(Correlate {
                input: Box::new(self),
                expansion,
                args,
                kind,
                condition,
            }),
            schema,
            mode,
        })
    }
}

/// Flink's refusal of a LEFT lateral join's condition other than `TRUE`.
pub fn left_condition_error(condition: &str) -> String {
    format!(
        "Left outer joins with a table function do not accept a predicate such as {condition}. Only literal TRUE is accepted."
    )
}

impl Correlate {
    /// The number of columns the expansion adds.
    pub fn width(&self, output: &Schema) -> usize {
        output.len() - self.input.schema.len()
    }

    /// Appends to `rows` the output rows of the input row `input`, whose arguments evaluated
    /// to `args`, of `width` expansion columns; `keep` checks the condition on a joined row.
    /// On an error (the function's, the condition's) nothing is appended.
    pub fn expand_row(
        &self,
        args: &[Datum<'_>],
        input: RowRef<'_>,
        width: usize,
        rows: &mut Vec<Row>,
        mut keep: impl FnMut(&Row) -> Result<bool, EvalError>,
    ) -> Result<(), EvalError> {
        let start = rows.len();
        match &self.expansion {
            Expansion::Function(f) => invoke_table_function(&*f.0, args, input, width, rows)?,
            Expansion::Unnest { ordinality } => unnest(args[0], *ordinality, input, rows),
        }
        if self.condition.is_some() {
            let mut kept = start;
            for i in start..rows.len() {
                match keep(&rows[i]) {
                    Ok(true) => {
                        rows.swap(kept, i);
                        kept += 1;
                    }
                    Ok(false) => {}
                    Err(e) => {
                        rows.truncate(start);
                        return Err(e);
                    }
                }
            }
            rows.truncate(kept);
        }
        if rows.len() == start && self.kind == JoinKind::Left {
            let mut padded = Row::new();
            let mut packer = padded.packer();
            packer.extend_by_row(input);
            packer.extend(std::iter::repeat_n(Datum::Null, width));
            rows.push(padded);
        }
        Ok(())
    }

    /// `kind=.., function=f(args), condition=[..]` for `explain`.
    pub(super) fn explain_args(&self, output: &Schema) -> String {
        let input = &self.input.schema;
        let args: Vec<String> = (self.args.iter())
            .map(|a| super::explain::expr_text(a, input))
            .collect();
        let name = match &self.expansion {
            Expansion::Function(f) => f.0.name().to_string(),
            Expansion::Unnest { ordinality: false } => "UNNEST".to_string(),
            Expansion::Unnest { ordinality: true } => "UNNEST WITH ORDINALITY".to_string(),
        };
        let mut text = format!(
            "kind={}, function=[{name}({})]",
            super::explain::kind_name(self.kind),
            args.join(", ")
        );
        if let Some(c) = &self.condition {
            text.push_str(&format!(
                ", condition=[{}]",
                super::explain::expr_text(c, output)
            ));
        }
        text
    }
}

/// The rows of `UNNEST(collection)` after `input`: one per ARRAY element or MAP entry, in
/// order, with the position from 1 when `ordinality`; none for NULL.
fn unnest(collection: Datum<'_>, ordinality: bool, input: RowRef<'_>, rows: &mut Vec<Row>) {
    let (elements, per_row) = match collection {
        Datum::Array(elements) => (elements, 1),
        Datum::Map(entries) => (entries, 2),
        _ => return,
    };
    let mut datums = elements.iter();
    let mut position = 0;
    loop {
        let mut row = Row::new();
        let mut packer = row.packer();
        packer.extend_by_row(input);
        for _ in 0..per_row {
            match datums.next() {
                Some(d) => packer.push(d),
                None => return,
            }
        }
        position += 1;
        if ordinality {
            packer.push(Datum::Int(position));
        }
        rows.push(row);
    }
}
