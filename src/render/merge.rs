//! Rendering of the merge-engine node onto the generic keyed merge.

use crate::merge_engine::{merge_engine, MergeEngine};
use crate::plan::merge::null_key_column;
use crate::plan::{PlanError, RelExpr};
use crate::repr::{DatumVec, Row};
use differential_temporal_operators::keyed_merge::Rejected;
use differential_temporal_operators::Change;

use super::nodes::{project, render as render_input};
use super::{split_map, Collection, RenderContext};

/// `input`'s changes merged per `key` by `engine`: each write keyed once by its packed primary
/// key (a write with a NULL key column refused), folded by [`merge_engine`] in source order;
/// the engine's refusals (ignored and invalid writes, with their `seq`) join the context's.
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    input: &RelExpr,
    key: &[usize],
    engine: &MergeEngine,
) -> Result<Collection<'s>, PlanError> {
    let writes = render_input(ctx, input)?.into_changelog();
    let (schema, key) = (input.schema.clone(), key.to_vec());
    let mut datums = DatumVec::new();
    let (keyed, null_keys) = split_map(writes, move |write: Change<Row>| {
        let k = project(&write.row, &key, &mut datums);
        if !k.iter().any(|d| d.is_null()) {
            return Ok((k, write));
        }
        let reason = null_key_column(&schema, &key, &write.row).unwrap_or_default();
        Err(Rejected::invalid(write.seq, reason))
    });
    ctx.refused.push(null_keys);
    let merged = merge_engine(keyed, engine.clone());
    ctx.refused.push(merged.rejected.map(|(_, r)| r));
    Ok(Collection::Changelog(merged.changelog.map(|(_, ch)| ch)))
}
