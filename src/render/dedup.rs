//! Rendering of `Dedup`: the operator [`Deduplicate`] keyed by the packed partition key, ranked
//! by the rowtime (`Ts`; rows whose rowtime is NULL are refused with their `seq`) or by arrival.
//! In final mode keep-first by rowtime runs
//! [`deduplicate_first_on_watermark`](Deduplicate::deduplicate_first_on_watermark) (rule A9):
//! each key's first row is emitted once, as `+I`, when the watermark (the greatest rowtime minus
//! the declared delay) passes it, and rows behind the watermark are refused as late; with the
//! node's state TTL, a key's "already emitted" flag is forgotten (rule A13). The other
//! deduplications render as in incremental mode, as Flink plans them in both.

use differential_temporal_operators::dedup::{DedupConfig, Deduplicate, Keep, OnWatermark};
use differential_temporal_operators::retention::Retention;
use differential_temporal_operators::watermark::watermarks;
use differential_temporal_operators::Change;

use crate::plan::{watermark_delay_ms, DedupOrder, PlanError, RelExpr};
use crate::repr::{ColumnSpans, Row, Ts};

use super::nodes::{event_time, null_time, project, render as render_node, NO_TIME};
use super::{split_map, Collection, ExecutionMode, RenderContext};

/// Renders the deduplication of `input` by `key` (see the [module docs](self)): which row
/// (`keep`) by which `order`, and the final mode's `state_ttl`
/// ([`Node::Dedup`](crate::plan::Node::Dedup)).
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    input: &RelExpr,
    key: &[usize],
    (keep, order): (Keep, DedupOrder),
    state_ttl: Option<i64>,
) -> Result<Collection<'s>, PlanError> {
    let on_watermark =
        ctx.mode == ExecutionMode::Final && (keep, order) == (Keep::First, DedupOrder::EventTime);
    if state_ttl.is_some() && !on_watermark {
        return Err(PlanError::invalid(
            "Dedup",
            "a deduplication state TTL is measured on the watermark: it needs the final mode",
        ));
    }
    let rowtime = input.schema.rowtime.as_ref().map(|r| r.column);
    let changes = render_node(ctx, input)?.into_changelog();
    let key = key.to_vec();
    let mut spans = ColumnSpans::new();
    let mut keyed = move |ch: Change<Row>| (project(&ch.row, &key, &mut spans), ch);
    let column = match (order, rowtime) {
        (DedupOrder::EventTime, Some(column)) => column,
        (DedupOrder::EventTime, None) => unreachable!("the plan checked the rowtime"),
        (DedupOrder::Arrival, _) => {
            let config = DedupConfig::new(keep, order).named("Dedup");
            let merged = changes.map(keyed).deduplicate(config, |_: &Row| ());
            ctx.refused.push(merged.rejected.map(|(_, r)| r));
            return Ok(Collection::Changelog(merged.changelog.map(|(_, ch)| ch)));
        }
    };
    // Keyed, and refused if the rowtime is NULL, in one pass; none can be if it is NOT NULL.
    let timed = match input.schema.fields[column].ty.nullable {
        false => changes.map(keyed),
        true => {
            let (timed, refused) =
                split_map(changes, move |ch| match event_time(&ch.row, column) {
                    Some(_) => Ok(keyed(ch)),
                    None => Err(null_time(ch.seq)),
                });
            ctx.refused.push(refused);
            timed
        }
    };
    let time_of = move |row: &Row| event_time(row, column).unwrap_or(NO_TIME);
    let merged = if on_watermark {
        let delay = watermark_delay_ms(&input.schema, column);
        let marks = watermarks(
            timed.clone(),
            move |(_, ch): &(Row, Change<Row>)| time_of(&ch.row),
            move |max: &Ts| Ts {
                millis: max.millis.saturating_sub(delay),
                ..*max
            },
            "Dedup: watermark",
        );
        let retention = state_ttl.map(|ttl| {
            Retention::new(move |t: &Ts| Ts {
                millis: t.millis.saturating_add(ttl),
                ..*t
            })
        });
        let mut config = OnWatermark::new().retention(retention).named("Dedup");
        if let Some(text) = ctx.late_time_text {
            config = config.time_text(text);
        }
        timed.deduplicate_first_on_watermark(time_of, marks, config)
    } else {
        let config = DedupConfig::new(keep, order).named("Dedup");
        timed.deduplicate(config, time_of)
    };
    ctx.refused.push(merged.rejected.map(|(_, r)| r));
    Ok(Collection::Changelog(merged.changelog.map(|(_, ch)| ch)))
}
