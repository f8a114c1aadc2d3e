//! The set operation node ([`SetOpKind`] has the semantics): its builder, schema and mode.

use crate::repr::Schema;

use super::{Mode, Node, PlanError, RelExpr};

/// Set operations: `UNION`, `INTERSECT`, `EXCEPT`, each `ALL` or not, with SQL's multiset
/// semantics over tables that may be updating (case E01, issue 13).
///
/// A row held `m` times on the left and `n` times on the right is held, at every system time:
///
/// | operation       | times            |
/// |-----------------|------------------|
/// | `UNION ALL`     | `m + n`          |
/// | `UNION`         | 1 if `m + n > 0` |
/// | `INTERSECT ALL` | `min(m, n)`      |
/// | `INTERSECT`     | 1 if both `> 0`  |
/// | `EXCEPT ALL`    | `max(m - n, 0)`  |
/// | `EXCEPT`        | 1 if `m > 0` and `n = 0` |
///
/// The two inputs must have as many columns, of the same types (nullability aside: a column is
/// nullable in the output if it is on either side); the output takes the left's names, as
/// Flink's do. `UNION ALL` of two append-only inputs is append-only; every other form is
/// updating (a right row arriving can retract an `EXCEPT` row, and the distinct forms are keyed by
/// the whole row). Time attributes become plain timestamps and the output has no primary key.
///
/// `ALL` or not is beside it, in [`Node::SetOp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SetOpKind {
    /// `UNION`: the rows of either input.
    Union,
    /// `INTERSECT`: the rows of both.
    Intersect,
    /// `EXCEPT` (Flink's Table API `minus`): the left's rows not in the right.
    Except,
}

impl SetOpKind {
    /// The SQL keyword, with ` ALL` when `all`.
    pub fn sql(self, all: bool) -> String {
        let name = match self {
            SetOpKind::Union => "UNION",
            SetOpKind::Intersect => "INTERSECT",
            SetOpKind::Except => "EXCEPT",
        };
        match all {
            true => format!("{name} ALL"),
            false => name.to_string(),
        }
    }
}

impl RelExpr {
    /// `self <op> [ALL] right` (see [`SetOpKind`]).
    ///
    /// Errors: the inputs differ in their number of columns or in a column's type; the message
    /// names both sides' columns.
    pub fn set_op(self, right: RelExpr, op: SetOpKind, all: bool) -> Result<RelExpr, PlanError> {
        let schema = set_op_schema(&self.schema, &right.schema, &op.sql(all))?;
        let mode = if op == SetOpKind::Union
            && all
            && self.mode.is_append_only()
            && right.mode.is_append_only()
        {
            Mode::AppendOnly
        } else if all {
            Mode::Updating { upsert_key: None }
        } else {
            Mode::Updating {
                upsert_key: Some((0..schema.len()).collect()),
            }
        };
        Ok(RelExpr {
            node: Node::SetOp {
                left: Box::new(self),
                right: Box::new(right),
                op,
                all,
            },
            schema,
            mode,
        })
    }
}

/// The output schema of a set operation `operation` (for messages): the left's names, each
/// column nullable if it is on either side.
fn set_op_schema(left: &Schema, right: &Schema, operation: &str) -> Result<Schema, PlanError> {
    let describe = |s: &Schema| {
        let columns: Vec<String> = s
            .fields
            .iter()
            .map(|f| format!("{} {}", f.name, f.ty))
            .collect();
        format!("[{}]", columns.join(", "))
    };
    let mismatch = |what: String| {
        PlanError::invalid(
            "SetOp",
            format!(
                "{operation}: {what}; the left side is {}, the right side is {}",
                describe(left),
                describe(right)
            ),
        )
    };
    if left.len() != right.len() {
        return Err(mismatch(format!(
            "the inputs have {} and {} columns, a set operation needs as many on each side",
            left.len(),
            right.len()
        )));
    }
    let mut fields = left.fields.clone();
    for (i, (field, other)) in fields.iter_mut().zip(&right.fields).enumerate() {
        if field.ty.data_type != other.ty.data_type {
            return Err(mismatch(format!(
                "column {} has type {} on the left ('{}') and {} on the right ('{}')",
                i + 1,
                field.ty.data_type,
                field.name,
                other.ty.data_type,
                other.name
            )));
        }
        field.ty.nullable |= other.ty.nullable;
    }
    Ok(Schema {
        fields,
        primary_key: None,
        rowtime: None,
        proctime: None,
    })
}
