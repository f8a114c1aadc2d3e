//! Sub-plan reuse: a plan subtree that occurs more than once in a plan is rendered once per
//! dataflow, and every occurrence reads that one rendering, as Flink's planner does with
//! `table.optimizer.reuse-sub-plan-enabled` (its default). Nexmark q5 is the case in point: its
//! two HOP window aggregations are the same subtree, and counting every bid in five windows
//! once instead of twice halves their work.
//!
//! Two subtrees are the same when they are equal as plans ([`RelExpr`]'s `PartialEq`: the same
//! nodes, arguments, schemas and changelog modes), so reusing one rendering for both changes no
//! result. A subtree's refused rows are reported once for each of its occurrences, as the
//! [reference interpreter](crate::plan::reference) evaluates each occurrence and as the plan
//! rendered them before reuse: the refusals its one rendering collected are listed again for
//! each later occurrence, neither lost nor counted differently.

use std::ops::Range;

use crate::plan::{PlanError, RelExpr};

use super::{Collection, RenderContext};

/// The subtrees rendered so far in one dataflow.
#[derive(Default)]
pub(super) struct Rendered<'s> {
    subtrees: Vec<Subtree<'s>>,
}

/// A rendered subtree: its plan, its output, and the positions in [`RenderContext::refused`]
/// of the refusals its rendering collected (its inputs' included).
struct Subtree<'s> {
    plan: RelExpr,
    output: Collection<'s>,
    refused: Range<usize>,
}

/// `plan` rendered by `fresh` the first time it occurs in `ctx`'s dataflow; a later occurrence
/// of an equal plan gets the first one's output and lists its refusals again.
pub(super) fn render_once<'s>(
    ctx: &mut RenderContext<'s>,
    plan: &RelExpr,
    fresh: impl FnOnce(&mut RenderContext<'s>, &RelExpr) -> Result<Collection<'s>, PlanError>,
) -> Result<Collection<'s>, PlanError> {
    if let Some(seen) = ctx.rendered.subtrees.iter().find(|s| s.plan == *plan) {
        let output = seen.output.clone();
        let again = ctx.refused[seen.refused.clone()].to_vec();
        ctx.refused.extend(again);
        return Ok(output);
    }
    let first = ctx.refused.len();
    let output = fresh(ctx, plan)?;
    ctx.rendered.subtrees.push(Subtree {
        plan: plan.clone(),
        output: output.clone(),
        refused: first..ctx.refused.len(),
    });
    Ok(output)
}
