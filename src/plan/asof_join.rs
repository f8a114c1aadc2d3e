//! The ASOF join node ([`AsofJoin`]): its builder, output schema and the rules of a match that
//! the renderer and the reference interpreter share (ordering values, directions, tolerance).

use crate::repr::{DataType, Datum, Schema};

use super::build::check_join;
use super::{join_schema, JoinKind, Mode, Node, PlanError, RelExpr};

/// How the probe's ordering value picks a build row (the `MATCH_CONDITION`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AsofMatch {
    /// `probe.t >= build.t`: the build row with the greatest ordering value at or before the
    /// probe's (DuckDB's and Snowflake's default, kdb's `aj`, pandas' `backward`).
    Ge,
    /// `probe.t > build.t`: the greatest strictly before.
    Gt,
    /// `probe.t <= build.t`: the smallest at or after (pandas' `forward`).
    Le,
    /// `probe.t < build.t`: the smallest strictly after.
    Lt,
    /// The build row whose ordering value is nearest the probe's, either side; at equal
    /// distance the one before wins (pandas' and Polars' `nearest`).
    Nearest,
}

impl AsofMatch {
    /// The condition as SQL writes it between the probe and the build column: `>=`, `>`,
    /// `<=`, `<`, or `NEAREST`.
    pub fn sql(self) -> &'static str {
        match self {
            AsofMatch::Ge => ">=",
            AsofMatch::Gt => ">",
            AsofMatch::Le => "<=",
            AsofMatch::Lt => "<",
            AsofMatch::Nearest => "NEAREST",
        }
    }

    /// The same condition with its operands swapped (`build.t <= probe.t` is `probe.t >=
    /// build.t`).
    pub fn flipped(self) -> AsofMatch {
        match self {
            AsofMatch::Ge => AsofMatch::Le,
            AsofMatch::Gt => AsofMatch::Lt,
            AsofMatch::Le => AsofMatch::Ge,
            AsofMatch::Lt => AsofMatch::Gt,
            AsofMatch::Nearest => AsofMatch::Nearest,
        }
    }

    /// The one-sided searches the match is made of: one for an inequality, the backward and
    /// the forward search for NEAREST.
    pub(crate) fn seeks(self) -> &'static [Seek] {
        match self {
            AsofMatch::Ge => &[Seek::Backward { strict: false }],
            AsofMatch::Gt => &[Seek::Backward { strict: true }],
            AsofMatch::Le => &[Seek::Forward { strict: false }],
            AsofMatch::Lt => &[Seek::Forward { strict: true }],
            AsofMatch::Nearest => &[
                Seek::Backward { strict: false },
                Seek::Forward { strict: false },
            ],
        }
    }
}

/// One direction of an ASOF search, as a *position* encoding: the match of a probe row is the
/// build row with the greatest position at or below the probe's position (ties: greatest
/// `seq`), which is what the temporal join's seek in the versions arrangement finds. Backward
/// keeps the values, forward negates them; a strict search moves the probe one unit back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seek {
    /// The greatest build value `<=` (`<` if strict) the probe's.
    Backward {
        /// Whether an equal value is excluded.
        strict: bool,
    },
    /// The smallest build value `>=` (`>` if strict) the probe's.
    Forward {
        /// Whether an equal value is excluded.
        strict: bool,
    },
}

impl Seek {
    /// A probe row's position, from its ordering value.
    pub(crate) fn probe_position(self, value: i128) -> i128 {
        match self {
            Seek::Backward { strict } => value - i128::from(strict),
            Seek::Forward { strict } => -value - i128::from(strict),
        }
    }

    /// A build row's position, from its ordering value.
    pub(crate) fn build_position(self, value: i128) -> i128 {
        match self {
            Seek::Backward { .. } => value,
            Seek::Forward { .. } => -value,
        }
    }
}

/// A maximum distance between the probe's and the match's ordering values (inclusive): an
/// `INTERVAL` for a time column, a number for an integer column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tolerance {
    /// A duration in milliseconds (`INTERVAL '5' SECOND`), for TIMESTAMP, TIMESTAMP_LTZ, TIME
    /// and (whole days) DATE columns.
    Interval {
        /// The duration.
        millis: i64,
    },
    /// A count, for integer columns.
    Number(i64),
}

impl std::fmt::Display for Tolerance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tolerance::Interval { millis } => write!(f, "{millis} ms"),
            Tolerance::Number(n) => write!(f, "{n}"),
        }
    }
}

/// The ordering columns of an ASOF join and how they match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AsofOrder {
    /// The probe's ordering column.
    pub probe: usize,
    /// The build's ordering column.
    pub build: usize,
    /// The match condition, read as `probe <condition> build`.
    pub condition: AsofMatch,
    /// The maximum distance, if any.
    pub tolerance: Option<Tolerance>,
}

/// The ASOF join (`probe ASOF [LEFT] JOIN build MATCH_CONDITION (probe.t >= build.t) ON
/// probe.k = build.k`): each probe row joined with at most one build row, the one of equal keys
/// whose ordering value is the closest in the condition's direction (issue 13).
///
/// Semantics (DuckDB's and Snowflake's ASOF join, made exact on updating inputs):
/// * the **candidates** of a probe row are the build rows whose key columns equal the probe's
///   (a NULL key column never equals anything) and whose ordering value satisfies the
///   condition; a NULL ordering value (either side) never matches;
/// * the **match** is the candidate closest to the probe's ordering value; among candidates at
///   the same value, the latest arrival (greatest source `seq`) wins on an append-only build
///   side; an updating build side has no arrival order (its rows are a multiset), so there, and
///   between rows of one `seq`, the smallest row by value wins. The choice never depends on the
///   worker count or on batching;
/// * with a **tolerance** the match must lie within it (`|probe.t - build.t| <= tolerance`),
///   else there is none: the tolerance is checked on the match, it never picks a farther row
///   (pandas' `merge_asof(tolerance=..)`, QuestDB's `TOLERANCE`);
/// * INNER drops a probe row without a match, LEFT pads it with NULLs;
/// * a filter on the build side (a subquery's WHERE, or a condition of `ON` on build columns
///   alone) is applied before the match is chosen: the match is the closest row that passes it;
/// * at every system time the output is the ASOF join of the two inputs' tables then: a build
///   row arriving late retracts and re-emits exactly the probe rows whose match it changes.
///
/// Ordering columns: integers, DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ, of the same kind on both
/// sides. Output columns: the probe's, then the build's (nullable for LEFT; a build column whose
/// name is taken gets a suffix, as [`join_schema`]); the output is updating, without key or
/// time attributes (a late build row retracts rows, as in a regular join).
#[derive(Clone, Debug, PartialEq)]
pub struct AsofJoin {
    /// The probe (left) side.
    pub probe: Box<RelExpr>,
    /// The build (right) side.
    pub build: Box<RelExpr>,
    /// The probe's equality-key columns (possibly none).
    pub probe_key: Vec<usize>,
    /// The build's key columns, in the order of `probe_key`.
    pub build_key: Vec<usize>,
    /// The ordering columns and the condition.
    pub order: AsofOrder,
    /// The tolerance in the ordering columns' unit ([`order_value`]), if any.
    pub tolerance: Option<i128>,
    /// INNER or LEFT.
    pub kind: JoinKind,
}

impl AsofJoin {
    /// Whether a match at ordering value `build` is within the tolerance of `probe`.
    pub fn within(&self, probe: i128, build: i128) -> bool {
        within(self.tolerance, probe, build)
    }
}

/// Whether ordering values `probe` and `build` are at most `tolerance` apart (any distance
/// without one).
pub(crate) fn within(tolerance: Option<i128>, probe: i128, build: i128) -> bool {
    tolerance.is_none_or(|t| (probe - build).abs() <= t)
}

/// The ordering value of a datum as an integer: an integer as itself, a DATE in days, a TIME in
/// nanoseconds of the day, a TIMESTAMP in nanoseconds since the epoch; `None` for NULL (and for
/// any other datum, which the plan does not let through).
pub fn order_value(datum: Datum<'_>) -> Option<i128> {
    match datum {
        Datum::Int(v) => Some(v.into()),
        Datum::Date(days) => Some(days.into()),
        Datum::Time(nanos) => Some(nanos.into()),
        Datum::Timestamp(ts) => {
            Some(i128::from(ts.millis) * 1_000_000 + i128::from(ts.nanos_of_milli))
        }
        _ => None,
    }
}

/// The kinds of column an ASOF join orders by; both sides must be of one kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OrderKind {
    Integer,
    Date,
    Time,
    Timestamp,
    TimestampLtz,
}

fn order_kind(ty: &DataType) -> Option<OrderKind> {
    Some(match ty {
        t if t.is_integer() => OrderKind::Integer,
        DataType::Date => OrderKind::Date,
        DataType::Time(_) => OrderKind::Time,
        DataType::Timestamp(_) => OrderKind::Timestamp,
        DataType::TimestampLtz(_) => OrderKind::TimestampLtz,
        _ => return None,
    })
}

const NODE: &str = "AsofJoin";
const MS_PER_DAY: i64 = 86_400_000;

impl RelExpr {
    /// The ASOF join `self ASOF [LEFT] JOIN build MATCH_CONDITION (self.t <condition> build.t)
    /// ON self.probe_key = build.build_key` (see [`AsofJoin`]); no keys is one group.
    ///
    /// Errors: not as many key columns on each side, a key or ordering column out of range, key
    /// columns that cannot be compared, an ordering column ASOF cannot order by (not an integer,
    /// DATE, TIME or TIMESTAMP) or two of different kinds, a tolerance that is negative or does
    /// not fit the ordering columns (an INTERVAL for time columns, whole days for DATE, a number
    /// for integers).
    pub fn asof_join(
        self,
        build: RelExpr,
        probe_key: Vec<usize>,
        build_key: Vec<usize>,
        order: AsofOrder,
        kind: JoinKind,
    ) -> Result<RelExpr, PlanError> {
        if !probe_key.is_empty() || !build_key.is_empty() {
            check_join(
                NODE,
                (&self.schema, &probe_key),
                (&build.schema, &build_key),
                None,
                "an ASOF join takes as many equality keys on the probe side as on the build side",
            )?;
        }
        let kinds = [(&self.schema, order.probe), (&build.schema, order.build)].map(
            |(schema, column)| -> Result<(String, DataType, OrderKind), PlanError> {
                let field = schema.fields.get(column).ok_or_else(|| {
                    PlanError::invalid(
                        NODE,
                        format!(
                            "ordering column {column} out of range: the input has {} columns",
                            schema.len()
                        ),
                    )
                })?;
                let ty = field.ty.data_type.clone();
                let kind = order_kind(&ty).ok_or_else(|| {
                    PlanError::invalid(
                        NODE,
                        format!(
                            "the match condition's column '{}' is of type {ty}, which an ASOF join cannot order by: use an integer, DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ column",
                            field.name
                        ),
                    )
                })?;
                Ok((field.name.clone(), ty, kind))
            },
        );
        let [probe_order, build_order] = kinds;
        let ((p_name, p_ty, p_kind), (b_name, b_ty, b_kind)) = (probe_order?, build_order?);
        if p_kind != b_kind {
            return Err(PlanError::invalid(
                NODE,
                format!(
                    "the match condition compares '{p_name}' ({p_ty}) with '{b_name}' ({b_ty}), which cannot be compared"
                ),
            ));
        }
        let tolerance = order
            .tolerance
            .map(|t| tolerance_in_unit(t, p_kind, &p_name, &p_ty))
            .transpose()?;
        let mut schema: Schema = join_schema(&self.schema, &build.schema, kind);
        schema.rowtime = None;
        schema.proctime = None;
        Ok(RelExpr {
            node: Node::AsofJoin(AsofJoin {
                probe: Box::new(self),
                build: Box::new(build),
                probe_key,
                build_key,
                order,
                tolerance,
                kind,
            }),
            schema,
            mode: Mode::Updating { upsert_key: None },
        })
    }
}

/// The tolerance in the unit of [`order_value`] for columns of `kind`.
fn tolerance_in_unit(
    tolerance: Tolerance,
    kind: OrderKind,
    name: &str,
    ty: &DataType,
) -> Result<i128, PlanError> {
    let refuse = |why: &str| {
        PlanError::invalid(
            NODE,
            format!(
                "the TOLERANCE {tolerance} does not fit the ordering column '{name}' ({ty}): {why}"
            ),
        )
    };
    let value = match (tolerance, kind) {
        (Tolerance::Number(n), OrderKind::Integer) => i128::from(n),
        (Tolerance::Number(_), _) => return Err(refuse("a time column takes an INTERVAL")),
        (Tolerance::Interval { .. }, OrderKind::Integer) => {
            return Err(refuse("an integer column takes a number"))
        }
        (Tolerance::Interval { millis }, OrderKind::Date) => {
            if millis % MS_PER_DAY != 0 {
                return Err(refuse("a DATE column takes a whole number of days"));
            }
            i128::from(millis / MS_PER_DAY)
        }
        (Tolerance::Interval { millis }, _) => i128::from(millis) * 1_000_000,
    };
    if value < 0 {
        return Err(refuse("it is negative"));
    }
    Ok(value)
}

impl AsofJoin {
    /// `EXPLAIN`'s arguments, columns named as in the join's `output` schema:
    /// `kind=LEFT, keys=[k=k0], match=[ts >= ts0], tolerance=[5000 ms]`.
    pub(super) fn explain_args(&self, output: &Schema) -> String {
        let width = self.probe.schema.len();
        let name = |c: usize| output.fields[c].name.as_str();
        let keys: Vec<String> = (self.probe_key.iter().zip(&self.build_key))
            .map(|(&p, &b)| format!("{}={}", name(p), name(width + b)))
            .collect();
        let mut args = format!(
            "kind={}, keys=[{}], match=[{} {} {}]",
            super::explain::kind_name(self.kind),
            keys.join(", "),
            name(self.order.probe),
            self.order.condition.sql(),
            name(width + self.order.build)
        );
        if let Some(t) = self.order.tolerance {
            args.push_str(&format!(", tolerance=[{t}]"));
        }
        args
    }
}
