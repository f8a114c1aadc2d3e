//! Rendering of the merge-engine node onto the generic keyed merge.

use crate::merge_engine::{merge_engine, MergeEngine};
use crate::plan::{Node, PlanError, RelExpr};
use crate::repr::ColumnSpans;
use differential_temporal_operators::keyed_merge::Rejected;

use super::nodes::{project, render as render_input};
use super::{Collection, RenderContext};

/// `input`'s changes merged per `key` by `engine`: each write keyed once by its packed primary
/// key, folded by [`merge_engine`] in source order; the engine's refusals (ignored and invalid
/// writes, with their `seq`) join the context's, in ChangelogNormalize's words when the node
/// is the normalization of an upsert source (`normalize`, see [`normalization_refusal`]).
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    input: &RelExpr,
    key: &[usize],
    engine: &MergeEngine,
    normalize: bool,
) -> Result<Collection<'s>, PlanError> {
    let writes = render_input(ctx, input)?.into_changelog();
    let normalized = normalize.then(|| normalized_table(input, key));
    let key = key.to_vec();
    let mut spans = ColumnSpans::new();
    let keyed = writes.map(move |write| (project(&write.row, &key, &mut spans), write));
    let merged = merge_engine(keyed, engine.clone());
    let rejected = merged.rejected.map(move |(_, r)| match &normalized {
        Some(table) => normalization_refusal(r, table),
        None => r,
    });
    ctx.refused.push(rejected);
    Ok(Collection::Changelog(merged.changelog.map(|(_, ch)| ch)))
}

/// How a normalization names what it normalizes: `the upsert table 't' (normalized by its
/// key (id), as Flink's ChangelogNormalize)`, from the scan it reads and its `key` columns.
fn normalized_table(input: &RelExpr, key: &[usize]) -> String {
    let table = match &input.node {
        Node::Scan { name } => format!("the upsert table '{name}'"),
        _ => "an upsert table".to_string(),
    };
    let names: Vec<&str> = (key.iter())
        .map(|&c| input.schema.fields[c].name.as_str())
        .collect();
    format!(
        "{table} (normalized by its key ({}), as Flink's ChangelogNormalize)",
        names.join(", ")
    )
}

/// `refused`, a refusal of the deduplicate engine that normalizes an upsert source (rule A12:
/// no sequence, deletes applied), in ChangelogNormalize's words naming `table` (see
/// [`normalized_table`]): such an engine ignores only a retraction of a key that holds no
/// row, which it reports as `a -D of a key without a row on the deduplicate merge engine`;
/// it becomes `a -D of a key without a row in the upsert table 't' (normalized by its key
/// (id), as Flink's ChangelogNormalize): not applied`. Flink's normalization drops such a
/// retraction silently; it is counted here, as every ignored row is.
fn normalization_refusal(mut refused: Rejected, table: &str) -> Rejected {
    let engine = " on the deduplicate merge engine";
    if let Some(what) = refused.reason.strip_suffix(engine) {
        refused.reason = format!("{what} in {table}: not applied").into();
    }
    refused
}
