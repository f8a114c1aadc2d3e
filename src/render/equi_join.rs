//! Rendering of the regular join ([`EquiJoin`]) with differential's arrangements and
//! `join_core`, over the two inputs as tables (multisets with native retractions).
//!
//! * **Matches**: both sides keyed by their key columns and arranged; `join_core` pairs the rows
//!   of equal keys, checks the residual on the pair and packs the joined row (one allocation per
//!   output row).
//! * **Padding** of a kept side (LEFT, RIGHT, FULL) is a collection maintained like any other:
//!   the side's rows minus those that have a partner. Without a residual a partner is any row of
//!   the other side with the same key (the side's arrangement joined with the other side's
//!   distinct keys); with one it is a row of the same key passing the residual (the distinct
//!   matched rows, taken away from the side's rows by an antijoin). When the first partner of a
//!   row arrives its padded row is retracted; when the last leaves it is inserted again: that is
//!   differential's arithmetic, and the output's changelog shows it as `-D` / `+I` (case E04).
//! * A row with a NULL key column never matches: INNER drops it, a kept side pads it.
//! * An interval join (a join with [`IntervalBounds`](crate::plan::IntervalBounds)) is this
//!   join in incremental mode; in final mode it is [`super::interval_join`].
//! * With a state TTL ([`EquiJoin::state_ttl`]) the join is the [`ttl_join`] operator instead
//!   (per-key live rows of both sides, expired without output): retracting expired rows from
//!   `join_core`'s inputs would retract output, which Flink's TTL never does. Rows with a NULL
//!   key column take the same path as above (they never enter state). Without a TTL nothing
//!   of this is built.

use std::rc::Rc;

use differential_dataflow::operators::arrange::{Arranged, TraceAgent};
use differential_dataflow::trace::implementations::ValSpine;
use differential_dataflow::VecCollection;

use crate::plan::{joined_row, EquiJoin, PlanError};
use crate::repr::{DatumVec, Row};
use differential_temporal_operators::retention::Retention;
use differential_temporal_operators::ttl_join::{ttl_join, TtlJoinConfig};
use differential_temporal_operators::SysTime;

use super::join::residual_fn;
use super::nodes::render as render_node;
use super::{interval_join, split_map, Collection, ExecutionMode, RenderContext};

type Rows<'s> = VecCollection<'s, SysTime, Row>;
type Keyed<'s> = VecCollection<'s, SysTime, (Row, Row)>;
type Arrangement<'s> = Arranged<'s, TraceAgent<ValSpine<Row, Row, SysTime, isize>>>;
type Residual = Rc<dyn Fn(&Row, &Row) -> bool>;

/// Renders a `Join` node (see the [module documentation](self)).
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    join: &EquiJoin,
) -> Result<Collection<'s>, PlanError> {
    if let (Some(bounds), ExecutionMode::Final) = (&join.interval, ctx.mode) {
        return interval_join::render(ctx, join, bounds);
    }
    let widths = (join.left.schema.len(), join.right.schema.len());
    let left = render_node(ctx, &join.left)?.into_table();
    let right = render_node(ctx, &join.right)?.into_table();
    let (left_keyed, left_null) = key_rows(left, join.left_key.clone());
    let (right_keyed, right_null) = key_rows(right, join.right_key.clone());
    if let Some(ttl) = join.state_ttl {
        let mut config = TtlJoinConfig::new(Retention::epochs(ttl))
            .padded(join.join_type.keeps_left(), join.join_type.keeps_right())
            .named("Join: state TTL");
        if let Some(residual) = &join.residual {
            config = config.residual(residual_fn(Some(residual.compile())));
        }
        let out = ttl_join(left_keyed, right_keyed, config, move |l, r| {
            joined_row(l, r, widths)
        });
        return Ok(Collection::Table(pad_null_keyed(
            out,
            join,
            (left_null, right_null),
        )));
    }
    let left_arranged = left_keyed.clone().arrange_by_key_named("Join: left");
    let right_arranged = right_keyed.clone().arrange_by_key_named("Join: right");
    let compiled = join.residual.as_ref().map(|r| r.compile());
    let residual: Option<Residual> = compiled.map(|r| Rc::new(residual_fn(Some(r))) as Residual);

    let check = residual.clone();
    let out =
        left_arranged
            .clone()
            .join_core(right_arranged.clone(), move |_, l: &Row, r: &Row| {
                let pass = check.as_ref().is_none_or(|f| f(l, r));
                pass.then(|| joined_row(Some(l), Some(r), widths))
            });
    let mut out = out;
    if join.join_type.keeps_left() {
        let pass = residual
            .clone()
            .map(|f| Rc::new(move |l: &Row, r: &Row| f(l, r)) as Residual);
        let side = Side {
            keyed: left_keyed.clone(),
            arranged: left_arranged.clone(),
        };
        let padded = side.unmatched(&right_keyed, &right_arranged, pass, "Join: left unmatched");
        out = out.concat(padded.map(move |l| joined_row(Some(&l), None, widths)));
    }
    if join.join_type.keeps_right() {
        // The residual reads the left row first: the right side's pairs are (right, left).
        let pass = residual.map(|f| Rc::new(move |r: &Row, l: &Row| f(l, r)) as Residual);
        let side = Side {
            keyed: right_keyed,
            arranged: right_arranged,
        };
        let padded = side.unmatched(&left_keyed, &left_arranged, pass, "Join: right unmatched");
        out = out.concat(padded.map(move |r| joined_row(None, Some(&r), widths)));
    }
    Ok(Collection::Table(pad_null_keyed(
        out,
        join,
        (left_null, right_null),
    )))
}

/// `out` with the rows of a kept side whose key has a NULL column, padded (they never match).
fn pad_null_keyed<'s>(
    mut out: Rows<'s>,
    join: &EquiJoin,
    (left_null, right_null): (Rows<'s>, Rows<'s>),
) -> Rows<'s> {
    let widths = (join.left.schema.len(), join.right.schema.len());
    if join.join_type.keeps_left() {
        out = out.concat(left_null.map(move |l| joined_row(Some(&l), None, widths)));
    }
    if join.join_type.keeps_right() {
        out = out.concat(right_null.map(move |r| joined_row(None, Some(&r), widths)));
    }
    out
}

/// Keys each row by its key columns; rows with a NULL key column go to the second collection
/// (they never match). One decode of each row.
fn key_rows<'s>(rows: Rows<'s>, key: Vec<usize>) -> (Keyed<'s>, Rows<'s>) {
    let mut datums = DatumVec::new();
    split_map(rows, move |row: Row| {
        let k = {
            let datums = datums.borrow_with(&row);
            match key.iter().any(|&c| datums[c].is_null()) {
                true => None,
                false => Some(Row::pack(key.iter().map(|&c| datums[c]))),
            }
        };
        match k {
            Some(k) => Ok((k, row)),
            None => Err(row),
        }
    })
}

/// One input of the join, as the padding of its unmatched rows needs it.
struct Side<'s> {
    /// Its rows with a key free of NULLs, keyed.
    keyed: Keyed<'s>,
    /// The same, arranged by key.
    arranged: Arrangement<'s>,
}

impl<'s> Side<'s> {
    /// The rows of this side without a partner on the other side: those whose key the other
    /// side lacks or, with a residual (`pass(this, other)`), whose partners all fail it (the
    /// rows with a NULL key column are [`pad_null_keyed`]'s).
    fn unmatched(
        self,
        other_keyed: &Keyed<'s>,
        other_arranged: &Arrangement<'s>,
        pass: Option<Residual>,
        name: &str,
    ) -> Rows<'s> {
        let rows = self.keyed.map(|(_, row)| row);
        let with_partner = match pass {
            None => {
                let keys = other_keyed
                    .clone()
                    .map(|(k, _)| k)
                    .distinct()
                    .arrange_by_self_named(name);
                self.arranged
                    .join_core(keys, |_, row: &Row, _| Some(row.clone()))
            }
            Some(pass) => {
                let matched = self
                    .arranged
                    .join_core(other_arranged.clone(), move |_, row: &Row, other: &Row| {
                        pass(row, other).then(|| row.clone())
                    })
                    .distinct();
                rows.clone()
                    .map(|row| (row, ()))
                    .semijoin(matched)
                    .map(|(row, ())| row)
            }
        };
        rows.concat(with_partner.negate())
    }
}
