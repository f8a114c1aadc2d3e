//! The regular join node ([`EquiJoin`]): its builder, output schema and changelog mode.

use crate::expr::ScalarExpr;
use crate::repr::{Datum, Row, Schema};
use differential_temporal_operators::SysTime;

use super::build::check_join;
use super::interval_join::interval_bounds;
use super::{join_schema, IntervalBounds, JoinKind, Mode, Node, PlanError, RelExpr};

/// Which unmatched rows a regular join keeps (Flink's `FlinkJoinType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JoinType {
    /// Only the matches.
    Inner,
    /// The matches, and each left row without one, padded.
    Left,
    /// The matches, and each right row without one, padded.
    Right,
    /// The matches, and every row without one of either side, padded.
    Full,
}

impl JoinType {
    /// Whether left rows without a match are output (padded with NULLs on the right).
    pub fn keeps_left(self) -> bool {
        matches!(self, JoinType::Left | JoinType::Full)
    }

    /// Whether right rows without a match are output (padded with NULLs on the left).
    pub fn keeps_right(self) -> bool {
        matches!(self, JoinType::Right | JoinType::Full)
    }

    /// The SQL keyword: `INNER`, `LEFT`, `RIGHT`, `FULL`.
    pub fn sql(self) -> &'static str {
        match self {
            JoinType::Inner => "INNER",
            JoinType::Left => "LEFT",
            JoinType::Right => "RIGHT",
            JoinType::Full => "FULL",
        }
    }
}

/// The regular join (`JOIN`, `LEFT`, `RIGHT`, `FULL [OUTER] JOIN ... ON`): equality keys plus a
/// residual condition, over two tables that may both be updating (Flink's `StreamingJoinOperator`,
/// issue 13).
///
/// Semantics, as SQL and Flink define them:
/// * a left row and a right row **match** when their key columns are equal and the residual
///   condition (over the joined row) is TRUE; a NULL key column never equals anything, NULL
///   included, so a row with one matches nothing;
/// * INNER outputs the matches; LEFT also outputs each left row without a match, padded with
///   NULLs for the right columns; RIGHT the same for right rows; FULL both. The residual belongs
///   to the ON clause: a left row whose partners all fail it is padded, not dropped;
/// * over updating inputs the output is the join of the inputs' tables at every system time, so
///   a padded row is retracted when its first match arrives and emitted again when its last match
///   leaves (case E04: `-D`/`+I`, never `-U`/`+U`, as the output has no upsert key);
/// * a join needs at least one equality between a left and a right column (Flink's Table API
///   refuses it with "Invalid join condition: ... At least one equi-join predicate is
///   required."); this engine runs every query as a stream, where a join without keys would
///   compare every row with every row of the other side, so it refuses it always.
///
/// Output columns: the left's, then the right's (a right column whose name is taken gets the
/// first free suffix `0`, `1`, ..., as [`join_schema`]); the columns of a padded side are
/// nullable. Time attributes become plain timestamps (Flink materializes them in a regular
/// join) and the output has no key.
#[derive(Clone, Debug, PartialEq)]
pub struct EquiJoin {
    /// The left input.
    pub left: Box<RelExpr>,
    /// The right input.
    pub right: Box<RelExpr>,
    /// The left's equality-key columns.
    pub left_key: Vec<usize>,
    /// The right's key columns, in the order of `left_key`.
    pub right_key: Vec<usize>,
    /// INNER, LEFT, RIGHT or FULL.
    pub join_type: JoinType,
    /// The rest of the ON condition, over the output columns (left, then right).
    pub residual: Option<ScalarExpr>,
    /// When the inputs are append-only with rowtimes and the residual bounds one rowtime by the
    /// other on both sides: the window, and the join is an interval join (see
    /// [`IntervalBounds`]; final mode frees its state on the watermark).
    pub interval: Option<IntervalBounds>,
    /// Idle-state retention, in system times (Flink's `table.exec.state.ttl`; `None`: state is
    /// kept forever). See [`RelExpr::with_state_ttl`].
    pub state_ttl: Option<SysTime>,
}

impl RelExpr {
    /// The regular join `self <join_type> JOIN right ON self.left_key = right.right_key [AND
    /// residual]` (see [`EquiJoin`]); `residual` is over the output columns.
    ///
    /// Errors: no key (or not as many on each side), a key column out of range, two key columns
    /// that cannot be compared, a residual that is not BOOLEAN.
    pub fn join(
        self,
        right: RelExpr,
        left_key: Vec<usize>,
        right_key: Vec<usize>,
        join_type: JoinType,
        residual: Option<ScalarExpr>,
    ) -> Result<RelExpr, PlanError> {
        check_join(
            "Join",
            (&self.schema, &left_key),
            (&right.schema, &right_key),
            residual.as_ref(),
            "At least one equi-join predicate is required: a regular join on a stream needs equality keys, as many on the left as on the right",
        )?;
        let schema = equi_join_schema(&self.schema, &right.schema, join_type);
        let interval = interval_bounds(&self, &right, residual.as_ref());
        let mode = if self.mode.is_append_only()
            && right.mode.is_append_only()
            && join_type == JoinType::Inner
        {
            Mode::AppendOnly
        } else {
            Mode::Updating { upsert_key: None }
        };
        Ok(RelExpr {
            node: Node::Join(EquiJoin {
                left: Box::new(self),
                right: Box::new(right),
                left_key,
                right_key,
                join_type,
                residual,
                interval,
                state_ttl: None,
            }),
            schema,
            mode,
        })
    }
}

impl RelExpr {
    /// This regular join with idle-state retention (Flink's `table.exec.state.ttl`, as its
    /// `StreamingJoinOperator` applies it): a row of either side is cleared from the join's
    /// state once it has not been written for `ttl` **system times** (a row written at system
    /// time `s` is gone from `s + ttl` on). Nothing is emitted when state expires: joined rows
    /// already emitted stay, and a later row of the other side no longer matches the expired
    /// row. A row is written when it is inserted or retracted and, on a kept (padded) side, when
    /// a partner's change updates its association count; a kept row whose partner expired stays
    /// joined in the output and is not padded (Flink's association count still counts the
    /// partner). The exact rules are [`ttl_join`](differential_temporal_operators::ttl_join)'s.
    ///
    /// `ttl = 0` is off (Flink's default): state is kept forever and the join is exact at every
    /// system time. The clock is system time, not the wall clock, so results are deterministic
    /// and do not depend on the worker count; they do depend on how input is cut into system
    /// times (in [`TableEnv`](crate::table::TableEnv), one input block each). An interval join
    /// (a join with [`IntervalBounds`]) keeps its plan: as in Flink, its state is bounded by
    /// the watermark, not by the TTL.
    ///
    /// On a lookup join the same TTL, in system times, is its idle-state retention (rule B17):
    /// a key that no probe row and no build change touched for `ttl` system times is
    /// forgotten, a probe row then finding only the build changes that arrived since (see
    /// [`lookup_join`](differential_temporal_operators::temporal_join::lookup_join)).
    ///
    /// Errors: `self` is not a regular join or a lookup join.
    pub fn with_state_ttl(mut self, ttl: SysTime) -> Result<RelExpr, PlanError> {
        let ttl = (ttl > 0).then_some(ttl);
        match &mut self.node {
            Node::Join(join) if join.interval.is_none() => join.state_ttl = ttl,
            Node::Join(_) => {}
            Node::LookupJoin(join) => join.state_ttl = ttl,
            _ => {
                let reason = format!(
                    "a state TTL in system times applies to a regular join or a lookup join, \
                     not to {}",
                    self.kind_name()
                );
                return Err(PlanError::invalid("Join", reason));
            }
        }
        Ok(self)
    }
}

/// The output schema of a regular join: the left's columns, then the right's, renamed as
/// [`join_schema`] renames them, a padded side's columns nullable, no key and no time attributes.
pub fn equi_join_schema(left: &Schema, right: &Schema, join_type: JoinType) -> Schema {
    let kind = match join_type.keeps_left() {
        true => JoinKind::Left,
        false => JoinKind::Inner,
    };
    let mut schema = join_schema(left, right, kind);
    if join_type.keeps_right() {
        for field in &mut schema.fields[..left.len()] {
            field.ty.nullable = true;
        }
    }
    schema.rowtime = None;
    schema.proctime = None;
    schema
}

/// A row of a regular join's output: `left`'s columns then `right`'s, a missing side (`None`)
/// as `width` NULLs. One allocation, at most.
pub fn joined_row(left: Option<&Row>, right: Option<&Row>, widths: (usize, usize)) -> Row {
    let mut row = Row::new();
    let mut packer = row.packer();
    for (side, width) in [(left, widths.0), (right, widths.1)] {
        match side {
            Some(side) => packer.extend_by_row(side.as_row_ref()),
            None => packer.extend(std::iter::repeat_n(Datum::Null, width)),
        }
    }
    row
}
