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
//!
//! Finding the same subtree costs time linear in the plan's size (hash-consing): each distinct
//! subtree gets a number, its *shape* being its node with the inputs cut off, plus its inputs'
//! numbers. Two subtrees are equal exactly when their numbers are, so a node is compared with
//! the shapes of equal hash only, and only its own arguments, never its inputs' subtrees again.
//! The first time a subtree not yet numbered is rendered (the plan's root, or a plan a node
//! builds to render, such as a final-mode window assignment's count), it and its inputs are
//! numbered in one pass over one copy of it; while it renders, its nodes find their numbers by
//! address.

use std::collections::HashMap;
use std::fmt::Write;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::ops::Range;

use crate::plan::{Mode, Node, PlanError, RelExpr};
use crate::repr::Schema;

use super::{Collection, RenderContext};

/// The subtrees numbered and rendered so far in one dataflow.
#[derive(Default)]
pub(super) struct Rendered<'s> {
    /// Each distinct subtree's shape, by number.
    shapes: Vec<Shape>,
    /// The numbers of the shapes of each hash.
    by_hash: HashMap<u64, Vec<usize>>,
    /// The number of each node of the subtrees being rendered, by address. An entry lives only
    /// while its subtree is borrowed by [`render_once`], so an address is never stale.
    numbers: HashMap<*const RelExpr, usize>,
    /// Each rendered subtree's output and refusals, by number.
    outputs: HashMap<usize, Subtree<'s>>,
}

/// A distinct subtree: its node with each input replaced by [`cut_off`], and its inputs'
/// numbers.
#[derive(PartialEq)]
struct Shape {
    node: RelExpr,
    inputs: Vec<usize>,
}

/// A rendered subtree: its output, and the positions in [`RenderContext::refused`] of the
/// refusals its rendering collected (its inputs' included).
struct Subtree<'s> {
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
    let (number, numbered) = match ctx.rendered.numbers.get(&(plan as *const RelExpr)) {
        Some(&number) => (number, Vec::new()),
        None => ctx.rendered.number_all(plan),
    };
    if let Some(seen) = ctx.rendered.outputs.get(&number) {
        let output = seen.output.clone();
        let again = ctx.refused[seen.refused.clone()].to_vec();
        ctx.refused.extend(again);
        ctx.rendered.forget(&numbered);
        return Ok(output);
    }
    let first = ctx.refused.len();
    let output = fresh(ctx, plan);
    ctx.rendered.forget(&numbered);
    let output = output?;
    let refused = first..ctx.refused.len();
    let subtree = Subtree {
        output: output.clone(),
        refused,
    };
    ctx.rendered.outputs.insert(number, subtree);
    Ok(output)
}

impl Rendered<'_> {
    /// Numbers `plan` and its inputs (one copy of `plan`, one pass) and records their addresses;
    /// returns `plan`'s number and the addresses recorded, to [`forget`](Self::forget) once
    /// `plan` is rendered.
    fn number_all(&mut self, plan: &RelExpr) -> (usize, Vec<*const RelExpr>) {
        let mut recorded = Vec::new();
        let number = self.number(plan, plan.clone(), &mut recorded);
        (number, recorded)
    }

    /// The number of `plan`, whose copy `owned` is taken apart into shapes.
    fn number(
        &mut self,
        plan: &RelExpr,
        mut owned: RelExpr,
        recorded: &mut Vec<*const RelExpr>,
    ) -> usize {
        let inputs: Vec<RelExpr> = (owned.inputs_mut().into_iter())
            .map(|input| std::mem::replace(input, cut_off()))
            .collect();
        let inputs = (plan.inputs().into_iter().zip(inputs))
            .map(|(input, owned)| self.number(input, owned, recorded))
            .collect();
        let number = self.intern(Shape {
            node: owned,
            inputs,
        });
        let address = plan as *const RelExpr;
        if self.numbers.insert(address, number).is_none() {
            recorded.push(address);
        }
        number
    }

    /// The number of `shape`: an equal shape's, or a new one.
    fn intern(&mut self, shape: Shape) -> usize {
        let hash = shape.hash();
        let candidates = self.by_hash.entry(hash).or_default();
        if let Some(&number) = candidates.iter().find(|&&n| self.shapes[n] == shape) {
            return number;
        }
        candidates.push(self.shapes.len());
        self.shapes.push(shape);
        self.shapes.len() - 1
    }

    /// Drops the addresses `recorded` by [`number_all`](Self::number_all).
    fn forget(&mut self, recorded: &[*const RelExpr]) {
        for address in recorded {
            self.numbers.remove(address);
        }
    }
}

impl Shape {
    /// A hash that equal shapes share: the inputs' numbers and the node as `Debug` prints it
    /// (plan nodes hold floats, so they have no `Hash`; equal nodes print alike, except a
    /// float `0.0` and `-0.0`, which then only miss a reuse).
    fn hash(&self) -> u64 {
        let mut hasher = HashWriter(DefaultHasher::new());
        self.inputs.hash(&mut hasher.0);
        write!(hasher, "{:?}", self.node).expect("hashing cannot fail");
        hasher.0.finish()
    }
}

/// Feeds formatted text into a hasher, without building the string.
struct HashWriter(DefaultHasher);

impl Write for HashWriter {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.write(s.as_bytes());
        Ok(())
    }
}

/// What an input is replaced by in a [`Shape`]: an empty leaf, the same for every input.
fn cut_off() -> RelExpr {
    RelExpr {
        node: Node::Values { rows: Vec::new() },
        schema: Schema::default(),
        mode: Mode::AppendOnly,
    }
}
