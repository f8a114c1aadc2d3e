//! Rendering of the merge-engine node onto the generic keyed merge.

use crate::merge_engine::{merge_engine, MergeEngine};
use crate::plan::{PlanError, RelExpr};
use crate::repr::ColumnSpans;

use super::nodes::{project, render as render_input};
use super::{Collection, RenderContext};

/// `input`'s changes merged per `key` by `engine`: each write keyed once by its packed primary
/// key, folded by [`merge_engine`] in source order; the engine's refusals (ignored and invalid
/// writes, with their `seq`) join the context's.
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    input: &RelExpr,
    key: &[usize],
    engine: &MergeEngine,
) -> Result<Collection<'s>, PlanError> {
    let writes = render_input(ctx, input)?.into_changelog();
    let key = key.to_vec();
    let mut spans = ColumnSpans::new();
    let keyed = writes.map(move |write| (project(&write.row, &key, &mut spans), write));
    let merged = merge_engine(keyed, engine.clone());
    ctx.refused.push(merged.rejected.map(|(_, r)| r));
    Ok(Collection::Changelog(merged.changelog.map(|(_, ch)| ch)))
}
